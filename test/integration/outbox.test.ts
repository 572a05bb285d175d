import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PgBoss from 'pg-boss';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exponentialRetry, handleTopic, retrySchedule, type DeliveryContext, type Topic } from '../../application/ports/outbox';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { jobIdFor, PgBossOutbox } from '../../infrastructure/jobs/outbox';
import { topicSchema, type AnyTopicDefinition } from '../../infrastructure/jobs/topics';
import { Database } from '../../infrastructure/persistence/database';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { T, TEST_QUEUES, TEST_TOPICS, type TestMessage } from './fixtures/outbox-topics';
import { z } from 'zod';

/**
 * The outbox on a real pg-boss. Several "processes" share one test database: a producer that only
 * enqueues, an in-process worker W, a worker A in a child process that is killed mid-delivery, and
 * a worker B that must pick up what A left. Every time the outbox writes or compares comes from
 * one TestClock, which the tests move; pg-boss's own delays run on the database clock.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const secretKey = randomBytes(32);
const box = new AesGcmSecretBox(secretKey);
const crypto = new NodeTokenCrypto();
const clock = new TestClock(Date.now());
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

interface Node {
  db: Database;
  boss: PgBoss;
  outbox: PgBossOutbox;
}

let database: TestDatabase;
let producer: Node;
let worker: Node | undefined;
const nodes: Node[] = [];
const children: ChildProcess[] = [];

async function startNode(options: { supervise: boolean; topics?: AnyTopicDefinition[] }): Promise<Node> {
  const db = await Database.open({ url: database.url, poolMax: 4 });
  const boss = new PgBoss({
    connectionString: database.url,
    schema: 'pgboss',
    max: 3,
    supervise: options.supervise,
    // pg-boss's minimum: expired jobs of dead workers are failed (and run again) within a second.
    maintenanceIntervalSeconds: 1,
    schedule: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  const outbox = new PgBossOutbox({ db, boss, box, crypto, clock, logger: quiet, topics: options.topics ?? TEST_TOPICS, queues: TEST_QUEUES });
  const node = { db, boss, outbox };
  nodes.push(node);
  return node;
}

async function stopNode(node: Node): Promise<void> {
  await node.boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => undefined);
  await node.db.close();
  nodes.splice(nodes.indexOf(node), 1);
}

/** Polls `check` until it returns a value; a bound on real time, not a sleep standing in for expiry. */
async function waitFor<T>(check: () => Promise<T | undefined | false | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Doors handlers wait at until the test opens them; a failing test's are opened after it. */
const gates: Array<() => void> = [];
function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (reached = r));
  gates.push(open);
  return {
    open,
    arrived,
    pass: () => {
      reached();
      return opened;
    },
  };
}

interface Row {
  id: string;
  topic: string;
  payload_enc: string | null;
  status: string;
  subject: string | null;
  dedupe_key: string | null;
  created_at: Date;
  dispatched_at: Date | null;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
  revive_at: Date | null;
  generation: number;
  attempts: number;
  last_error: string | null;
}

const inContext = <R>(fn: () => Promise<R>) => producer.db.withContext(fn);
const q = <R>(sql: string, params: unknown[] = []) => inContext(() => producer.db.query<R>(sql, params));

/** Timestamps arrive from the driver as strings. */
function withDates<R extends object>(r: R): R {
  const out = { ...r } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (/(_at|_on|start_after)$/.test(k) && typeof v === 'string') out[k] = new Date(v);
  return out as R;
}

async function row(id: string): Promise<Row | undefined> {
  return (await q<Row>('select * from outbox_messages where id = ?', [id])).map(withDates)[0];
}

const delivered = (id: string, timeoutMs = 10_000) =>
  waitFor(
    async () => {
      const r = await row(id);
      return r?.delivered_at ? r : undefined;
    },
    timeoutMs,
    `delivery of ${id}`,
  );

interface Job {
  id: string;
  name: string;
  state: string;
  retry_count: number;
  created_on: Date;
  start_after: Date;
  started_on: Date | null;
}

/** Every pg-boss job of a message, first attempt first. */
async function jobsFor(id: string): Promise<Job[]> {
  const jobs = await q<Job>(
    `select id, name, state::text as state, retry_count, created_on, start_after, started_on from pgboss.job
      where data->>'id' = ? order by (data->>'generation')::int`,
    [id],
  );
  return jobs.map(withDates);
}
const liveJobs = async (id: string) => (await jobsFor(id)).filter((j) => ['created', 'retry', 'active'].includes(j.state));

