import type { OutboxBatch } from './outbox-batch';
import { pgBossQueueName, SWEEP_BATCH, toDate, type JobData, type PgBossOutboxDeps } from './outbox-model';
import type { OutboxTopics } from './outbox-topics';
import { JobLoop } from './job-loop';
import type { QueueSettings } from './queues';
import { SubjectLoad } from './subject-load';
import { OutboxWakeups } from './wakeups';

type WorkerDeps = Pick<PgBossOutboxDeps, 'db' | 'boss' | 'clock' | 'logger' | 'wakeUrl'>;

/**
 * How often each worker process looks for attempts still running past their job's expiry (their
 * worker died or stalled) and, when it finds one, has pg-boss fail the expired jobs at once instead
 * of at its next maintenance (every 2 minutes).
 */
const EXPIRY_CHECK_MS = 2_000;
/** How long stopping waits for the batches the worker loops are running. */
const STOP_WAIT_MS = 5_000;
/** A batch still running this long gets a spare worker loop beside its own (a queue with `maxWorkerLoops`). */
const SPARE_AFTER_MS = 250;
/** A spare worker loop idle this long stops. */
const SPARE_IDLE_MS = 3_000;

/** One worker loop of a queue in this process. */
interface WorkerLoop {
  jobs: JobLoop<JobData>;
  /** Started beside loops held by slow batches; stops once idle. */
  spare: boolean;
  /** When its last batch ended (or it started). */
  idleSince: number;
}

/**
 * This process's workers: the worker loops of each queue with a topic handled here (and their
 * spares, beside batches held by slow attempts), the listener that wakes them when any process
 * hands over a job due now, and the check for attempts abandoned by a dead worker.
 */
