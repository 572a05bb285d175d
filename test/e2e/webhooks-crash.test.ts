import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { loadConfig } from '../../apps/server/config';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate, type Tollgate } from '../../apps/server/tollgate';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TollgateProcess, waitFor } from '../support/tollgate-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * At-least-once delivery when the delivering process dies. Billing on the sandbox records 1,000
 * events (500 subscriptions: subscription.created and invoice.paid each) in this process, which
 * never delivers a job; a separate `npm run worker` process (apps/server/worker.ts) delivers them
 * to a real receiver on 127.0.0.1 that checks every signature. The worker is killed with SIGKILL 5
 * times while it delivers (from the receiver, as it records a request and before it answers it: the
 * worker always dies with deliveries in flight), and started again each time. At the end every event id has reached the
 * receiver; the duplicates (attempts whose answer died with the worker) are counted and printed.
 *
 * How a killed worker's deliveries come back, with nothing but the worker processes running (as in
 * production): its pg-boss jobs stay "active" until they expire (the webhook job's timeout,
 * WEBHOOK_TIMEOUT_MS rounded up to seconds + 5 s, + 2 s). Every worker process looks every 2 s for
 * attempts running past that and then has pg-boss fail the expired jobs, which runs each again 1 s
 * later; the re-run closes the abandoned attempt and schedules the next one on the webhook schedule
 * (5 s). Here WEBHOOK_TIMEOUT_MS=2000: expiry 9 s after the job started, so the deliveries a worker
 * held are back about 13 to 18 s after it died.
 *
 * An attempt abandoned twice would wait for the schedule's third attempt (5 minutes): the kills all
 * come within about 10 s (recording 8 subscriptions at a time keeps the backlog ahead of the
 * worker), before the first kill's deliveries are tried again, and only a first delivery arms a
 * kill, so none is.
 */

const EVENTS = 1_000;
const SUBSCRIPTIONS = EVENTS / 2;
const KILLS = 5;
/** A kill comes each time this many more events have reached the receiver for the first time. */
const KILL_EVERY = 120;
/** Subscriptions recorded at once by this process. */
const RECORDING_CONCURRENCY = 8;
const WEBHOOK_TIMEOUT_MS = 2_000;
/**
 * The test's own limit. A run takes about 65 s on an idle two-core machine; the bounds that judge it
 * are the waits inside (30 s for each kill's event, 90 s for every event id, 30 s for the log), and
 * this limit leaves them room to fail with what was late rather than with a bare timeout.
 */
