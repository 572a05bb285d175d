import type PgBoss from 'pg-boss';
import type { Clock } from '../../application/ports/clock';
import type { Logger } from '../../application/ports/logger';
import type { Metrics } from '../../application/ports/metrics';
import type { ScheduledJob } from '../../application/ports/scheduled-job';
import type { Database } from '../persistence/database';
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
  /** Counts each failed run by job name (tollgate_job_failures_total). */
  metrics?: Pick<Metrics, 'jobFailed'>;
}

/**
 * Scheduled jobs on pg-boss cron. Each job is a pg-boss schedule (stored in the database, so every
 * process declaring it shares it) on a queue of its own. The processes started with
 * `schedule: true` take turns evaluating the schedules (one per interval, by a database
 * timestamp), and one job is created per cron tick however many evaluate it; pg-boss hands that
 * job to one worker. So a tick runs once across all processes.
 *
 * The queue's `short` policy keeps at most one run waiting; a run that lasts longer than its cron
 * interval may overlap the next one, so runs are idempotent. A failed run is not retried: the next
 * tick runs it again.
 */
export class PgBossScheduler {
  private readonly jobs = new Map<string, ScheduledJob>();
  private readonly loops: JobLoop<unknown>[] = [];

  constructor(private readonly deps: PgBossSchedulerDeps) {}

  add(job: ScheduledJob): void {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(job.name)) throw new Error(`invalid scheduled job name ${JSON.stringify(job.name)}`);
    if (this.jobs.has(job.name)) throw new Error(`scheduled job ${job.name} is declared twice`);
    this.jobs.set(job.name, job);
  }

  /** Stores every schedule and starts one worker per scheduled job in this process. */
  async start(): Promise<void> {
    const { boss } = this.deps;
    for (const job of this.jobs.values()) {
      const queue = scheduleQueueName(job.name);
      const timeoutSeconds = job.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
      await ensurePgBossQueue(boss, queue, { policy: 'short' });
      await boss.schedule(queue, job.cron, {}, { tz: 'UTC', retryLimit: 0, expireInSeconds: timeoutSeconds + 2 });
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
  }

  /** Stops the workers, waiting for the runs in progress. */
  async stop(): Promise<void> {
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
