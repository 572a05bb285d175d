import { createHash } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { Clock } from '../../application/ports/clock';
import type { SecretBox, TokenCrypto } from '../../application/ports/crypto';
import type { Logger } from '../../application/ports/logger';
import type {
  BatchOutcome,
  DeliveryAttempt,
  DeliveryContext,
  EnqueueOptions,
  MessageStatus,
  Outbox,
  OutboxLog,
  OutboxMessageSummary,
  OutboxRetryNow,
  RetryPolicy,
  Topic,
  TopicHandler,
} from '../../application/ports/outbox';
import type { ScheduledJob } from '../../application/ports/scheduled-job';
import type { Database } from '../persistence/database';
import { safeErrorText } from './error-text';
import { ensurePgBossQueue } from './pg-boss-queue';
import type { QueueSettings } from './queues';
import { assertRetryPolicy, retryDelaySeconds } from './retry-policy';
import { SubjectLoad } from './subject-load';
import { withTimeout } from './timeout';
import type { AnyTopicDefinition } from './topics';
import { JobLoop } from './job-loop';
import { OUTBOX_WAKE_CHANNEL, OutboxWakeups } from './wakeups';

/** The pg-boss queue of a queue named by topics. */
export const pgBossQueueName = (queue: string): string => `tollgate.${queue}`;

/**
 * How often pg-boss runs one job again when its worker vanished (killed, or stopped while the
 * attempt ran). Such a run only closes the abandoned attempt and schedules the next one per the
 * retry policy, so a few suffice; past them the sweep takes over.
 */
const JOB_RERUNS = 3;
/** pg-boss fails a job this long after the attempt's own timeout, should its worker not settle it. */
const EXPIRY_GRACE_SECONDS = 2;
/** A message not handed to pg-boss this long after it was due was lost between commit and hand-off. */
const HANDOFF_GRACE_MS = 5_000;
/** A handed-over message still pending this long after it was due is checked against its job. */
const STUCK_AFTER_MS = 15 * 60_000;
const SWEEP_BATCH = 100;
const ABANDONED = 'abandoned: the worker stopped or stalled during the attempt';
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

/** The sweep as a scheduled job: every minute, once across all worker processes. */
export const OUTBOX_SWEEP_JOB_NAME = 'outbox.sweep';
export const OUTBOX_PURGE_JOB_NAME = 'outbox.purge';

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
}

/** One worker loop of a queue in this process. */
interface WorkerLoop {
  jobs: JobLoop<JobData>;
  /** Started beside loops held by slow batches; stops once idle. */
  spare: boolean;
  /** When its last batch ended (or it started). */
  idleSince: number;
}

/** An attempt whose handler succeeded, to be settled with the rest of its batch. */
interface Succeeded {
  id: string;
  attempt: number;
  finishedAt: Date;
}

/** A job's attempt ready to run: its message, its number, the payload as checked, its handler and timeout. */
interface Runnable {
  row: MessageRow;
  attempt: number;
  payload: unknown;
  handler: TopicHandler;
  timeoutSeconds: number;
  settle: { row: MessageRow; policy: RetryPolicy; reviveAfterSeconds: number | undefined };
  /** Its work is over (its subject's count of attempts in flight), before the rest of its batch. */
  ended?: () => void;
}

/** What opening a job's attempt found: the message, and the attempt started or the ones closed as abandoned. */
interface Opened {
  row: MessageRow;
  /** The attempt started for this job; null when none was (not current, or abandoned ones were closed instead). */
  started: number | null;
  /** Attempts of this job that were still running (their worker died or stalled) and are now closed as failed. */
  abandoned: number;
}

/** What a pg-boss job carries: the message and which of its scheduled attempts this job is. */
interface JobData {
  id: string;
  generation: number;
}

