import type { BatchOutcome, DeliveryContext } from '../../application/ports/outbox';
import { safeErrorText } from './error-text';
import type { OutboxHandOver } from './outbox-handover';
import {
  ABANDONED,
  describeIssues,
  openedKey,
  PermanentFailure,
  policyOf,
  type Due,
  type JobData,
  type MessageRow,
  type Opened,
  type PgBossOutboxDeps,
  type Runnable,
  type SettleContext,
  type Succeeded,
} from './outbox-model';
import type { OutboxTopics } from './outbox-topics';
import type { QueueSettings } from './queues';
import { retryDelaySeconds } from './retry-policy';
import { withTimeout } from './timeout';

type AttemptDeps = Pick<PgBossOutboxDeps, 'db' | 'box' | 'clock' | 'logger' | 'metrics'>;

/** What one attempt's handler came to: a success, or the error to record (the payload's values left out). */
export type AttemptResult = { ok: true; finishedAt: Date } | { ok: false; error: string };

/**
 * The attempts' bookkeeping in `outbox_attempts` and `outbox_messages`: opening the attempts of a
 * batch, turning each into a handler to run, running the handlers within their timeouts, and
 * recording the successes (together) and the failures (each with the next attempt scheduled per
 * the retry policy, or the message given up).
 */
export class OutboxAttempts {
  constructor(
    private readonly deps: AttemptDeps,
    private readonly topics: OutboxTopics,
    private readonly handOver: OutboxHandOver,
  ) {}

  /**
   * Opens the attempt of each job, in one statement: for each message still pending at the job's
   * generation, either the attempts its previous run left running are closed as abandoned (their
   * worker died or was stopped before settling them), or a new attempt is recorded as running.
   * Answers, per job (`openedKey`), the row and what was done.
   */
  async open(jobs: JobData[]): Promise<Map<string, Opened>> {
    const now = this.deps.clock.now();
    const rows = await this.deps.db.query<MessageRow & { job_generation: number; abandoned: string | number; started: number | null }>(
      `with job as (
         select * from jsonb_to_recordset(?::jsonb) as j(id uuid, generation integer)
       ), m as (
         select m.id, m.topic, m.subject, m.payload_enc, m.status, m.attempts, m.generation, m.retry_policy, m.next_attempt_at, m.dispatched_at,
                job.generation as job_generation, m.status = 'pending' and m.generation = job.generation as current
           from outbox_messages m join job on job.id = m.id
       ), abandoned as (
         update outbox_attempts a set status = 'failed', finished_at = ?, error = ?
           from m where m.current and a.message_id = m.id and a.status = 'running'
         returning a.message_id
       ), started as (
         insert into outbox_attempts (message_id, attempt, status, started_at)
         select m.id, coalesce((select max(x.attempt) from outbox_attempts x where x.message_id = m.id), 0) + 1, 'running', ?
           from m
          where m.current and not exists (select 1 from outbox_attempts r where r.message_id = m.id and r.status = 'running')
         returning message_id, attempt
       )
       select m.id, m.topic, m.subject, m.payload_enc, m.status, m.attempts, m.generation, m.retry_policy, m.next_attempt_at, m.dispatched_at, m.job_generation,
              case when m.current then (select count(*) from abandoned where abandoned.message_id = m.id) else 0 end as abandoned,
              case when m.current then s.attempt end as started
         from m left join started s on s.message_id = m.id`,
      [JSON.stringify(jobs.map((j) => ({ id: j.id, generation: j.generation }))), now, ABANDONED, now],
      { prepare: 'outbox_open_attempts' },
    );
    return new Map(
      rows.map((r) => [openedKey(r.id, r.job_generation), { row: r, started: r.started === null ? null : Number(r.started), abandoned: Number(r.abandoned) }]),
    );
  }

  /**
   * What to do with one job's attempt, as `open` opened it: nothing when it is over already (a
   * later attempt was scheduled: handed over here if its hand-off was lost), the abandoned
   * attempts closed as failed, a payload that can no longer be read failed for good, or the
   * handler to run with the payload decrypted and checked.
   */
  async prepare(queue: QueueSettings, job: JobData, opened: Opened | null): Promise<Runnable | null> {
    if (opened?.row.status !== 'pending') return null;
    const row = opened.row;
    if (row.generation !== job.generation) {
      // This job's attempt is over and a later one was scheduled; hand that one over if the
      // process that scheduled it died before it could.
      if (row.generation > job.generation && row.dispatched_at === null && row.next_attempt_at) {
        await this.handOver.dispatch({ id: row.id, topic: row.topic, generation: row.generation, next_attempt_at: row.next_attempt_at });
      }
      return null;
    }
    const definition = this.topics.find(row.topic);
    const topicQueue = definition ? this.topics.queue(definition.topic.queue) : queue;
    const policy = policyOf(row.retry_policy) ?? definition?.topic.retry ?? topicQueue.retry;
    const settle: SettleContext = { row, policy, reviveAfterSeconds: topicQueue.reviveFailedAfterSeconds };

    // An attempt of this job still marked running was abandoned: its worker died, or was stopped,
    // before settling it. It is closed as failed; the retry policy says when the next one runs.
    if (opened.abandoned > 0) {
      await this.settleFailure({ ...settle, attempt: null, failures: opened.abandoned, error: ABANDONED, permanent: false });
      return null;
    }
    const attempt = opened.started;
    if (attempt === null) return null;

    let payload: unknown;
    try {
      if (!definition) throw new Error(`topic ${row.topic} is not defined in this process`);
      if (!row.payload_enc) throw new PermanentFailure('the payload is missing');
      const parsed = definition.schema.safeParse(JSON.parse(this.deps.box.decrypt(row.payload_enc)));
      if (!parsed.success) throw new PermanentFailure(`the payload does not match the topic's schema: ${describeIssues(parsed.error)}`);
      payload = parsed.data;
      const handler = this.topics.handler(row.topic);
      if (!handler) throw new Error(`no handler for topic ${row.topic} in this process`);
      return { row, attempt, payload, handler, timeoutSeconds: definition.topic.timeoutSeconds ?? topicQueue.timeoutSeconds, settle };
    } catch (e) {
      const error = safeErrorText(e, payload);
      this.deps.logger.warn({ outboxId: row.id, topic: row.topic, attempt, error }, 'outbox delivery attempt failed');
      this.deps.metrics?.jobFailed(row.topic);
      await this.settleFailure({ ...settle, attempt, failures: 1, error, permanent: e instanceof PermanentFailure });
      return null;
    }
  }

