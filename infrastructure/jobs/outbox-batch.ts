import type PgBoss from 'pg-boss';
import { safeErrorText } from './error-text';
import type { BatchOutcome } from './job-loop';
import type { OutboxAttempts } from './outbox-attempts';
import type { OutboxHandOver } from './outbox-handover';
import { openedKey, type Due, type JobData, type Opened, type PgBossOutboxDeps, type Runnable, type Succeeded } from './outbox-model';
import type { QueueSettings } from './queues';
import type { SubjectLoad } from './subject-load';

type BatchDeps = Pick<PgBossOutboxDeps, 'db' | 'clock' | 'logger'>;

/**
 * Runs a batch of jobs a worker loop fetched together, and answers how each ended (the worker
 * loop tells pg-boss). A queue with a subject isolation first hands back the jobs of subjects
 * saturated in this process.
 */
export class OutboxBatch {
  constructor(
    private readonly deps: BatchDeps,
    private readonly attempts: OutboxAttempts,
    private readonly handOver: OutboxHandOver,
  ) {}

  /**
   * Runs a batch of jobs fetched together. Their bookkeeping is shared: one statement opens every
   * attempt of the batch (closing those a dead worker abandoned), the handlers run side by side (a
   * topic with a batch handler gets its messages of the batch in one call), and one statement
   * records every success; a failure is recorded on its own. Each job still succeeds or fails on
   * its own: only a failure to record one fails its job, which pg-boss then runs again. `load`
   * counts the attempts in flight by subject (a queue with a subject isolation).
   */
  async run(queue: QueueSettings, fetched: PgBoss.Job<JobData>[], load: SubjectLoad | undefined): Promise<BatchOutcome> {
    const { db, logger } = this.deps;
    const deferred = load ? await this.deferSaturated(load, fetched) : new Set<string>();
    const jobs = deferred.size ? fetched.filter((job) => !deferred.has(job.id)) : fetched;
    if (jobs.length === 0) return { done: [...deferred], failed: [], failure: '' };
    let opened: Map<string, Opened>;
    try {
      opened = await db.withContext(() => this.attempts.open(jobs.map((job) => job.data)));
    } catch (e) {
      logger.error({ err: e, queue: queue.name }, 'outbox delivery bookkeeping failed');
      return { done: [...deferred], failed: jobs.map((job) => job.id), failure: safeErrorText(e) };
    }
    // What each job's run came to: nothing left to record, a success to record with the batch, or
    // a failure to record the attempt (the job fails and pg-boss runs it again).
    const outcomes = new Map<string, 'done' | 'failed' | Succeeded>();
    const bookkeepingFailed = (job: PgBoss.Job<JobData>, e: unknown) => {
      logger.error({ err: e, outboxId: job.data.id }, 'outbox delivery bookkeeping failed');
      outcomes.set(job.id, 'failed');
    };
    const prepared = await Promise.allSettled(
      jobs.map((job) => db.withContext(() => this.attempts.prepare(queue, job.data, opened.get(openedKey(job.data.id, job.data.generation)) ?? null))),
    );
    const runs: Array<Runnable & { jobId: string }> = [];
    for (const [i, result] of prepared.entries()) {
      const job = jobs[i]!;
      if (result.status === 'rejected') bookkeepingFailed(job, result.reason);
      else if (result.value === null) outcomes.set(job.id, 'done');
      else {
        const run = { ...result.value, jobId: job.id };
        if (load && run.row.subject !== null) {
          load.start(job.id, run.row.subject, run.timeoutSeconds, Date.now());
          run.ended = () => load.end(job.id, Date.now());
        }
        runs.push(run);
      }
    }
    const byTopic = new Map<string, Array<Runnable & { jobId: string }>>();
    for (const run of runs) byTopic.set(run.row.topic, [...(byTopic.get(run.row.topic) ?? []), run]);
    await Promise.all(
      [...byTopic.values()].map(async (group) => {
        const results = await this.attempts.run(group);
        for (const run of group) run.ended?.();
        await Promise.all(
          group.map(async (run, i) => {
            const result = results[i]!;
            if (result.ok) {
              outcomes.set(run.jobId, { id: run.row.id, attempt: run.attempt, finishedAt: result.finishedAt });
              return;
            }
            try {
              await db.withContext(() =>
                this.attempts.settleFailure({ ...run.settle, attempt: run.attempt, failures: 1, error: result.error, permanent: false }),
              );
              outcomes.set(run.jobId, 'done');
            } catch (e) {
              bookkeepingFailed(jobs.find((j) => j.id === run.jobId)!, e);
            }
          }),
        );
      }),
    );
    const done: string[] = [...deferred];
    const failed: string[] = [];
    const succeeded: Array<Succeeded & { jobId: string }> = [];
    for (const job of jobs) {
      const outcome = outcomes.get(job.id);
      if (outcome === 'failed' || outcome === undefined) failed.push(job.id);
      else if (outcome === 'done') done.push(job.id);
      else succeeded.push({ ...outcome, jobId: job.id });
    }
    if (succeeded.length) {
      try {
        await db.withContext(() => this.attempts.settleSuccesses(succeeded));
        done.push(...succeeded.map((s) => s.jobId));
      } catch (e) {
        logger.error({ err: e, queue: queue.name }, 'outbox delivery bookkeeping failed');
        failed.push(...succeeded.map((s) => s.jobId));
      }
    }
    return { done, failed, failure: 'the outbox could not record the attempt' };
  }

  /**
   * Hands back to the queue the jobs of subjects saturated in this process (they hold the most slow
   * attempts the queue's isolation allows): each message's next job is scheduled after the wait
   * the subject's load says (and up to a second later, so that they do not all come back at
   * once), with no attempt recorded or counted. Answers the job ids handed back, to be
   * completed. Nothing is asked of the database while no subject is saturated; should the statement
   * fail, the jobs run as usual.
   */
  private async deferSaturated(load: SubjectLoad, jobs: PgBoss.Job<JobData>[]): Promise<Set<string>> {
    const saturated = load.saturated(Date.now());
    if (saturated.size === 0) return new Set();
    const now = this.deps.clock.now().getTime();
    const subjects = [...saturated].map(([subject, waitMs]) => ({ subject, due: new Date(now + waitMs + Math.random() * 1_000).toISOString() }));
    try {
      const moved = await this.deps.db.withContext(() =>
        this.deps.db.query<Due & { job_generation: number }>(
          `with job as (
             select * from jsonb_to_recordset(?::jsonb) as j(id uuid, generation integer)
           ), s as (
             select * from jsonb_to_recordset(?::jsonb) as s(subject text, due timestamptz)
           )
           update outbox_messages m set generation = m.generation + 1, next_attempt_at = s.due, dispatched_at = null
             from job, s
            where m.id = job.id and m.generation = job.generation and m.status = 'pending' and m.subject = s.subject
            returning m.id, m.topic, m.generation, m.next_attempt_at, job.generation as job_generation`,
          [JSON.stringify(jobs.map((j) => ({ id: j.data.id, generation: j.data.generation }))), JSON.stringify(subjects)],
        ),
      );
      const handedBack = new Set(moved.map((m) => openedKey(m.id, m.job_generation)));
      for (const next of moved) await this.handOver.dispatch(next);
      return new Set(jobs.filter((j) => handedBack.has(openedKey(j.data.id, j.data.generation))).map((j) => j.id));
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'outbox: jobs of a saturated subject could not be handed back; they run now');
      return new Set();
    }
  }
}