interface MessageRow {
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
interface Due {
  id: string;
  topic: string;
  generation: number;
  next_attempt_at: Date | string;
}

/** A job among those `openAttempts` opened: its message and generation. */
const openedKey = (messageId: string, generation: number): string => `${messageId}/${generation}`;

const toDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
const toDateOrNull = (value: Date | string | null): Date | null => (value === null ? null : toDate(value));

/** A failure no retry can mend (a payload that no longer matches its topic's schema). */
class PermanentFailure extends Error {}

/**
 * The transactional outbox on pg-boss, as a typed job layer.
 *
 * - `enqueue` validates the payload against its topic's schema, writes the message (payload
 *   encrypted: it carries codes and links) in the caller's transaction and, after commit, hands it
 *   to its topic's pg-boss queue. Each queue has its own workers.
 * - Each scheduled attempt of a message is one pg-boss job (`generation` 0, 1, ...), whose id is
 *   derived from the message id: handing one over twice never makes two jobs, and pg-boss gives a
 *   job to one worker. A failed attempt schedules the next one per the retry policy as a new job
 *   (`startAfter`), after recording it on the message row (`next_attempt_at`): both are durable, so
 *   the schedule survives restarts, and the sweep re-sends a job whose hand-off was lost.
 * - Every attempt is kept in `outbox_attempts` (number, status, start, end, error); the message row
 *   keeps status, attempt count and last error; the payload is erased on delivery.
 * - Times come from the injected clock. pg-boss's own delays use the database clock, so they are
 *   passed as seconds from now, never as times.
 *
 * Delivery is at least once (a worker that stalls past the timeout may finish after another
 * attempt started), so handlers are idempotent, keyed by the message id.
 */
export class PgBossOutbox implements Outbox, OutboxRetryNow, OutboxLog {
  private readonly topics = new Map<string, AnyTopicDefinition>();
  private readonly queues = new Map<string, QueueSettings>();
  private readonly handlers = new Map<string, TopicHandler>();
  private readonly queueReady = new Map<string, Promise<string>>();
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

  constructor(private readonly deps: PgBossOutboxDeps) {
    for (const queue of deps.queues) {
      if (this.queues.has(queue.name)) throw new Error(`queue ${queue.name} is configured twice`);
      assertRetryPolicy(queue.retry);
      assertTimeout(queue.timeoutSeconds, `queue ${queue.name}`);
      if (!Number.isInteger(queue.batchSize) || queue.batchSize < 1 || !Number.isInteger(queue.concurrency) || queue.concurrency < 1) {
        throw new Error(`queue ${queue.name}: batchSize and concurrency must be positive integers`);
      }
      if (queue.maxWorkerLoops !== undefined && (!Number.isInteger(queue.maxWorkerLoops) || queue.maxWorkerLoops < queue.concurrency)) {
        throw new Error(`queue ${queue.name}: maxWorkerLoops must be an integer of at least concurrency`);
      }
      this.queues.set(queue.name, queue);
      if (queue.subjectIsolation) this.subjectLoads.set(queue.name, new SubjectLoad(queue.subjectIsolation));
    }
    for (const definition of deps.topics) {
      const { name, queue, retry } = definition.topic;
      if (this.topics.has(name)) throw new Error(`topic ${name} is defined twice`);
      if (!this.queues.has(queue)) throw new Error(`topic ${name} names queue ${queue}, which is not configured`);
      if (retry) assertRetryPolicy(retry);
      if (definition.topic.timeoutSeconds !== undefined) assertTimeout(definition.topic.timeoutSeconds, `topic ${name}`);
      this.topics.set(name, definition);
    }
  }

  /** Registers the handler of a topic in this process (its worker delivers that topic). */
  register(handler: TopicHandler): void {
    const name = handler.topic.name;
    if (!this.topics.has(name)) throw new Error(`topic ${name} has no schema: add its definition to the outbox's topics`);
    if (this.handlers.has(name)) throw new Error(`topic ${name} already has a handler`);
    this.handlers.set(name, handler);
  }

