/**
 * Usage-based billing from the project's server, with the API key (docs/usage.md): report usage
 * (`track`), ask whether an amount fits (`check`), check and record it in one atomic step
 * (`consume`), give back what a reservation did not use (`release`), read a subject's usage
 * (`get`), and grant and list credits. A refusal is thrown as the TollgateError it stands for
 * (`unknown_meter`, `unknown_subject`, ...); a consumption past a hard limit is not a refusal but
 * an answer: `allowed: false`, nothing recorded.
 */
import type { TollgateClient } from '../../../contract';
import { unwrap } from './errors';
import type { CreditGrant, SubjectUsage, UsageCheckResult, UsageFeature, UsageSubject } from './types';

/** The most events one request records; `track` sends more in batches of this size. */
export const USAGE_BATCH_SIZE = 1000;

/** An ISO 8601 time, or a Date (sent as its ISO 8601 form). */
export type DateInput = string | Date;

/** One usage event: `id` is yours and unique in the project, so that a retry of it is counted once. */
export interface UsageEvent {
  id: string;
  subject: UsageSubject;
  /** The meter key. */
  meter: string;
  /** Whole units (default 1; a count meter counts each event as 1). */
  value?: number;
  /** When it happened (default now): at most 24 hours ago and 5 minutes ahead. */
  timestamp?: DateInput;
}

export interface UsageAmount {
  subject: UsageSubject;
  /** The meter key. */
  feature: string;
  /** Whole units, at least 1 (default 1). */
  amount?: number;
}

export interface UsageConsumption extends UsageAmount {
  /** The usage event id (unique in the project): a retry with the same id answers the first consumption again. */
  id?: string;
}

export interface UsageRelease {
  subject: UsageSubject;
  /** The `eventId` of the consumption. */
  id: string;
  /** Units to give back, at least 1 (never more than the consumption still holds). */
  amount: number;
}

export interface CreditGrantInput {
  /** Your id of the grant, unique in the project: a retry with it answers the first grant and grants nothing more. */
  id?: string;
  subject: UsageSubject;
  /** The meter key. */
  feature: string;
  /** Whole units, 1 to 10^12. */
  amount: number;
  /** When what is left expires (in the future); none by default. */
  expiresAt?: DateInput | null;
  /** Shown in the console (at most 200 characters). */
  reason?: string;
}

export interface Usage {
  /**
   * Reports usage that happened: one event or many. A request records up to 1,000 events, all or
   * none; a longer list is sent in batches of 1,000, one after the other, and the answers summed
   * (a batch refused stops there: the batches before it stay recorded, so send the same list again
   * to retry, its recorded events answer as duplicates). Never refused for a limit.
   */
  track(events: UsageEvent | readonly UsageEvent[]): Promise<{ accepted: number; duplicates: number }>;
  /** Whether `amount` (default 1) fits the subject's limit now, with its balance; records nothing. */
  check(input: UsageAmount): Promise<UsageCheckResult>;
  /**
   * Checks and records `amount` (default 1) in one atomic step: `allowed: true` with `consumed` and
   * the `eventId` (for `release`), or past a hard limit `allowed: false` and nothing recorded.
   */
  consume(input: UsageConsumption): Promise<UsageCheckResult>;
  /** Gives back up to `amount` units of a consumption (reserve, then settle); answers the feature's balance and `released`. */
  release(input: UsageRelease): Promise<UsageFeature & { released: number }>;
  /** The subject's usage of every metered feature its plan limits or it has credits for. */
  get(subject: UsageSubject): Promise<SubjectUsage>;
  /** Grants credits on a meter, used after the plan's included amount and before overage (201). */
  grantCredits(input: CreditGrantInput): Promise<CreditGrant>;
  /** The subject's credit grants, newest first, expired ones included; `feature` narrows them to one meter. */
  credits(subject: UsageSubject, feature?: string): Promise<CreditGrant[]>;
}

const iso = (value: DateInput): string => (typeof value === 'string' ? value : value.toISOString());
const subjectQuery = (subject: UsageSubject) => ({ subjectType: subject.type, subjectId: subject.id });

/** The server SDK's `usage`, on the typed client and the SDK's `call` (a failure to reach Tollgate as `network_error`). */
export function makeUsage(client: TollgateClient, call: <R extends { status: number; body: unknown }>(run: () => Promise<R>) => Promise<R>): Usage {
  const check = async (input: UsageConsumption, consume: boolean) => {
    const body = {
      subject: input.subject,
      feature: input.feature,
      ...(input.amount !== undefined ? { amount: input.amount } : {}),
      ...(consume ? { consume: true, ...(input.id !== undefined ? { id: input.id } : {}) } : {}),
    };
    return unwrap(await call(() => client.usage.check({ body })));
  };

  return {
    async track(events) {
      const list: readonly UsageEvent[] = Array.isArray(events) ? events : [events as UsageEvent];
      const total = { accepted: 0, duplicates: 0 };
      for (let start = 0; start < list.length; start += USAGE_BATCH_SIZE) {
        const batch = list.slice(start, start + USAGE_BATCH_SIZE).map(({ timestamp, ...event }) => ({
          ...event,
          ...(timestamp !== undefined ? { timestamp: iso(timestamp) } : {}),
        }));
        const answer = unwrap(await call(() => client.usage.track({ body: { events: batch } })));
        total.accepted += answer.accepted;
        total.duplicates += answer.duplicates;
      }
      return total;
    },
    check: (input) => check(input, false),
    consume: (input) => check(input, true),
    async release(input) {
      return unwrap(await call(() => client.usage.release({ body: { subject: input.subject, id: input.id, amount: input.amount } })));
    },
    async get(subject) {
      return unwrap(await call(() => client.usage.usage({ query: subjectQuery(subject) })));
    },
    async grantCredits({ expiresAt, ...input }) {
      const body = { ...input, ...(expiresAt !== undefined ? { expiresAt: expiresAt === null ? null : iso(expiresAt) } : {}) };
      return unwrap(await call(() => client.usage.grantCredits({ body })), [201]);
    },
    async credits(subject, feature) {
      const query = { ...subjectQuery(subject), ...(feature !== undefined ? { feature } : {}) };
      return unwrap(await call(() => client.usage.credits({ query }))).grants;
    },
  };
}