export class OutboxWorkers {
  /** This process's worker loops, by queue name. */
  private readonly loops = new Map<string, WorkerLoop[]>();
  /** Attempts in flight in this process by subject, for the queues with a subject isolation. */
  private readonly subjectLoads = new Map<string, SubjectLoad>();
  private spareTimer: NodeJS.Timeout | undefined;
  private nextLoop = 0;
  private wakeups: OutboxWakeups | null = null;
  private expiryTimer: NodeJS.Timeout | undefined;
  private expiryCheck: Promise<void> | null = null;
  private working = false;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly topics: OutboxTopics,
    private readonly batch: OutboxBatch,
  ) {}

  /**
   * Starts the workers of every queue that has a topic handled in this process, the listener that
   * wakes them when a job is handed over, and the check for attempts abandoned by a dead worker.
   */
  async start(): Promise<void> {
    const queues = this.topics.handledQueues();
    this.working = true;
    for (const queue of queues) {
      const pgQueue = await this.topics.ensureQueue(queue.name);
      this.loops.set(queue.name, []);
      for (let i = 0; i < queue.concurrency; i++) this.startLoop(queue, pgQueue, false);
    }
    if (queues.some((queue) => (queue.maxWorkerLoops ?? 0) > queue.concurrency)) {
      this.spareTimer = setInterval(() => this.retireIdleSpares(), SPARE_IDLE_MS / 3);
      this.spareTimer.unref();
    }
    if (queues.length > 0 && this.deps.wakeUrl) {
      this.wakeups = new OutboxWakeups(this.deps.wakeUrl, this.deps.logger, (queue) => this.wake(queue));
      await this.wakeups.start();
    }
    if (queues.length > 0) {
      this.expiryTimer = setInterval(() => {
        this.expiryCheck ??= this.expireAbandoned()
          .then(() => undefined)
          .catch((e: unknown) => this.deps.logger.warn({ err: e }, 'outbox: the check for abandoned attempts failed'))
          .finally(() => (this.expiryCheck = null));
      }, EXPIRY_CHECK_MS);
      this.expiryTimer.unref();
    }
  }

  /**
   * Stops the worker loops (waiting up to 5 s for the batches they are running: a batch still
   * running then is settled by expiry and runs again), the wake-up listener and the
   * abandoned-attempt check (before the job queue stops).
   */
  async stop(): Promise<void> {
    this.working = false;
    clearInterval(this.expiryTimer);
    this.expiryTimer = undefined;
    clearInterval(this.spareTimer);
    this.spareTimer = undefined;
    const loops = [...this.loops.values()].flat();
    this.loops.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(loops.map((l) => l.jobs.stop())), new Promise((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    await this.expiryCheck;
    await this.wakeups?.stop();
    this.wakeups = null;
  }

  /** A job of `queue` was handed over due now: wakes this process's workers when no listener will (the notification wakes them otherwise). */
  dueNow(queue: string): void {
    if (this.wakeups === null) this.wake(queue);
  }

  /**
   * An attempt still running past its job's expiry was abandoned: its worker died (SIGKILL, a lost
   * machine) or stalled. pg-boss fails such jobs (and runs them again) in its maintenance, which
   * runs every 2 minutes; when one is found, this asks pg-boss to do it now. The run that follows
   * closes the abandoned attempt and schedules the next one per the retry policy. Only attempts of
   * the outbox's own queues are looked at, through a small index of running attempts; pg-boss's
   * own step (an atomic, locked statement over its job table) runs only when one is overdue.
   */
  async expireAbandoned(): Promise<boolean> {
    if (!this.working) return false;
    const { db, clock } = this.deps;
    const now = clock.now().getTime();
    const shortest = Math.min(...this.topics.all().map((d) => this.topics.expirySeconds(d)));
    const overdue = await db.withContext(() =>
      db.query<{ topic: string; started_at: Date | string }>(
        `select m.topic, a.started_at from outbox_attempts a join outbox_messages m on m.id = a.message_id
          where a.status = 'running' and a.started_at < ? order by a.started_at limit ${SWEEP_BATCH}`,
        [new Date(now - shortest * 1000)],
      ),
    );
    const expired = overdue.some((a) => {
      const definition = this.topics.find(a.topic);
      return definition !== undefined && toDate(a.started_at).getTime() < now - this.topics.expirySeconds(definition) * 1000;
    });
    if (!expired || !this.working) return false;
    await this.deps.boss.expire();
    return true;
  }

  /**
   * A job of `queue` is due now (a notification, or this process handed it over): an idle worker
   * loop fetches at once; when every loop is busy, one fetches again as soon as its batch is done.
   */
  private wake(queue: string): void {
    const loops = this.loops.get(queue);
    if (!loops?.length) return;
    const idle = loops.find((l) => !l.jobs.busy);
    if (!idle && this.addSpare(queue)) return;
    (idle ?? loops[this.nextLoop++ % loops.length]!).jobs.notify();
  }

  /** The count of attempts in flight by subject of a queue with a subject isolation. */
  private loadOf(queue: QueueSettings): SubjectLoad | undefined {
    if (!queue.subjectIsolation) return undefined;
    let load = this.subjectLoads.get(queue.name);
    if (!load) {
      load = new SubjectLoad(queue.subjectIsolation);
      this.subjectLoads.set(queue.name, load);
    }
    return load;
  }

  /**
   * One worker loop of `queue`: it fetches up to a batch, runs it, and fetches again. Each batch
   * still running after SPARE_AFTER_MS, with no other loop idle, gets a spare loop beside it (up to
   * the queue's `maxWorkerLoops`), so that a batch held by a receiver that never answers holds back
   * only its own jobs.
   */
  private startLoop(queue: QueueSettings, pgQueue: string, spare: boolean): void {
    const loops = this.loops.get(queue.name)!;
    const spares = (queue.maxWorkerLoops ?? 0) > queue.concurrency;
    const load = this.loadOf(queue);
    const loop: WorkerLoop = {
      spare,
      idleSince: Date.now(),
      // Oldest first, ignoring job priorities (the outbox sets none): ordering by them made each
      // fetch sort the whole backlog by three keys (about 4 ms per fetch behind 2,500 jobs). A
      // full batch is followed by another fetch at once: more jobs are likely waiting.
      jobs: new JobLoop<JobData>({
        boss: this.deps.boss,
        queue: pgQueue,
        batchSize: queue.batchSize,
        pollingIntervalMs: (queue.pollingIntervalSeconds ?? 0.5) * 1000,
        logger: this.deps.logger,
        handle: async (jobs) => {
          // A spare only for a batch held by its attempts (a receiver still to answer), not by a
          // busy machine or database: more loops would not drain a healthy backlog any faster.
          const held = spares
            ? setTimeout(() => {
                if (!load || load.anyRunning(jobs.map((j) => j.id))) this.addSpare(queue.name);
              }, SPARE_AFTER_MS)
            : undefined;
          try {
            return await this.batch.run(queue, jobs, load);
          } finally {
            clearTimeout(held);
            loop.idleSince = Date.now();
            // A spare whose batch is done stops when another loop is idle to take the next jobs.
            if (loop.spare && loops.some((l) => l !== loop && !l.jobs.busy)) this.retireLoop(queue.name, loop);
          }
        },
      }),
    };
    loops.push(loop);
    loop.jobs.start();
  }

  /**
   * Starts a spare worker loop of `queue` when every loop is running a batch and the queue allows
   * more loops; it fetches at once. Answers whether one was started.
   */
  private addSpare(queueName: string): boolean {
    const queue = this.topics.queue(queueName);
    const loops = this.loops.get(queueName);
    if (!this.working || !loops || loops.some((l) => !l.jobs.busy) || loops.length >= (queue.maxWorkerLoops ?? queue.concurrency)) return false;
    this.startLoop(queue, pgBossQueueName(queueName), true);
    return true;
  }

  /** Stops a spare worker loop (after its current batch, if any). */
  private retireLoop(queueName: string, loop: WorkerLoop): void {
    const loops = this.loops.get(queueName)!;
    const at = loops.indexOf(loop);
    if (at < 0) return;
    loops.splice(at, 1);
    void loop.jobs.stop();
  }

  /** Stops the spare worker loops idle for SPARE_IDLE_MS (an idle spare's polls find nothing: its callback never runs). */
  private retireIdleSpares(): void {
    const before = Date.now() - SPARE_IDLE_MS;
    for (const [name, loops] of this.loops) {
      for (const loop of loops.filter((l) => l.spare && !l.jobs.busy && l.idleSince < before)) this.retireLoop(name, loop);
    }
  }
}