  async enqueue<P>(topic: Topic<P>, payload: NoInfer<P>, options: EnqueueOptions = {}): Promise<string> {
    const definition = this.definition(topic.name);
    // Validated as the handler will receive it: after a round trip through JSON.
    const json = JSON.stringify(payload);
    const parsed = json === undefined ? undefined : definition.schema.safeParse(JSON.parse(json));
    if (!parsed?.success) {
      throw new Error(`outbox payload of topic ${topic.name} does not match its schema: ${parsed ? describeIssues(parsed.error) : 'not JSON'}`);
    }
    if (options.retry) assertRetryPolicy(options.retry);
    if (options.dedupeKey !== undefined && (options.dedupeKey === '' || options.dedupeKey.length > 500)) throw new Error('dedupeKey must be 1 to 500 characters');
    if (options.subject !== undefined && (options.subject === '' || options.subject.length > 500)) throw new Error('subject must be 1 to 500 characters');
    const now = this.deps.clock.now();
    const nextAttemptAt = dueAt(now, options);
    const { db } = this.deps;
    const id = this.deps.crypto.uuid();
    for (let tries = 0; ; tries++) {
      const inserted = await db.query<{ id: string }>(
        `insert into outbox_messages (id, topic, payload_enc, created_at, next_attempt_at, subject, dedupe_key, retry_policy)
         values (?, ?, ?, ?, ?, ?, ?, ?::jsonb)
         on conflict (topic, dedupe_key) where status = 'pending' and dedupe_key is not null do nothing
         returning id`,
        [
          id,
          topic.name,
          this.deps.box.encrypt(json!),
          now,
          nextAttemptAt,
          options.subject ?? null,
          options.dedupeKey ?? null,
          options.retry ? JSON.stringify(options.retry) : null,
        ],
      );
      if (inserted.length) break;
      // A pending message has the key: it stands for this one.
      const pending = await db.query<{ id: string }>(`select id from outbox_messages where topic = ? and dedupe_key = ? and status = 'pending'`, [
        topic.name,
        options.dedupeKey,
      ]);
      if (pending[0]) return pending[0].id;
      // Delivered in between: record this one after all.
      if (tries >= 2) throw new Error(`could not record an outbox message with dedupe key ${options.dedupeKey}`);
    }
    await db.onCommit(() => this.dispatch({ id, topic: topic.name, generation: 0, next_attempt_at: nextAttemptAt }).then(() => undefined));
    return id;
  }