  /**
   * Runs the handler of attempts of one topic, each within the attempt's timeout: a batch handler
   * once for all of them, another once per attempt, side by side. Answers, per attempt, its success
   * or the error to record (the payload's values left out).
   */
  async run(runs: Runnable[]): Promise<AttemptResult[]> {
    const { clock, logger } = this.deps;
    const failure = (run: Runnable, e: unknown) => {
      const error = safeErrorText(e, run.payload);
      logger.warn({ outboxId: run.row.id, topic: run.row.topic, attempt: run.attempt, error }, 'outbox delivery attempt failed');
      this.deps.metrics?.jobFailed(run.row.topic);
      return { ok: false as const, error };
    };
    const context = (run: Runnable, signal: AbortSignal): DeliveryContext => ({
      messageId: run.row.id,
      attempt: run.attempt,
      signal,
      ...(run.ended ? { ended: run.ended } : {}),
    });
    const { handleBatch } = runs[0]!.handler;
    if (handleBatch) {
      const timeoutSeconds = Math.max(...runs.map((r) => r.timeoutSeconds));
      let outcomes: BatchOutcome[];
      try {
        outcomes = await this.deps.db.withContext(() =>
          withTimeout(timeoutSeconds, (signal) => handleBatch(runs.map((run) => ({ payload: run.payload as never, context: context(run, signal) })))),
        );
      } catch (e) {
        return runs.map((run) => failure(run, e));
      }
      const finishedAt = clock.now();
      return runs.map((run, i) => {
        const outcome = outcomes[i];
        if (outcome === undefined) return failure(run, new Error('the batch handler answered no outcome for this message'));
        return outcome === null ? { ok: true as const, finishedAt } : failure(run, outcome);
      });
    }
    return Promise.all(
      runs.map(async (run) => {
        try {
          await this.deps.db.withContext(() => withTimeout(run.timeoutSeconds, (signal) => run.handler.handle(run.payload as never, context(run, signal))));
          return { ok: true as const, finishedAt: clock.now() };
        } catch (e) {
          return failure(run, e);
        }
      }),
    );
  }

  /** Records the successes of a batch: each attempt succeeded, each message delivered and its payload erased. */
  async settleSuccesses(succeeded: Succeeded[]): Promise<void> {
    await this.deps.db.query(
      `with done as (
         select * from jsonb_to_recordset(?::jsonb) as d(id uuid, attempt integer, finished_at timestamptz)
       ), attempt as (
         update outbox_attempts a set status = 'succeeded', finished_at = done.finished_at
           from done where a.message_id = done.id and a.attempt = done.attempt
       )
       update outbox_messages m set status = 'delivered', delivered_at = done.finished_at, payload_enc = null, attempts = m.attempts + 1,
              last_error = null, next_attempt_at = null
         from done where m.id = done.id and m.status = 'pending'`,
      [JSON.stringify(succeeded.map((s) => ({ id: s.id, attempt: s.attempt, finished_at: s.finishedAt.toISOString() })))],
      { prepare: 'outbox_settle_successes' },
    );
  }

  /**
   * Records failed attempts (`attempt`, or ones closed already when null) and either schedules the
   * next attempt per the retry policy or gives the message up.
   */
  async settleFailure(input: SettleContext & { attempt: number | null; failures: number; error: string; permanent: boolean }): Promise<void> {
    const { db, clock, logger } = this.deps;
    const { row } = input;
    const now = clock.now();
    const attempts = row.attempts + input.failures;
    const delay = input.permanent ? null : retryDelaySeconds(input.policy, attempts);
    const closeAttempt = `with attempt as (
        update outbox_attempts set status = 'failed', finished_at = ?, error = ? where message_id = ? and attempt = ? and status = 'running'
      )`;
    const closeParams = [now, input.error, row.id, input.attempt ?? 0];
    if (delay === null) {
      const reviveAt = !input.permanent && input.reviveAfterSeconds !== undefined ? new Date(now.getTime() + input.reviveAfterSeconds * 1000) : null;
      await db.query(
        `${closeAttempt}
         update outbox_messages set status = 'failed', attempts = ?, last_error = ?, next_attempt_at = null, revive_at = ?
          where id = ? and generation = ? and status = 'pending'`,
        [...closeParams, attempts, input.error, reviveAt, row.id, row.generation],
      );
      logger.warn({ outboxId: row.id, topic: row.topic, attempts, reviveAt }, 'outbox message failed for good');
      return;
    }
    const nextAttemptAt = new Date(now.getTime() + delay * 1000);
    const [next] = await db.query<Due>(
      `${closeAttempt}
       update outbox_messages set attempts = ?, last_error = ?, generation = generation + 1, next_attempt_at = ?, dispatched_at = null
        where id = ? and generation = ? and status = 'pending'
        returning id, topic, generation, next_attempt_at`,
      [...closeParams, attempts, input.error, nextAttemptAt, row.id, row.generation],
    );
    if (next) await this.handOver.dispatch(next);
  }
}
