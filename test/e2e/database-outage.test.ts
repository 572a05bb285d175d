import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { loadConfig } from '../../apps/server/config';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate, type Tollgate } from '../../apps/server/tollgate';
import { assertTestDatabase, createTestDatabase, cutDatabase, type TestDatabase } from '../support/database';
import { TollgateProcess, waitFor } from '../support/tollgate-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * PostgreSQL going away under running Tollgate processes, and a first start on a database that
 * does not exist yet. The processes are real: `npm start`'s entry point (apps/server/main.ts) and
 * `npm run worker`'s (apps/server/worker.ts), started with node and tsx as a process manager does.
 *
 * An outage is made on the test's own database, the way a restart looks to its clients: new
 * connections are refused (`allow_connections false`: "database is not currently accepting
 * connections") and every open one is ended with PostgreSQL's administrator-command error (57P01,
 * what a fast restart sends), then connections are allowed again some seconds later. A network blip
 * is the second half alone.
 */

const adminUrl = () => inject('adminDatabaseUrl');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function readyz(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).status;
  } catch {
    return 0;
  }
}

describe('a first start on a database that does not exist yet', () => {
  const name = `tollgate_test_new_${randomBytes(5).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-new-db-'));
  let server: TollgateProcess | undefined;

  afterAll(async () => {
    await server?.stop();
    await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates and migrates the database, creates the demo project and serves it; the second start prints a console link', { timeout: 120_000 }, async () => {
    const url = new URL(adminUrl());
    url.pathname = `/${name}`;
    assertTestDatabase(url.toString());
    expect(await admin(async (c) => (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount)).toBe(0);

    server = new TollgateProcess('apps/server/main.ts', {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: url.toString(),
      TOLLGATE_DATA_DIR: dataDir,
    });
    await server.start('Tollgate listening');
    const apiKey = server.output.match(/API key {4}: (tg_\S+)/)?.[1];
    expect(apiKey, server.output.slice(-3000)).toBeDefined();
    const port = server.port();
    expect(await readyz(port)).toBe(200);
    // A call that reads the database through the stores' own path (the API key, the project).
    const verify = await fetch(`http://127.0.0.1:${port}/api/v1/token/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'not-a-token' }),
    });
    expect(verify.status, await verify.clone().text()).toBe(200);
    expect(await verify.json()).toMatchObject({ valid: false });
    expect(server.output).not.toContain('internal_error');
    expect(await server.signal('SIGTERM')).toEqual({ code: 0, signal: null });

    // The second start: no new project, and a way into the console (a new one-time link).
    await server.start('Tollgate listening');
    expect(server.current).not.toContain('Created the "Demo" project');
    expect(server.current).toMatch(/one-time sign-in link for operator@localhost\.test[^\n]*\n\s+http:\/\/\S+\/dashboard\/link#token=tgl_/);
    expect(server.current).toContain('npm run tollgate -- admin link --email');
    expect(await server.signal('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});

describe('PostgreSQL restarted under a server running its jobs and a separate worker', () => {
  const SUBSCRIPTIONS = 80;
  let database: TestDatabase | undefined;
  let tollgate: Tollgate | undefined;
  const processes: TollgateProcess[] = [];
  const receiver = new WebhookReceiver(() => Date.now());

  afterAll(async () => {
    for (const p of processes) await p.stop();
    await receiver.stop();
    await tollgate?.close();
    await database?.drop();
  });

  it('keeps every process up, reports not-ready while the database is away, and delivers every event', { timeout: 240_000 }, async () => {
    database = await createTestDatabase();
    const secretKey = randomBytes(32);
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '3000' } as const;
    // This process sets up and records events (billing on the sandbox); it never delivers a job.
    tollgate = await createTollgate({
      config: loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.1:4000' }),
      databaseUrl: database.url,
      secretKey,
      logger: createLogger('silent', false),
      runWorker: false,
    });
    await tollgate.start();
    const tg = tollgate;
    const run = <T>(fn: () => Promise<T>) => tg.core.db.withContext(fn);
    const billing = tg.billing as BillingUseCases;
    const created = await run(() => tg.admin.createProject({ name: 'Outage', callbackUrls: ['https://app.example.com/callback'] }));
    if (!created.ok) throw new Error(created.error);
    const project = (await run(() => tg.admin.getProject(created.value.project.id))) as Project;
    const priceId = await run(async () => {
      await billing.connectBilling(project.id, { processor: 'sandbox' });
      await billing.createPlan(project.id, { name: 'Basic', features: 'reports' });
      const price = await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' });
      if (!price.ok) throw new Error(price.error);
      return price.value.id;
    });
    await receiver.start();
    const endpoint = await run(() => tg.webhooks.createEndpoint(project.id, { url: receiver.url('/hooks') }));
    if (!endpoint.ok) throw new Error(endpoint.error);
    receiver.route('/hooks', endpoint.value.secret);
    // Deliveries take a while, so that an outage always finds some in flight.
    receiver.answerDelayMs = 300;
    const users = await run(async () => {
      const list: EndUser[] = [];
      const now = tg.core.clock.now();
      for (let i = 0; i < SUBSCRIPTIONS; i++) {
        const user: EndUser = {
          id: tg.core.crypto.uuid(),
          projectId: project.id,
          email: `outage-${i}@example.com`,
          name: null,
          picture: null,
          provider: 'email',
          emailVerified: true,
          locale: null,
          disabled: false,
          createdAt: now,
          updatedAt: now,
        };
        await tg.core.stores.users.insert(user);
        list.push(user);
      }
      return list;
    });

    const childEnv = { ...process.env, ...env, LOG_LEVEL: 'info', DATABASE_URL: database.url, TOLLGATE_SECRET_KEY: secretKey.toString('base64') };
    // `npm start` as most run it: one process serving and running its own jobs.
    const server = new TollgateProcess('apps/server/main.ts', { ...childEnv, PORT: '0', HOST: '127.0.0.1', TOLLGATE_WORKER: 'on' });
    const worker = new TollgateProcess('apps/server/worker.ts', childEnv);
    processes.push(server, worker);
    await server.start('Tollgate listening');
    await worker.start('Tollgate worker started');
    const port = server.port();
    expect(await readyz(port)).toBe(200);

    // Subscriptions recorded a few at a time while the two processes deliver; a subscribe that
    // fails while the database is away is tried again with its request key.
    let next = 0;
    const stopRecording = false;
    const recording = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < users.length && !stopRecording) {
          const user = users[next++]!;
          const requestKey = tg.core.crypto.uuid();
          while (!stopRecording) {
            try {
              await run(() => billing.subscribe({ project, user }, { priceId, paymentMethodId: 'pm_card_visa', requestKey }));
              break;
            } catch {
              await sleep(250);
            }
          }
          await sleep(20);
        }
      }),
    );

    const distinct = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    // A restart: 4 s during which PostgreSQL refuses connections, with deliveries in flight.
    await waitFor(() => distinct().size >= 40, '40 events delivered before the restart', 60_000);
    const readiness: number[] = [];
    const watching = (async () => {
      const until = Date.now() + 4_000;
      while (Date.now() < until) {
        readiness.push(await readyz(port));
        await sleep(200);
      }
    })();
    const ended = await cutDatabase(database.url, 4_000);
    await watching;
    expect(ended).toBeGreaterThan(0);
    expect(readiness, `the server answers 503 on /readyz while the database is away; its output:\n${server.output.slice(-3000)}`).toContain(503);
    const restartedAt = Date.now();
    await waitFor(async () => (await readyz(port)) === 200, 'the server ready again', 30_000, 200);

    // A blip: every connection ended at once, new ones welcome.
    await waitFor(() => distinct().size >= 100, '100 events delivered before the blip', 90_000);
    const blipAt = Date.now();
    await cutDatabase(database.url, 0);

    await recording;
    const eventIds = (await run(() => tg.core.db.query<{ id: string }>(`select id from billing_events where project_id = ?`, [project.id]))).map((e) => e.id);
    // Two events a subscription (a subscribe the outage refused after its retries records none).
    expect(eventIds.length).toBeGreaterThan(SUBSCRIPTIONS);
    await waitFor(() => eventIds.every((id) => distinct().has(id)), 'every event delivered', 120_000, 250).catch((e: Error) => {
      throw new Error(
        `${e.message}: ${eventIds.filter((id) => !distinct().has(id)).length} of ${eventIds.length} ` +
          `missing\nserver:\n${server.output.slice(-3000)}\nworker:\n${worker.output.slice(-3000)}`,
      );
    });

    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `database outage test: ${eventIds.length} events, ${receiver.received.length} deliveries (${receiver.received.length - distinct().size} duplicates); ` +
        `readiness during the restart: ${readiness.join(' ')}; every event delivered ${s(Date.now() - restartedAt)} after the restart, ` +
        `${s(Date.now() - blipAt)} after the blip`,
    );
    expect(server.running, `the server exited:\n${server.output.slice(-4000)}`).toBe(true);
    expect(worker.running, `the worker exited:\n${worker.output.slice(-4000)}`).toBe(true);
    expect(await readyz(port)).toBe(200);
    // Logged errors say what failed, not the state of a database client (kilobytes a line).
    const longest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));
    expect(longest(server.output)).toBeLessThan(8_000);
    expect(longest(worker.output)).toBeLessThan(8_000);
    // And both still stop cleanly.
    expect(await worker.signal('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(await server.signal('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
