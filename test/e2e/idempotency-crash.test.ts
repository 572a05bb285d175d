import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infrastructure/persistence/embedded-postgres';
import { startTestApp, type TestApp } from '../support/app';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * `Idempotency-Key` after a crash. A Tollgate server (`apps/server/main.ts`, a child process, as
 * `npm start` runs it) sells on a Stripe-shaped server that takes every subscription create and
 * answers it late, so the processor has acted when the server is killed with SIGKILL, with those
 * keyed subscribes in flight. The server is started again and every client retries with its
 * original key: within a minute of the kill each retry is answered with its subscription (the dead
 * request's key is taken over once its lease runs out, not 24 hours later), and each user has
 * exactly one subscription and one charge at the processor (the re-run's processor writes carry
 * the keys derived from the request's key, so the processor answers what it did the first time).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USERS = 4;
/** How long after the kill the retries may take, all of them. */
const RETRY_WINDOW_MS = 60_000;

class ServerProcess {
  private child: ChildProcess | null = null;
  output = '';

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'apps/server/main.ts'], { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let mine = '';
    const keep = (d: Buffer) => {
      mine += d.toString();
      this.output = (this.output + d.toString()).slice(-65_536);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const deadline = Date.now() + 60_000;
    while (!mine.includes('Tollgate listening')) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`the server did not start:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGKILL, or SIGTERM for a clean stop; resolves when it has exited. */
  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

describe('Idempotency-Key after the server is killed with keyed subscribes in flight', () => {
  let t: TestApp | undefined;
  let stripe: FakeStripe | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.stop('SIGTERM');
    await t?.close();
    await stripe?.close();
  });

  it(`answers every retry within a minute, with one subscription and one charge per user`, { timeout: 180_000 }, async () => {
    stripe = await startFakeStripe({ webhookRetryDelaysMs: [1_000, 2_000, 5_000, 10_000] });
    const fake = stripe;
    t = await startTestApp({ env: { STRIPE_API_URL: fake.url, STRIPE_MAX_NETWORK_RETRIES: '0' }, runWorker: false });
    const app = t;
    const project = await app.createProject();
    const account = fake.createAccount();
    const billing = app.tollgate.billing;
    const ok = <T>(o: { ok: true; value: T } | { ok: false; error: string }) => {
      if (!o.ok) throw new Error(o.error);
      return o.value;
    };
    const priceId = await app.inContext(async () => {
      ok(
        await billing.connectBilling(project.id, {
          processor: 'stripe',
          secretKey: account.secretKey,
          publishableKey: account.publishableKey,
          webhookSecret: account.webhookSecret,
        }),
      );
      ok(await billing.createPlan(project.id, { name: 'Basic' }));
      return ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1500, currency: 'usd', interval: 'month' })).id;
    });
    const users = await Promise.all(
      Array.from({ length: USERS }, async () => {
        const user = await app.seedUser(project.id);
        return { user, token: (await app.issueSession(project.id, user)).token, key: crypto.randomUUID() };
      }),
    );

    // The deployment's server: same database, key and PUBLIC_URL (the tokens' issuer) as the set-up app.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = new ServerProcess({
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: app.baseUrl,
      DATABASE_URL: app.database.url,
      TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'),
      TOLLGATE_PROCESSES: '1',
      STRIPE_API_URL: fake.url,
      STRIPE_MAX_NETWORK_RETRIES: '0',
    });
    const s = server;
    await s.start();
    fake.addWebhookEndpoint(account.id, `${base}/api/webhooks/stripe/${project.id}`);

    const subscribe = (u: (typeof users)[number]) =>
      fetch(`${base}/api/proxy/billing/subscribe`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json', 'idempotency-key': u.key },
        body: JSON.stringify({ priceId, paymentMethodId: 'pm_card_visa' }),
      });

    // Stripe creates each subscription (and charges it) when asked, and answers a minute later.
    fake.delayNext({ method: 'POST', path: '/v1/subscriptions', ms: 60_000, count: USERS });
    const inFlight = users.map((u) =>
      subscribe(u).then(
        (r) => r.status,
        () => 'connection lost',
      ),
    );
    const created = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/subscriptions').length;
    const waitUntil = Date.now() + 30_000;
    while (created() < USERS) {
      if (Date.now() > waitUntil) throw new Error(`only ${created()} of ${USERS} subscriptions reached the processor:\n${s.output.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(fake.list(account.id, 'subscription')).toHaveLength(USERS);

    await s.stop('SIGKILL');
    const killedAt = Date.now();
    expect(await Promise.all(inFlight)).toEqual(users.map(() => 'connection lost'));
    await s.start();

    // Every client retries with its original key, once a second, until it gets an answer to keep.
    const seen: Array<Record<string, number>> = users.map(() => ({}));
    const answers = await Promise.all(
      users.map(async (u, i) => {
        for (;;) {
          const res = await subscribe(u);
          const body = (await res.json()) as { id?: string; code?: string };
          const label = `${res.status}${body.code ? ` ${body.code}` : ''}`;
          seen[i]![label] = (seen[i]![label] ?? 0) + 1;
          if (res.status === 201) return { body, replayed: res.headers.get('idempotent-replayed'), afterMs: Date.now() - killedAt };
          if (Date.now() - killedAt > RETRY_WINDOW_MS) return { body, status: res.status, afterMs: Date.now() - killedAt };
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }),
    );
    const after = answers.map((a) => `${(a.afterMs / 1000).toFixed(1)} s`).join(', ');
    console.log(`idempotency crash test: retries answered ${after} after the kill; answers seen: ${JSON.stringify(seen)}`);
    expect(
      answers.filter((a) => a.afterMs > RETRY_WINDOW_MS),
      JSON.stringify({ answers, seen }),
    ).toEqual([]);

    // The one subscription each user has, in Tollgate and at the processor, is the one answered.
    const live = await app.inContext(() =>
      app.tollgate.core.db.query<{ id: string; user_id: string; processor_subscription_id: string }>(
        `select id, user_id, processor_subscription_id from billing_subscriptions where project_id = ?`,
        [project.id],
      ),
    );
    expect(live).toHaveLength(USERS);
    users.forEach((u, i) => {
      const mine = live.filter((row) => row.user_id === u.user.id);
      expect(mine).toHaveLength(1);
      expect(answers[i]!.body.id).toBe(mine[0]!.id);
    });
    const atStripe = fake.list<{ id: string; status: string }>(account.id, 'subscription');
    expect(atStripe).toHaveLength(USERS);
    expect(new Set(live.map((row) => row.processor_subscription_id))).toEqual(new Set(atStripe.map((sub) => sub.id)));
    // One charge per user: one paid invoice per subscription, nothing else charged.
    const paid = fake.list<{ subscription?: string; status: string; amount_paid: number }>(account.id, 'invoice').filter((inv) => inv.amount_paid > 0);
    expect(paid).toHaveLength(USERS);
    expect(paid.every((inv) => inv.amount_paid === 1500)).toBe(true);
  });
});
