import { createHash } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Clock } from '../../application/ports/clock';
import type { SecretBox, TokenCrypto } from '../../application/ports/crypto';
import type { Logger } from '../../application/ports/logger';
import type { Metrics } from '../../application/ports/metrics';
import type { MessageStatus, RetryPolicy, TopicHandler } from '../../application/ports/outbox';
import type { Database } from '../persistence/database';
import type { QueueSettings } from './queues';
import { assertRetryPolicy } from './retry-policy';
import type { AnyTopicDefinition } from './topics';

/**
 * The outbox's shared vocabulary: what its parts (enqueue, hand-over, worker loops, a batch's
 * run, the attempts' bookkeeping, maintenance, the delivery log) pass to each other, as stored in
 * `outbox_messages` and `outbox_attempts` and as carried by a pg-boss job.
 */

export interface PgBossOutboxDeps {
  db: Database;
  boss: PgBoss;
  box: SecretBox;
  crypto: Pick<TokenCrypto, 'uuid'>;
  clock: Clock;
  logger: Logger;
  /** Every topic this process may enqueue or deliver, with its schema. */
  topics: readonly AnyTopicDefinition[];
  /** Every queue the topics name. */
  queues: readonly QueueSettings[];
  /** pg-boss's schema (`pgboss` unless given). */
  bossSchema?: string;
  /**
   * The database URL for a listening connection: this process's workers fetch as soon as any
   * process hands over a job due now (`tollgate_outbox` notifications) instead of at their next
   * poll. Without it they only poll (every 0.5 s).
   */
  wakeUrl?: string;
  /** Counts each failed attempt by topic (tollgate_job_failures_total). */
  metrics?: Pick<Metrics, 'jobFailed'>;
}

/** The pg-boss queue of a queue named by topics. */
export const pgBossQueueName = (queue: string): string => `tollgate.${queue}`;

/**
 * How often pg-boss runs one job again when its worker vanished (killed, or stopped while the
 * attempt ran). Such a run only closes the abandoned attempt and schedules the next one per the
 * retry policy, so a few suffice; past them the sweep takes over.
 */
export const JOB_RERUNS = 3;
/** pg-boss fails a job this long after the attempt's own timeout, should its worker not settle it. */
export const EXPIRY_GRACE_SECONDS = 2;
/** How many rows one pass of the sweep (or of the abandoned-attempt check) looks at. */
export const SWEEP_BATCH = 100;
export const ABANDONED = 'abandoned: the worker stopped or stalled during the attempt';

/** What a pg-boss job carries: the message and which of its scheduled attempts this job is. */
export interface JobData {
  id: string;
  generation: number;
}

export interface MessageRow {
  id: string;
  topic: string;
  subject: string | null;
  payload_enc: string | null;
  status: MessageStatus;
  attempts: number;
  generation: number;
  retry_policy: unknown;
  next_attempt_at: Date | string | null;
  dispatched_at: Date | string | null;
}

/** A message to hand over; times arrive from the driver as strings. */
export interface Due {
  id: string;
  topic: string;
  generation: number;
  next_attempt_at: Date | string;
}

/** What opening a job's attempt found: the message, and the attempt started or the ones closed as abandoned. */
export interface Opened {
  row: MessageRow;
  /** The attempt started for this job; null when none was (not current, or abandoned ones were closed instead). */
  started: number | null;
  /** Attempts of this job that were still running (their worker died or stalled) and are now closed as failed. */
  abandoned: number;
}

/** How a failed attempt is settled: its message, the retry policy that applies, and its queue's revival. */
export interface SettleContext {
  row: MessageRow;
  policy: RetryPolicy;
  reviveAfterSeconds: number | undefined;
}

/** A job's attempt ready to run: its message, its number, the payload as checked, its handler and timeout. */
export interface Runnable {
  row: MessageRow;
  attempt: number;
  payload: unknown;
  handler: TopicHandler;
  timeoutSeconds: number;
  settle: SettleContext;
  /** Its work is over (its subject's count of attempts in flight), before the rest of its batch. */
  ended?: () => void;
}

/** An attempt whose handler succeeded, to be settled with the rest of its batch. */
export interface Succeeded {
  id: string;
  attempt: number;
  finishedAt: Date;
}

/** A job among those a batch opened: its message and generation. */
export const openedKey = (messageId: string, generation: number): string => `${messageId}/${generation}`;

export const toDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
export const toDateOrNull = (value: Date | string | null): Date | null => (value === null ? null : toDate(value));

/** A failure no retry can mend (a payload that no longer matches its topic's schema). */
export class PermanentFailure extends Error {}

/**
 * The pg-boss job id of a message's attempt: the message id for the first, a UUID derived from
 * (message id, generation) for the next ones. Deterministic, so handing one over twice makes one job.
 */
export function jobIdFor(messageId: string, generation: number): string {
  if (generation === 0) return messageId;
  const hex = createHash('sha256').update(`${messageId}/${generation}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A message's own retry policy, as stored (JSON), checked; null when it has none. */
export function policyOf(stored: unknown): RetryPolicy | null {
  if (stored === null || stored === undefined) return null;
  const policy = typeof stored === 'string' ? (JSON.parse(stored) as unknown) : stored;
  assertRetryPolicy(policy);
  return policy;
}

/** Where and how a payload fails its schema, without the offending values (they may be secrets). */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`).join('; ');
}
