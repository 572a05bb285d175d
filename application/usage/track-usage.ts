import type { BillingSubject } from '../../domain/billing/subject';
import { allocate, creditBalance, creditsWentLow, type GrantBalance, thresholdBit, thresholdsCrossed } from '../../domain/usage/balance';
import { isUsageValue, type Meter } from '../../domain/usage/meter';
import { type Result, err, ok } from '../../domain/result';
import { announce } from './consume-usage';
import type { UsageDeps } from './deps';
import { EMPTY_COUNTER, type MeterTerms, type SubjectInput, subjectOf, termsOf } from './standing';
import { pairKey, type TrackedGroup, type UsageEventRecord } from './usage.store';

/** Events may be reported this long after they happened (a batch uploaded late, a retry after an outage)... */
export const TRACK_MAX_AGE_MS = 24 * 3_600_000;
/** ...and this far ahead of the server's clock (clock skew). */
export const TRACK_MAX_AHEAD_MS = 5 * 60_000;
export const TRACK_MAX_BATCH = 1000;

export interface TrackInput {
  id: string;
  subject: SubjectInput;
  meter: string;
  value?: number;
  timestamp?: string;
}

export type TrackError = 'unknown_meter' | 'unknown_subject' | 'invalid_usage_value' | 'usage_event_too_old' | 'usage_event_in_future' | 'usage_event_conflict';

/** `timed`: the event names its timestamp (an event without one happened when it was first received). */
type Prepared = UsageEventRecord & { index: number; meter: Meter; terms: MeterTerms; timed: boolean };