/** The job as pg-boss leaves it once the worker has settled it (the row is settled a moment before). */
async function settledJobs(id: string, states: string[]): Promise<Job[]> {
  return waitFor(
    async () => {
      const jobs = await jobsFor(id);
      return jobs.length === states.length && jobs.every((j, i) => j.state === states[i]) ? jobs : undefined;
    },
    5_000,
    `jobs of ${id} to be ${states.join(', ')}`,
  );
}

const enqueue = <P>(topic: Topic<P>, payload: NoInfer<P>, options?: Parameters<PgBossOutbox['enqueue']>[2]) =>
  inContext(() => producer.db.transaction(() => producer.outbox.enqueue(topic, payload, options)));

/** Every call the in-process worker W made, with what the handler saw. */
const calls: Array<{ topic: string; id: string; attempt: number; payload: TestMessage }> = [];
const callsFor = (id: string) => calls.filter((c) => c.id === id);
/** What W's handler of a topic does (after recording the call); nothing unless a test says. */
const behaviour = new Map<string, (payload: TestMessage, context: DeliveryContext) => Promise<void>>();

async function startWorkerNode(): Promise<Node> {
  const node = await startNode({ supervise: true });
  for (const topic of [T.mail, T.flaky, T.broken, T.slow, T.later, T.timeout, T.hook]) {
    node.outbox.register(
      handleTopic(topic, async (payload, context) => {
        calls.push({ topic: topic.name, id: context.messageId, attempt: context.attempt, payload });
        await behaviour.get(topic.name)?.(payload, context);
      }),
    );
  }
  node.outbox.register(
    handleTopic(T.strict, async (payload, context) => {
      calls.push({ topic: T.strict.name, id: context.messageId, attempt: context.attempt, payload });
    }),
  );
  await node.outbox.startWorkers();
  return node;
}

beforeAll(async () => {
  database = await createTestDatabase();
  const db = await Database.open({ url: database.url });
  await db.migrate();
  await db.close();
  producer = await startNode({ supervise: false });
  worker = await startWorkerNode();
  behaviour.set(T.broken.name, async () => {
    throw new Error('permanently broken');
  });
});

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  // Each test starts from a quiet outbox: what a test leaves retrying stops counting in later sweeps.
  await q(`update outbox_messages set status = 'failed', revive_at = null, next_attempt_at = null where status = 'pending' or revive_at is not null`);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const node of [...nodes]) await stopNode(node);
  await database?.drop();
});

