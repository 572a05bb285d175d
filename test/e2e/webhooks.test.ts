import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import { WEBHOOK_DELIVERY_TOPIC } from '../../application/webhooks/ports';
import type { WebhookUseCases } from '../../application/webhooks/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { DEMO_CALLBACK_URL } from '../../apps/server/demo-project';
import { startTestApp, type TestApp } from '../support/app';
import { TestClock } from '../support/clock';
import { startTestSmtp, type TestSmtp } from '../support/smtp';
import { WebhookReceiver, signedBy } from '../support/webhook-receiver';

/**
 * Project webhooks end to end: billing on the sandbox records events, the webhooks feature fans
 * them out to the project's endpoints and the worker delivers them, signed, to a real HTTP receiver
 * on 127.0.0.1 that checks every signature by the spec's recipe and with the SDK helper. Retries are
 * driven by moving the test clock (the outbox then starts the attempt due, as its sweep does every minute), never by
 * sleeping through a retry delay.
 */

const TIMEOUT_MS = 400;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; detail?: string };
const ok = <T>(outcome: Outcome<T>): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
  return outcome.value;
};

async function waitFor<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Shop {
  project: Project;
  basic: string;
  pro: string;
}

/** An app with its billing and webhooks, a project on the sandbox with two plans, and helpers. */
async function setUp(app: TestApp, name = 'Shop', callbackUrls?: string[]) {
  const billing: BillingUseCases = app.tollgate.billing as BillingUseCases;
  const webhooks: WebhookUseCases = app.tollgate.webhooks;
  const run = <T>(fn: () => Promise<T>) => app.inContext(fn);
  const created = await app.createProject({ name, ...(callbackUrls ? { callbackUrls } : {}) });
  const project = (await run(() => app.tollgate.admin.getProject(created.id)))!;
  const shop: Shop = await run(async () => {
    ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
    ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports' }));
    const basic = ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPlan(project.id, { name: 'Pro', features: 'reports, sso' }));
    const pro = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
    return { project, basic: basic.id, pro: pro.id };
  });
  const key = () => app.tollgate.core.crypto.uuid();
  const subscribe = async (user: EndUser, card = 'pm_card_visa') =>
    run(() => billing.subscribe({ project, user }, { priceId: shop.basic, paymentMethodId: card, requestKey: key() }));
  const change = async (user: EndUser) => run(() => billing.changeSubscription({ project, user }, { newPriceId: shop.pro, requestKey: key() }));
  const cancel = async (user: EndUser) => run(() => billing.cancelSubscription({ project, user }, { atPeriodEnd: false, requestKey: key() }));
  const endpoint = async (url: string, eventTypes?: string[]) =>
    ok(await run(() => webhooks.createEndpoint(project.id, { url, ...(eventTypes ? { eventTypes } : {}) })));
  const deliveries = async (endpointId: string) => ok(await run(() => webhooks.listDeliveries(project.id, endpointId, { limit: 100 })));
  return { billing, webhooks, run, shop, project, subscribe, change, cancel, endpoint, deliveries };
}

/** The outbox message of a delivery: attempts so far and when (by the clock) the next is due, once handed to the queue. */
async function messageOf(app: TestApp, deliveryId: string) {
  const rows = await app.inContext(() =>
    app.tollgate.core.db.query<{
      id: string;
      generation: number;
      attempts: number;
      status: string;
      next_attempt_at: string | Date | null;
      dispatched_at: string | Date | null;
    }>(
      `select id, generation, attempts, status, next_attempt_at, dispatched_at from outbox_messages where topic = ? and dedupe_key = ? order by ` +
        `created_at desc limit 1`,
      [WEBHOOK_DELIVERY_TOPIC.name, deliveryId],
    ),
  );
  const m = rows[0];
  return m ? { ...m, next_attempt_at: m.next_attempt_at ? new Date(m.next_attempt_at) : null } : undefined;
}

/**
 * Waits until the delivery's `failures`-th attempt failed and its next attempt is queued, moves the
 * clock to when it is due, and has the sweep start it. Answers the time it was due.
 */
