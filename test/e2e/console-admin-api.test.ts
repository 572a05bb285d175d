import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ErrorBody } from '../../contract';
import { startTestApp, type TestApp } from '../support/app';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The console's billing, webhook and member routes over HTTP against the real server (one server,
 * one Stripe-shaped test server): what each answers, and who may call it.
 */
let t: TestApp;
let stripe: FakeStripe;
let receiver: WebhookReceiver;
const { call, operator, member, assertGuarded } = consoleApi(() => t);

let op: ConsoleSession;
let outsider: ConsoleSession;
let projectId: string;

beforeAll(async () => {
  stripe = await startFakeStripe();
  receiver = new WebhookReceiver(() => Date.now());
  await receiver.start();
  t = await startTestApp({ runWorker: false, env: { STRIPE_API_URL: stripe.url, STRIPE_MAX_NETWORK_RETRIES: '0' } });
  op = await operator('operator@example.com');
  projectId = (await t.createProject({ name: 'Billed' })).id;
  const elsewhere = await t.createProject({ name: 'Elsewhere' });
  outsider = await member('outsider@example.com', [elsewhere.id]);
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
  await receiver?.stop();
});

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};

describe('billing', () => {
  it('connects the sandbox, refuses a bad Stripe key with Stripe’s reason, connects Stripe, disconnects', async () => {
    const base = `/api/admin/projects/${projectId}/billing`;
    expect(await json(await call(base, { session: op }), 200)).toEqual({ connection: null });

    const sandbox = await json<AdminBody<'billing', 'connect'>>(await call(base, { method: 'PUT', session: op, body: { processor: 'sandbox' } }), 200);
    expect(sandbox.connection).toMatchObject({ processor: 'sandbox', mode: 'sandbox', key_last4: null, currency: 'usd' });
    expect(Date.parse(sandbox.connection.connected_at)).not.toBeNaN();

    const account = stripe.createAccount();
    const bad = await json<ErrorBody>(
      await call(base, {
        method: 'PUT',
        session: op,
        body: { processor: 'stripe', secret_key: 'sk_test_unknownKey12345', publishable_key: account.publishableKey, webhook_secret: account.webhookSecret },
      }),
      400,
    );
    expect(bad.code).toBe('processor_rejected_key');
    expect(bad.error).toMatch(/^Stripe refused the secret key: /);
    const malformed = await json<ErrorBody>(
      await call(base, { method: 'PUT', session: op, body: { processor: 'stripe', secret_key: 'nope', publishable_key: 'pk', webhook_secret: 'w' } }),
      400,
    );
    expect(malformed.code).toBe('invalid_secret_key');
    // The failed attempts left the sandbox connected.
    expect((await json<AdminBody<'billing', 'get'>>(await call(base, { session: op }), 200)).connection!.processor).toBe('sandbox');

    const other = await t.createProject({ name: 'Stripe one' });
    const connected = await json<AdminBody<'billing', 'connect'>>(
      await call(`/api/admin/projects/${other.id}/billing`, {
        method: 'PUT',
        session: op,
        body: { processor: 'stripe', secret_key: account.secretKey, publishable_key: account.publishableKey, webhook_secret: account.webhookSecret },
      }),
      200,
    );
    expect(connected.connection).toMatchObject({
      processor: 'stripe',
      mode: 'test',
      key_last4: account.secretKey.slice(-4),
      webhook_url: `${t.baseUrl}/api/webhooks/stripe/${other.id}`,
    });
    expect(JSON.stringify(connected)).not.toContain(account.secretKey);
    expect(await json(await call(`/api/admin/projects/${other.id}/billing`, { method: 'DELETE', session: op }), 200)).toEqual({ disconnected: true });
    expect(await json(await call(`/api/admin/projects/${other.id}/billing`, { session: op }), 200)).toEqual({ connection: null });
  });

  it('plans in hierarchy order: create, update, reorder; prices added and archived; the sandbox clock moves', async () => {
    const plans = `/api/admin/projects/${projectId}/plans`;
    const basic = (
      await json<AdminBody<'billing', 'createPlan', 201>>(
        await call(plans, { method: 'POST', session: op, body: { name: 'Basic', features: 'export, api,, export' } }),
        201,
      )
    ).plan;
    expect(basic).toMatchObject({ name: 'Basic', features: ['export', 'api'], hidden: false, position: 0, prices: [] });
    const pro = (
      await json<AdminBody<'billing', 'createPlan', 201>>(
        await call(plans, {
          method: 'POST',
          session: op,
          body: { name: 'Pro', description: 'For teams', recommended: true, trials_enabled: true, default_trial_days: 14 },
        }),
        201,
      )
    ).plan;
    expect(pro).toMatchObject({ recommended: true, trials_enabled: true, default_trial_days: 14, position: 1 });
    expect((await json<ErrorBody>(await call(plans, { method: 'POST', session: op, body: { name: 'basic' } }), 409)).code).toBe('plan_name_taken');
    expect((await json<ErrorBody>(await call(plans, { method: 'POST', session: op, body: { name: 'Bad', features: 'a\u0001b' } }), 400)).code).toBe(
      'invalid_feature',
    );

    const hidden = await json<AdminBody<'billing', 'updatePlan'>>(
      await call(`${plans}/${basic.id}`, { method: 'PATCH', session: op, body: { hidden: true, features: 'sso' } }),
      200,
    );
    expect(hidden.plan).toMatchObject({ hidden: true, features: ['sso'] });
    expect(
      (await json<ErrorBody>(await call(`${plans}/00000000-0000-4000-8000-000000000000`, { method: 'PATCH', session: op, body: { hidden: false } }), 404)).code,
    ).toBe('plan_not_found');

    const reordered = await json<AdminBody<'billing', 'reorderPlans'>>(
      await call(`${plans}/order`, { method: 'PUT', session: op, body: { plans: [pro.id, basic.id] } }),
      200,
    );
    expect(reordered.plans.map((p: { name: string }) => p.name)).toEqual(['Pro', 'Basic']);
    expect((await json<ErrorBody>(await call(`${plans}/order`, { method: 'PUT', session: op, body: { plans: [pro.id] } }), 400)).code).toBe(
      'invalid_plan_order',
    );

    const price = (
      await json<AdminBody<'billing', 'createPrice', 201>>(
        await call(`${plans}/${pro.id}/prices`, { method: 'POST', session: op, body: { name: 'Monthly', amount: 1250, interval: 'month' } }),
        201,
      )
    ).price;
    expect(price).toMatchObject({ plan_id: pro.id, amount: 1250, currency: 'usd', interval: 'month', active: true });
    expect(
      (
        await json<ErrorBody>(
          await call(`${plans}/${pro.id}/prices`, { method: 'POST', session: op, body: { name: 'Yen', amount: 5, currency: 'kwd', interval: 'year' } }),
          400,
        )
      ).code,
    ).toBe('invalid_amount');
    const archived = await json<AdminBody<'billing', 'archivePrice'>>(
      await call(`/api/admin/projects/${projectId}/prices/${price.id}/archive`, { method: 'POST', session: op }),
      200,
    );
    expect(archived.price.active).toBe(false);
    const listed = await json<AdminBody<'billing', 'listPlans'>>(await call(plans, { session: op }), 200);
    expect(listed.plans[0]!.prices).toEqual([expect.objectContaining({ id: price.id, active: false })]);

    expect(await json(await call(`/api/admin/projects/${projectId}/subscriptions`, { session: op }), 200)).toEqual({ subscriptions: [], next_cursor: null });
    expect(await json(await call(`/api/admin/projects/${projectId}/billing/events?type=invoice.paid`, { session: op }), 200)).toEqual({ events: [] });
    const clock = `/api/admin/projects/${projectId}/billing/sandbox/clock`;
    const before = await json<AdminBody<'billing', 'sandboxClock'>>(await call(clock, { session: op }), 200);
    expect(before).toEqual({ now: t.clock.now().toISOString(), real_now: t.clock.now().toISOString(), ahead_seconds: 0 });
    const advanced = await json<AdminBody<'billing', 'advanceSandbox'>>(
      await call(`/api/admin/projects/${projectId}/billing/sandbox/advance`, { method: 'POST', session: op, body: { days: 31 } }),
      200,
    );
    expect(advanced.changed).toBe(0);
    // The sandbox's time is read back 31 days ahead of real time, which has not moved.
    const after = await json<AdminBody<'billing', 'sandboxClock'>>(await call(clock, { session: op }), 200);
    expect(after).toEqual({ now: advanced.now, real_now: before.real_now, ahead_seconds: 31 * 86_400 });
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(31 * 86_400_000);
    expect(
      (await json<ErrorBody>(await call(`/api/admin/projects/${projectId}/billing/sandbox/advance`, { method: 'POST', session: op, body: { days: 0 } }), 400))
        .code,
    ).toBe('invalid_request');
  });

  it('invoices: every user’s, newest first, in integer minor units; filtered by user and status; limited; bad filters are 400s', async () => {
    const shop = (await t.createProject({ name: 'Invoiced' })).id;
    const base = `/api/admin/projects/${shop}`;
    const invoicesOf = async (query = '') =>
      (await json<AdminBody<'billing', 'listInvoices'>>(await call(`${base}/billing/invoices${query}`, { session: op }), 200)).invoices;
    await json(await call(`${base}/billing`, { method: 'PUT', session: op, body: { processor: 'sandbox' } }), 200);
    expect(await invoicesOf()).toEqual([]);
    const plan = (
      await json<AdminBody<'billing', 'createPlan', 201>>(await call(`${base}/plans`, { method: 'POST', session: op, body: { name: 'Team' } }), 201)
    ).plan;
    const price = (
      await json<AdminBody<'billing', 'createPrice', 201>>(
        await call(`${base}/plans/${plan.id}/prices`, { method: 'POST', session: op, body: { name: 'Monthly', amount: 1250, interval: 'month' } }),
        201,
      )
    ).price;

    // Two end users subscribe through the billing API with the sandbox's test card.
    const subscribe = async (email: string) => {
      const user = await t.seedUser(shop, { email });
      const session = await t.issueSession(shop, user);
      const created = await createClient({ baseUrl: t.baseUrl, accessToken: session.token }).billing.subscribe({
        body: { priceId: price.id, paymentMethodId: 'pm_card_visa' },
      });
      expect(created.status).toBe(201);
      return { userId: user.id, subscriptionId: (created.body as { id: string }).id };
    };
    const ada = await subscribe('ada@example.com');
    const bob = await subscribe('bob@example.com');
    // A month later on the sandbox clock both subscriptions renew: two more invoices.
    expect(
      (
        await json<AdminBody<'billing', 'advanceSandbox'>>(
          await call(`${base}/billing/sandbox/advance`, { method: 'POST', session: op, body: { days: 32 } }),
          200,
        )
      ).changed,
    ).toBe(2);

    const all = await invoicesOf();
    expect(all).toHaveLength(4);
    expect(all.map((i: { user_id: string | null; reason: string }) => i.reason)).toEqual([
      'subscription_cycle',
      'subscription_cycle',
      'subscription_create',
      'subscription_create',
    ]);
    const created = all.map((i: { created_at: string }) => Date.parse(i.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const first = all.find((i: { user_id: string | null; reason: string }) => i.user_id === ada.userId && i.reason === 'subscription_create');
    expect(first).toEqual({
      id: expect.any(String),
      user_id: ada.userId,
      organization_id: null,
      user_email: 'ada@example.com',
      organization_name: null,
      subscription_id: ada.subscriptionId,
      status: 'paid',
      reason: 'subscription_create',
      currency: 'usd',
      subtotal: 1250,
      amount_due: 1250,
      amount_paid: 1250,
      amount_refunded: 0,
      period_start: expect.any(String),
      period_end: expect.any(String),
      created_at: expect.any(String),
      paid_at: expect.any(String),
    });
    expect(Date.parse(first!.period_end) - Date.parse(first!.period_start)).toBeGreaterThan(27 * 86_400_000);

    // The subscriptions list names each user by email too.
    const subscriptions = (await json<AdminBody<'billing', 'listSubscriptions'>>(await call(`${base}/subscriptions`, { session: op }), 200)).subscriptions;
    expect(subscriptions.map((s: { user_id: string | null; user_email: string | null }) => [s.user_id, s.user_email]).sort()).toEqual(
      [
        [ada.userId, 'ada@example.com'],
        [bob.userId, 'bob@example.com'],
      ].sort(),
    );

    const bobs = await invoicesOf(`?user=${bob.userId}`);
    expect(bobs.map((i) => [i.user_id, i.subscription_id])).toEqual([
      [bob.userId, bob.subscriptionId],
      [bob.userId, bob.subscriptionId],
    ]);
    expect(await invoicesOf(`?user=${bob.userId}&status=open`)).toEqual([]);
    expect(await invoicesOf(`?status=paid&limit=500`)).toEqual(all);
    // Paging by limit, as the other lists: the newest n.
    expect(await invoicesOf('?limit=1')).toEqual(all.slice(0, 1));
    // Page by page: each page's next_cursor leads to the next; the last page's is null.
    const pageOf = async <T>(path: string) => json<T>(await call(`${base}${path}`, { session: op }), 200);
    const first3 = await pageOf<AdminBody<'billing', 'listInvoices'>>('/billing/invoices?limit=3');
    expect(first3).toEqual({ invoices: all.slice(0, 3), next_cursor: all[2]!.id });
    expect(await pageOf(`/billing/invoices?limit=3&cursor=${first3.next_cursor}`)).toEqual({ invoices: all.slice(3), next_cursor: null });
    expect(await pageOf(`/billing/invoices?limit=4`)).toMatchObject({ next_cursor: null });
    const subsPage = await pageOf<AdminBody<'billing', 'listSubscriptions'>>('/subscriptions?limit=1');
    expect(subsPage.subscriptions).toHaveLength(1);
    const subsNext = await pageOf<AdminBody<'billing', 'listSubscriptions'>>(`/subscriptions?limit=1&cursor=${subsPage.next_cursor}`);
    expect(subsNext.subscriptions.map((x: { id: string }) => x.id)).not.toContain(subsPage.subscriptions[0]!.id);
    expect([...subsPage.subscriptions, ...subsNext.subscriptions].map((x: { user_id: string | null }) => x.user_id).sort()).toEqual(
      [ada.userId, bob.userId].sort(),
    );
    expect(subsNext.next_cursor).toBeNull();
    for (const path of ['/billing/invoices?cursor=page-2', '/subscriptions?cursor=page-2']) {
      expect(await json(await call(`${base}${path}`, { session: op }), 400)).toEqual({
        error: 'Invalid cursor: pass the next_cursor of the previous page',
        code: 'invalid_cursor',
      });
    }
    expect(await invoicesOf(`?user=${ada.userId}&limit=1`)).toEqual([all.find((i: { user_id: string | null }) => i.user_id === ada.userId)]);
    // A user id of nobody, or not an id at all, has no invoices; an invoice of this project never shows in another.
    expect(await invoicesOf('?user=00000000-0000-4000-8000-000000000000')).toEqual([]);
    expect(await invoicesOf('?user=not-a-user')).toEqual([]);
    expect(
      (
        await json<AdminBody<'billing', 'listInvoices'>>(
          await call(`/api/admin/projects/${projectId}/billing/invoices?user=${ada.userId}`, { session: op }),
          200,
        )
      ).invoices,
    ).toEqual([]);

    for (const query of ['?limit=0', '?limit=501', '?limit=ten', '?status=refunded', `?user=${'x'.repeat(101)}`]) {
      const bad = await json(await call(`${base}/billing/invoices${query}`, { session: op }), 400);
      expect(bad, query).toEqual({ error: expect.stringMatching(/^Invalid query field (limit|status|user): /), code: 'invalid_request' });
    }
    expect((await json<ErrorBody>(await call(`${base}/billing/invoices?status=refunded`, { session: op }), 400)).error).toContain(
      "Expected 'open' | 'paid' | 'void' | 'uncollectible'",
    );
    const missing = await json(await call('/api/admin/projects/00000000-0000-4000-8000-000000000000/billing/invoices', { session: op }), 404);
    expect(missing).toEqual({ error: expect.any(String), code: 'project_not_found' });
    expect((await json<ErrorBody>(await call('/api/admin/projects/not-a-project/billing/invoices', { session: op }), 404)).code).toBe('project_not_found');

    // A user without an email (an OAuth account that gave none) shows null.
    const noEmail = await t.seedUser(shop, { email: null, provider: 'github', emailVerified: false });
    const token = (await t.issueSession(shop, noEmail)).token;
    expect(
      (await createClient({ baseUrl: t.baseUrl, accessToken: token }).billing.subscribe({ body: { priceId: price.id, paymentMethodId: 'pm_card_visa' } }))
        .status,
    ).toBe(201);
    const [newest] = (await json<AdminBody<'billing', 'listSubscriptions'>>(await call(`${base}/subscriptions?limit=1`, { session: op }), 200)).subscriptions;
    expect([newest!.user_id, newest!.user_email]).toEqual([noEmail.id, null]);
    expect((await invoicesOf(`?user=${noEmail.id}`)).map((i: { user_email: string | null }) => i.user_email)).toEqual([null]);
  });

  it('every billing route: 401 without a session, 403 without CSRF, 404 to a member of another project', async () => {
    const p = `/api/admin/projects/${projectId}`;
    const id = '00000000-0000-4000-8000-000000000000';
    await assertGuarded(
      [
        ['GET', `${p}/billing`, undefined],
        ['PUT', `${p}/billing`, { processor: 'sandbox' }],
        ['DELETE', `${p}/billing`, undefined],
        ['GET', `${p}/plans`, undefined],
        ['POST', `${p}/plans`, { name: 'X' }],
        ['PATCH', `${p}/plans/${id}`, { hidden: true }],
        ['PUT', `${p}/plans/order`, { plans: [id] }],
        ['POST', `${p}/plans/${id}/prices`, { name: 'M', amount: 1, interval: 'month' }],
        ['POST', `${p}/prices/${id}/archive`, undefined],
        ['GET', `${p}/subscriptions`, undefined],
        ['GET', `${p}/billing/invoices`, undefined],
        ['GET', `${p}/billing/events`, undefined],
        ['GET', `${p}/billing/sandbox/clock`, undefined],
        ['POST', `${p}/billing/sandbox/advance`, { days: 1 }],
      ],
      outsider,
      op,
    );
  });
});

describe('webhooks', () => {
  it('an endpoint: created with its secret shown once, Tested both ways, its log read, a delivery resent, its secret rolled, disabled, deleted', async () => {
    const base = `/api/admin/projects/${projectId}/webhooks`;
    expect(await json(await call(base, { session: op }), 200)).toEqual({ endpoints: [] });
    expect((await json<ErrorBody>(await call(base, { method: 'POST', session: op, body: { url: 'ftp://nope' } }), 400)).code).toBe('invalid_webhook_url');

    const created = await json<AdminBody<'webhooks', 'create', 201>>(
      await call(base, { method: 'POST', session: op, body: { url: receiver.url('/hooks'), event_types: ['invoice.paid'], description: 'Shop' } }),
      201,
    );
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.endpoint).toMatchObject({ url: receiver.url('/hooks'), event_types: ['invoice.paid'], description: 'Shop', enabled: true });
    expect(created.secret.startsWith(created.endpoint.secret_prefix)).toBe(true);
    const id = created.endpoint.id as string;
    const listed = await json(await call(base, { session: op }), 200);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    receiver.route('/hooks', created.secret, 200);
    const ok = await json(await call(`${base}/${id}/test`, { method: 'POST', session: op }), 200);
    expect(ok).toMatchObject({ ok: true, status: 200, error: null });
    expect(receiver.at('/hooks')).toHaveLength(1);
    receiver.answerWith('/hooks', 500);
    const failed = await json(await call(`${base}/${id}/test`, { method: 'POST', session: op }), 200);
    expect(failed).toMatchObject({ ok: false, status: 500 });

    const log = await json<AdminBody<'webhooks', 'deliveries'>>(await call(`${base}/${id}/deliveries`, { session: op }), 200);
    expect(log.deliveries).toHaveLength(2);
    expect(log.deliveries[0]!.attempts[0]).toMatchObject({ attempt: 1, status_code: 500 });
    expect(typeof log.deliveries[0]!.attempts[0]!.duration_ms).toBe('number');
    expect(
      (
        await json<ErrorBody>(
          await call(`/api/admin/projects/${projectId}/webhook-deliveries/${log.deliveries[0]!.id}/resend`, { method: 'POST', session: op }),
          404,
        )
      ).code,
    ).toBe('webhook_delivery_not_found');

    const rolled = await json<AdminBody<'webhooks', 'rollSecret'>>(await call(`${base}/${id}/roll-secret`, { method: 'POST', session: op }), 200);
    expect(rolled.secret).toMatch(/^whsec_/);
    expect(rolled.secret).not.toBe(created.secret);
    const disabled = await json<AdminBody<'webhooks', 'update'>>(await call(`${base}/${id}`, { method: 'PATCH', session: op, body: { enabled: false } }), 200);
    expect(disabled.endpoint.enabled).toBe(false);
    expect(await json(await call(`${base}/${id}`, { method: 'DELETE', session: op }), 200)).toEqual({ success: true });
    expect((await json<ErrorBody>(await call(`${base}/${id}/test`, { method: 'POST', session: op }), 404)).code).toBe('webhook_endpoint_not_found');
  });

  it('every webhook route: 401 without a session, 403 without CSRF, 404 to a member of another project', async () => {
    const p = `/api/admin/projects/${projectId}`;
    const id = '00000000-0000-4000-8000-000000000000';
    await assertGuarded(
      [
        ['GET', `${p}/webhooks`, undefined],
        ['POST', `${p}/webhooks`, { url: 'https://example.com/h' }],
        ['PATCH', `${p}/webhooks/${id}`, { enabled: false }],
        ['DELETE', `${p}/webhooks/${id}`, undefined],
        ['POST', `${p}/webhooks/${id}/roll-secret`, undefined],
        ['POST', `${p}/webhooks/${id}/test`, undefined],
        ['GET', `${p}/webhooks/${id}/deliveries`, undefined],
        ['POST', `${p}/webhook-deliveries/${id}/resend`, undefined],
      ],
      outsider,
      op,
    );
  });
});