describe('PgBossOutbox: the transactional guarantees', () => {
  it('never delivers a message whose transaction rolled back', async () => {
    let id = '';
    await expect(
      inContext(() =>
        producer.db.transaction(async () => {
          id = await producer.outbox.enqueue(T.mail, { to: 'rollback@example.com' });
          throw new Error('use case failed after enqueueing');
        }),
      ),
    ).rejects.toThrow('use case failed after enqueueing');
    expect(id).not.toBe('');

    // A committed message enqueued after it is delivered: the worker has had its chance at both.
    const later = await enqueue(T.mail, { to: 'after@example.com' });
    await waitFor(async () => callsFor(later).length > 0, 10_000, 'the committed message');

    expect(await row(id)).toBeUndefined();
    expect(await jobsFor(id)).toEqual([]);
    expect(callsFor(id)).toEqual([]);
    expect(calls.some((c) => c.payload.to === 'rollback@example.com')).toBe(false);
  });

  it('delivers a committed message once, with its payload decrypted; stored encrypted before and erased after; the attempt is kept', async () => {
    const payload = { to: 'ada@example.com', code: '493817', link: 'https://app.example.com/verify?token=s3cr3t' };
    const enqueuedAt = clock.now();
    const id = await inContext(() =>
      producer.db.transaction(async () => {
        const id = await producer.outbox.enqueue(T.mail, payload);
        // Inside the transaction: stored, encrypted, not yet handed to the queue.
        const [stored] = (await producer.db.query<Row>('select * from outbox_messages where id = ?', [id])).map(withDates);
        expect(stored!.payload_enc).toMatch(/^v1\./);
        for (const secret of ['493817', 's3cr3t', 'ada@example.com']) expect(stored!.payload_enc).not.toContain(secret);
        expect(JSON.parse(box.decrypt(stored!.payload_enc!))).toEqual(payload);
        expect(stored!.dispatched_at).toBeNull();
        expect(stored!.status).toBe('pending');
        // Times come from the injected clock, not from the database.
        expect(stored!.created_at).toEqual(enqueuedAt);
        expect(stored!.next_attempt_at).toEqual(enqueuedAt);
        return id;
      }),
    );

    const done = await delivered(id);
    expect(callsFor(id)).toEqual([{ topic: 'test.mail', id, attempt: 1, payload }]);
    expect(done).toMatchObject({ status: 'delivered', payload_enc: null, attempts: 1, last_error: null, next_attempt_at: null });
    expect(done.dispatched_at).toEqual(enqueuedAt);
    expect(done.delivered_at).toEqual(clock.now());

    // Once: the job is complete, a sweep does not send it again, and nothing else arrives.
    expect(await settledJobs(id, ['completed'])).toMatchObject([{ id, state: 'completed', retry_count: 0 }]);
    expect(await producer.outbox.sweep()).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    expect(callsFor(id)).toHaveLength(1);

    // The attempt log outlives the payload.
    expect(await producer.outbox.listAttempts(id)).toEqual([
      { messageId: id, attempt: 1, status: 'succeeded', startedAt: clock.now(), finishedAt: clock.now(), error: null },
    ]);
  });

  it('keeps the payload encrypted while the delivery is in flight; the attempt shows as running', async () => {
    const door = gate();
    behaviour.set(T.slow.name, () => door.pass());
    const payload = { to: 'slow@example.com', code: '120934' };
    const id = await inContext(() => producer.outbox.enqueue(T.slow, payload));
    await door.arrived;
    const during = (await row(id))!;
    expect(during.delivered_at).toBeNull();
    expect(during.payload_enc).not.toContain('120934');
    expect(JSON.parse(box.decrypt(during.payload_enc!))).toEqual(payload);
    expect(await producer.outbox.listAttempts(id)).toMatchObject([{ attempt: 1, status: 'running', finishedAt: null }]);
    door.open();
    await delivered(id);
    expect((await row(id))!.payload_enc).toBeNull();
    expect(await producer.outbox.listAttempts(id)).toMatchObject([{ attempt: 1, status: 'succeeded' }]);
  });

  it('retries a handler that fails twice, then delivers; every attempt is kept, its error without the payload in it', async () => {
    behaviour.set(T.flaky.name, async (p, { attempt }) => {
      // A server that echoes what it was sent: the stored error must not repeat it.
      if (attempt <= 2) throw new Error(`smtp unavailable (${attempt}): rejected ${p.to} with code ${p.code}, link ${p.link}`);
    });
    const payload = { to: 'flaky@example.com', code: '551203', link: 'https://app.example.com/reset?token=tok3nVALUE' };
    const id = await enqueue(T.flaky, payload);
    // Backoff from 1 s: the retries come 1 s and 2 s after the failures.
    const done = await delivered(id, 15_000);
    expect(callsFor(id).map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(callsFor(id).every((c) => c.payload.to === 'flaky@example.com')).toBe(true);
    expect(done).toMatchObject({ status: 'delivered', attempts: 3, last_error: null, payload_enc: null, generation: 2 });

    const attempts = await producer.outbox.listAttempts(id);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
    expect(attempts[0]!.error).toBe('smtp unavailable (1): rejected [redacted] with code [redacted], link [redacted]');
    for (const a of attempts) for (const secret of ['flaky@example.com', '551203', 'tok3nVALUE']) expect(a.error ?? '').not.toContain(secret);
    // One pg-boss job per attempt, each started no earlier than the policy said (on the database clock).
    const jobs = await settledJobs(id, ['completed', 'completed', 'completed']);
    expect(jobs.map((j) => j.id)).toEqual([id, jobIdFor(id, 1), jobIdFor(id, 2)]);
    expect(jobs[1]!.start_after.getTime() - jobs[1]!.created_on.getTime()).toBeGreaterThanOrEqual(1000 - 50);
    expect(jobs[2]!.start_after.getTime() - jobs[2]!.created_on.getTime()).toBeGreaterThanOrEqual(2000 - 50);
    for (const j of jobs) expect(j.started_on!.getTime()).toBeGreaterThanOrEqual(j.start_after.getTime());
  });

  it('a failing message does not fail the other messages fetched in the same batch', async () => {
    // With no worker running, the three messages wait in the queue and are fetched as one batch.
    await stopNode(worker!);
    const ids = await inContext(() =>
      producer.db.transaction(async () => [
        // Its next attempt a minute later, so the state after its first failure holds still.
        await producer.outbox.enqueue(T.broken, { n: 0 }, { retry: retrySchedule([60]) }),
        await producer.outbox.enqueue(T.mail, { n: 1 }),
        await producer.outbox.enqueue(T.mail, { n: 2 }),
      ]),
    );
    worker = await startWorkerNode();
    await delivered(ids[1]!);
    await delivered(ids[2]!);
    for (const id of ids.slice(1)) expect(await settledJobs(id, ['completed'])).toMatchObject([{ id, state: 'completed', retry_count: 0 }]);
    const broken = await waitFor(
      async () => {
        const r = await row(ids[0]!);
        return r?.attempts ? r : undefined;
      },
      5_000,
      'the failed attempt',
    );
    expect(broken).toMatchObject({ status: 'pending', delivered_at: null, last_error: 'permanently broken', generation: 1 });
    // Its next attempt is a job of its own, due a minute later.
    expect(broken.attempts).toBe(1);
    expect(broken.next_attempt_at).toEqual(new Date(clock.now().getTime() + 60_000));
    const jobs = await jobsFor(ids[0]!);
    expect(jobs[0]).toMatchObject({ id: ids[0], state: 'completed' });
    expect(jobs[1]!.id).toBe(jobIdFor(ids[0]!, 1));
  });

  it('sweep() re-dispatches a message whose hand-off to the queue was lost, once 5 s have passed on the clock', async () => {
    // A producer whose queue is unreachable: the message commits, the hand-off fails.
    const db = await Database.open({ url: database.url, poolMax: 2 });
    const unstarted = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false, schedule: false });
    const lost = new PgBossOutbox({ db, boss: unstarted, box, crypto, clock, logger: quiet, topics: TEST_TOPICS, queues: TEST_QUEUES });
    const payload = { to: 'lost@example.com' };
    let id: string;
    try {
      id = await db.withContext(() => db.transaction(() => lost.enqueue(T.mail, payload)));
    } finally {
      await db.close();
    }
    expect((await row(id))!.dispatched_at).toBeNull();
    expect(await jobsFor(id)).toEqual([]);

    // Too recent: the hand-off may still be under way.
    clock.advance(4000);
    expect(await producer.outbox.sweep()).toBe(0);

    clock.advance(2000);
    expect(await producer.outbox.sweep()).toBe(1);
    expect((await row(id))!.dispatched_at).toEqual(clock.now());
    await delivered(id);
    expect(callsFor(id)).toEqual([{ topic: 'test.mail', id, attempt: 1, payload }]);
    expect(await producer.outbox.sweep()).toBe(0);
  });

  it('sweep() leaves a message that is still retrying alone, and revives one whose retries ran out', async () => {
    // First attempts fail; later ones wait at the door until the sweep is done, so the rows hold still.
    const door = gate();
    behaviour.set(T.later.name, async (_p, { attempt }) => {
      if (attempt === 1) throw new Error('mailbox full');
      await door.pass();
    });
    const retrying = await enqueue(T.later, { n: 'retrying' });
    // No retries for this one: its first failure gives it up (until the queue revives it).
    const exhausted = await enqueue(T.later, { n: 'exhausted' }, { retry: exponentialRetry(0, 1) });

    const givenUp = await waitFor(
      async () => {
        const r = await row(exhausted);
        return r?.status === 'failed' ? r : undefined;
      },
      10_000,
      'retries to run out',
    );
    expect(givenUp).toMatchObject({ attempts: 1, last_error: 'mailbox full', next_attempt_at: null });
    expect(givenUp.revive_at).toEqual(new Date(clock.now().getTime() + 15 * 60_000));
    await waitFor(async () => (await row(retrying))!.attempts >= 1, 10_000, 'a first attempt');

    // Not yet: handed over just now, and revival is 15 minutes away.
    expect(await producer.outbox.sweep()).toBe(0);

    // The earlier tests' messages are all settled (on a busy machine one may still be on its way),
    // so that the sweep 16 minutes on counts only these two.
    await waitFor(
      async () =>
        (await q<{ n: number }>("select count(*)::int as n from outbox_messages where status = 'pending' and id not in (?, ?)", [retrying, exhausted]))[0]!
          .n === 0,
      20_000,
      "the earlier tests' messages settled",
    );
    // 16 minutes on: the retrying one is checked (its job is alive: left alone), the other revived.
    clock.advance(16 * 60_000);
    expect(await producer.outbox.sweep()).toBe(2);
    expect((await row(exhausted))!.status).toBe('pending');
    // Still at most one live job per message: no second delivery racing the first.
    expect((await liveJobs(retrying)).length).toBeLessThanOrEqual(1);
    expect((await liveJobs(exhausted)).length).toBeLessThanOrEqual(1);
    door.open();
    await delivered(exhausted, 20_000);
    await delivered(retrying, 20_000);
    expect(callsFor(exhausted).map((c) => c.payload.n)).toEqual(['exhausted', 'exhausted']);
    expect((await producer.outbox.listAttempts(exhausted)).map((a) => a.status)).toEqual(['failed', 'succeeded']);
    // Swept again right away: nothing left.
    expect(await producer.outbox.sweep()).toBe(0);
  });

  it('survives a worker dying mid-delivery: another worker delivers the message, and the log shows the abandoned attempt', async () => {
    // Only the worker under test and the one that takes over compete for jobs.
    await stopNode(worker!);
    worker = undefined;

    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/stalled-outbox-worker.ts')], {
      env: { ...process.env, DATABASE_URL: database.url, SECRET_KEY: secretKey.toString('hex') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await waitFor(
      async () => out.includes('ready') || (child.exitCode !== null && Promise.reject(new Error(`worker A exited: ${err}`))),
      20_000,
      'worker A to start',
    );

    const payload = { to: 'survivor@example.com', code: '777001' };
    const id = await enqueue(T.mail, payload);
    await waitFor(async () => out.includes(`in-flight ${id}`), 10_000, 'worker A to take the message');

    // Worker A dies without a word: no graceful shutdown, its job stays "active".
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await waitFor(async () => child.signalCode === 'SIGKILL', 5_000, 'worker A to die');
    expect((await jobsFor(id))[0]!.state).toBe('active');
    expect((await row(id))!.delivered_at).toBeNull();
    expect(await producer.outbox.listAttempts(id)).toMatchObject([{ attempt: 1, status: 'running' }]);

    const b = await startNode({ supervise: true });
    const received: TestMessage[] = [];
    b.outbox.register(
      handleTopic(T.mail, async (p, { messageId }) => {
        expect(messageId).toBe(id);
        received.push(p);
      }),
    );
    await b.outbox.startWorkers();

    // Job expiry (2 s + 2 s) + maintenance (1 s) + re-run + retry delay (1 s) + polling: well within 15 s.
    await delivered(id, 15_000);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(received).toEqual([payload]);
    expect((await row(id))!).toMatchObject({ payload_enc: null, attempts: 2 });
    const attempts = await producer.outbox.listAttempts(id);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(attempts[0]!.error).toMatch(/^abandoned/);
    expect(await settledJobs(id, ['completed', 'completed'])).toMatchObject([
      { id, retry_count: 1 },
      { id: jobIdFor(id, 1), retry_count: 0 },
    ]);
    await stopNode(b);
    worker = await startWorkerNode();
  });
});