async function runNextAttempt(app: TestApp, deliveryId: string, failures: number): Promise<Date> {
  const message = await waitFor(async () => {
    const m = await messageOf(app, deliveryId);
    return m && m.status === 'pending' && m.attempts === failures && m.dispatched_at !== null ? m : undefined;
  }, `failed attempt ${failures} of ${deliveryId} and its next one queued`);
  const due = message.next_attempt_at!;
  if (app.clock.now().getTime() < due.getTime()) app.clock.set(due);
  // The sweep moves the job to now (or an earlier sweep already did: several were due at once).
  const started = async () =>
    (
      await app.inContext(() =>
        app.tollgate.core.db.query(
          `select 1 from pgboss.job where data->>'id' = ? and (data->>'generation')::int = ? and (state <> 'created' or start_after <= now())`,
          [message.id, message.generation],
        ),
      )
    ).length > 0;
  await waitFor(async () => (await app.tollgate.core.outbox.startDueAttempts()) > 0 || (await started()), `the sweep to start attempt ${failures + 1}`);
  return due;
}

describe('project webhooks', { timeout: 120_000 }, () => {
  const clock = new TestClock(Date.UTC(2026, 2, 2, 9));
  let app: TestApp;
  let receiver: WebhookReceiver;
  let smtp: TestSmtp;
  let ctx: Awaited<ReturnType<typeof setUp>>;
  /** A console account of the deployment (an operator), or a member of the shop's project. */
  const consoleAccount = async (email: string, role: 'operator' | 'member') => {
    const created = await app.inContext(() => app.tollgate.admin.console.createAccount({ email, role, password: 'owner pass 1' }));
    if (!created.ok) throw new Error(created.error);
    if (role === 'member') {
      await app.inContext(() =>
        app.tollgate.core.db.query('insert into console_memberships (account_id, project_id, created_at) values (?, ?, now())', [
          created.value.account.id,
          ctx.project.id,
        ]),
      );
    }
  };
  /** The notice mailed about an endpoint Tollgate disabled. */
  const expectNotice = (mail: { subject: string; text: string }, url: string, reason: string) => {
    expect(mail.subject).toBe(`A webhook endpoint of ${ctx.project.name} was disabled`);
    expect(mail.text).toContain(url);
    expect(mail.text).toContain(`Why: ${reason}.`);
    expect(mail.text).toContain(`/dashboard/projects/${ctx.project.id}/webhooks`);
  };

  beforeAll(async () => {
    smtp = await startTestSmtp();
    app = await startTestApp({ clock, env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), SMTP_URL: smtp.url } });
    receiver = new WebhookReceiver(() => clock.now().getTime());
    await receiver.start();
    ctx = await setUp(app);
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
    await smtp?.close();
  });

  it('delivers each event type to the endpoints that selected it only, signed by the recipe, with the documented headers', async () => {
    const all = await ctx.endpoint(receiver.url('/all'));
    const created = await ctx.endpoint(receiver.url('/created'), ['subscription.created']);
    const money = await ctx.endpoint(receiver.url('/money'), ['invoice.paid', 'payment.failed']);
    const off = await ctx.endpoint(receiver.url('/off'));
    ok(await ctx.run(() => ctx.webhooks.updateEndpoint(ctx.project.id, off.endpoint.id, { enabled: false })));
    for (const [path, e] of [
      ['/all', all],
      ['/created', created],
      ['/money', money],
      ['/off', off],
    ] as const)
      receiver.route(path, e.secret);
    expect(all.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(all.endpoint).toMatchObject({ eventTypes: [], enabled: true, secretPrefix: all.secret.slice(0, 10) });
    expect(money.endpoint.eventTypes).toEqual(['invoice.paid', 'payment.failed']);

    const ada = await app.seedUser(ctx.project.id);
    const bob = await app.seedUser(ctx.project.id);
    ok(await ctx.subscribe(ada));
    ok(await ctx.change(ada));
    ok(await ctx.cancel(ada));
    expect(await ctx.subscribe(bob, 'pm_card_chargeDeclined')).toMatchObject({ ok: false, error: 'card_declined' });

    const expected = {
      '/all': ['subscription.created', 'invoice.paid', 'subscription.updated', 'invoice.paid', 'subscription.canceled', 'payment.failed'],
      '/created': ['subscription.created'],
      '/money': ['invoice.paid', 'invoice.paid', 'payment.failed'],
    };
    await waitFor(() => Object.entries(expected).every(([path, types]) => receiver.at(path).length >= types.length), 'every delivery');
    // Delivery order is not promised: compare as sets of (type), then check `created` orders them.
    for (const [path, types] of Object.entries(expected)) {
      expect(
        receiver
          .at(path)
          .map((r) => r.event.type)
          .sort(),
        path,
      ).toEqual([...types].sort());
    }
    expect(receiver.at('/off')).toEqual([]);

    const events = ok(await ctx.run(() => ctx.billing.listEvents(ctx.project.id, { limit: 50 })));
    for (const r of receiver.received) {
      expect(r.validFor, `${r.path} ${r.event.type}`).toHaveLength(1);
      expect(r.sdkVerified).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Tollgate-Webhooks/1');
      expect(r.headers['webhook-id']).toBe(r.event.id);
      expect(Number(r.headers['x-service-timestamp'])).toBe(clock.now().getTime());
      expect(r.signatures).toHaveLength(1);
      // The body is the recorded event, its fields in the documented order.
      const recorded = events.find((e) => e.id === r.event.id)!;
      expect(JSON.parse(r.body)).toEqual(recorded.payload);
      expect(Object.keys(JSON.parse(r.body))).toEqual(
        ['id', 'type', 'created', 'projectId', 'organizationId', 'userId', 'subscriptionId', 'quantity', 'amount', 'currency', 'data'].filter(
          (k) => k in recorded.payload,
        ),
      );
    }
    const paid = receiver.at('/money').find((r) => r.event.type === 'invoice.paid' && r.event.amount === 1000)!;
    expect(paid.event).toMatchObject({ projectId: ctx.project.id, userId: ada.id, amount: 1000, currency: 'usd' });
    expect(typeof paid.event.subscriptionId).toBe('string');

    // Each delivery is in its endpoint's log: succeeded at the first attempt. The receiver answers
    // before the sender records the outcome, so wait for the record rather than the receipt.
    const log = await waitFor(async () => {
      const l = await ctx.deliveries(money.endpoint.id);
      return l.length === 3 && l.every((d) => d.status !== 'pending') && l;
    }, 'the three deliveries recorded');
    expect(log.map((d) => [d.status, d.attemptCount, d.lastStatusCode])).toEqual(Array(3).fill(['succeeded', 1, 200]));
    expect(log[0]!.attempts[0]).toMatchObject({ attempt: 1, statusCode: 200, responseExcerpt: 'ok', error: null });
    expect(await ctx.deliveries(off.endpoint.id)).toEqual([]);
    for (const e of [all, created, money, off]) ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, e.endpoint.id)));
  });

  it('retries a 500, a timeout and a connection reset on the schedule, with the same webhook-id and a fresh timestamp and signature', async () => {
    const flaky = await ctx.endpoint(receiver.url('/flaky'), ['subscription.created']);
    receiver.route('/flaky', flaky.secret);
    receiver.script('/flaky', 500, 'hang', 'reset', 200);
    const user = await app.seedUser(ctx.project.id);
    const start = clock.now().getTime();
    ok(await ctx.subscribe(user));
    await waitFor(() => receiver.at('/flaky').length === 1, 'the first attempt');
    const [delivery] = await ctx.deliveries(flaky.endpoint.id);
    const id = delivery!.id;

    const due1 = await runNextAttempt(app, id, 1);
    expect(due1.getTime() - start).toBe(5_000);
    await waitFor(() => receiver.at('/flaky').length === 2, 'the second attempt');
    const due2 = await runNextAttempt(app, id, 2);
    expect(due2.getTime() - due1.getTime()).toBe(5 * 60_000);
    await waitFor(() => receiver.at('/flaky').length === 3, 'the third attempt');
    const due3 = await runNextAttempt(app, id, 3);
    expect(due3.getTime() - due2.getTime()).toBe(30 * 60_000);
    await waitFor(async () => (await ctx.deliveries(flaky.endpoint.id))[0]!.status === 'succeeded', 'the fourth attempt to succeed');

    const requests = receiver.at('/flaky');
    expect(requests.map((r) => r.answered)).toEqual([500, 'hang', 'reset', 200]);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(requests.map((r) => Number(r.headers['x-service-timestamp']))).toEqual([start, due1.getTime(), due2.getTime(), due3.getTime()]);
    expect(new Set(requests.map((r) => r.signatures[0])).size).toBe(4);
    expect(requests.every((r) => r.validFor.length === 1 && r.sdkVerified)).toBe(true);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);

    const [log] = await ctx.deliveries(flaky.endpoint.id);
    expect(log).toMatchObject({ status: 'succeeded', attemptCount: 4, lastStatusCode: 200, nextAttemptAt: null });
    expect(log!.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, null],
      [3, null],
      [4, 200],
    ]);
    expect(log!.attempts[0]!.responseExcerpt).toBe('answered 500');
    expect(log!.attempts[1]!.error).toBe(`timed out after ${TIMEOUT_MS} ms`);
    expect(log!.attempts[2]!.error).toMatch(/ECONNRESET|socket hang up/);
    expect(log!.attempts.map((a) => a.startedAt.getTime())).toEqual([start, due1.getTime(), due2.getTime(), due3.getTime()]);
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, flaky.endpoint.id)));
  });

  it('gives a delivery up after the tenth attempt, and disables an endpoint failing for 5 days without a success; the operators are mailed', async () => {
    // The project has no console member: the deployment's operators hear of it.
    await consoleAccount('ops@example.com', 'operator');
    const down = await ctx.endpoint(receiver.url('/down'), ['subscription.created']);
    receiver.route('/down', down.secret, 503);
    const start = clock.now().getTime();
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(() => receiver.at('/down').length === 1, 'the first attempt');
    const [delivery] = await ctx.deliveries(down.endpoint.id);
    const delays: number[] = [];
    let previous = start;
    for (let failures = 1; failures < 10; failures++) {
      const due = await runNextAttempt(app, delivery!.id, failures);
      delays.push((due.getTime() - previous) / 1000);
      previous = due.getTime();
      await waitFor(() => receiver.at('/down').length === failures + 1, `attempt ${failures + 1}`);
      const endpoint = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((e) => e.id === down.endpoint.id)!;
      if (!endpoint.enabled) break;
    }
    // Five days of failures came before the schedule ran out: attempt 9 (day 3) still ran; then ...
    expect(delays.slice(0, 8)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, 86400]);
    // The worker records the tenth failure after the receiver has answered it.
    await waitFor(async () => (await ctx.deliveries(down.endpoint.id))[0]?.status !== 'pending', 'the tenth failure recorded');
    const [after] = await ctx.deliveries(down.endpoint.id);
    expect(after).toMatchObject({ status: 'failed', attemptCount: 10, lastStatusCode: 503, nextAttemptAt: null });
    expect(receiver.at('/down')).toHaveLength(10);
    // ... the tenth failed 3 days and 3 hours after the first: the endpoint stays enabled.
    let endpoint = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((e) => e.id === down.endpoint.id)!;
    expect(endpoint).toMatchObject({ enabled: true, failingSince: new Date(start) });

    // Two days later another event fails: 5 days without a success since the first failure.
    clock.advance(2 * 86_400_000);
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(async () => {
      const e = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((x) => x.id === down.endpoint.id)!;
      return !e.enabled;
    }, 'the endpoint to be disabled');
    endpoint = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((e) => e.id === down.endpoint.id)!;
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'failing for 5 days without a successful delivery' });
    expectNotice(await smtp.waitFor('ops@example.com'), receiver.url('/down'), 'failing for 5 days without a successful delivery');
    // Its pending delivery is not sent again: its next attempt finds the endpoint disabled.
    const [latest] = await ctx.deliveries(down.endpoint.id);
    await runNextAttempt(app, latest!.id, 1);
    await waitFor(async () => (await ctx.deliveries(down.endpoint.id))[0]!.status === 'failed', 'the pending delivery to fail');
    expect((await ctx.deliveries(down.endpoint.id))[0]!.attempts.at(-1)!.error).toBe(
      'not sent: the endpoint is disabled: failing for 5 days without a successful delivery',
    );
    expect(receiver.at('/down')).toHaveLength(11);
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, down.endpoint.id)));
  });

  it("disables an endpoint that answers 410 Gone, and fails its delivery for good; the project's members are mailed", async () => {
    // Now the project has a member: the member is told, the operators are not.
    await consoleAccount('owner@example.com', 'member');
    const gone = await ctx.endpoint(receiver.url('/gone'), ['subscription.created']);
    receiver.route('/gone', gone.secret, 410);
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(async () => (await ctx.deliveries(gone.endpoint.id))[0]?.status === 'failed', 'the delivery to fail');
    const endpoint = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((e) => e.id === gone.endpoint.id)!;
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
    const notice = await smtp.waitFor('owner@example.com');
    expectNotice(notice, receiver.url('/gone'), 'the endpoint answered 410 Gone');
    expect(notice.html).toContain(`<a href="${app.config.publicUrl}/dashboard/projects/${ctx.project.id}/webhooks">`);
    expect(await smtp.settle('ops@example.com', 300)).toHaveLength(1);
    const [delivery] = await ctx.deliveries(gone.endpoint.id);
    expect(delivery).toMatchObject({ attemptCount: 1, lastStatusCode: 410, nextAttemptAt: null });
    // No retry: the outbox message was settled, nothing is queued.
    expect(await messageOf(app, delivery!.id)).toMatchObject({ status: 'delivered' });
    // Later events skip the disabled endpoint; a resend is refused until it is enabled again.
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    expect(await ctx.run(() => ctx.webhooks.resendDelivery(ctx.project.id, delivery!.id))).toMatchObject({ ok: false, error: 'webhook_endpoint_disabled' });
    expect(await ctx.deliveries(gone.endpoint.id)).toHaveLength(1);
    receiver.answerWith('/gone', 200);
    ok(await ctx.run(() => ctx.webhooks.updateEndpoint(ctx.project.id, gone.endpoint.id, { enabled: true })));
    expect(ok(await ctx.run(() => ctx.webhooks.resendDelivery(ctx.project.id, delivery!.id)))).toEqual({ deliveryId: delivery!.id, queued: true });
    await waitFor(async () => (await ctx.deliveries(gone.endpoint.id))[0]?.status === 'succeeded', 'the resend');
    expect(receiver.at('/gone').map((r) => r.headers['webhook-id'])).toEqual([delivery!.eventId, delivery!.eventId]);
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, gone.endpoint.id)));
  });

  it('rolls a secret: the new one shown once signs from now on, the old one beside it for a day', async () => {
    const roll = await ctx.endpoint(receiver.url('/roll'), ['subscription.created']);
    receiver.route('/roll', roll.secret);
    const rolled = ok(await ctx.run(() => ctx.webhooks.rollSecret(ctx.project.id, roll.endpoint.id)));
    expect(rolled.secret).not.toBe(roll.secret);
    expect(rolled.secret).toMatch(/^whsec_/);
    expect(rolled.endpoint.secretPrefix).toBe(rolled.secret.slice(0, 10));
    expect(rolled.previousSecretValidUntil).toEqual(new Date(clock.now().getTime() + 86_400_000));
    expect(JSON.stringify(ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))))).not.toContain(rolled.secret);

    receiver.setSecrets('/roll', [rolled.secret, roll.secret]);
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(() => receiver.at('/roll').length === 1, 'a delivery after the roll');
    expect(receiver.at('/roll')[0]!.signatures).toHaveLength(2);
    expect(receiver.at('/roll')[0]!.validFor).toEqual([rolled.secret, roll.secret]);
    expect(receiver.at('/roll')[0]!.sdkVerified).toBe(true);

    clock.advance(86_400_000 + 1);
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(() => receiver.at('/roll').length === 2, 'a delivery a day later');
    expect(receiver.at('/roll')[1]!.signatures).toHaveLength(1);
    expect(receiver.at('/roll')[1]!.validFor).toEqual([rolled.secret]);
    expect(signedBy(roll.secret, receiver.at('/roll')[1]!.headers, receiver.at('/roll')[1]!.body)).toBe(false);
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, roll.endpoint.id)));
  });

  it('Test action: a signed test event, ok when the receiver answers 200, with status and duration; not ok otherwise', async () => {
    const t = await ctx.endpoint(receiver.url('/test'), ['invoice.paid']);
    receiver.route('/test', t.secret, 200);
    const passed = ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, t.endpoint.id)));
    expect(passed).toMatchObject({ ok: true, status: 200 });
    expect(passed.durationMs).toBeGreaterThanOrEqual(0);
    const [request] = receiver.at('/test');
    expect(request!.event).toEqual({ id: passed.eventId, type: 'test', created: clock.now().toISOString(), projectId: ctx.project.id, data: {} });
    expect(request!.validFor).toEqual([t.secret]);
    expect(request!.sdkVerified).toBe(true);
    expect(request!.headers['webhook-id']).toBe(passed.eventId);

    clock.advance(1000);
    receiver.answerWith('/test', 500);
    expect(ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, t.endpoint.id)))).toMatchObject({ ok: false, status: 500 });
    clock.advance(1000);
    receiver.answerWith('/test', 201);
    expect(ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, t.endpoint.id)))).toMatchObject({ ok: false, status: 201 });
    clock.advance(1000);
    receiver.answerWith('/test', 'hang');
    expect(ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, t.endpoint.id)))).toMatchObject({
      ok: false,
      status: null,
      error: `timed out after ${TIMEOUT_MS} ms`,
    });
    // The test deliveries are in the log; they do not count as failures of the endpoint.
    const log = await ctx.deliveries(t.endpoint.id);
    expect(log.map((d) => [d.eventType, d.status, d.lastStatusCode])).toEqual([
      ['test', 'failed', null],
      ['test', 'succeeded', 201],
      ['test', 'failed', 500],
      ['test', 'succeeded', 200],
    ]);
    const endpoint = ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id))).find((e) => e.id === t.endpoint.id)!;
    expect(endpoint.failingSince).toBeNull();
    expect(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, '00000000-0000-4000-8000-000000000000'))).toMatchObject({
      ok: false,
      error: 'webhook_endpoint_not_found',
    });
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, t.endpoint.id)));
  });

  it('resends one delivery, and replays every failed delivery of an endpoint since a time', async () => {
    const r = await ctx.endpoint(receiver.url('/replay'), ['subscription.created']);
    receiver.route('/replay', r.secret, 410);
    // Three deliveries fail (410 disables at once: the simplest way to fail them for good).
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(async () => (await ctx.deliveries(r.endpoint.id))[0]?.status === 'failed', 'the first failure');
    const since = clock.now();
    ok(await ctx.run(() => ctx.webhooks.updateEndpoint(ctx.project.id, r.endpoint.id, { enabled: true })));
    clock.advance(1000);
    ok(await ctx.subscribe(await app.seedUser(ctx.project.id)));
    await waitFor(
      async () => (await ctx.deliveries(r.endpoint.id))[0]?.status === 'failed' && (await ctx.deliveries(r.endpoint.id)).length === 2,
      'the second failure',
    );
    ok(await ctx.run(() => ctx.webhooks.updateEndpoint(ctx.project.id, r.endpoint.id, { enabled: true })));
    const [second, first] = await ctx.deliveries(r.endpoint.id);
    expect(receiver.at('/replay')).toHaveLength(2);

    receiver.answerWith('/replay', 200);
    expect(await ctx.run(() => ctx.webhooks.replayFailed(ctx.project.id, r.endpoint.id, new Date(clock.now().getTime() + 60_000)))).toMatchObject({
      ok: false,
      error: 'invalid_replay_since',
    });
    // Replay since the first failure's end: only the second delivery was created since.
    const replayed = ok(await ctx.run(() => ctx.webhooks.replayFailed(ctx.project.id, r.endpoint.id, new Date(since.getTime() + 1))));
    expect(replayed).toEqual({ resent: 1, deliveryIds: [second!.id] });
    await waitFor(async () => (await ctx.deliveries(r.endpoint.id))[0]?.status === 'succeeded', 'the replay');
    expect(receiver.at('/replay').at(-1)!.headers['webhook-id']).toBe(second!.eventId);

    const resent = ok(await ctx.run(() => ctx.webhooks.resendDelivery(ctx.project.id, first!.id)));
    expect(resent).toEqual({ deliveryId: first!.id, queued: true });
    await waitFor(async () => (await ctx.deliveries(r.endpoint.id))[1]?.status === 'succeeded', 'the resend');
    expect(receiver.at('/replay').at(-1)!.headers['webhook-id']).toBe(first!.eventId);
    const log = await ctx.deliveries(r.endpoint.id);
    expect(log.map((d) => d.attempts.map((a) => a.statusCode))).toEqual([
      [410, 200],
      [410, 200],
    ]);
    // A succeeded delivery can be resent as well (the receiver asked for it again).
    expect(ok(await ctx.run(() => ctx.webhooks.resendDelivery(ctx.project.id, first!.id)))).toEqual({ deliveryId: first!.id, queued: true });
    await waitFor(() => receiver.at('/replay').length === 5, 'the second resend');
    expect(await ctx.run(() => ctx.webhooks.resendDelivery(ctx.project.id, 'nope'))).toMatchObject({ ok: false, error: 'webhook_delivery_not_found' });
    ok(await ctx.run(() => ctx.webhooks.deleteEndpoint(ctx.project.id, r.endpoint.id)));
  });

  it('refuses endpoint URLs that break the rules, and checks the selection and description', async () => {
    const refused = async (input: { url: string; eventTypes?: string[]; description?: string }) =>
      ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, input));
    expect(await refused({ url: 'ftp://example.com/hook' })).toMatchObject({ ok: false, error: 'invalid_webhook_url' });
    expect(await refused({ url: 'https://user:pw@example.com/hook' })).toMatchObject({ ok: false, error: 'invalid_webhook_url' });
    expect(await refused({ url: 'https://example.com/hook#x' })).toMatchObject({ ok: false, error: 'invalid_webhook_url' });
    expect(await refused({ url: 'https://host.invalid/hook' })).toMatchObject({ ok: false, error: 'webhook_url_unresolvable' });
    expect(await refused({ url: receiver.url('/x'), eventTypes: ['invoice.created'] })).toMatchObject({ ok: false, error: 'invalid_webhook_events' });
    expect(await refused({ url: receiver.url('/x'), description: 'x'.repeat(501) })).toMatchObject({ ok: false, error: 'invalid_webhook_description' });
    expect(await ctx.run(() => ctx.webhooks.createEndpoint('00000000-0000-4000-8000-000000000000', { url: receiver.url('/x') }))).toMatchObject({
      ok: false,
      error: 'project_not_found',
    });
  });
});