  /**
   * Starts the workers of every queue that has a topic handled in this process, the listener that
   * wakes them when a job is handed over, and the check for attempts abandoned by a dead worker.
   */
  async startWorkers(): Promise<void> {
    const names = new Set([...this.handlers.keys()].map((topic) => this.definition(topic).topic.queue));
    this.working = true;
    for (const name of names) {
      const queue = this.queues.get(name)!;
      const pgQueue = await this.ensureQueue(name);
      this.loops.set(name, []);
      for (let i = 0; i < queue.concurrency; i++) this.startLoop(queue, pgQueue, false);
    }
    if ([...names].some((name) => (this.queues.get(name)!.maxWorkerLoops ?? 0) > this.queues.get(name)!.concurrency)) {
      this.spareTimer = setInterval(() => this.retireIdleSpares(), SPARE_IDLE_MS / 3);
      this.spareTimer.unref();
    }
    if (names.size > 0 && this.deps.wakeUrl) {
      this.wakeups = new OutboxWakeups(this.deps.wakeUrl, this.deps.logger, (queue) => this.wake(queue));
      await this.wakeups.start();
    }
    if (names.size > 0) {
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
  async stopWorkers(): Promise<void> {
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

  /**
   * One worker loop of `queue`: it fetches up to a batch, runs it, and fetches again. Each batch
   * still running after SPARE_AFTER_MS, with no other loop idle, gets a spare loop beside it (up to
   * the queue's `maxWorkerLoops`), so that a batch held by a receiver that never answers holds back
   * only its own jobs.
   */
  private startLoop(queue: QueueSettings, pgQueue: string, spare: boolean): void {
    const loops = this.loops.get(queue.name)!;
    const spares = (queue.maxWorkerLoops ?? 0) > queue.concurrency;
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
          const load = this.subjectLoads.get(queue.name);
          const held = spares
            ? setTimeout(() => {
                if (!load || load.anyRunning(jobs.map((j) => j.id))) this.addSpare(queue.name);
              }, SPARE_AFTER_MS)
            : undefined;
          try {
            await this.runBatch(queue, pgQueue, jobs);
          } finally {
            clearTimeout(held);
            loop.idleSince = Date.now();
          }
          // A spare whose batch is done stops when another loop is idle to take the next jobs.
          if (loop.spare && loops.some((l) => l !== loop && !l.jobs.busy)) this.retireLoop(queue.name, loop);
          return { settled: true };
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
    const queue = this.queues.get(queueName)!;
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

  /** Wakes this process's workers of `queue` when no listener will (the notification wakes them otherwise). */
  private wakeHere(queue: string): void {
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
    const shortest = Math.min(...[...this.topics.values()].map((d) => this.expirySeconds(d)));
    const overdue = await db.withContext(() =>
      db.query<{ topic: string; started_at: Date | string }>(
        `select m.topic, a.started_at from outbox_attempts a join outbox_messages m on m.id = a.message_id
          where a.status = 'running' and a.started_at < ? order by a.started_at limit ${SWEEP_BATCH}`,
        [new Date(now - shortest * 1000)],
      ),
    );
    const expired = overdue.some((a) => {
      const definition = this.topics.get(a.topic);
      return definition !== undefined && toDate(a.started_at).getTime() < now - this.expirySeconds(definition) * 1000;
    });
    if (!expired || !this.working) return false;
    await this.deps.boss.expire();
    return true;
  }

  /** Seconds after its start that pg-boss fails a job of this topic whose worker has not settled it. */
  private expirySeconds(definition: AnyTopicDefinition): number {
    return (definition.topic.timeoutSeconds ?? this.queues.get(definition.topic.queue)!.timeoutSeconds) + EXPIRY_GRACE_SECONDS;
  }

  /** The sweep, as the scheduled job the composition root registers. */
  /**
   * Deletes what the delivery log no longer needs: messages delivered, or failed for good with no
   * revival planned, more than `retentionDays` ago by the clock, with their attempts (cascade).
   * Answers how many messages went.
   */
  async purge(retentionDays: number): Promise<number> {
    const { db, clock } = this.deps;
    const before = new Date(clock.now().getTime() - retentionDays * 86_400_000);
    const gone = await db.withContext(() =>
      db.query<{ id: string }>(
        `delete from outbox_messages
          where (status = 'delivered' and delivered_at < ?)
             or (status = 'failed' and revive_at is null and created_at < ?)
          returning id`,
        [before, before],
      ),
    );
    return gone.length;
  }

  /** The retention of the delivery log as a scheduled job: once an hour, across all processes. */
  purgeJob(retentionDays: number): ScheduledJob {
    return {
      name: OUTBOX_PURGE_JOB_NAME,
      cron: '23 * * * *',
      run: async () => {
        await this.purge(retentionDays);
      },
    };
  }

  sweepJob(): ScheduledJob {
    return {
      name: OUTBOX_SWEEP_JOB_NAME,
      cron: '* * * * *',
      run: async () => {
        await this.sweep();
      },
    };
  }

  /**
   * Re-dispatches, by the injected clock:
   * - messages due more than 5 s ago whose hand-off to pg-boss was lost (the process died between
   *   commit and send, or between a failed attempt and the job of the next one);
   * - messages handed over and due more than 15 minutes ago, still pending: a job still queued or
   *   running is left alone (checked again 15 minutes later), a failed one is retried, a finished
   *   one is replaced by a new job;
   * - messages whose retries ran out, once their queue's revival time has passed;
   * - messages handed over whose next attempt is due by the clock while their job still waits for a
   *   later time on the database's clock (`startDueAttempts`).
   * Returns how many messages it dispatched.
   */
  async sweep(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const due = await db.withContext(async () => {
      const lost = await db.query<Due>(
        `select id, topic, generation, next_attempt_at from outbox_messages
          where status = 'pending' and dispatched_at is null and next_attempt_at < ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [new Date(now.getTime() - HANDOFF_GRACE_MS)],
      );
      const stuckBefore = new Date(now.getTime() - STUCK_AFTER_MS);
      const stuck = await db.query<Due>(
        `select id, topic, generation, next_attempt_at from outbox_messages
          where status = 'pending' and dispatched_at < ? and next_attempt_at < ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [stuckBefore, stuckBefore],
      );
      // A revived message no longer holds its dedupe key (a newer pending one may hold it).
      const revived = await db.query<Due>(
        `update outbox_messages set status = 'pending', revive_at = null, dedupe_key = null, generation = generation + 1,
                next_attempt_at = ?, dispatched_at = null
          where id in (select id from outbox_messages where status = 'failed' and revive_at <= ?
                        order by revive_at limit ${SWEEP_BATCH} for update skip locked)
          returning id, topic, generation, next_attempt_at`,
        [now, now],
      );
      return [...lost, ...stuck, ...revived];
    });
    let dispatched = 0;
    for (const message of due) if (await this.dispatch(message)) dispatched++;
    await this.startDueAttempts(now);
    return dispatched;
  }

  /**
   * Starts now the job of every message handed over whose next attempt is due by the injected
   * clock but still waits for a later time on the database's clock, which pg-boss uses: a clock
   * moved by a test, or the two clocks disagreeing. Only a job not yet started is moved, in one
   * statement, so no attempt runs twice. Answers how many jobs it moved.
   */
  async startDueAttempts(now: Date = this.deps.clock.now()): Promise<number> {
    const { db } = this.deps;
    const schema = this.deps.bossSchema ?? 'pgboss';
    return db.withContext(async () => {
      const waiting = await db.query<{ id: string; topic: string; generation: number }>(
        `select id, topic, generation from outbox_messages
          where status = 'pending' and dispatched_at is not null and next_attempt_at <= ?
          order by next_attempt_at limit ${SWEEP_BATCH}`,
        [now],
      );
      let started = 0;
      for (const message of waiting) if (await this.startJobNow(message, schema)) started++;
      return started;
    });
  }

  /** Moves the job of a message's attempt, not yet started, to start now, and wakes the workers. */
  private async startJobNow(message: { id: string; topic: string; generation: number }, schema: string): Promise<boolean> {
    const definition = this.topics.get(message.topic);
    if (!definition) return false;
    const moved = await this.deps.db.query(
      `with moved as (
         update ${schema}.job set start_after = now()
          where name = ? and id = ? and state = 'created' and start_after > now() returning id
       )
       select id, pg_notify(?, ?) from moved`,
      [pgBossQueueName(definition.topic.queue), jobIdFor(message.id, message.generation), OUTBOX_WAKE_CHANNEL, definition.topic.queue],
    );
    if (moved.length) this.wakeHere(definition.topic.queue);
    return moved.length > 0;
  }

  async runNow(topic: Topic<unknown>, dedupeKey: string): Promise<Date | null> {
    const { db, clock } = this.deps;
    const now = clock.now();
    return db.withContext(async () => {
      const [message] = await db.query<Due & { was_due: Date | string; dispatched: boolean }>(
        `update outbox_messages m set next_attempt_at = ?
           from (select id, next_attempt_at as was_due from outbox_messages
                  where topic = ? and dedupe_key = ? and status = 'pending' and next_attempt_at > ? for update) w
          where m.id = w.id
          returning m.id, m.topic, m.generation, m.next_attempt_at, w.was_due, m.dispatched_at is not null as dispatched`,
        [now, topic.name, dedupeKey, now],
      );
      if (!message) return null;
      // Its job waits for the old time (or its hand-off was lost: hand it over now).
      if (!message.dispatched || !(await this.startJobNow(message, this.deps.bossSchema ?? 'pgboss'))) await this.dispatch(message);
      return toDate(message.was_due);
    });
  }

  async listMessages(filter: { topic: Topic<unknown>; subject?: string; status?: MessageStatus; before?: Date; limit?: number }): Promise<OutboxMessageSummary[]> {
    const where = ['topic = ?'];
    const params: unknown[] = [filter.topic.name];
    const and = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (filter.subject !== undefined) and('subject = ?', filter.subject);
    if (filter.status !== undefined) and('status = ?', filter.status);
    if (filter.before !== undefined) and('created_at < ?', filter.before);
    const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 50), 1), 500);
    const rows = await this.deps.db.query<{
      id: string;
      topic: string;
      subject: string | null;
      status: MessageStatus;
      attempts: number;
      last_error: string | null;
      created_at: Date | string;
      next_attempt_at: Date | string | null;
      delivered_at: Date | string | null;
    }>(
      `select id, topic, subject, status, attempts, last_error, created_at, next_attempt_at, delivered_at
         from outbox_messages where ${where.join(' and ')} order by created_at desc, id desc limit ${limit}`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      topic: r.topic,
      subject: r.subject,
      status: r.status,
      attempts: r.attempts,
      lastError: r.last_error,
      createdAt: toDate(r.created_at),
      nextAttemptAt: toDateOrNull(r.next_attempt_at),
      deliveredAt: toDateOrNull(r.delivered_at),
    }));
  }