describe('PgBossOutbox: topics, queues and policies', () => {
  it('delivers mail while a topic on another queue hangs: each queue has its own workers', async () => {
    const door = gate();
    behaviour.set(T.hook.name, () => door.pass());
    const hook = await enqueue(T.hook, { n: 'slow endpoint' });
    const queuedHook = await enqueue(T.hook, { n: 'next endpoint' });
    await door.arrived;

    const mail = await enqueue(T.mail, { to: 'urgent@example.com' });
    await delivered(mail);
    // The hook queue is busy (one at a time): its first message still in flight, the second waiting.
    expect((await row(hook))!.status).toBe('pending');
    expect(await producer.outbox.listAttempts(hook)).toMatchObject([{ status: 'running' }]);
    expect(await producer.outbox.listAttempts(queuedHook)).toEqual([]);

    door.open();
    behaviour.delete(T.hook.name);
    await delivered(hook);
    await delivered(queuedHook);
    expect((await jobsFor(mail))[0]!.name).toBe('tollgate.test-mail');
    expect((await jobsFor(hook))[0]!.name).toBe('tollgate.test-hooks');
  });

  it('fails an attempt that runs past its timeout, aborting its signal, and retries it', async () => {
    let aborted = 0;
    behaviour.set(T.timeout.name, (_p, { signal, attempt }) => {
      if (attempt > 1) return Promise.resolve();
      return new Promise<void>((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted++;
          reject(signal.reason as Error);
        }),
      );
    });
    const id = await enqueue(T.timeout, { n: 'slow' });
    await delivered(id, 15_000);
    expect(aborted).toBe(1);
    const attempts = await producer.outbox.listAttempts(id);
    expect(attempts.map((a) => [a.status, a.error])).toEqual([
      ['failed', 'timed out after 1 s'],
      ['succeeded', null],
    ]);
  });

  it('follows a custom retry schedule given at enqueue: the next attempt is recorded on the row and queued in pg-boss', async () => {
    const first = gate();
    const second = gate();
    behaviour.set(T.hook.name, async (_p, { attempt }) => {
      if (attempt === 1) await first.pass();
      if (attempt === 2) await second.pass();
      if (attempt <= 2) throw new Error(`endpoint answered 503 (attempt ${attempt})`);
    });
    const start = clock.now();
    // The topic's own schedule is 1 s, 2 s; this message's is 2 s, then 1 s.
    const id = await enqueue(T.hook, { n: 'scheduled' }, { retry: retrySchedule([2, 1]), subject: 'endpoint-1' });

    await first.arrived;
    clock.advance(30_000); // the first attempt takes 30 s on the clock
    first.open();
    await second.arrived;
    // Attempt 1 failed at start + 30 s; attempt 2 was due 2 s later and is running now.
    const afterFirst = (await row(id))!;
    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, generation: 1, last_error: 'endpoint answered 503 (attempt 1)' });
    expect(afterFirst.next_attempt_at).toEqual(new Date(start.getTime() + 30_000 + 2_000));
    let jobs = await jobsFor(id);
    expect(jobs[1]!.id).toBe(jobIdFor(id, 1));
    expect(jobs[1]!.start_after.getTime() - jobs[1]!.created_on.getTime()).toBeGreaterThanOrEqual(2000 - 50);
    expect(jobs[1]!.started_on!.getTime()).toBeGreaterThanOrEqual(jobs[1]!.start_after.getTime());

    clock.advance(2_000);
    second.open();
    await delivered(id, 10_000);
    const attempts = await producer.outbox.listAttempts(id);
    expect(attempts.map((a) => [a.attempt, a.status, a.finishedAt])).toEqual([
      [1, 'failed', new Date(start.getTime() + 30_000)],
      [2, 'failed', new Date(start.getTime() + 32_000)],
      [3, 'succeeded', new Date(start.getTime() + 32_000)],
    ]);
    jobs = await jobsFor(id);
    expect(jobs[2]!.start_after.getTime() - jobs[2]!.created_on.getTime()).toBeGreaterThanOrEqual(1000 - 50);
    expect(jobs[2]!.start_after.getTime() - jobs[2]!.created_on.getTime()).toBeLessThan(2000);

    // The delivery log finds it by subject.
    const logged = await producer.outbox.listMessages({ topic: T.hook, subject: 'endpoint-1' });
    expect(logged).toMatchObject([{ id, subject: 'endpoint-1', status: 'delivered', attempts: 3, lastError: null }]);
  });

  it('starts an attempt due by the clock whose job still waits on the database clock (an hour-long retry, driven by the test clock)', async () => {
    behaviour.set(T.hook.name, async (_p, { attempt }) => {
      if (attempt === 1) throw new Error('endpoint answered 500');
    });
    const id = await enqueue(T.hook, { n: 'hourly' }, { retry: retrySchedule([3600]) });
    const failed = await waitFor(
      async () => {
        const r = await row(id);
        return r?.attempts === 1 && r.dispatched_at ? r : undefined;
      },
      10_000,
      'the first failure and its next attempt queued',
    );
    // Not due yet by the clock: nothing moves.
    expect(await producer.outbox.startDueAttempts()).toBe(0);
    clock.set(failed.next_attempt_at!);
    expect(await producer.outbox.startDueAttempts()).toBe(1);
    await delivered(id);
    expect((await producer.outbox.listAttempts(id)).map((a) => [a.status, a.startedAt])).toEqual([
      ['failed', failed.created_at],
      ['succeeded', failed.next_attempt_at],
    ]);
    // Its job started once: moving it again finds nothing waiting.
    expect(await producer.outbox.startDueAttempts()).toBe(0);
  });

  it('gives a message up when its schedule runs out: failed for good, every attempt kept, no revival', async () => {
    behaviour.set(T.hook.name, async () => {
      throw new Error('connection refused');
    });
    const id = await enqueue(T.hook, { n: 'doomed' }, { subject: 'endpoint-2' });
    const failed = await waitFor(
      async () => {
        const r = await row(id);
        return r?.status === 'failed' ? r : undefined;
      },
      15_000,
      'the schedule to run out',
    );
    expect(failed).toMatchObject({ attempts: 3, last_error: 'connection refused', next_attempt_at: null, revive_at: null });
    // Kept for a redelivery: the payload stays (encrypted) until delivered.
    expect(failed.payload_enc).toMatch(/^v1\./);
    expect((await producer.outbox.listAttempts(id)).map((a) => a.status)).toEqual(['failed', 'failed', 'failed']);
    expect(await producer.outbox.listMessages({ topic: T.hook, subject: 'endpoint-2', status: 'failed' })).toMatchObject([{ id, attempts: 3 }]);
    clock.advance(24 * 3600_000);
    expect(await producer.outbox.sweep()).toBe(0);
  });

  it('a durable next attempt survives a restart, and a lost hand-off of it is recovered by the sweep once due', async () => {
    behaviour.set(T.hook.name, async (_p, { attempt }) => {
      if (attempt === 1) throw new Error('endpoint answered 500');
    });
    const id = await enqueue(T.hook, { n: 'restart' }, { retry: retrySchedule([30]) });
    const failedOnce = await waitFor(
      async () => {
        const r = await row(id);
        return r?.attempts === 1 ? r : undefined;
      },
      10_000,
      'the first failure',
    );

    // The worker stops before the next attempt is due: that attempt waits in pg-boss, 30 s on.
    await stopNode(worker!);
    worker = undefined;
    const [, next] = await jobsFor(id);
    expect(next).toMatchObject({ id: jobIdFor(id, 1), state: 'created' });
    expect(next!.start_after.getTime() - next!.created_on.getTime()).toBeGreaterThanOrEqual(30_000 - 50);
    expect(failedOnce.next_attempt_at).toEqual(new Date(clock.now().getTime() + 30_000));
    // As if it had died between recording the failure and sending the next job: the job is lost.
    await q('delete from pgboss.job where id = ?', [jobIdFor(id, 1)]);
    await q('update outbox_messages set dispatched_at = null where id = ?', [id]);
    expect(await jobsFor(id)).toHaveLength(1);

    worker = await startWorkerNode();
    // The sweep waits 5 s past the due time before calling a hand-off lost; then the job starts at once.
    clock.set(new Date(failedOnce.next_attempt_at!.getTime() + 4_000));
    expect(await producer.outbox.sweep()).toBe(0);
    clock.advance(2_000);
    expect(await producer.outbox.sweep()).toBe(1);
    await delivered(id);
    expect((await producer.outbox.listAttempts(id)).map((a) => a.status)).toEqual(['failed', 'succeeded']);
    expect((await jobsFor(id)).map((j) => j.id)).toEqual([id, jobIdFor(id, 1)]);
  });

  it('waits for a delay given at enqueue, or a time to run at', async () => {
    const now = clock.now();
    const delayed = await enqueue(T.mail, { n: 'delayed' }, { delaySeconds: 2 });
    const at = await enqueue(T.mail, { n: 'at' }, { runAt: new Date(now.getTime() + 1000) });
    expect((await row(delayed))!.next_attempt_at).toEqual(new Date(now.getTime() + 2000));
    expect((await row(at))!.next_attempt_at).toEqual(new Date(now.getTime() + 1000));
    const [delayedJob] = await jobsFor(delayed);
    expect(delayedJob!.start_after.getTime() - delayedJob!.created_on.getTime()).toBeGreaterThanOrEqual(2000 - 50);

    await delivered(at);
    await delivered(delayed);
    const [started] = await jobsFor(delayed);
    expect(started!.started_on!.getTime()).toBeGreaterThanOrEqual(delayedJob!.created_on.getTime() + 2000 - 50);
    await expect(enqueue(T.mail, {}, { delaySeconds: -1 })).rejects.toThrow('delaySeconds');
  });

  it('records one message for a dedupe key while it is pending, and a new one after it was delivered', async () => {
    const first = await enqueue(T.mail, { n: 'first' }, { dedupeKey: 'renewal:sub_1', delaySeconds: 3 });
    const second = await enqueue(T.mail, { n: 'second' }, { dedupeKey: 'renewal:sub_1' });
    const other = await enqueue(T.mail, { n: 'other' }, { dedupeKey: 'renewal:sub_2', delaySeconds: 2 });
    const otherTopic = await enqueue(T.later, { n: 'other topic' }, { dedupeKey: 'renewal:sub_1' });
    expect(second).toBe(first);
    expect(new Set([first, other, otherTopic]).size).toBe(3);
    expect(await q(`select id from outbox_messages where dedupe_key = 'renewal:sub_1' and topic = 'test.mail'`)).toHaveLength(1);

    await delivered(first);
    // The first payload won.
    expect(callsFor(first).map((c) => c.payload.n)).toEqual(['first']);
    const third = await enqueue(T.mail, { n: 'third' }, { dedupeKey: 'renewal:sub_1' });
    expect(third).not.toBe(first);
    await delivered(third);
  });

  it('refuses a payload that does not match its topic schema on enqueue, without recording anything', async () => {
    const before = await q<{ n: number }>('select count(*)::int as n from outbox_messages');
    const bad = { to: 'not-an-address', code: '12' };
    await expect(enqueue(T.strict, bad)).rejects.toThrow(/test\.strict does not match its schema: to: invalid_string; code: invalid_string/);
    await expect(enqueue(T.strict, { to: 'a@example.com' } as never)).rejects.toThrow('code: invalid_type');
    await expect(enqueue(T.strict, { to: 'a@example.com', code: 123456 } as never)).rejects.toThrow('code: invalid_type');
    // Checked as the handler would receive it, after a round trip through JSON.
    await expect(enqueue(T.strict, { to: 'a@example.com', code: { toJSON: () => 'abc' } } as never)).rejects.toThrow('code: invalid_string');
    await expect(enqueue({ name: 'test.unknown', queue: 'test-mail' }, {})).rejects.toThrow('unknown outbox topic test.unknown');
    expect(await q('select count(*)::int as n from outbox_messages')).toEqual(before);

    const ok = await enqueue(T.strict, { to: 'a@example.com', code: '123456' });
    await delivered(ok);
  });

  it('fails a message for good when its stored payload no longer matches the schema, naming the field but not its value', async () => {
    // A producer with a looser schema for the same topic (an older version, say) records it.
    const loose = await startNode({
      supervise: false,
      topics: [topicSchema(T.strict, z.object({ to: z.string(), code: z.string() }))],
    });
    const id = await loose.db.withContext(() => loose.outbox.enqueue(T.strict, { to: 'leak@example.com', code: 'abcdef' }));
    await stopNode(loose);
    const failed = await waitFor(
      async () => {
        const r = await row(id);
        return r?.status === 'failed' ? r : undefined;
      },
      10_000,
      'the message to fail',
    );
    expect(failed.last_error).toBe("the payload does not match the topic's schema: code: invalid_string");
    expect(failed.revive_at).toBeNull();
    expect(callsFor(id)).toEqual([]);
    expect(await producer.outbox.listAttempts(id)).toMatchObject([{ status: 'failed', error: failed.last_error }]);
  });

  it('lists a topic’s messages newest first, filtered by subject and status', async () => {
    const a1 = await enqueue(T.mail, { n: 'a1' }, { subject: 'project-a' });
    clock.advance(1000);
    const b1 = await enqueue(T.mail, { n: 'b1' }, { subject: 'project-b' });
    clock.advance(1000);
    const a2 = await enqueue(T.mail, { n: 'a2' }, { subject: 'project-a', delaySeconds: 3600 });
    await delivered(a1);
    await delivered(b1);
    expect((await producer.outbox.listMessages({ topic: T.mail, subject: 'project-a' })).map((m) => m.id)).toEqual([a2, a1]);
    expect((await producer.outbox.listMessages({ topic: T.mail, subject: 'project-a', status: 'pending' })).map((m) => m.id)).toEqual([a2]);
    expect((await producer.outbox.listMessages({ topic: T.mail, subject: 'project-a', limit: 1 })).map((m) => m.id)).toEqual([a2]);
    expect((await producer.outbox.listMessages({ topic: T.mail, subject: 'project-a', before: clock.now() })).map((m) => m.id)).toEqual([a1]);
    const [pending] = await producer.outbox.listMessages({ topic: T.mail, subject: 'project-a', status: 'pending' });
    expect(pending).toMatchObject({ status: 'pending', attempts: 0, deliveredAt: null, nextAttemptAt: new Date(clock.now().getTime() + 3600_000) });
  });
});