describe('SSRF guard with WEBHOOK_ALLOW_PRIVATE_URLS=false', { timeout: 120_000 }, () => {
  let strict: TestApp;
  let lenient: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    const clock = new TestClock();
    strict = await startTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
    // Another process of the same deployment that allows private URLs registers what the strict one would refuse (it delivers nothing).
    lenient = await startTestApp({ clock, sameDeploymentAs: strict, runWorker: false, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    receiver = new WebhookReceiver(() => clock.now().getTime());
    await receiver.start();
  });

  afterAll(async () => {
    await lenient?.close();
    await strict?.close();
    await receiver?.stop();
  });

  const VECTORS = [
    'http://127.0.0.1:PORT/ssrf',
    'https://10.0.0.1/ssrf',
    'http://[::1]:PORT/ssrf',
    'http://169.254.169.254/latest/meta-data/',
    'http://localhost:PORT/ssrf',
  ];

  it('refuses private, loopback, link-local and metadata addresses, and a name resolving to 127.0.0.1, at registration', async () => {
    const ctx = await setUp(strict);
    const port = new URL(receiver.origin).port;
    for (const vector of VECTORS) {
      const https = vector.replace(/^http:/, 'https:').replace('PORT', port);
      const refusal = await ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, { url: https }));
      expect(refusal, https).toMatchObject({ ok: false, error: 'webhook_url_private' });
    }
    expect(await ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, { url: 'https://localhost/x' }))).toMatchObject({
      ok: false,
      error: 'webhook_url_private',
      detail: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a loopback address$/),
    });
    expect(await ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, { url: 'https://0x7f.1/x' }))).toMatchObject({
      ok: false,
      error: 'webhook_url_private',
    });
    expect(await ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, { url: 'https://[::ffff:169.254.169.254]/x' }))).toMatchObject({
      ok: false,
      error: 'webhook_url_private',
    });
    // Plain http is refused too where private URLs are not allowed.
    expect(await ctx.run(() => ctx.webhooks.createEndpoint(ctx.project.id, { url: 'http://example.com/hook' }))).toMatchObject({
      ok: false,
      error: 'webhook_url_not_https',
    });
    expect(ok(await ctx.run(() => ctx.webhooks.listEndpoints(ctx.project.id)))).toEqual([]);
  });

  it('refuses them again at delivery (an endpoint registered before, or whose name now resolves inside): nothing is sent', async () => {
    const ctx = await setUp(strict, 'Rebound');
    const port = new URL(receiver.origin).port;
    const lenientHooks = lenient.tollgate.webhooks;
    const ids: string[] = [];
    for (const vector of VECTORS) {
      // https, so that the address rule (not the http rule) is what refuses them.
      const url = vector.replace(/^http:/, 'https:').replace('PORT', port);
      const created = ok(await lenient.inContext(() => lenientHooks.createEndpoint(ctx.project.id, { url, eventTypes: ['subscription.created'] })));
      receiver.route(new URL(url).pathname, created.secret);
      ids.push(created.endpoint.id);
    }
    ok(await ctx.subscribe(await strict.seedUser(ctx.project.id)));
    for (const id of ids) {
      const [delivery] = await waitFor(async () => {
        const log = await ctx.deliveries(id);
        return log[0]?.attempts.some((a) => a.durationMs !== null) ? log : undefined;
      }, `the first attempt to ${id}`);
      expect(delivery!.attempts[0]!.statusCode).toBeNull();
      expect(delivery!.attempts[0]!.error).toMatch(/^not sent: .*(loopback|private|cloud metadata) address$/);
      expect(delivery!.status).toBe('pending'); // retried on the schedule, refused again each time
    }
    // The Test action goes through the same guard.
    const test = ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, ids[0]!)));
    expect(test).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/^not sent: 127\.0\.0\.1, a loopback address$/) });
    // A URL allowed only with private URLs (http) is refused at delivery too.
    const plain = ok(await lenient.inContext(() => lenientHooks.createEndpoint(ctx.project.id, { url: receiver.url('/plain') })));
    receiver.route('/plain', plain.secret);
    expect(ok(await ctx.run(() => ctx.webhooks.sendTest(ctx.project.id, plain.endpoint.id)))).toMatchObject({
      ok: false,
      error: 'not sent: http is not allowed here, only https',
    });
    expect(receiver.received).toEqual([]);
  });
});