  async listAttempts(messageId: string): Promise<DeliveryAttempt[]> {
    const rows = await this.deps.db.query<{
      message_id: string;
      attempt: number;
      status: DeliveryAttempt['status'];
      started_at: Date | string;
      finished_at: Date | string | null;
      error: string | null;
    }>('select message_id, attempt, status, started_at, finished_at, error from outbox_attempts where message_id = ? order by attempt', [messageId]);
    return rows.map((r) => ({
      messageId: r.message_id,
      attempt: r.attempt,
      status: r.status,
      startedAt: toDate(r.started_at),
      finishedAt: toDateOrNull(r.finished_at),
      error: r.error,
    }));
  }

  private definition(topic: string): AnyTopicDefinition {
    const definition = this.topics.get(topic);
    if (!definition) throw new Error(`unknown outbox topic ${topic}: add its definition to the outbox's topics`);
    return definition;
  }

  /** The queue must exist before a job is sent to it: pg-boss silently drops jobs for unknown queues. */
  private ensureQueue(name: string): Promise<string> {
    let ready = this.queueReady.get(name);
    if (!ready) {
      const pgQueue = pgBossQueueName(name);
      ready = ensurePgBossQueue(this.deps.boss, pgQueue).then(
        () => pgQueue,
        (e: unknown) => {
          this.queueReady.delete(name);
          throw e;
        },
      );
      this.queueReady.set(name, ready);
    }
    return ready;
  }

