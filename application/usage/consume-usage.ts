import type { BillingSubject } from '../../domain/billing/subject';
import {
  type Allocation,
  allocate,
  creditBalance,
  creditsWentLow,
  type GrantBalance,
  releaseOf,
  subtractAllocation,
  thresholdBit,
  thresholdsCrossed,
  usedAfter,
} from '../../domain/usage/balance';
import { isUsageValue, type Meter } from '../../domain/usage/meter';
import { type Result, err, ok } from '../../domain/result';
import { publishUsageEvent, type UsageDeps } from './deps';
import { EMPTY_COUNTER, featureView, type MeterTerms, meterBalance, type SubjectInput, subjectOf, termsOf, type UsageFeatureView } from './standing';
import { usageWindow } from '../../domain/usage/windows';
import { type TermsHint, TermsHints } from './terms-hints';
import type { CounterState, SubjectPlanRead, UsageEventRecord } from './usage.store';

/** Optimistic writes tried before a consumption takes the counter's row lock (many consumers of one subject at once). */
const OPTIMISTIC_ATTEMPTS = 3;
const MAX_ATTEMPTS = 20;

export interface CheckInput {
  subject: SubjectInput;
  feature: string;
  amount?: number;
  consume?: boolean;
  id?: string;
}

export interface CheckView extends UsageFeatureView {
  allowed: boolean;
  consumed: number;
  eventId: string | null;
}

export type CheckError = 'unknown_meter' | 'unknown_subject' | 'invalid_usage_value' | 'usage_event_conflict';

type Found = { meter: Meter; subject: BillingSubject; plan: SubjectPlanRead | null };

/** The meter and the subject a call names, or why not. */
async function resolve(
  deps: Pick<UsageDeps, 'meters' | 'subjects'>,
  projectId: string,
  subjectInput: SubjectInput,
  feature: string | null,
): Promise<Result<Found | Omit<Found, 'meter'>, 'unknown_meter' | 'unknown_subject'>> {
  const subject = subjectOf(subjectInput);
  const [meter, plans] = await Promise.all([
    feature === null ? Promise.resolve(null) : deps.meters.findByKey(projectId, feature),
    deps.subjects.plans(projectId, [subject]),
  ]);
  if (feature !== null && meter === null) return err('unknown_meter');
  if (!plans.has(subject.id)) return err('unknown_subject');
  const plan = plans.get(subject.id) ?? null;
  return ok(meter === null ? { subject, plan } : { meter, subject, plan });
}

/**
 * POST usage/check: whether `amount` of a metered feature fits the subject's limit now, and with
 * `consume` the check and the record in one atomic step. The counter is read, the rules decide,
 * and the write lands only over the version read; a write that lost to another change reads again
 * (after three losses it takes the counter's row lock, so a crowd of consumers of one subject
 * queues rather than spins). The last units are never spent twice and a refused consumption
 * writes nothing.
 */
export function makeCheckUsage(deps: UsageDeps) {
  const hints = new TermsHints();
  return async function checkUsage(projectId: string, input: CheckInput): Promise<Result<CheckView, CheckError>> {
    const amount = input.amount ?? 1;
    if (!isUsageValue(amount, 1)) return err('invalid_usage_value');
    const subject = subjectOf(input.subject);
    const now = deps.clock.now();
    // Most consumptions fit the included amount of terms this process has seen: one statement.
    if (input.consume) {
      const quick = await consumeOnHint(deps, hints.get(projectId, subject, now), projectId, { subject, feature: input.feature, amount, id: input.id }, now);
      if (quick !== null) return ok(quick);
    }
    // One round trip reads the meter, the subject, its plan, the window's counter and the credits.
    const read = await deps.ledger.consumption(projectId, subject, input.feature, windowStarts(now), now);
    if (read.meter === null) return err('unknown_meter');
    if (!read.subjectExists) {
      hints.forget(projectId, subject);
      return err('unknown_subject');
    }
    const { meter, plan } = read;
    hints.remember(projectId, subject, { plan, version: read.termsVersion }, now);
    const terms = termsOf(plan, meter, now, now);
    const first = { now, counter: read.counters.get(terms.window.start.toISOString()) ?? EMPTY_COUNTER, grants: read.grants };
    if (!input.consume) {
      const allowed = allocate(meterBalance(meter, terms, first.counter, first.grants), amount, now, { track: false }) !== null;
      return ok({ ...featureView(meter, terms, first.counter, creditBalance(first.grants, now)), allowed, consumed: 0, eventId: null });
    }
    const eventId = input.id ?? deps.crypto.uuid();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (input.id !== undefined) {
        const replay = await replayOf(deps, projectId, { eventId, subject, meter, amount }, plan);
        if (replay !== null) return replay;
      }
      const locked = attempt >= OPTIMISTIC_ATTEMPTS;
      const c = { meter, subject, plan, amount, eventId };
      // The first attempt writes over what the check read; a lost write reads again.
      const outcome = locked
        ? await deps.uow.transaction(() => consumeOnce(deps, projectId, c, true))
        : await consumeOnce(deps, projectId, c, false, attempt === 0 ? first : undefined);
      if (outcome !== 'retry') return ok(outcome);
    }
    throw new Error(`usage consumption of ${meter.key} for ${subject.id} did not settle after ${MAX_ATTEMPTS} attempts`);
  };
}

