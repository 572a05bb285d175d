import type PgBoss from 'pg-boss';
import type { Logger } from '../../application/ports/logger';
import { safeErrorText } from './error-text';

export interface JobLoopOptions<T> {
  boss: Pick<PgBoss, 'fetch' | 'complete' | 'fail'>;
  queue: string;
  batchSize: number;
  /** How long an idle loop waits between fetches, unless `notify` wakes it. */
  pollingIntervalMs: number;
  /**
   * Runs a fetched batch and answers how its jobs ended (those to fail, with the message to fail
   * them with, and those done), or nothing: then every job is done when it resolves and failed
   * when it throws.
   */
  handle(jobs: PgBoss.Job<T>[]): Promise<BatchOutcome | undefined>;
  logger: Logger;
}

/** How a batch's jobs ended, as its handler says. */
export interface BatchOutcome {
  done: string[];
  failed: string[];
  /** The message the failed jobs are failed with. */
  failure: string;
}

/** The wait after a fetch or a settle failed: the database is likely away. */
const ERROR_BACKOFF_MS = 1_000;

/**
 * How long before its jobs' expiry a worker stops trying to settle a batch: after that pg-boss may
 * have expired them (its clock is the database's) and given them to another worker, whose run a
 * late settle would end.
 */
const SETTLE_MARGIN_MS = 3_000;

/**
 * One worker of a pg-boss queue: fetch a batch, run it, settle it, again. It replaces pg-boss's own
 * `work()`, whose loop settles each batch without awaiting it (an error there, such as the database
 * going away during a restart, is an unhandled rejection that ends the process). Here every call to
 * the database is awaited and caught: a failed fetch waits a second and tries again. Telling pg-boss
 * how a batch ended is tried again every second while its jobs are still this worker's (before the
 * first of them expires, less a margin): a connection lost for a moment (a failover, a restart, a
 * proxy's reset) costs a second, not the wait for pg-boss to expire the jobs (its maintenance runs
 * every 2 minutes). A job that still could not be settled stays active until pg-boss expires it and
 * runs it again (the outbox's handlers are idempotent). A full batch is followed by another fetch
 * at once.
 */
export class JobLoop<T> {
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private notified = false;
  private running: Promise<void> | null = null;
  /** A batch is being run. */
  busy = false;

  constructor(private readonly options: JobLoopOptions<T>) {}

  start(): void {
    this.stopping = false;
    this.running ??= this.loop().finally(() => (this.running = null));
  }

  /** Fetches at once (or as soon as the running batch is done). */
  notify(): void {
    this.notified = true;
    this.wakeUp?.();
  }

  /** Stops fetching and waits for the running batch to be settled. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    const { boss, queue, batchSize, logger } = this.options;
    while (!this.stopping) {
      this.notified = false;
      let wait = this.options.pollingIntervalMs;
      try {
        const jobs = await boss.fetch<T>(queue, { batchSize, priority: false });
        if (jobs && jobs.length > 0) {
          if (jobs.length >= batchSize) wait = 0;
          if (!(await this.run(jobs))) wait = ERROR_BACKOFF_MS;
        }
      } catch (e) {
        logger.warn({ queue, error: safeErrorText(e) }, 'job queue: fetching failed; trying again in 1 s');
        wait = ERROR_BACKOFF_MS;
      }
      if (wait > 0 && !this.notified && !this.stopping) await this.sleep(wait);
    }
  }

  /** Runs a batch and tells pg-boss how its jobs ended; false when that could not be told. */
  private async run(jobs: PgBoss.Job<T>[]): Promise<boolean> {
    const { queue, logger } = this.options;
    const ids = jobs.map((j) => j.id);
    // The jobs are this worker's until the first of them expires (counted from the fetch, just before now).
    const expiresInMs = Math.min(...jobs.map((j) => Number(j.expireInSeconds) || 0)) * 1000;
    const settleBy = Date.now() + expiresInMs - SETTLE_MARGIN_MS;
    this.busy = true;
    try {
      let outcome: BatchOutcome;
      try {
        outcome = (await this.options.handle(jobs)) ?? { done: ids, failed: [], failure: '' };
      } catch (e) {
        outcome = { done: [], failed: ids, failure: safeErrorText(e) };
      }
      // What is left to tell: a retry after a lost connection sends only that (failing a job twice
      // would spend one of its retries).
      const unsettled = { failed: [...outcome.failed], done: [...outcome.done] };
      for (let tries = 1; ; tries++) {
        try {
          await this.settle(unsettled, outcome.failure);
          if (tries > 1) logger.info({ queue, jobs: ids.length, tries }, 'job queue: a batch was settled once the database answered again');
          return true;
        } catch (e) {
          if (this.stopping || Date.now() + ERROR_BACKOFF_MS > settleBy) {
            // The jobs stay active; pg-boss expires them and they run again (a run of a job whose
            // work is already recorded does nothing).
            logger.warn({ queue, jobs: ids.length, error: safeErrorText(e) }, 'job queue: a batch could not be settled; it runs again once it expires');
            return false;
          }
          await this.sleep(ERROR_BACKOFF_MS);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  /** Fails the failed jobs one by one and completes the rest at once, taking each off `unsettled` once told. */
  private async settle(unsettled: { failed: string[]; done: string[] }, failure: string): Promise<void> {
    const { boss, queue } = this.options;
    while (unsettled.failed.length > 0) {
      await boss.fail(queue, unsettled.failed[0]!, { message: failure });
      unsettled.failed.shift();
    }
    if (unsettled.done.length > 0) {
      await boss.complete(queue, unsettled.done);
      unsettled.done = [];
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