  /**
   * Hands the message's current attempt to pg-boss, to start when it is due. Never throws: a
   * failed hand-off is logged and left to the sweep. Returns whether the message now has a job.
   */
  private async dispatch(message: Due): Promise<boolean> {
    const { db, boss, clock, logger } = this.deps;
    try {
      const definition = this.definition(message.topic);
      const queue = this.queues.get(definition.topic.queue)!;
      const pgQueue = await this.ensureQueue(queue.name);
      const jobId = jobIdFor(message.id, message.generation);
      const timeoutSeconds = definition.topic.timeoutSeconds ?? queue.timeoutSeconds;
      const data: JobData = { id: message.id, generation: message.generation };
      // Seconds from now on the database's clock, which pg-boss uses.
      const startAfter = Math.max(0, Math.ceil((toDate(message.next_attempt_at).getTime() - clock.now().getTime()) / 1000));
      const sent = await boss.send(pgQueue, data, {
        id: jobId,
        startAfter,
        retryLimit: JOB_RERUNS,
        retryDelay: 1,
        expireInSeconds: timeoutSeconds + EXPIRY_GRACE_SECONDS,
      });
      if (!sent) {
        // The job exists already: leave a live one alone, revive a failed one, replace a finished one.
        const job = await boss.getJobById(pgQueue, jobId);
        if (!job) throw new Error('the job queue accepted no job for the message');
        if (job.state === 'failed') await boss.retry(pgQueue, jobId);
        if (job.state === 'completed' || job.state === 'cancelled') {
          const [next] = await db.withContext(() =>
            db.query<Due>(
              `update outbox_messages set generation = generation + 1, dispatched_at = null
                where id = ? and generation = ? and status = 'pending' returning id, topic, generation, next_attempt_at`,
              [message.id, message.generation],
            ),
          );
          return next ? this.dispatch(next) : false;
        }
      }
      const handedOver = [clock.now(), message.id, message.generation];
      if (startAfter > 0) {
        await db.withContext(() => db.query(`update outbox_messages set dispatched_at = ? where id = ? and generation = ? and status = 'pending'`, handedOver));
        return true;
      }
      // Due now: the same statement tells the workers of every process listening (the job is in).
      await db.withContext(() =>
        db.query(
          `with handed as (update outbox_messages set dispatched_at = ? where id = ? and generation = ? and status = 'pending')
           select pg_notify(?, ?)`,
          [...handedOver, OUTBOX_WAKE_CHANNEL, queue.name],
          { prepare: 'outbox_handed_over_now' },
        ),
      );
      this.wakeHere(queue.name);
      return true;
    } catch (e) {
      logger.warn({ err: e, outboxId: message.id }, 'outbox dispatch failed; the sweep hands the message over later');
      return false;
    }
  }