describe('acceptance: a receiver on the Demo project', { timeout: 120_000 }, () => {
  const clock = new TestClock(Date.UTC(2026, 5, 1, 12));
  let app: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    app = await startTestApp({ clock });
    receiver = new WebhookReceiver(() => clock.now().getTime());
    await receiver.start();
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
  });

  it(
    'subscribe -> subscription.created and invoice.paid, validly signed; ' +
      'receiver down during a plan change -> subscription.updated on a retry; the log shows the attempts',
    async () => {
      const ctx = await setUp(app, 'Demo', [DEMO_CALLBACK_URL]);
      const hook = await ctx.endpoint(receiver.url('/tollgate'));
      receiver.route('/tollgate', hook.secret);
      const user = await app.seedUser(ctx.project.id);

      ok(await ctx.subscribe(user));
      await waitFor(() => receiver.received.length === 2, 'subscription.created and invoice.paid');
      expect(receiver.received.map((r) => r.event.type).sort()).toEqual(['invoice.paid', 'subscription.created']);
      expect(receiver.received.every((r) => r.validFor.length === 1 && r.sdkVerified)).toBe(true);

      await receiver.stop();
      ok(await ctx.change(user));
      // The plan change records subscription.updated and the prorated invoice.paid: both fail.
      const failed = await waitFor(async () => {
        const l = (await ctx.deliveries(hook.endpoint.id)).slice(0, 2);
        return l.length === 2 && l.every((d) => d.attempts[0]?.error) ? l : undefined;
      }, 'the failed attempts while the receiver is down');
      expect(failed.map((d) => d.eventType).sort()).toEqual(['invoice.paid', 'subscription.updated']);
      const updated = failed.find((d) => d.eventType === 'subscription.updated')!;
      expect(updated.attempts[0]!.error).toMatch(/ECONNREFUSED/);
      await receiver.start();
      for (const d of failed) await runNextAttempt(app, d.id, 1);
      await waitFor(() => receiver.received.length === 4, 'the retries');
      const retried = receiver.received.find((r) => r.event.type === 'subscription.updated')!;
      expect(retried.validFor).toEqual([hook.secret]);
      expect(retried.sdkVerified).toBe(true);
      expect(retried.event.subscriptionId).toBe(receiver.received[0]!.event.subscriptionId);

      const after = (await ctx.deliveries(hook.endpoint.id)).find((d) => d.id === updated.id)!;
      expect(after).toMatchObject({ status: 'succeeded', attemptCount: 2, lastStatusCode: 200 });
      expect(after.attempts.map((a) => [a.attempt, a.statusCode, a.error === null ? null : 'error'])).toEqual([
        [1, null, 'error'],
        [2, 200, null],
      ]);
    },
  );
});