/**
 * A consumption decided on the subject's terms as last seen (`hint`) and written in one statement,
 * when it fits the included amount without reaching a usage threshold (a sum or count meter): no
 * read first. Null when it does not apply or the statement found the terms or the counter
 * otherwise (nothing written): the caller reads and decides.
 */
async function consumeOnHint(
  deps: UsageDeps,
  hint: TermsHint | undefined,
  projectId: string,
  c: { subject: BillingSubject; feature: string; amount: number; id: string | undefined },
  now: Date,
): Promise<CheckView | null> {
  if (hint === undefined) return null;
  const meter = (await deps.meters.byKey(projectId, [c.feature])).get(c.feature);
  if (meter === undefined || meter.aggregation === 'max') return null;
  const terms = termsOf(hint.plan, meter, now, now);
  // A counter the statement creates holds just this amount, so that much must be quiet by itself.
  if (c.amount > terms.included || thresholdsCrossed(terms.included, c.amount, 0).length > 0) return null;
  const eventId = c.id ?? deps.crypto.uuid();
  const after = await deps.ledger.consumeQuiet({
    projectId,
    subject: c.subject,
    meterId: meter.id,
    window: terms.window,
    included: terms.included,
    termsVersion: hint.version,
    record: {
      eventId,
      subject: c.subject,
      meterId: meter.id,
      value: c.amount,
      occurredAt: now,
      windowStart: terms.window.start,
      allocation: { amount: c.amount, fromIncluded: c.amount, fromCredits: [], overage: 0 },
      released: 0,
    },
    createdAt: now,
  });
  if (after === null) return null;
  return { ...featureView(meter, terms, after, after.credits), allowed: true, consumed: c.amount, eventId };
}

/** The starts of the windows a consumption now may count in, besides the billing period: the UTC day and month. */
const windowStarts = (now: Date) => ({ day: usageWindow('day', now, null).start, month: usageWindow('month', now, null).start });

/** A consumption already recorded under the id: the same one answers again; anything else is a conflict. */
async function replayOf(
  deps: UsageDeps,
  projectId: string,
  asked: { eventId: string; subject: BillingSubject; meter: Meter; amount: number },
  plan: SubjectPlanRead | null,
): Promise<Result<CheckView, CheckError> | null> {
  const recorded = await deps.ledger.findEvent(projectId, asked.eventId);
  if (recorded === null) return null;
  const same =
    recorded.allocation !== null && recorded.subject.id === asked.subject.id && recorded.meterId === asked.meter.id && recorded.value === asked.amount;
  if (!same) return err('usage_event_conflict');
  const now = deps.clock.now();
  const terms = termsOf(plan, asked.meter, now, now);
  const { counter, grants } = await deps.ledger.balance(projectId, asked.subject.id, asked.meter.id, terms.window, now, { lock: false });
  return ok({ ...featureView(asked.meter, terms, counter, creditBalance(grants, now)), allowed: true, consumed: recorded.value, eventId: asked.eventId });
}

async function consumeOnce(
  deps: UsageDeps,
  projectId: string,
  c: { meter: Meter; subject: BillingSubject; plan: SubjectPlanRead | null; amount: number; eventId: string },
  lock: boolean,
  preread?: { now: Date; counter: CounterState; grants: GrantBalance[] },
): Promise<CheckView | 'retry'> {
  const now = preread?.now ?? deps.clock.now();
  const terms = termsOf(c.plan, c.meter, now, now);
  const { counter, grants } = preread ?? (await deps.ledger.balance(projectId, c.subject.id, c.meter.id, terms.window, now, { lock }));
  const balance = meterBalance(c.meter, terms, counter, grants);
  const allocation = allocate(balance, c.amount, now, { track: false });
  const credits = creditBalance(grants, now);
  if (allocation === null) return { ...featureView(c.meter, terms, counter, credits), allowed: false, consumed: 0, eventId: null };
  const drawn = allocation.fromCredits.reduce((s, d) => s + d.amount, 0);
  const used = usedAfter(balance, c.amount);
  const crossed = thresholdsCrossed(terms.included, used, counter.notified);
  const low = creditsWentLow(grants, drawn, now);
  const after: CounterState = {
    used,
    overage: counter.overage + allocation.overage,
    notified: crossed.reduce((n, t) => n | thresholdBit(t), counter.notified),
    version: counter.version + 1,
  };
  const record: UsageEventRecord = {
    eventId: c.eventId,
    subject: c.subject,
    meterId: c.meter.id,
    value: c.amount,
    occurredAt: now,
    windowStart: terms.window.start,
    allocation,
    released: 0,
  };
  const write = async () => {
    const written = await deps.ledger.write({
      projectId,
      subject: c.subject,
      meterId: c.meter.id,
      window: terms.window,
      expectedVersion: counter.version,
      used: after.used,
      overage: after.overage,
      notified: after.notified,
      draws: allocation.fromCredits,
      event: { kind: 'insert', record, createdAt: now },
    });
    if (!written) return false;
    await announce(deps, projectId, c.subject, c.meter, terms, after, crossed, low ? credits - drawn : null);
    return true;
  };
  const events = crossed.length > 0 || low;
  const written = events && !lock ? await deps.uow.transaction(write) : await write();
  if (!written) return 'retry';
  return { ...featureView(c.meter, terms, after, credits - drawn), allowed: true, consumed: c.amount, eventId: c.eventId };
}