  /**
   * Runs a batch of jobs fetched together. Their bookkeeping is shared: one statement opens every
   * attempt of the batch (closing those a dead worker abandoned), the handlers run side by side (a
   * topic with a batch handler gets its messages of the batch in one call), and one statement
   * records every success; a failure is recorded on its own. Each job still succeeds or fails on
   * its own: only a failure to record one fails its job, which pg-boss then runs again.
   */
  private async runBatch(queue: QueueSettings, pgQueue: string, fetched: PgBoss.Job<JobData>[]): Promise<void> {
    const { db, logger } = this.deps;
    const load = this.subjectLoads.get(queue.name);
    const deferred = load ? await this.deferSaturated(load, fetched) : new Set<string>();
    const jobs = deferred.size ? fetched.filter((job) => !deferred.has(job.id)) : fetched;
    if (jobs.length === 0) {
      await this.settleJobs(pgQueue, { failed: [], done: [...deferred] }, '');
      return;
    }
    let opened: Map<string, Opened>;
    try {
      opened = await db.withContext(() => this.openAttempts(jobs.map((job) => job.data)));
    } catch (e) {
      logger.error({ err: e, queue: queue.name }, 'outbox delivery bookkeeping failed');
      await this.settleJobs(pgQueue, { failed: jobs.map((job) => job.id), done: [...deferred] }, safeErrorText(e));
      return;
    }
    // What each job's run came to: nothing left to record, a success to record with the batch, or
    // a failure to record the attempt (the job fails and pg-boss runs it again).
    const outcomes = new Map<string, 'done' | 'failed' | Succeeded>();
    const bookkeepingFailed = (job: PgBoss.Job<JobData>, e: unknown) => {
      logger.error({ err: e, outboxId: job.data.id }, 'outbox delivery bookkeeping failed');
      outcomes.set(job.id, 'failed');
    };
    const prepared = await Promise.allSettled(jobs.map((job) => db.withContext(() => this.prepare(queue, job.data, opened.get(openedKey(job.data.id, job.data.generation)) ?? null))));
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
        const results = await this.run(group);
        for (const run of group) run.ended?.();
        await Promise.all(
          group.map(async (run, i) => {
            const result = results[i]!;
            if (result.ok) {
              outcomes.set(run.jobId, { id: run.row.id, attempt: run.attempt, finishedAt: result.finishedAt });
              return;
            }
            try {
              await db.withContext(() => this.settleFailure({ ...run.settle, attempt: run.attempt, failures: 1, error: result.error, permanent: false }));
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
        await db.withContext(() => this.settleSuccesses(succeeded));
        done.push(...succeeded.map((s) => s.jobId));
      } catch (e) {
        logger.error({ err: e, queue: queue.name }, 'outbox delivery bookkeeping failed');
        failed.push(...succeeded.map((s) => s.jobId));
      }
    }
    await this.settleJobs(pgQueue, { failed, done }, 'the outbox could not record the attempt');
  }

  /**
   * Tells pg-boss how a batch's jobs ended. When it cannot be told (the database is away), the jobs
   * stay active until they expire and run again; a run of a message already settled does nothing.
   */
  private async settleJobs(pgQueue: string, jobs: { failed: string[]; done: string[] }, failure: string): Promise<void> {
    const { boss, logger } = this.deps;
    try {
      for (const id of jobs.failed) await boss.fail(pgQueue, id, { message: failure });
      if (jobs.done.length) await boss.complete(pgQueue, jobs.done);
    } catch (e) {
      logger.warn({ queue: pgQueue, jobs: jobs.failed.length + jobs.done.length, error: safeErrorText(e) }, 'outbox: jobs could not be settled; they run again once they expire');
    }
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
      for (const next of moved) await this.dispatch(next);
      return new Set(jobs.filter((j) => handedBack.has(openedKey(j.data.id, j.data.generation))).map((j) => j.id));
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'outbox: jobs of a saturated subject could not be handed back; they run now');
      return new Set();
    }
  }

  /**
   * Opens the attempt of each job, in one statement: for each message still pending at the job's
   * generation, either the attempts its previous run left running are closed as abandoned (their
   * worker died or was stopped before settling them), or a new attempt is recorded as running.
   * Answers, per job (`openedKey`), the row and what was done.
   */
  private async openAttempts(jobs: JobData[]): Promise<Map<string, Opened>> {
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
    return new Map(rows.map((r) => [openedKey(r.id, r.job_generation), { row: r, started: r.started === null ? null : Number(r.started), abandoned: Number(r.abandoned) }]));
  }

