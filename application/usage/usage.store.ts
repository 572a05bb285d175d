import type { BillingSubject } from '../../domain/billing/subject';
import type { Allocation, GrantBalance } from '../../domain/usage/balance';
import type { CreditGrant } from '../../domain/usage/credits';
import type { UsageLimit } from '../../domain/usage/limits';
import type { Meter } from '../../domain/usage/meter';
import type { UsageWindow } from '../../domain/usage/windows';
import type { EntitlementFacts } from '../../domain/billing/entitlements';

/** A project's meters. */
export interface MeterStore {
  list(projectId: string): Promise<Meter[]>;
  /**
   * The project's meters by key for the write paths. A meter's id, key and aggregation never
   * change, so this may answer from a per-process cache (reloaded when a key is missing, and at
   * least every 30 seconds for the name and unit).
   */
  byKey(projectId: string, keys: readonly string[]): Promise<Map<string, Meter>>;
  findByKey(projectId: string, key: string): Promise<Meter | null>;
  /** False when the project already has a meter with this key. */
  insert(meter: Meter): Promise<boolean>;
  update(meter: Meter): Promise<void>;
}

/** What the usage rules read of a subject's subscription: whether it entitles, its plan's limits and its period. */
export interface SubjectPlanRead {
  subscription: EntitlementFacts & { currentPeriodStart: Date };
  plan: { id: string; name: string; usageLimits: UsageLimit[] };
}

export interface UsageSubjects {
  /**
   * For each subject of the project among `subjects`: its subscription that decides entitlements
   * (or null: none). A subject that is not one of the project's users or organizations is absent.
   */
  plans(projectId: string, subjects: readonly BillingSubject[]): Promise<Map<string, SubjectPlanRead | null>>;
  /** The user's email or the organization's name, for the console. */
  labels(projectId: string, subjects: readonly BillingSubject[]): Promise<Map<string, string | null>>;
}

/** A subject's usage of a meter in a window, as stored: `version` 0 when nothing is stored yet. */
export interface CounterState {
  used: number;
  overage: number;
  notified: number;
  version: number;
}

export interface UsageEventRecord {
  eventId: string;
  subject: BillingSubject;
  meterId: string;
  value: number;
  occurredAt: Date;
  windowStart: Date;
  /** Where a consumption's units came from; null for a tracked event. */
  allocation: Allocation | null;
  released: number;
}

export interface ConsumptionState {
  meter: Meter | null;
  subjectExists: boolean;
  plan: SubjectPlanRead | null;
  /** A digest of the subscription and plan limits `plan` was read from (consumeQuiet checks it is still so). */
  termsVersion: string;
  /** By window start (ISO). */
  counters: Map<string, CounterState>;
  grants: GrantBalance[];
}

/** A consumption decided on terms read earlier (their digest), within the included amount. */
export interface QuietConsumption {
  projectId: string;
  subject: BillingSubject;
  meterId: string;
  window: UsageWindow;
  included: number;
  termsVersion: string;
  record: UsageEventRecord;
  createdAt: Date;
}

/** A counter written over the version read (a consumption, a release). */
export interface CounterWrite {
  projectId: string;
  subject: BillingSubject;
  meterId: string;
  window: UsageWindow;
  expectedVersion: number;
  used: number;
  overage: number;
  notified: number;
  /** Credits drawn (positive) or given back (negative), by grant. */
  draws: ReadonlyArray<{ grantId: string; amount: number }>;
  /** The consumption recorded with it, or the release of one. */
  event: { kind: 'insert'; record: UsageEventRecord; createdAt: Date } | { kind: 'release'; eventId: string; released: number; allocation: Allocation };
}

/** A tracked batch's additions to one counter. */
export interface TrackedGroup {
  subject: BillingSubject;
  meterId: string;
  window: UsageWindow;
  amount: number;
  /** A max meter's highest value in the group (its usage is a level). */
  max: boolean;
}

/**
 * Usage events, counters and the credits they draw. A consumption reads a counter's state and
 * writes over the version it read (`write` answers false when another change came first, and
 * writes nothing then); a tracked batch adds to counters under their row locks in one transaction.
 */