/** usage.threshold for each threshold reached, credits.low when the balance fell under its mark; in the write's transaction. */
export async function announce(
  deps: Pick<UsageDeps, 'events' | 'crypto' | 'clock'>,
  projectId: string,
  subject: BillingSubject,
  meter: Meter,
  terms: MeterTerms,
  after: Pick<CounterState, 'used'>,
  crossed: readonly number[],
  lowBalance: number | null,
): Promise<void> {
  const window = { windowStart: terms.window.start.toISOString(), resetsAt: terms.window.end.toISOString() };
  for (const threshold of crossed) {
    await publishUsageEvent(deps, 'usage.threshold', projectId, subject, `usage.threshold:${subject.id}:${meter.id}:${window.windowStart}:${threshold}`, {
      feature: meter.key,
      threshold,
      included: terms.included,
      used: after.used,
      limit: terms.mode,
      ...window,
    });
  }
  if (lowBalance !== null) {
    await publishUsageEvent(deps, 'credits.low', projectId, subject, `credits.low:${subject.id}:${meter.id}:${deps.crypto.uuid()}`, {
      feature: meter.key,
      balance: lowBalance,
    });
  }
}

export interface ReleaseInput {
  subject: SubjectInput;
  id: string;
  amount: number;
}

export type ReleaseError = 'unknown_subject' | 'invalid_usage_value' | 'usage_event_not_found' | 'release_not_supported';

/**
 * POST usage/release: units of a consumption given back (a reservation settled for less): overage
 * first, then credits, then the included amount, never more than the consumption still holds.
 */
export function makeReleaseUsage(deps: UsageDeps) {
  return async function releaseUsage(projectId: string, input: ReleaseInput): Promise<Result<UsageFeatureView & { released: number }, ReleaseError>> {
    if (!isUsageValue(input.amount, 1)) return err('invalid_usage_value');
    const found = await resolve(deps, projectId, input.subject, null);
    if (!found.ok) return err('unknown_subject');
    const { subject, plan } = found.value;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const event = await deps.ledger.findEvent(projectId, input.id);
      if (event === null || event.allocation === null || event.subject.id !== subject.id) return err('usage_event_not_found');
      const meter = (await deps.meters.list(projectId)).find((m) => m.id === event.meterId);
      if (meter === undefined) return err('usage_event_not_found');
      if (meter.aggregation === 'max') return err('release_not_supported');
      const now = deps.clock.now();
      const terms = termsOf(plan, meter, event.windowStart, now);
      const window = { start: event.windowStart, end: terms.window.start.getTime() === event.windowStart.getTime() ? terms.window.end : event.windowStart };
      const { counter, grants } = await deps.ledger.balance(projectId, subject.id, meter.id, window, now, { lock: false });
      const back: Allocation = releaseOf(event.allocation, input.amount);
      const after = { used: Math.max(0, counter.used - back.amount), overage: Math.max(0, counter.overage - back.overage) };
      const credited = back.fromCredits.reduce((s, d) => s + d.amount, 0);
      const view = { ...featureView(meter, { ...terms, window }, after, creditBalance(grants, now) + credited), released: back.amount };
      if (back.amount === 0) return ok(view);
      const written = await deps.ledger.write({
        projectId,
        subject,
        meterId: meter.id,
        window,
        expectedVersion: counter.version,
        used: after.used,
        overage: after.overage,
        notified: counter.notified,
        draws: back.fromCredits.map((d) => ({ grantId: d.grantId, amount: -d.amount })),
        event: { kind: 'release', eventId: event.eventId, released: event.released + back.amount, allocation: subtractAllocation(event.allocation, back) },
      });
      if (written) return ok(view);
    }
    throw new Error(`usage release of ${input.id} did not settle after ${MAX_ATTEMPTS} attempts`);
  };
}