class Refusal extends Error {
  constructor(
    readonly code: TrackError,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const refuse = (code: TrackError, index: number, field: string, message: string) => err(code, `events[${index}].${field}: ${message}`);

/**
 * POST usage/events: a batch of usage events recorded all or none, in one transaction: the new
 * events inserted (an id already recorded with the same values is a duplicate and counts once),
 * each window's counter raised under its row lock, the included amount drawn first, then credits,
 * then overage (never refused: it happened). The answer comes after the commit, so an accepted
 * event is durable, and a retried batch counts nothing twice.
 */
export function makeTrackUsage(deps: UsageDeps) {
  return async function trackUsage(projectId: string, events: readonly TrackInput[]): Promise<Result<{ accepted: number; duplicates: number }, TrackError>> {
    const now = deps.clock.now();
    const meters = await deps.meters.byKey(projectId, [...new Set(events.map((e) => e.meter))]);
    const subjects = new Map<string, BillingSubject>();
    for (const [index, e] of events.entries()) {
      const meter = meters.get(e.meter);
      if (meter === undefined) return refuse('unknown_meter', index, 'meter', `no meter has the key "${e.meter}"`);
      const value = e.value ?? 1;
      if (!isUsageValue(value)) return refuse('invalid_usage_value', index, 'value', 'a whole number from 0 to 10^12');
      if (e.timestamp !== undefined) {
        const at = new Date(e.timestamp);
        if (now.getTime() - at.getTime() > TRACK_MAX_AGE_MS) return refuse('usage_event_too_old', index, 'timestamp', 'more than 24 hours ago');
        if (at.getTime() - now.getTime() > TRACK_MAX_AHEAD_MS) return refuse('usage_event_in_future', index, 'timestamp', 'more than 5 minutes ahead');
      }
      subjects.set(e.subject.id, subjectOf(e.subject));
    }
    const plans = await deps.subjects.plans(projectId, [...subjects.values()]);
    const prepared: Prepared[] = [];
    const byId = new Map<string, Prepared>();
    for (const [index, e] of events.entries()) {
      if (!plans.has(e.subject.id) || subjects.get(e.subject.id)?.kind !== e.subject.type) {
        return refuse('unknown_subject', index, 'subject', `no ${e.subject.type} of the project has the id "${e.subject.id}"`);
      }
      const meter = meters.get(e.meter)!;
      const occurredAt = e.timestamp === undefined ? now : new Date(e.timestamp);
      const terms = termsOf(plans.get(e.subject.id) ?? null, meter, occurredAt, now, e.timestamp === undefined);
      const p: Prepared = {
        index,
        timed: e.timestamp !== undefined,
        meter,
        terms,
        eventId: e.id,
        subject: subjectOf(e.subject),
        meterId: meter.id,
        value: e.value ?? 1,
        occurredAt,
        windowStart: terms.window.start,
        allocation: null,
        released: 0,
      };
      const twin = byId.get(e.id);
      if (twin !== undefined) {
        if (!sameEvent(twin, p) || twin.timed !== p.timed) {
          return refuse('usage_event_conflict', index, 'id', `"${e.id}" is also events[${twin.index}] with other values`);
        }
        continue;
      }
      byId.set(e.id, p);
      prepared.push(p);
    }
    // Most batches are new events within the included amounts: one statement records them.
    const quiet = groupsOf(prepared).map((g) => ({ ...g.group, included: g.terms.included }));
    if (await deps.ledger.recordQuiet(projectId, prepared, quiet, now)) return ok({ accepted: prepared.length, duplicates: events.length - prepared.length });
    try {
      const accepted = await deps.uow.transaction(() => record(deps, projectId, prepared, now));
      return ok({ accepted, duplicates: events.length - accepted });
    } catch (e) {
      if (e instanceof Refusal) return err(e.code, e.detail);
      throw e;
    }
  };
}

/**
 * Whether a retry is the event recorded under its id: the same subject, meter and value, and the
 * same timestamp when the retry names one (an event sent without one took the time it was first
 * received, which a later retry cannot repeat).
 */
const sameEvent = (recorded: UsageEventRecord, retry: Prepared): boolean =>
  recorded.subject.id === retry.subject.id &&
  recorded.meterId === retry.meterId &&
  recorded.value === retry.value &&
  (!retry.timed || recorded.occurredAt.getTime() === retry.occurredAt.getTime());

async function record(deps: UsageDeps, projectId: string, prepared: readonly Prepared[], now: Date): Promise<number> {
  const inserted = await deps.ledger.insertEvents(projectId, prepared, now);
  const already = prepared.filter((p) => !inserted.has(p.eventId));
  if (already.length > 0) {
    const stored = new Map(
      (
        await deps.ledger.findEvents(
          projectId,
          already.map((p) => p.eventId),
        )
      ).map((e) => [e.eventId, e]),
    );
    for (const p of already) {
      const s = stored.get(p.eventId);
      if (s === undefined || s.allocation !== null || !sameEvent(s, p)) {
        throw new Refusal('usage_event_conflict', `events[${p.index}].id: "${p.eventId}" was already recorded with other values`);
      }
    }
  }
  const fresh = prepared.filter((p) => inserted.has(p.eventId));
  const groups = groupsOf(fresh);
  if (groups.length === 0) return 0;
  const states = await deps.ledger.addUsage(
    projectId,
    groups.map((g) => g.group),
  );
  // Credits are read (and locked) only for the counters this batch took past the included amount.
  const pastIncluded = groups.filter((g, i) => g.meter.aggregation !== 'max' && states[i]!.used > g.terms.included);
  const pairs = pastIncluded.map((g) => ({ subjectId: g.group.subject.id, meterId: g.group.meterId }));
  const grants = pairs.length === 0 ? new Map<string, GrantBalance[]>() : await deps.ledger.grantsFor(projectId, pairs, now);
  const settled: Array<{ group: TrackedGroup; overage: number; notified: number }> = [];
  const draws: Array<{ grantId: string; amount: number }> = [];
  const announcements: Array<() => Promise<void>> = [];
  for (const [i, g] of groups.entries()) {
    const state = states[i]!;
    const before =
      g.meter.aggregation === 'max' ? { ...EMPTY_COUNTER, used: state.used, overage: state.overage } : { ...state, used: state.used - g.group.amount };
    const pool = grants.get(pairKey(g.group.subject.id, g.group.meterId)) ?? [];
    const poolBefore = pool.map((x) => ({ ...x }));
    const allocation = allocate(
      { aggregation: g.meter.aggregation, included: g.terms.included, used: before.used, overage: state.overage, mode: g.terms.mode, grants: pool },
      g.group.amount,
      now,
      { track: true },
    )!;
    const drawn = allocation.fromCredits.reduce((s, d) => s + d.amount, 0);
    for (const d of allocation.fromCredits) {
      draws.push(d);
      const grant = pool.find((x) => x.id === d.grantId);
      // A later group of the same subject and meter (another window) draws on what is left.
      if (grant) grant.remaining -= d.amount;
    }
    const crossed = thresholdsCrossed(g.terms.included, state.used, state.notified);
    const low = creditsWentLow(poolBefore, drawn, now);
    const overage = state.overage + allocation.overage;
    const notified = crossed.reduce((n, t) => n | thresholdBit(t), state.notified);
    if (overage !== state.overage || notified !== state.notified) settled.push({ group: g.group, overage, notified });
    if (crossed.length > 0 || low) {
      const balance = creditBalance(pool, now);
      announcements.push(() => announce(deps, projectId, g.group.subject, g.meter, g.terms, state, crossed, low ? balance : null));
    }
  }
  if (settled.length > 0 || draws.length > 0) await deps.ledger.settle(projectId, settled, draws);
  for (const a of announcements) await a();
  return fresh.length;
}

interface Group {
  group: TrackedGroup;
  meter: Meter;
  terms: MeterTerms;
}

/** New events summed per (subject, meter, window), in a fixed order so that concurrent batches lock counters alike. */
function groupsOf(events: readonly Prepared[]): Group[] {
  const groups = new Map<string, Group>();
  for (const e of events) {
    const key = `${e.subject.id}/${e.meterId}/${e.windowStart.toISOString()}`;
    const amount = e.meter.aggregation === 'count' ? 1 : e.value;
    const g = groups.get(key);
    if (g === undefined) {
      groups.set(key, {
        group: { subject: e.subject, meterId: e.meterId, window: e.terms.window, amount, max: e.meter.aggregation === 'max' },
        meter: e.meter,
        terms: e.terms,
      });
    } else {
      g.group.amount = e.meter.aggregation === 'max' ? Math.max(g.group.amount, amount) : g.group.amount + amount;
    }
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}
