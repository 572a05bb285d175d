import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import { parseTraceparent } from '../../domain/trace-context';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { TestClock } from '../support/clock';
import { startTestSmtp, type TestSmtp } from '../support/smtp';
import { TollgateProcess, waitFor } from '../support/tollgate-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * GET /metrics end to end (docs/operations.md): with METRICS_ENABLED and a METRICS_TOKEN, a
 * sign-in, a failed sign-in, a refused rate limit and a webhook delivery are each counted with
 * their labels (values read from the exposition text before and after); no label carries the
 * user's email or id; a scrape without the token is refused, and a process with metrics off has no
 * /metrics. The webhook is caused by a request with a W3C traceparent: the receiver gets a child in
 * the same trace. The worker (`npm run worker`) answers its own scrape on METRICS_PORT.
 */

const TOKEN = 'metrics-token-for-the-test-0123456789';
const PASSWORD = 'correct horse 1';

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of an exposition text (Prometheus text format 0.0.4). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when none). */
const sampleSum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

describe('Prometheus metrics', { timeout: 120_000 }, () => {
  const clock = new TestClock(Date.UTC(2026, 10, 29, 9));
  let app: TestApp;
  let off: TestApp;
  let smtp: TestSmtp;
  let receiver: WebhookReceiver;
  let project: TestProject;

  const scrapeText = async (base = app.baseUrl, token: string | null = TOKEN) => {
    const res = await fetch(`${base}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    return res.text();
  };
  const scrape = async () => parseExposition(await scrapeText());
  const signIn = (email: string, password = PASSWORD) => project.client.email.signin({ body: { email, password, callback_url: project.callbackUrl } });

  beforeAll(async () => {
    smtp = await startTestSmtp();
    receiver = new WebhookReceiver(() => clock.now().getTime());
    await receiver.start();
    app = await startTestApp({
      clock,
      env: { SMTP_URL: smtp.url, METRICS_ENABLED: 'on', METRICS_TOKEN: TOKEN, EMAIL_SIGNIN_MAX_PER_EMAIL: '3', METRICS_BACKLOG_CACHE_SECONDS: '0' },
    });
    // A second process of the same deployment, with the default settings: metrics off.
    // No job worker: on the same database it would take some of the deliveries this test counts on `app`.
    off = await startTestApp({ sameDeploymentAs: app, clock, runWorker: false, env: { SMTP_URL: smtp.url } });
    project = await app.createProject({ name: 'Metered' });
  });
  afterAll(async () => {
    await off?.close();
    await app?.close();
    await receiver?.stop();
    await smtp?.close();
  });

  it('refuses a scrape without the token, or with another one, as the API refuses: 401 and a JSON error', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}-not` }, { authorization: `Basic ${TOKEN}` }] as Array<Record<string, string>>) {
      const res = await fetch(`${app.baseUrl}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.json()).toMatchObject({ code: 'invalid_metrics_token', error: 'Invalid or missing metrics token' });
    }
  });

  it('has no /metrics where metrics are off (the default): 404 like any unknown path', async () => {
    const res = await fetch(`${off.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  it('counts a sign-in, a failed sign-in and a refused rate limit, by method, outcome and route template', async () => {
    const email = 'metered-ada@example.com';
    const signedUp = await project.client.email.signup({ body: { email, password: PASSWORD, callback_url: project.callbackUrl } });
    expect(signedUp.status).toBe(200);
    const before = await scrape();

    expect((await signIn(email)).status).toBe(200);
    expect((await signIn(email, 'wrong password 1')).status).toBe(401);
    // EMAIL_SIGNIN_MAX_PER_EMAIL=3 for this address: two more wrong ones, then 429.
    expect((await signIn('limited@example.com', 'wrong password 1')).status).toBe(401);
    expect((await signIn('limited@example.com', 'wrong password 1')).status).toBe(401);
    expect((await signIn('limited@example.com', 'wrong password 1')).status).toBe(401);
    const refused = await signIn('limited@example.com', 'wrong password 1');
    expect(refused.status).toBe(429);

    const route = '/api/proxy/email/signin';
    // A request is counted once its answer is sent, which may be a moment after the client read it.
    const after = await waitFor(
      async () => {
        const s = await scrape();
        return sampleSum(s, 'tollgate_http_requests_total', { route }) - sampleSum(before, 'tollgate_http_requests_total', { route }) === 6 && s;
      },
      'the six sign-in requests counted',
      10_000,
    );
    const delta = (name: string, labels: Record<string, string>) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(delta('tollgate_sign_ins_total', { method: 'email', outcome: 'success' })).toBe(1);
    expect(delta('tollgate_sign_ins_total', { method: 'email', outcome: 'failure' })).toBe(4);
    expect(delta('tollgate_sign_ins_total', { method: 'email', outcome: 'rate_limited' })).toBe(1);
    expect(delta('tollgate_rate_limited_total', { route })).toBe(1);
    expect(delta('tollgate_http_requests_total', { method: 'POST', route, status: '200' })).toBe(1);
    expect(delta('tollgate_http_requests_total', { method: 'POST', route, status: '401' })).toBe(4);
    expect(delta('tollgate_http_requests_total', { method: 'POST', route, status: '429' })).toBe(1);
    expect(delta('tollgate_http_request_duration_seconds_count', { method: 'POST', route })).toBe(6);
    // Every label is a template or an enum: the raw path of a route with an id never appears.
    for (const s of after) expect(s.labels.route ?? '/').not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/);
  });

  it('counts token verifications by outcome', async () => {
    const user = await app.seedUser(project.id);
    const session = await app.issueSession(project.id, user);
    const before = await scrape();
    const verify = (token: string) => project.client.token.verify({ body: { token } });
    expect((await verify(session.token)).body).toMatchObject({ valid: true });
    expect((await verify('not-a-token')).body).toMatchObject({ valid: false });
    const after = await scrape();
    expect(
      sampleSum(after, 'tollgate_token_verifications_total', { outcome: 'valid' }) -
        sampleSum(before, 'tollgate_token_verifications_total', { outcome: 'valid' }),
    ).toBe(1);
  });

  it('counts a webhook delivery, whose request carries the trace of the request that caused it', async () => {
    const billing = app.tollgate.billing as BillingUseCases;
    const ok = <T>(r: { ok: true; value: T } | { ok: false; error: string }): T => {
      if (!r.ok) throw new Error(r.error);
      return r.value;
    };
    const price = await app.inContext(async () => {
      ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
      ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports' }));
      return ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    });
    const { secret } = ok(
      await app.inContext(() => app.tollgate.webhooks.createEndpoint(project.id, { url: receiver.url('/hooks'), eventTypes: ['subscription.created'] })),
    );
    receiver.route('/hooks', secret);
    const user = await app.seedUser(project.id);
    const session = await app.issueSession(project.id, user);
    const before = await scrape();

    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const incoming = `00-${traceId}-b7ad6b7169203331-01`;
    const res = await fetch(`${app.baseUrl}/api/proxy/billing/subscribe`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${session.token}`,
        'content-type': 'application/json',
        'idempotency-key': app.tollgate.core.crypto.uuid(),
        traceparent: incoming,
      },
      body: JSON.stringify({ priceId: price.id, paymentMethodId: 'pm_card_visa' }),
    });
    expect(res.status).toBe(201);

    const delivered = await waitFor(() => receiver.at('/hooks')[0], 'the subscription.created delivery', 15_000);
    expect(delivered.event.type).toBe('subscription.created');
    const sent = parseTraceparent(delivered.headers.traceparent);
    expect(sent).toMatchObject({ traceId, flags: '01' });
    // A span of its own, not the caller's.
    expect(sent!.parentId).not.toBe('b7ad6b7169203331');

    const after = await waitFor(
      async () => {
        const s = await scrape();
        return (
          sampleSum(s, 'tollgate_webhook_deliveries_total', { outcome: 'success' }) >
            sampleSum(before, 'tollgate_webhook_deliveries_total', { outcome: 'success' }) && s
        );
      },
      'the delivery counted',
      10_000,
    );
    expect(
      sampleSum(after, 'tollgate_webhook_deliveries_total', { outcome: 'success' }) -
        sampleSum(before, 'tollgate_webhook_deliveries_total', { outcome: 'success' }),
    ).toBe(1);
    expect(sampleSum(after, 'tollgate_webhook_delivery_duration_seconds_count') - sampleSum(before, 'tollgate_webhook_delivery_duration_seconds_count')).toBe(
      1,
    );
    // The backlog per topic, from the scrape-time query; every topic is there, 0 when none wait.
    expect(after.some((s) => s.name === 'tollgate_outbox_pending_messages' && s.labels.topic === 'webhooks.deliver')).toBe(true);
    expect(after.some((s) => s.name === 'tollgate_outbox_oldest_pending_age_seconds' && s.labels.topic === 'email.send')).toBe(true);
  });

  it('exposes the pool, the event-loop lag and the process metrics, and no email, user id or project id in any label', async () => {
    const text = await scrapeText();
    const samples = parseExposition(text);
    expect(sampleSum(samples, 'tollgate_db_pool_max_connections')).toBe(app.config.DATABASE_POOL_MAX);
    expect(samples.some((s) => s.name === 'tollgate_db_pool_connections' && s.labels.state === 'used')).toBe(true);
    expect(samples.some((s) => s.name === 'tollgate_db_pool_wait_seconds_count' && s.value > 0)).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);

    const users = await app.inContext(() =>
      app.tollgate.core.db.query<{ id: string; email: string }>('select id, email from users where project_id = ?', [project.id]),
    );
    expect(users.length).toBeGreaterThanOrEqual(3);
    for (const user of users) {
      expect(text).not.toContain(user.id);
      expect(text).not.toContain(user.email);
    }
    expect(text).not.toContain(project.id);
    expect(text).not.toContain('limited@example.com');
  });

  it('is served by the worker on METRICS_PORT, with the same token', async () => {
    const port = await freePort();
    const worker = new TollgateProcess('apps/server/worker.ts', {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      DATABASE_URL: app.database.url,
      TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'),
      METRICS_ENABLED: 'on',
      METRICS_TOKEN: TOKEN,
      METRICS_PORT: String(port),
    });
    try {
      await worker.start('Tollgate worker started', 60_000);
      const base = `http://127.0.0.1:${port}`;
      const refused = await fetch(`${base}/metrics`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'invalid_metrics_token' });
      expect((await fetch(`${base}/other`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      const samples = parseExposition(await scrapeText(base));
      expect(samples.some((s) => s.name === 'tollgate_outbox_pending_messages' && s.labels.topic === 'webhooks.deliver')).toBe(true);
      expect(samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
      expect(samples.some((s) => s.name === 'tollgate_webhook_deliveries_total')).toBe(true);
    } finally {
      const exit = await worker.signal('SIGTERM');
      expect(exit.code).toBe(0);
    }
  });
});
