import type PgBoss from 'pg-boss';
import type { Clock } from '../../application/ports/clock';
import type { Logger } from '../../application/ports/logger';
import type { Metrics } from '../../application/ports/metrics';
import type { ScheduledJob } from '../../application/ports/scheduled-job';
import type { Database } from '../persistence/database';
import { type CronSchedule, parseCron } from './cron';
import { safeErrorText } from './error-text';
import { JobLoop } from './job-loop';
import { ensurePgBossQueue } from './pg-boss-queue';
import { withTimeout } from './timeout';

/** The pg-boss queue (and schedule) name of a scheduled job. */
export const scheduleQueueName = (name: string): string => `tollgate.cron.${name}`;

const DEFAULT_TIMEOUT_SECONDS = 60;

export interface PgBossSchedulerDeps {
  boss: PgBoss;
  db: Database;
  clock: Clock;
  logger: Logger;
  /** How often an idle worker of a scheduled job polls for its next run; 5 s unless given. */
  pollingIntervalSeconds?: number;
  /** How often this process evaluates the schedules; 10 s unless given. */
  evaluateEveryMs?: number;
  /** Counts each failed run by job name (tollgate_job_failures_total). */
  metrics?: Pick<Metrics, 'jobFailed'>;
}

/** How often a process evaluates the schedules unless told otherwise. */
const DEFAULT_EVALUATE_EVERY_MS = 10_000;

/**
 * Scheduled jobs on pg-boss queues, one queue (`tollgate.cron.<name>`) each. Every process that
 * runs jobs evaluates the schedules every 10 s against the database's clock (one `select now()`)
 * and, for each job whose cron matches the current minute, sends one job to its queue with
 * pg-boss's singleton key and 60-second slot: pg-boss creates one job per minute however many
 * processes send it, and hands it to one worker. So a tick runs once across all processes.
 *
 * pg-boss's own cron (its `schedule` option) is not used: it evaluates every stored schedule with
 * cron-parser, about a millisecond each (more in a busy process), which stopped a serving process's
 * event loop for 10 to 150 ms every 10 s. Here an evaluation is a few array reads per job
 * (`parseCron`), and a process sends each job at most once per minute.
 *
 * The queue's `short` policy keeps at most one run waiting; a run that lasts longer than its cron
 * interval may overlap the next one, so runs are idempotent. A failed run is not retried: the next
 * tick runs it again. An evaluation that fails (the database away) is logged and tried again at
 * the next interval.
 */
export class PgBossScheduler {
  private readonly jobs = new Map<string, { job: ScheduledJob; schedule: CronSchedule; queue: string; timeoutSeconds: number; sentMinute: number }>();
  private readonly loops: JobLoop<unknown>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private evaluating: Promise<void> | null = null;

  constructor(private readonly deps: PgBossSchedulerDeps) {}

  add(job: ScheduledJob): void {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(job.name)) throw new Error(`invalid scheduled job name ${JSON.stringify(job.name)}`);
    if (this.jobs.has(job.name)) throw new Error(`scheduled job ${job.name} is declared twice`);
    const schedule = parseCron(job.cron);
    this.jobs.set(job.name, {
      job,
      schedule,
      queue: scheduleQueueName(job.name),
      timeoutSeconds: job.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      sentMinute: -1,
    });
  }

  /** Creates the queues, starts one worker per scheduled job in this process, and evaluates the schedules from now on. */
  async start(): Promise<void> {
    const { boss } = this.deps;
    for (const entry of this.jobs.values()) {
      const { job, queue, timeoutSeconds } = entry;
      await ensurePgBossQueue(boss, queue, { policy: 'short' });
      // A schedule stored by pg-boss's cron (earlier versions) would still be evaluated by a process of such a version.
      await boss.unschedule(queue);
      const loop = new JobLoop({
        boss,
        queue,
        batchSize: 1,
        pollingIntervalMs: (this.deps.pollingIntervalSeconds ?? 5) * 1000,
        logger: this.deps.logger,
        handle: async () => {
          await this.run(job, timeoutSeconds);
          return undefined;
        },
      });
      loop.start();
      this.loops.push(loop);
    }
    if (this.jobs.size === 0) return;
    const every = this.deps.evaluateEveryMs ?? DEFAULT_EVALUATE_EVERY_MS;
    this.timer = setInterval(() => void this.evaluate(), every);
    this.timer.unref();
    await this.evaluate();
  }

  /**
   * Sends each job whose cron matches the database's current minute, unless this process sent it
   * in that minute already. Resolves when done; a failure is logged, not thrown.
   */
  evaluate(): Promise<void> {
    if (this.evaluating) return this.evaluating;
    this.evaluating = this.evaluateNow().finally(() => {
      this.evaluating = null;
    });
    return this.evaluating;
  }

  private async evaluateNow(): Promise<void> {
    const { boss, db, logger } = this.deps;
    try {
      const [row] = await db.withContext(() => db.query<{ now: Date }>('select now() as now'));
      const now = new Date(row!.now);
      const minute = Math.floor(now.getTime() / 60_000);
      for (const entry of this.jobs.values()) {
        if (this.timer === null) return; // stopped
        if (entry.sentMinute === minute || !entry.schedule.matches(now)) continue;
        // One job per queue and 60-second slot (the database's), however many processes send it.
        await boss.send(entry.queue, {}, { singletonKey: 'tick', singletonSeconds: 60, retryLimit: 0, expireInSeconds: entry.timeoutSeconds + 2 });
        entry.sentMinute = minute;
      }
    } catch (e) {
      logger.warn({ error: safeErrorText(e) }, 'scheduled jobs not evaluated');
    }
  }

  /** Stops the workers, waiting for the runs in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.evaluating;
    const loops = this.loops.splice(0);
    await Promise.all(loops.map((l) => l.stop()));
  }

  private async run(job: ScheduledJob, timeoutSeconds: number): Promise<void> {
    const { db, clock, logger } = this.deps;
    const firedAt = clock.now();
    try {
      await db.withContext(() => withTimeout(timeoutSeconds, (signal) => job.run({ firedAt, signal })));
    } catch (e) {
      logger.warn({ job: job.name, error: safeErrorText(e) }, 'scheduled job failed');
      this.deps.metrics?.jobFailed(job.name);
      throw e;
    }
  }
}