export interface UsageLedger {
  /**
   * The counter of (subject, meter, window) and the subject's unexpired grants of the meter with
   * something left; `lock` takes the counter's row lock (in a transaction).
   */
  balance(
    projectId: string,
    subjectId: string,
    meterId: string,
    window: UsageWindow,
    now: Date,
    options: { lock: boolean },
  ): Promise<{ counter: CounterState; grants: GrantBalance[] }>;
  /**
   * Everything a check or a consumption reads, in one round trip: the meter by key, whether the
   * subject is the project's, its subscription and plan, its counters of the meter whose windows
   * start at the period's start, `dayStart` or `monthStart`, and its unexpired grants of the meter.
   */
  consumption(projectId: string, subject: BillingSubject, meterKey: string, starts: { day: Date; month: Date }, now: Date): Promise<ConsumptionState>;
  findEvent(projectId: string, eventId: string): Promise<UsageEventRecord | null>;
  findEvents(projectId: string, eventIds: readonly string[]): Promise<UsageEventRecord[]>;
  /**
   * A consumption in one statement, without reading first: the counter raised by the event's value
   * and the event recorded, only when the subject is the project's, its terms still have
   * `termsVersion`, and the counter stays within `included` without crossing a usage threshold
   * not yet announced. Answers the counter after it and the subject's credits of the meter; null
   * when any of that does not hold (nothing written) or the event id is already recorded.
   */
  consumeQuiet(consumption: QuietConsumption): Promise<{ used: number; overage: number; credits: number } | null>;
  /** Writes the counter, the grants and the event together, only over `expectedVersion`; false when the counter moved (nothing written). */
  write(change: CounterWrite): Promise<boolean>;
  /**
   * The common batch in one statement, outside any transaction: inserts every event and adds each
   * group to its counter, only when every event is new and every counter stays within its
   * `quietUpTo` (its included amount, no usage threshold newly crossed, per the window's
   * `notified` mask). False when that does not hold: then nothing was written, and the batch takes
   * the transactional path (insertEvents, addUsage, settle).
   */
  recordQuiet(
    projectId: string,
    events: readonly UsageEventRecord[],
    groups: ReadonlyArray<TrackedGroup & { included: number }>,
    createdAt: Date,
  ): Promise<boolean>;
  /** Inserts the events that are new; answers the ids that were new (in a transaction). */
  insertEvents(projectId: string, events: readonly UsageEventRecord[], createdAt: Date): Promise<Set<string>>;
  /** Adds each group to its counter (creating it), under the rows' locks; answers each counter after the addition, in the order given. */
  addUsage(projectId: string, groups: readonly TrackedGroup[]): Promise<CounterState[]>;
  /** The unexpired grants with something left of each (subject, meter), locked for the transaction. */
  grantsFor(projectId: string, pairs: ReadonlyArray<{ subjectId: string; meterId: string }>, now: Date): Promise<Map<string, GrantBalance[]>>;
  /** Sets overage and notified of counters, and draws credits, after `addUsage` in the same transaction. */
  settle(
    projectId: string,
    counters: ReadonlyArray<{ group: TrackedGroup; overage: number; notified: number }>,
    draws: ReadonlyArray<{ grantId: string; amount: number }>,
  ): Promise<void>;
  /** A subject's counters of the given (meter, window start) pairs. */
  counters(projectId: string, subjectId: string, keys: ReadonlyArray<{ meterId: string; windowStart: Date }>): Promise<Map<string, CounterState>>;
  /** Usage per UTC day of a subject's meter within [since, until). */
  daily(projectId: string, subjectId: string, meterId: string, since: Date, until: Date): Promise<Array<{ date: string; used: number }>>;
  /** The subjects with the most usage of a meter in windows starting at or after `since`. */
  top(projectId: string, meterId: string, since: Date, limit: number): Promise<Array<{ subject: BillingSubject; used: number; overage: number }>>;
}

/** Credit grants. */
export interface CreditStore {
  insert(grant: CreditGrant & { externalId: string | null }): Promise<void>;
  findByExternalId(projectId: string, externalId: string): Promise<CreditGrant | null>;
  /** Newest first, at most 200. */
  list(projectId: string, subjectId: string, meterId: string | null): Promise<CreditGrant[]>;
  /** The credit balance of each meter of a subject now (unexpired grants). */
  balances(projectId: string, subjectId: string, now: Date): Promise<Map<string, number>>;
  /** Grants past their expiry not yet marked, oldest expiry first. */
  dueExpiries(now: Date, limit: number): Promise<CreditGrant[]>;
  /** Marks a grant expired; false when another run did it first. */
  markExpired(grantId: string, at: Date): Promise<boolean>;
}

/** The window key of a counter in maps: meter and window start. */
export const counterKey = (meterId: string, windowStart: Date): string => `${meterId}@${windowStart.toISOString()}`;
export const pairKey = (subjectId: string, meterId: string): string => `${subjectId}/${meterId}`;