describe('PgBossOutbox: retention of the delivery log', () => {
  it('purges messages delivered, or failed for good, more than the retention ago, with their attempts; keeps the rest', async () => {
    const old = await enqueue(T.mail, { to: 'old@example.com' });
    await delivered(old);
    behaviour.set(T.hook.name, async () => {
      throw new Error('endpoint gone');
    });
    const doomed = await enqueue(T.hook, { n: 'gone' }, { retry: retrySchedule([]) });
    await waitFor(async () => (await row(doomed))?.status === 'failed', 10_000, 'the message to fail for good');
    expect(await producer.outbox.listAttempts(old)).toHaveLength(1);

    clock.advance(29 * 86_400_000);
    const recent = await enqueue(T.mail, { to: 'recent@example.com' });
    await delivered(recent);
    // 29 days on: neither is old enough yet (older messages of earlier tests may go).
    await producer.outbox.purge(30);
    expect(await row(old)).toMatchObject({ status: 'delivered' });
    expect(await row(doomed)).toMatchObject({ status: 'failed' });

    clock.advance(2 * 86_400_000);
    // 31 days on: the first two go, the one delivered 2 days ago stays.
    expect(await producer.outbox.purge(30)).toBeGreaterThanOrEqual(2);
    expect(await row(old)).toBeUndefined();
    expect(await row(doomed)).toBeUndefined();
    expect(await producer.outbox.listAttempts(old)).toEqual([]);
    expect(await row(recent)).toMatchObject({ status: 'delivered' });
    expect(await producer.outbox.listAttempts(recent)).toHaveLength(1);
  });
});
