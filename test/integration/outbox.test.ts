import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmSecretBox } from '../../infrastructure/crypto/secret-box';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { OUTBOX_QUEUE, PgBossOutbox, type OutboxHandler } from '../../infrastructure/jobs/outbox';
import { Database } from '../../infrastructure/persistence/database';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * The outbox on a real pg-boss. Several "processes" share one test database: a producer that only
 * enqueues, an in-process worker W, a worker A in a child process that is killed mid-delivery, and
 * a worker B that must pick up what A left.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const secretKey = randomBytes(32);
const box = new AesGcmSecretBox(secretKey);
const crypto = new NodeTokenCrypto();
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const JOB_TIMEOUT_SECONDS = 2;

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

async function startNode(options: { supervise: boolean; retryLimit?: number }): Promise<Node> {
  const db = await Database.open({ url: database.url, poolMax: 4 });
  const boss = new PgBoss({
    connectionString: database.url,
    schema: 'pgboss',
    max: 3,
    supervise: options.supervise,
    // pg-boss's minimum: expired jobs of dead workers are failed (and retried) within a second.
    maintenanceIntervalSeconds: 1,
    schedule: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  const outbox = new PgBossOutbox(db, boss, box, crypto, quiet, {
    retryLimit: options.retryLimit ?? 5,
    retryDelaySeconds: 1,
    jobTimeoutSeconds: JOB_TIMEOUT_SECONDS,
  });
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
async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Row {
  id: string;
  topic: string;
  payload_enc: string | null;
  dispatched_at: Date | null;
  delivered_at: Date | null;
  attempts: number;
  last_error: string | null;
}

async function row(id: string): Promise<Row | undefined> {
  const rows = await producer.db.withContext(() => producer.db.query<Row>('select * from outbox_messages where id = ?', [id]));
  return rows[0];
}

async function jobsFor(id: string): Promise<Array<{ id: string; state: string; retry_count: number }>> {
  return producer.db.withContext(() =>
    producer.db.query('select id, state::text as state, retry_count from pgboss.job where name = ? and data->>\'id\' = ?', [OUTBOX_QUEUE, id]),
  );
}

/**
 * The job as pg-boss leaves it once the worker has settled it. The message row is marked delivered
 * inside the handler, a moment before the job itself is completed or failed.
 */
async function settledJob(id: string, state: string): Promise<Array<{ id: string; state: string; retry_count: number }>> {
  await waitFor(async () => (await jobsFor(id)).some((j) => j.state === state), 5_000, `job ${id} to be ${state}`);
  return jobsFor(id);
}

/** Handlers of the in-process worker W record every call. */
const calls: Array<{ topic: string; id: string; payload: Record<string, unknown> }> = [];
const record = (topic: string): OutboxHandler => async (payload, id) => {
  calls.push({ topic, id, payload });
};
const callsFor = (id: string) => calls.filter((c) => c.id === id);

let flakyFailures = 0;

/** The in-process worker W: records every call. */
async function startWorkerNode(): Promise<Node> {
  const node = await startNode({ supervise: true });
  node.outbox.register('test.mail', record('test.mail'));
  node.outbox.register('test.flaky', async (payload, id) => {
    calls.push({ topic: 'test.flaky:attempt', id, payload });
    if (flakyFailures++ < 2) throw new Error(`smtp unavailable (${flakyFailures})`);
    calls.push({ topic: 'test.flaky', id, payload });
  });
  node.outbox.register('test.broken', async () => {
    throw new Error('permanently broken');
  });
  await node.outbox.startWorker();
  return node;
}

beforeAll(async () => {
  database = await createTestDatabase();
  const db = await Database.open({ url: database.url });
  await db.migrate();
  await db.close();
  producer = await startNode({ supervise: false });
  worker = await startWorkerNode();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const node of [...nodes]) await stopNode(node);
  await database?.drop();
});

describe('PgBossOutbox', () => {
  it('never delivers a message whose transaction rolled back', async () => {
    let id = '';
    await expect(
      producer.db.withContext(() =>
        producer.db.transaction(async () => {
          id = await producer.outbox.enqueue('test.mail', { to: 'rollback@example.com' });
          throw new Error('use case failed after enqueueing');
        }),
      ),
    ).rejects.toThrow('use case failed after enqueueing');
    expect(id).not.toBe('');

    // A committed message enqueued after it is delivered: the worker has had its chance at both.
    const later = await producer.db.withContext(() => producer.db.transaction(() => producer.outbox.enqueue('test.mail', { to: 'after@example.com' })));
    await waitFor(async () => callsFor(later).length > 0, 10_000, 'the committed message');

    expect(await row(id)).toBeUndefined();
    expect(await jobsFor(id)).toEqual([]);
    expect(callsFor(id)).toEqual([]);
    expect(calls.some((c) => c.payload.to === 'rollback@example.com')).toBe(false);
  });

  it('delivers a committed message once, with its payload decrypted; stored encrypted before and erased after', async () => {
    const payload = { to: 'ada@example.com', code: '493817', link: 'https://app.example.com/verify?token=s3cr3t' };
    const id = await producer.db.withContext(() =>
      producer.db.transaction(async () => {
        const id = await producer.outbox.enqueue('test.mail', payload);
        // Inside the transaction: stored, encrypted, not yet handed to the queue.
        const [stored] = await producer.db.query<Row>('select * from outbox_messages where id = ?', [id]);
        expect(stored!.payload_enc).toMatch(/^v1\./);
        for (const secret of ['493817', 's3cr3t', 'ada@example.com']) expect(stored!.payload_enc).not.toContain(secret);
        expect(JSON.parse(box.decrypt(stored!.payload_enc!))).toEqual(payload);
        expect(stored!.dispatched_at).toBeNull();
        return id;
      }),
    );

    const delivered = await waitFor(async () => {
      const r = await row(id);
      return r?.delivered_at ? r : undefined;
    }, 10_000, 'delivery');
    expect(callsFor(id)).toEqual([{ topic: 'test.mail', id, payload }]);
    expect(delivered.payload_enc).toBeNull();
    expect(delivered.dispatched_at).not.toBeNull();
    expect(delivered.attempts).toBe(1);
    expect(delivered.last_error).toBeNull();

    // Once: the job is complete, a sweep does not send it again, and nothing else arrives.
    expect(await settledJob(id, 'completed')).toEqual([{ id, state: 'completed', retry_count: 0 }]);
    expect(await producer.outbox.sweep()).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    expect(callsFor(id)).toHaveLength(1);
  });

  it('keeps the payload encrypted while the delivery is in flight', async () => {
    let release!: () => void;
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    worker!.outbox.register('test.slow', async () => {
      started();
      await new Promise<void>((r) => (release = r));
    });
    const payload = { to: 'slow@example.com', code: '120934' };
    const id = await producer.db.withContext(() => producer.outbox.enqueue('test.slow', payload));
    await inFlight;
    const during = (await row(id))!;
    expect(during.delivered_at).toBeNull();
    expect(during.payload_enc).not.toContain('120934');
    expect(JSON.parse(box.decrypt(during.payload_enc!))).toEqual(payload);
    release();
    await waitFor(async () => (await row(id))?.delivered_at, 10_000, 'delivery');
    expect((await row(id))!.payload_enc).toBeNull();
  });

  it('retries a handler that fails twice, then delivers', async () => {
    const payload = { to: 'flaky@example.com' };
    const id = await producer.db.withContext(() => producer.db.transaction(() => producer.outbox.enqueue('test.flaky', payload)));
    // Backoff from 1 s: the retries come after 1–2 s and 2–4 s.
    const delivered = await waitFor(async () => {
      const r = await row(id);
      return r?.delivered_at ? r : undefined;
    }, 15_000, 'delivery after two failures');
    expect(callsFor(id).map((c) => c.topic)).toEqual(['test.flaky:attempt', 'test.flaky:attempt', 'test.flaky:attempt', 'test.flaky']);
    expect(callsFor(id).every((c) => c.payload.to === 'flaky@example.com')).toBe(true);
    expect(delivered.attempts).toBe(3);
    expect(delivered.last_error).toBeNull();
    expect(delivered.payload_enc).toBeNull();
    expect(await settledJob(id, 'completed')).toEqual([{ id, state: 'completed', retry_count: 2 }]);
  });

  it('a failing message does not fail the other messages fetched in the same batch', async () => {
    // With no worker running, the three messages wait in the queue and are fetched as one batch.
    await stopNode(worker!);
    const ids = await producer.db.withContext(() =>
      producer.db.transaction(async () => [
        await producer.outbox.enqueue('test.broken', { n: 0 }),
        await producer.outbox.enqueue('test.mail', { n: 1 }),
        await producer.outbox.enqueue('test.mail', { n: 2 }),
      ]),
    );
    worker = await startWorkerNode();
    await waitFor(async () => ((await row(ids[2]!))?.delivered_at && (await row(ids[1]!))?.delivered_at) || undefined, 10_000, 'batch');
    for (const id of ids.slice(1)) expect(await settledJob(id, 'completed')).toEqual([{ id, state: 'completed', retry_count: 0 }]);
    const broken = (await row(ids[0]!))!;
    expect(broken.delivered_at).toBeNull();
    expect(broken.last_error).toBe('permanently broken');
    expect(await settledJob(ids[0]!, 'retry')).toEqual([{ id: ids[0], state: 'retry', retry_count: 0 }]);
  });

  it('sweep() re-dispatches a message whose hand-off to the queue was lost', async () => {
    // A producer whose queue is unreachable: the message commits, the hand-off fails.
    const db = await Database.open({ url: database.url, poolMax: 2 });
    const unstarted = new PgBoss({ connectionString: database.url, schema: 'pgboss', supervise: false, schedule: false });
    const lost = new PgBossOutbox(db, unstarted, box, crypto, quiet, { retryLimit: 5, retryDelaySeconds: 1, jobTimeoutSeconds: 2 });
    const payload = { to: 'lost@example.com' };
    let id: string;
    try {
      id = await db.withContext(() => db.transaction(() => lost.enqueue('test.mail', payload)));
    } finally {
      await db.close();
    }
    expect((await row(id))!.dispatched_at).toBeNull();
    expect(await jobsFor(id)).toEqual([]);

    // Too recent: the hand-off may still be under way.
    expect(await producer.outbox.sweep()).toBe(0);

    await producer.db.withContext(() => producer.db.query(`update outbox_messages set created_at = created_at - interval '6 seconds' where id = ?`, [id]));
    expect(await producer.outbox.sweep()).toBe(1);
    expect((await row(id))!.dispatched_at).not.toBeNull();
    await waitFor(async () => (await row(id))?.delivered_at, 10_000, 'delivery after the sweep');
    expect(callsFor(id)).toEqual([{ topic: 'test.mail', id, payload }]);
    expect(await producer.outbox.sweep()).toBe(0);
  });

  it('sweep() leaves a message that is still retrying alone, and revives one whose retries ran out', async () => {
    let failing = true;
    worker!.outbox.register('test.later', async (payload, id) => {
      calls.push({ topic: 'test.later:attempt', id, payload });
      if (failing) throw new Error('mailbox full');
    });
    const noRetries = new PgBossOutbox(producer.db, producer.boss, box, crypto, quiet, { retryLimit: 0, retryDelaySeconds: 1, jobTimeoutSeconds: 2 });
    const retrying = await producer.db.withContext(() => producer.outbox.enqueue('test.later', { n: 'retrying' }));
    const exhausted = await producer.db.withContext(() => noRetries.enqueue('test.later', { n: 'exhausted' }));

    await waitFor(async () => (await jobsFor(exhausted))[0]?.state === 'failed', 10_000, 'retries to run out');
    await waitFor(async () => (await row(retrying))!.attempts >= 1, 10_000, 'a first attempt');

    // Handed over long ago and still not delivered.
    await producer.db.withContext(() =>
      producer.db.query(`update outbox_messages set dispatched_at = dispatched_at - interval '16 minutes' where id in (?, ?)`, [retrying, exhausted]),
    );
    failing = false;
    expect(await producer.outbox.sweep()).toBe(2);
    // Still one job per message: no second delivery racing the first.
    expect(await jobsFor(retrying)).toHaveLength(1);
    expect(await jobsFor(exhausted)).toHaveLength(1);
    await waitFor(async () => ((await row(exhausted))?.delivered_at && (await row(retrying))?.delivered_at) || undefined, 20_000, 'both delivered');
    expect(callsFor(exhausted).map((c) => c.payload.n)).toEqual(['exhausted', 'exhausted']);
    // Swept again right away: nothing left.
    expect(await producer.outbox.sweep()).toBe(0);
  });

  it('survives a worker dying mid-delivery: another worker delivers the message', async () => {
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
    await waitFor(async () => out.includes('ready') || (child.exitCode !== null && Promise.reject(new Error(`worker A exited: ${err}`))), 20_000, 'worker A to start');

    const payload = { to: 'survivor@example.com', code: '777001' };
    const id = await producer.db.withContext(() => producer.db.transaction(() => producer.outbox.enqueue('test.mail', payload)));
    await waitFor(async () => out.includes(`in-flight ${id}`), 10_000, 'worker A to take the message');

    // Worker A dies without a word: no graceful shutdown, its job stays "active".
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await waitFor(async () => child.signalCode === 'SIGKILL', 5_000, 'worker A to die');
    expect((await jobsFor(id))[0]!.state).toBe('active');
    expect((await row(id))!.delivered_at).toBeNull();

    const b = await startNode({ supervise: true });
    const received: Array<Record<string, unknown>> = [];
    b.outbox.register('test.mail', async (p, messageId) => {
      expect(messageId).toBe(id);
      received.push(p);
    });
    await b.outbox.startWorker();

    // Job timeout (2 s) + maintenance (1 s) + retry delay (1–2 s) + polling: well within 15 s.
    await waitFor(async () => (await row(id))?.delivered_at, 15_000, 'worker B to deliver');
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(received).toEqual([payload]);
    const delivered = (await row(id))!;
    expect(delivered.payload_enc).toBeNull();
    expect(await settledJob(id, 'completed')).toEqual([{ id, state: 'completed', retry_count: 1 }]);
  });
});