const TEST_TIMEOUT_MS = 240_000;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };
const ok = <T>(outcome: Outcome<T>): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error}`);
  return outcome.value;
};

describe('webhook delivery with the worker killed', () => {
  let database: TestDatabase | undefined;
  let tollgate: Tollgate | undefined;
  let worker: TollgateProcess | undefined;
  const receiver = new WebhookReceiver(() => Date.now());

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
    await tollgate?.close();
    await database?.drop();
  });

  it(`delivers each of ${EVENTS} events at least once while the worker is killed with SIGKILL ${KILLS} times`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const started = Date.now();
    database = await createTestDatabase();
    const secretKey = randomBytes(32);
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) } as const;
    const config = loadConfig({ ...env, PUBLIC_URL: 'http://127.0.0.1:4000' });
    // This process records (billing's use cases, the webhook fan-out in their transactions) and
    // never delivers: runWorker false.
    tollgate = await createTollgate({ config, databaseUrl: database.url, secretKey, logger: createLogger('silent', false), runWorker: false });
    await tollgate.start();
    const tg = tollgate;
    const run = <T>(fn: () => Promise<T>) => tg.core.db.withContext(fn);

    const billing = tg.billing as BillingUseCases;
    const created = await run(() => tg.admin.createProject({ name: 'Crash', callbackUrls: ['https://app.example.com/callback'] }));
    if (!created.ok) throw new Error(created.error);
    const project = (await run(() => tg.admin.getProject(created.value.project.id))) as Project;
    const priceId = await run(async () => {
      ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
      ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports' }));
      return ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' })).id;
    });
    await receiver.start();
    const endpoint = ok(await run(() => tg.webhooks.createEndpoint(project.id, { url: receiver.url('/hooks') })));
    receiver.route('/hooks', endpoint.secret);

    const users: EndUser[] = await run(async () => {
      const list: EndUser[] = [];
      const now = tg.core.clock.now();
      for (let i = 0; i < SUBSCRIPTIONS; i++) {
        const user: EndUser = {
          id: tg.core.crypto.uuid(),
          projectId: project.id,
          email: `crash-${i}@example.com`,
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

    worker = new TollgateProcess('apps/server/worker.ts', {
      ...process.env,
      ...env,
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      TOLLGATE_SECRET_KEY: secretKey.toString('base64'),
    });
    const w = worker;
    const startWorker = () => w.start('Tollgate worker started', 30_000);
    await startWorker();
    const deliveringFrom = Date.now();

    // Record the events, a few subscriptions at a time, while the worker delivers.
    let next = 0;
    let done = 0;
    const recordedEvents = () => done * 2;
    let recordingError: unknown = null;
    const recording = Promise.all(
      Array.from({ length: RECORDING_CONCURRENCY }, async () => {
        while (next < users.length) {
          const user = users[next++]!;
          ok(await run(() => billing.subscribe({ project, user }, { priceId, paymentMethodId: 'pm_card_visa', requestKey: tg.core.crypto.uuid() })));
          done++;
        }
      }),
    ).catch((e: unknown) => {
      recordingError = e;
    });

    // The database's clock, which pg-boss stamps jobs with.
    const dbNow = async () => (await run(() => tg.core.db.query<{ now: Date }>('select now() as now')))[0]!.now;
    /** Delivery jobs started since `since` and still active: what a dead worker held. */
    const heldSince = async (since: Date) =>
      Number(
        (
          await run(() =>
            tg.core.db.query<{ n: string }>(`select count(*) as n from pgboss.job where name = 'tollgate.webhooks' and state = 'active' and started_on >= ?`, [
              since,
            ]),
          )
        )[0]!.n,
      );
    const kills: Array<{ at: number; received: number; recorded: number; heldJobs: number }> = [];
    let workerSince = await dbNow();
    // Killed while delivering: as the receiver records the first delivery of its next KILL_EVERY-th
    // event and before it answers, so the worker dies with that request (at least) in flight. Only a
    // first delivery arms a kill: a retry of a delivery a kill abandoned is not the one killed again.
    const seen = new Set<string>();
    let armed: { at: number; killed: Promise<void> | null } | null = null;
    receiver.onRequest = (request) => {
      if (seen.has(request.event.id)) return;
      seen.add(request.event.id);
      if (armed && armed.killed === null && seen.size >= armed.at) armed.killed = w.signal('SIGKILL').then(() => undefined);
    };
    for (let k = 1; k <= KILLS; k++) {
      const kill: { at: number; killed: Promise<void> | null } = { at: k * KILL_EVERY, killed: null };
      armed = kill;
      await waitFor(() => recordingError !== null || kill.killed !== null, `event ${kill.at} before kill ${k}`, 30_000, 5);
      if (recordingError) throw recordingError;
      await kill.killed;
      kills.push({ at: Date.now(), received: receiver.received.length, recorded: recordedEvents(), heldJobs: await heldSince(workerSince) });
      workerSince = await dbNow();
      await startWorker();
    }
    receiver.onRequest = undefined;
    await recording;
    if (recordingError) throw recordingError;

    const eventIds = (await run(() => tg.core.db.query<{ id: string }>(`select id from billing_events where project_id = ?`, [project.id]))).map((e) => e.id);
    expect(eventIds).toHaveLength(EVENTS);

    let allReceivedAt = 0;
    const distinct = () => new Set(receiver.received.map((r) => r.headers['webhook-id']));
    try {
      await waitFor(() => eventIds.every((id) => distinct().has(id)), 'every event id at the receiver', 90_000, 250);
      allReceivedAt = Date.now();
      // The delivery log settles too: each delivery succeeded, none left pending.
      await waitFor(
        async () =>
          Number(
            (
              await run(() =>
                tg.core.db.query<{ n: string }>(`select count(*) as n from webhook_deliveries where endpoint_id = ? and status <> 'succeeded'`, [
                  endpoint.endpoint.id,
                ]),
              )
            )[0]!.n,
          ) === 0,
        'every delivery recorded as succeeded',
        30_000,
        250,
      );
    } catch (e) {
      const late = await run(() =>
        tg.core.db.query(
          `select status, attempts, count(*) as n, min(next_attempt_at) as next from outbox_messages where topic = 'webhooks.deliver' group by ` +
            `status, attempts order by 1, 2`,
        ),
      );
      const span = ((kills.at(-1)!.at - kills[0]!.at) / 1000).toFixed(1);
      throw new Error(
        `${(e as Error).message}\noutbox messages by status and attempts: ${JSON.stringify(late)}\n` +
          `(a delivery abandoned by two kills waits 5 minutes for its third attempt; the kills spanned ${span} s)\nworker output ` +
          `(tail):\n${w.output.slice(-4000)}`,
      );
    }

    const received = receiver.received.length;
    const ids = distinct();
    const abandoned = Number(
      (
        await run(() =>
          tg.core.db.query<{ n: string }>(
            `select count(*) as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ? and a.duration_ms is null`,
            [endpoint.endpoint.id],
          ),
        )
      )[0]!.n,
    );
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const lastKill = kills.at(-1)!.at;
    console.log(
      [
        `webhook crash test: ${EVENTS} events, ${received} deliveries received, ${received - ids.size} duplicates, ${ids.size} distinct event ids; ` +
          `${s(Date.now() - started)} in all`,
        `  worker killed ${kills.length} times (SIGKILL), started ${w.starts} times; attempts left open by the kills: ${abandoned}`,
        ...kills.map(
          (k, i) =>
            `  kill ${i + 1} at +${s(k.at - deliveringFrom)}: ${k.received} requests received, ${k.recorded} events recorded, ${k.heldJobs} ` +
            `delivery jobs held by the killed worker`,
        ),
        `  set-up ${s(deliveringFrom - started)}; every event id received ${s(allReceivedAt - deliveringFrom)} after delivery began, ` +
          `${s(allReceivedAt - lastKill)} after the last kill`,
      ].join('\n'),
    );

    expect(eventIds.filter((id) => !ids.has(id))).toEqual([]);
    // Every request is an event of this project, signed by the spec's recipe and accepted by the SDK.
    expect(receiver.received.filter((r) => r.validFor.length !== 1 || !r.sdkVerified)).toEqual([]);
    expect(receiver.received.every((r) => r.headers['webhook-id'] === r.event.id && r.event.projectId === project.id)).toBe(true);
    expect(ids.size).toBe(EVENTS);
    expect(kills).toHaveLength(KILLS);
    expect(kills.every((k) => k.received < EVENTS)).toBe(true);
    // Each kill caught the worker delivering: it held jobs, and left attempts open.
    expect(kills.filter((k) => k.heldJobs === 0)).toEqual([]);
    expect(abandoned).toBeGreaterThanOrEqual(KILLS);
  });
});