  /** Records the successes of a batch: each attempt succeeded, each message delivered and its payload erased. */
  private async settleSuccesses(succeeded: Succeeded[]): Promise<void> {
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
   * What to do with one job's attempt, as `openAttempts` opened it: nothing when it is over already
   * (a later attempt was scheduled: handed over here if its hand-off was lost), the abandoned
   * attempts closed as failed, a payload that can no longer be read failed for good, or the
   * handler to run with the payload decrypted and checked.
   */
  private async prepare(queue: QueueSettings, job: JobData, opened: Opened | null): Promise<Runnable | null> {
    const row = opened?.row;
    if (!row || row.status !== 'pending') return null;
    if (row.generation !== job.generation) {
      // This job's attempt is over and a later one was scheduled; hand that one over if the
      // process that scheduled it died before it could.
      if (row.generation > job.generation && row.dispatched_at === null && row.next_attempt_at) {
        await this.dispatch({ id: row.id, topic: row.topic, generation: row.generation, next_attempt_at: row.next_attempt_at });
      }
      return null;
    }
    const definition = this.topics.get(row.topic);
    const topicQueue = (definition && this.queues.get(definition.topic.queue)) ?? queue;
    const policy = policyOf(row.retry_policy) ?? definition?.topic.retry ?? topicQueue.retry;
    const settle = { row, policy, reviveAfterSeconds: topicQueue.reviveFailedAfterSeconds };

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
      const handler = this.handlers.get(row.topic);
      if (!handler) throw new Error(`no handler for topic ${row.topic} in this process`);
      return { row, attempt, payload, handler, timeoutSeconds: definition.topic.timeoutSeconds ?? topicQueue.timeoutSeconds, settle };
    } catch (e) {
      const error = safeErrorText(e, payload);
      this.deps.logger.warn({ outboxId: row.id, topic: row.topic, attempt, error }, 'outbox delivery attempt failed');
      await this.settleFailure({ ...settle, attempt, failures: 1, error, permanent: e instanceof PermanentFailure });
      return null;
    }
  }

  /**
   * Runs the handler of attempts of one topic, each within the attempt's timeout: a batch handler
   * once for all of them, another once per attempt, side by side. Answers, per attempt, its success
   * or the error to record (the payload's values left out).
   */
  private async run(runs: Runnable[]): Promise<Array<{ ok: true; finishedAt: Date } | { ok: false; error: string }>> {
    const { clock, logger } = this.deps;
    const failure = (run: Runnable, e: unknown) => {
      const error = safeErrorText(e, run.payload);
      logger.warn({ outboxId: run.row.id, topic: run.row.topic, attempt: run.attempt, error }, 'outbox delivery attempt failed');
      return { ok: false as const, error };
    };
    const context = (run: Runnable, signal: AbortSignal): DeliveryContext => ({ messageId: run.row.id, attempt: run.attempt, signal, ...(run.ended ? { ended: run.ended } : {}) });
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

  /**
   * Records failed attempts (`attempt`, or ones closed already when null) and either schedules the
   * next attempt per the retry policy or gives the message up.
   */
  private async settleFailure(input: {
    row: MessageRow;
    policy: RetryPolicy;
    reviveAfterSeconds: number | undefined;
    attempt: number | null;
    failures: number;
    error: string;
    permanent: boolean;
  }): Promise<void> {
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
    if (next) await this.dispatch(next);
  }
}

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

function dueAt(now: Date, options: EnqueueOptions): Date {
  if (options.runAt !== undefined && options.delaySeconds !== undefined) throw new Error('give runAt or delaySeconds, not both');
  if (options.runAt !== undefined) {
    if (!(options.runAt instanceof Date) || Number.isNaN(options.runAt.getTime())) throw new Error('runAt must be a valid Date');
    return options.runAt;
  }
  const delay = options.delaySeconds ?? 0;
  if (!Number.isFinite(delay) || delay < 0) throw new Error('delaySeconds must be a finite number >= 0');
  return new Date(now.getTime() + delay * 1000);
}

/** pg-boss expires a job at most 24 h after it started, and the attempt's timeout plus a grace must fit. */
function assertTimeout(seconds: number, what: string): void {
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 23 * 3600) throw new Error(`${what}: timeoutSeconds must be more than 0 and at most 82800`);
}

function policyOf(stored: unknown): RetryPolicy | null {
  if (stored === null || stored === undefined) return null;
  const policy = typeof stored === 'string' ? (JSON.parse(stored) as unknown) : stored;
  assertRetryPolicy(policy);
  return policy;
}

/** Where and how a payload fails its schema, without the offending values (they may be secrets). */
function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`).join('; ');
}
