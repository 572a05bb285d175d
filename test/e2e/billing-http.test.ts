import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type TollgateClient } from '../../contract';
import { requestFingerprint } from '../../domain/billing/idempotency';
import { renderCheckoutPage } from '../../apps/server/http/sandbox-checkout.page';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * Billing over HTTP, through the SDK. First what the HTTP layer does on its own, whatever the use
 * cases answer: the auth kinds of the catalog routes, request validation, Idempotency-Key, the
 * webhook routes, the sandbox checkout page, and the OpenAPI document. Then the end-to-end flows
 * on the sandbox processor (subscribe, read, change with proration, pause/resume/cancel, declines,
 * races, the hosted checkout page) and Stripe's webhooks from the Stripe-shaped server.
 */

let t: TestApp;
let stripe: FakeStripe;
let project: TestProject;
let userId: string;
let token: string;
let user: TollgateClient;

const post = (path: string, init: { token?: string; key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) =>
  fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      ...(init.token !== undefined ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.key !== undefined ? { 'idempotency-key': init.key } : {}),
      ...(init.body !== undefined || init.raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });

beforeAll(async () => {
  // Webhooks are held: the tests post Stripe's signed requests themselves.
  stripe = await startFakeStripe({ holdWebhooks: true });
  t = await startTestApp({ env: { STRIPE_API_URL: stripe.url, STRIPE_MAX_NETWORK_RETRIES: '0' } });
  project = await t.createProject({ callbackUrls: ['https://app.example.com/callback'] });
  const seeded = await t.seedUser(project.id, { email: 'billing-http@example.com' });
  userId = seeded.id;
  token = (await t.issueSession(project.id, seeded)).token;
  user = createClient({ baseUrl: t.baseUrl, accessToken: token });
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

describe('catalog routes take an access token or the API key (auth userOrApiKey)', () => {
  it('answers 200 with the plans and the products for either credential', async () => {
    for (const client of [user, project.client]) {
      const plans = await client.billing.plans();
      expect(plans.status).toBe(200);
      expect(plans.body).toEqual({ plans: expect.any(Array) });
      const products = await client.billing.products();
      expect(products.status).toBe(200);
      expect(products.body).toEqual({ products: expect.any(Array) });
    }
  });

  it('refuses a bad credential by what it looks like: a key 401 invalid_api_key, anything else 401 invalid_access_token', async () => {
    const cases: Array<[Record<string, string>, string, string | undefined]> = [
      [{}, 'invalid_access_token', 'Missing Authorization header: send Authorization: Bearer <ACCESS_TOKEN> or Bearer <API_KEY>'],
      [{ authorization: 'Basic abc' }, 'invalid_access_token', 'Authorization must be Bearer <ACCESS_TOKEN> or Bearer <API_KEY>'],
      [{ authorization: 'Bearer tg_not_a_key' }, 'invalid_api_key', undefined],
      [{ authorization: 'Bearer eyJ.not.ajwt' }, 'invalid_access_token', undefined],
      [{ authorization: `Bearer ${token.slice(0, -2)}xx` }, 'invalid_access_token', undefined],
    ];
    for (const [headers, code, hint] of cases) {
      for (const path of ['/api/proxy/billing/plans', '/api/proxy/billing/products']) {
        const res = await fetch(`${t.baseUrl}${path}`, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        const body = (await res.json()) as { code: string; hint?: string };
        expect(body.code).toBe(code);
        expect(body.hint).toBe(hint);
      }
    }
  });

  it('refuses the key of an inactive project (404), and an access token of it (401)', async () => {
    const inactive = await t.createProject();
    const member = await t.seedUser(inactive.id);
    const memberToken = (await t.issueSession(inactive.id, member)).token;
    await t.inContext(() => t.tollgate.admin.updateProject(inactive.id, { active: false }));
    const byKey = await inactive.client.billing.plans();
    expect(byKey.status).toBe(404);
    expect(byKey.body).toMatchObject({ code: 'project_inactive' });
    const byToken = await createClient({ baseUrl: t.baseUrl, accessToken: memberToken }).billing.plans();
    expect(byToken.status).toBe(401);
  });

  it('user-scoped routes refuse the API key: they need the end user', async () => {
    const res = await project.client.billing.subscription();
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'invalid_access_token', hint: "This route takes an end user's access token, not the project's API key" });
  });
});

describe('request validation', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['/api/proxy/billing/checkout', { successUrl: 'https://app.example.com/ok', cancelUrl: 'https://app.example.com/no' }, /Missing body field: priceId/],
    ['/api/proxy/billing/checkout', { priceId: '', successUrl: 'https://a', cancelUrl: 'https://b' }, /priceId: String must contain at least 1/],
    ['/api/proxy/billing/checkout', { priceId: crypto.randomUUID(), successUrl: 'https://a', cancelUrl: 'https://b', trialDays: '7' }, /trialDays: expected number/],
    ['/api/proxy/billing/subscribe', { priceId: crypto.randomUUID() }, /Missing body field: paymentMethodId/],
    ['/api/proxy/billing/subscribe', { priceId: crypto.randomUUID(), paymentMethodId: 'x'.repeat(256) }, /paymentMethodId/],
    // The spec's field is new_price_id: the camelCase spelling is not accepted.
    ['/api/proxy/billing/subscription/change', { newPriceId: crypto.randomUUID() }, /Missing body field: new_price_id/],
    ['/api/proxy/billing/subscription/change/preview', { new_price_id: 42 }, /new_price_id: expected string/],
    ['/api/proxy/billing/subscription/cancel', { at_period_end: 'yes' }, /at_period_end: expected boolean/],
  ];
  it('answers 400 invalid_request naming the field', async () => {
    for (const [path, body, message] of cases) {
      const res = await post(path, { token, body });
      expect(res.status, path).toBe(400);
      const answer = (await res.json()) as { code: string; error: string };
      expect(answer.code, path).toBe('invalid_request');
      expect(answer.error, path).toMatch(message);
    }
  });

  it('checks the invoice limit: 1 to 100', async () => {
    for (const limit of ['0', '101', 'ten', '2.5']) {
      const res = await user.billing.invoices({ query: { limit: limit as never } });
      expect(res.status, limit).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request' });
    }
    for (const limit of [1, 100]) expect((await user.billing.invoices({ query: { limit } })).status).toBe(200);
    expect((await user.billing.invoices()).status).toBe(200);
  });

  it('keeps nothing for a request refused for its shape: the same key works once the body is fixed', async () => {
    const key = crypto.randomUUID();
    const bad = await post('/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: 'no' } });
    expect(bad.status).toBe(400);
    const good = await post('/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: false } });
    expect(good.status).not.toBe(422);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('Idempotency-Key on the billing POSTs of an end user', () => {
  /** Every idempotent route with a valid body. */
  const ROUTES: Array<[string, unknown]> = [
    ['/api/proxy/billing/checkout', { priceId: crypto.randomUUID(), successUrl: 'https://app.example.com/ok', cancelUrl: 'https://app.example.com/no' }],
    ['/api/proxy/billing/setup-intent', {}],
    ['/api/proxy/billing/subscribe', { priceId: crypto.randomUUID(), paymentMethodId: 'pm_card_visa' }],
    ['/api/proxy/billing/subscription/change', { new_price_id: crypto.randomUUID() }],
    ['/api/proxy/billing/subscription/change/preview', { new_price_id: crypto.randomUUID() }],
    ['/api/proxy/billing/subscription/cancel', { at_period_end: true }],
    ['/api/proxy/billing/subscription/pause', {}],
    ['/api/proxy/billing/subscription/resume', {}],
  ];

  it('refuses a malformed key with 400 invalid_idempotency_key, on every route', async () => {
    for (const [path, body] of ROUTES) {
      for (const key of ['has space', 'x'.repeat(256), 'tab\there']) {
        const res = await post(path, { token, key, body });
        expect(res.status, `${path} ${key.slice(0, 10)}`).toBe(400);
        expect(await res.json()).toEqual({ error: 'Invalid Idempotency-Key: 1 to 255 printable ASCII characters', code: 'invalid_idempotency_key' });
      }
    }
  });

  it('answers the stored status and body again for the same key and body, with Idempotent-Replayed: true', async () => {
    const key = crypto.randomUUID();
    const first = await post('/api/proxy/billing/setup-intent', { token, key });
    const firstBody = await first.json();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 2; i++) {
      const again = await post('/api/proxy/billing/setup-intent', { token, key });
      expect(again.status).toBe(first.status);
      expect(await again.json()).toEqual(firstBody);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    // An empty JSON object is the same request as no body (a body-less POST).
    const withEmptyBody = await post('/api/proxy/billing/setup-intent', { token, key, body: {} });
    expect(withEmptyBody.headers.get('idempotent-replayed')).toBe('true');
  });

  it('compares bodies as JSON (key order and spacing do not matter) and answers 422 for another body', async () => {
    const key = crypto.randomUUID();
    const first = await post('/api/proxy/billing/subscription/cancel', { token, key, raw: '{"at_period_end":true}' });
    const same = await post('/api/proxy/billing/subscription/cancel', { token, key, raw: '{ "at_period_end" : true }\n' });
    expect(same.status).toBe(first.status);
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    const other = await post('/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: false } });
    expect(other.status).toBe(422);
    expect(await other.json()).toEqual({ error: 'This Idempotency-Key was used with a different request', code: 'idempotency_key_reused' });
    // The same key on another route is another request too.
    const elsewhere = await post('/api/proxy/billing/subscription/pause', { token, key });
    expect(elsewhere.status).toBe(422);
  });

  it('answers 409 idempotency_key_in_progress while the first request with the key is running', async () => {
    const key = crypto.randomUUID();
    const store = new PostgresIdempotentRequestStore(t.tollgate.core.db);
    const fingerprint = t.tollgate.core.crypto.hash(requestFingerprint({ method: 'POST', path: '/api/proxy/billing/subscription/pause', body: {} }));
    // A request with this key has begun (in another process, say) and not answered yet.
    const lease = { holder: crypto.randomUUID(), now: t.clock.now(), expiresAt: new Date(t.clock.now().getTime() + 10_000) };
    await t.inContext(() => store.begin(`${project.id}:${userId}`, key, fingerprint, lease));
    const res = await post('/api/proxy/billing/subscription/pause', { token, key });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 'A request with this Idempotency-Key is still in progress', code: 'idempotency_key_in_progress' });
    // Once it is answered, the answer is replayed.
    await t.inContext(() => store.complete(`${project.id}:${userId}`, key, lease.holder, 200, { stored: true }, t.clock.now()));
    const replay = await post('/api/proxy/billing/subscription/pause', { token, key });
    expect([replay.status, await replay.json(), replay.headers.get('idempotent-replayed')]).toEqual([200, { stored: true }, 'true']);
  });

  it('lets exactly one of concurrent first requests with one key run; the others wait (409) or replay its answer', async () => {
    const key = crypto.randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await post('/api/proxy/billing/setup-intent', { token, key });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body: (await res.json()) as { code?: string } };
      }),
    );
    const ran = answers.filter((a) => !a.replayed && a.body.code !== 'idempotency_key_in_progress');
    expect(ran).toHaveLength(1);
    for (const a of answers.filter((x) => x.replayed)) expect(a).toEqual({ ...ran[0], replayed: true });
  });

  it('scopes keys to the user: another user with the same key runs its own request', async () => {
    const key = crypto.randomUUID();
    await post('/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: true } });
    const other = await t.seedUser(project.id);
    const otherToken = (await t.issueSession(project.id, other)).token;
    const res = await post('/api/proxy/billing/subscription/cancel', { token: otherToken, key, body: { at_period_end: false } });
    expect(res.status).not.toBe(422);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('POST /api/webhooks/stripe', () => {
  const event = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_1', metadata: {} } } });

  it('answers 400 for a missing or bad signature, before anything is trusted', async () => {
    for (const path of ['/api/webhooks/stripe', `/api/webhooks/stripe/${project.id}`, `/api/webhooks/stripe/${crypto.randomUUID()}`]) {
      for (const headers of [{}, { 'stripe-signature': 't=1,v1=deadbeef' }] as Array<Record<string, string>>) {
        const res = await post(path, { raw: event, headers });
        expect(res.status, path).toBe(400);
        const body = (await res.json()) as { code: string };
        expect(['invalid_webhook_signature', 'webhook_project_unknown'], `${path} ${body.code}`).toContain(body.code);
      }
    }
  });

  it('answers 400 for a project id that is not one', async () => {
    const res = await post('/api/webhooks/stripe/not-a-project', { raw: event, headers: { 'stripe-signature': 't=1,v1=00' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_request' });
  });
});

describe('the sandbox checkout page', () => {
  it('answers an unknown checkout with a 404 page that loads nothing', async () => {
    const res = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(await res.text()).toContain('Checkout not found');
    const paid = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'card=4242424242424242',
      redirect: 'manual',
    });
    expect(paid.status).toBe(404);
  });

  it('answers a form it cannot read with a page, not a fault', async () => {
    const res = await fetch(`${t.baseUrl}/sandbox/checkout/cs_unknown`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `card=${'4'.repeat(10_000)}`,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('text/html');
  });

  it('escapes everything it shows and fills in the first test card', () => {
    const html = renderCheckoutPage(
      {
        id: 'cs_"x',
        projectId: 'p',
        status: 'open',
        planName: '<script>alert(1)</script>',
        priceName: 'Monthly & "more"',
        amount: 1999,
        currency: 'usd',
        interval: 'month',
        trialDays: 14,
        percentOff: 20,
        email: "o'hara@example.com",
        successUrl: 'https://app.example.com/ok',
        cancelUrl: 'https://app.example.com/no?a=1&b="2"',
      },
      { error: '<b>declined</b>' },
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>declined</b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('Monthly &amp; &quot;more&quot;');
    expect(html).toContain('o&#39;hara@example.com');
    expect(html).toContain('href="https://app.example.com/no?a=1&amp;b=&quot;2&quot;"');
    expect(html).toContain('action="/sandbox/checkout/cs_%22x"');
    expect(html).toContain('value="4242 4242 4242 4242"');
    expect(html).toContain('$19.99');
    expect(html).toContain('14 days free');
    expect(html).toContain('20% off');
    // Nothing is loaded from anywhere: no scripts, stylesheets, images or fonts.
    expect(html).not.toMatch(/<script|<link|<img|src=|url\(/i);
  });
});

describe('the OpenAPI document', () => {
  it('lists the billing routes, with both schemes on the catalog and the Idempotency-Key header on the POSTs', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown; parameters?: Array<{ name: string; in: string }> }>>;
    };
    const routes: Array<[string, string]> = [
      ['get', '/api/proxy/billing/plans'],
      ['get', '/api/proxy/billing/products'],
      ['post', '/api/proxy/billing/checkout'],
      ['post', '/api/proxy/billing/setup-intent'],
      ['post', '/api/proxy/billing/subscribe'],
      ['get', '/api/proxy/billing/subscription'],
      ['get', '/api/proxy/billing/invoices'],
      ['get', '/api/proxy/billing/entitlements'],
      ['post', '/api/proxy/billing/subscription/change'],
      ['post', '/api/proxy/billing/subscription/change/preview'],
      ['post', '/api/proxy/billing/subscription/cancel'],
      ['post', '/api/proxy/billing/subscription/pause'],
      ['post', '/api/proxy/billing/subscription/resume'],
      ['post', '/api/webhooks/stripe'],
      ['post', '/api/webhooks/stripe/{projectId}'],
    ];
    for (const [method, path] of routes) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(doc.paths['/api/proxy/billing/plans']!.get!.security).toEqual([{ accessToken: [] }, { apiKey: [] }]);
    expect(doc.paths['/api/proxy/billing/subscribe']!.post!.security).toEqual([{ accessToken: [] }]);
    expect(doc.paths['/api/webhooks/stripe']!.post!.security).toEqual([]);
    for (const [method, path] of routes.filter(([m, p]) => m === 'post' && p.startsWith('/api/proxy'))) {
      expect(doc.paths[path]![method]!.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key'), path).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// End to end on the sandbox processor, through the SDK
// ---------------------------------------------------------------------------------------------

describe('billing on the sandbox processor, through the SDK', () => {
  let shop: TestProject;
  let basic: { planId: string; monthly: string };
  let pro: { planId: string; monthly: string; yearly: string };
  let legacyPriceId: string;

  const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string; detail?: string }): T => {
    if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
    return outcome.value;
  };
  /** A user of the shop signed in: the SDK with their access token, and their id. */
  async function signedIn(email?: string) {
    const seeded = await t.seedUser(shop.id, email ? { email } : {});
    const session = await t.issueSession(shop.id, seeded);
    return { id: seeded.id, token: session.token, client: createClient({ baseUrl: t.baseUrl, accessToken: session.token }) };
  }
  const eventsOf = async (userId: string) =>
    ok(await t.inContext(() => t.tollgate.billing.listEvents(shop.id, { limit: 100 })))
      .filter((e) => e.userId === userId)
      .reverse()
      .map((e) => e.type);

  beforeAll(async () => {
    shop = await t.createProject({ callbackUrls: ['https://shop.example.com/billing/done'] });
    const billing = t.tollgate.billing;
    await t.inContext(async () => {
      ok(await billing.connectBilling(shop.id, { processor: 'sandbox' }));
      const b = ok(await billing.createPlan(shop.id, { name: 'Basic', features: 'reports, export' }));
      const bm = ok(await billing.createPrice(shop.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
      const p = ok(await billing.createPlan(shop.id, { name: 'Pro', description: 'For teams', features: ['reports', 'export', 'sso'], trialsEnabled: true, recommended: true }));
      const pm = ok(await billing.createPrice(shop.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
      const py = ok(await billing.createPrice(shop.id, 'Pro', { name: 'Yearly', amount: 30000, currency: 'usd', interval: 'year' }));
      ok(await billing.createPlan(shop.id, { name: 'Legacy', hidden: true }));
      const lp = ok(await billing.createPrice(shop.id, 'Legacy', { name: 'Monthly', amount: 500, currency: 'usd', interval: 'month' }));
      ok(await billing.createSandboxPromotionCode(shop.id, 'SAVE20', 20));
      basic = { planId: b.id, monthly: bm.id };
      pro = { planId: p.id, monthly: pm.id, yearly: py.id };
      legacyPriceId = lp.id;
    });
  });

  it('lists visible plans in hierarchy order with their prices; products include hidden plans', async () => {
    const ada = await signedIn();
    for (const client of [ada.client, shop.client]) {
      const plans = await client.billing.plans();
      expect(plans.status).toBe(200);
      if (plans.status !== 200) return;
      expect(plans.body.plans.map((p) => p.name)).toEqual(['Basic', 'Pro']);
      expect(plans.body.plans[1]).toEqual({
        id: pro.planId,
        name: 'Pro',
        description: 'For teams',
        features: ['reports', 'export', 'sso'],
        hidden: false,
        recommended: true,
        trialsEnabled: true,
        defaultTrialDays: null,
        position: 1,
        prices: [
          { id: pro.monthly, planId: pro.planId, name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month', active: true },
          { id: pro.yearly, planId: pro.planId, name: 'Yearly', amount: 30000, currency: 'usd', interval: 'year', active: true },
        ],
      });
      const products = await client.billing.products();
      expect(products.status === 200 && products.body.products.map((p) => [p.name, p.hidden])).toEqual([
        ['Basic', false],
        ['Pro', false],
        ['Legacy', true],
      ]);
    }
  });

  it('subscribes with pm_card_visa (201), then shows the subscription, its invoice and the entitlements', async () => {
    const ada = await signedIn();
    expect((await ada.client.billing.subscription()).body).toBeNull();
    expect((await ada.client.billing.entitlements()).body).toBeNull();

    const created = await ada.client.billing.subscribe({ body: { priceId: basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(created.status).toBe(201);
    if (created.status !== 201) return;
    const sub = created.body;
    expect(sub).toMatchObject({
      status: 'active',
      plan: { id: basic.planId, name: 'Basic' },
      price: { id: basic.monthly, name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' },
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      trialStart: null,
      trialEnd: null,
      pausedAt: null,
      nextInvoice: { amount: 1000, currency: 'usd', date: sub.currentPeriodEnd },
      paymentMethod: { brand: 'visa', last4: '4242', expMonth: expect.any(Number), expYear: expect.any(Number) },
    });
    expect(Object.keys(sub)).not.toContain('userId');
    expect(Object.keys(sub)).not.toContain('processor');
    for (const date of [sub.currentPeriodStart, sub.currentPeriodEnd, sub.createdAt]) expect(new Date(date).toISOString()).toBe(date);

    const current = await ada.client.billing.subscription();
    expect(current.status).toBe(200);
    expect(current.body).toEqual(sub);

    const invoices = await ada.client.billing.invoices();
    expect(invoices.status).toBe(200);
    if (invoices.status !== 200) return;
    expect(invoices.body.invoices).toHaveLength(1);
    expect(invoices.body.invoices[0]).toMatchObject({
      subscriptionId: sub.id,
      status: 'paid',
      currency: 'usd',
      subtotal: 1000,
      amountDue: 1000,
      amountPaid: 1000,
      lines: [expect.objectContaining({ amount: 1000, proration: false, priceId: basic.monthly })],
    });

    expect((await ada.client.billing.entitlements()).body).toEqual({ plan: 'Basic', status: 'active', features: ['reports', 'export'] });
    expect(await eventsOf(ada.id)).toEqual(['subscription.created', 'invoice.paid']);

    // A second subscription answers 409: change it instead.
    const again = await ada.client.billing.subscribe({ body: { priceId: pro.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'subscription_exists' });
  });

  it('changes plan with a prorated invoice (previewed first), then pauses, resumes and cancels both ways', async () => {
    const bob = await signedIn();
    const created = await bob.client.billing.subscribe({ body: { priceId: basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(created.status).toBe(201);
    const subscriptionId = created.status === 201 ? created.body.id : '';

    // Half way through the month (the sandbox's clock, like a Stripe test clock).
    ok(await t.inContext(() => t.tollgate.billing.advanceSandbox(shop.id, 15)));
    const preview = await bob.client.billing.changePreview({ body: { new_price_id: pro.monthly } });
    expect(preview.status).toBe(200);
    if (preview.status !== 200) return;
    expect(preview.body.currency).toBe('usd');
    expect(preview.body.amountDue).toBeGreaterThan(0);
    expect(preview.body.amountDue).toBeLessThan(2000);
    expect(preview.body.lines.some((l) => l.proration && l.amount < 0)).toBe(true);
    expect(preview.body.lines.some((l) => l.proration && l.amount > 0 && l.priceId === pro.monthly)).toBe(true);
    // The preview changed nothing.
    expect((await bob.client.billing.subscription()).body).toMatchObject({ plan: { name: 'Basic' } });

    expect((await bob.client.billing.change({ body: { new_price_id: basic.monthly } })).body).toMatchObject({ code: 'same_price' });
    const changed = await bob.client.billing.change({ body: { new_price_id: pro.monthly } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: subscriptionId, status: 'active', plan: { name: 'Pro' }, price: { id: pro.monthly, amount: 3000 } });
    const invoices = await bob.client.billing.invoices({ query: { limit: 10 } });
    if (invoices.status !== 200) throw new Error('invoices');
    expect(invoices.body.invoices).toHaveLength(2);
    const [prorated, first] = invoices.body.invoices;
    expect(prorated).toMatchObject({ status: 'paid', amountPaid: preview.body.amountDue, subscriptionId });
    expect(prorated!.lines.some((l) => l.proration)).toBe(true);
    expect(first).toMatchObject({ amountPaid: 1000 });
    expect(new Date(prorated!.createdAt).getTime()).toBeGreaterThanOrEqual(new Date(first!.createdAt).getTime());
    expect((await bob.client.billing.invoices({ query: { limit: 1 } })).body).toEqual({ invoices: [prorated] });
    expect((await bob.client.billing.entitlements()).body).toEqual({ plan: 'Pro', status: 'active', features: ['reports', 'export', 'sso'] });

    const paused = await bob.client.billing.pause();
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', pausedAt: expect.any(String), nextInvoice: null });
    expect((await bob.client.billing.entitlements()).body).toBeNull();
    expect((await bob.client.billing.pause()).body).toMatchObject({ code: 'subscription_paused' });
    expect((await bob.client.billing.change({ body: { new_price_id: pro.yearly } })).body).toMatchObject({ code: 'subscription_paused' });
    const resumed = await bob.client.billing.resume();
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', pausedAt: null });
    expect((await bob.client.billing.resume()).body).toMatchObject({ code: 'subscription_not_resumable' });

    // Cancel at period end (the default): pending cancellation, still entitled; resume withdraws it.
    const pending = await bob.client.billing.cancel({ body: {} });
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ status: 'pending_cancellation', cancelAtPeriodEnd: true });
    expect((await bob.client.billing.entitlements()).body).toMatchObject({ plan: 'Pro', status: 'pending_cancellation' });
    expect((await bob.client.billing.cancel({ body: { at_period_end: true } })).body).toMatchObject({ code: 'cancellation_scheduled' });
    expect((await bob.client.billing.resume()).body).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });

    // Cancel now: over at once.
    const canceled = await bob.client.billing.cancel({ body: { at_period_end: false } });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', canceledAt: expect.any(String), endedAt: expect.any(String) });
    expect((await bob.client.billing.subscription()).body).toBeNull();
    expect((await bob.client.billing.entitlements()).body).toBeNull();
    expect((await bob.client.billing.cancel({ body: {} })).body).toMatchObject({ code: 'subscription_not_found' });

    expect(await eventsOf(bob.id)).toEqual([
      'subscription.created',
      'invoice.paid',
      'subscription.updated', // change
      'invoice.paid', // proration
      'subscription.updated', // pause
      'subscription.updated', // resume
      'subscription.updated', // cancel at period end
      'subscription.updated', // resume
      'subscription.canceled',
    ]);
  });

  it('answers 402 card_declined for a declined card, records payment.failed and leaves nothing live', async () => {
    const cyd = await signedIn();
    const declined = await cyd.client.billing.subscribe({ body: { priceId: basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' } });
    expect(declined.status).toBe(402);
    expect(declined.body).toMatchObject({ code: 'card_declined', error: expect.stringMatching(/declined/i) });
    expect((await cyd.client.billing.subscription()).body).toBeNull();
    expect(await eventsOf(cyd.id)).toEqual(['payment.failed']);
    // Another card works.
    expect((await cyd.client.billing.subscribe({ body: { priceId: basic.monthly, paymentMethodId: 'pm_card_mastercard' } })).status).toBe(201);
  });

  it('makes one subscription out of 20 concurrent subscribes: one 201, the rest 409, one charge', async () => {
    const dan = await signedIn();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => dan.client.billing.subscribe({ body: { priceId: basic.monthly, paymentMethodId: 'pm_card_visa' } })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
    for (const a of answers.filter((x) => x.status === 409)) expect(['subscription_exists', 'subscription_busy']).toContain((a.body as { code: string }).code);
    const invoices = await dan.client.billing.invoices();
    expect(invoices.status === 200 && invoices.body.invoices).toHaveLength(1);
  });

  it('replays a subscribe retried with its Idempotency-Key: the same 201, no second charge', async () => {
    const eve = await signedIn();
    const key = crypto.randomUUID();
    const headers = { 'idempotency-key': key };
    const first = await eve.client.billing.subscribe({ headers, body: { priceId: basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(first.status).toBe(201);
    const retry = await eve.client.billing.subscribe({ headers, body: { paymentMethodId: 'pm_card_visa', priceId: basic.monthly } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const other = await eve.client.billing.subscribe({ headers, body: { priceId: pro.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(other.status).toBe(422);
    const invoices = await eve.client.billing.invoices();
    expect(invoices.status === 200 && invoices.body.invoices).toHaveLength(1);
    // A declined attempt is kept too: retrying it with its key answers the same 402.
    const fay = await signedIn();
    const declinedKey = { 'idempotency-key': crypto.randomUUID() };
    const declined = await fay.client.billing.subscribe({ headers: declinedKey, body: { priceId: basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' } });
    const again = await fay.client.billing.subscribe({ headers: declinedKey, body: { priceId: basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' } });
    expect([declined.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([402, 402, 'true']);
    expect(await eventsOf(fay.id)).toEqual(['payment.failed']);
  });

  it('starts a checkout on the sandbox page: trial and promotion shown, a declined card re-rendered (402), a test card pays and returns to successUrl', async () => {
    const gil = await signedIn('gil+<b>@example.com');
    const successUrl = 'https://shop.example.com/billing/done?session=1';
    const cancelUrl = 'https://shop.example.com/pricing';
    const started = await gil.client.billing.checkout({ body: { priceId: pro.monthly, successUrl, cancelUrl, trialDays: 7, promotionCode: 'SAVE20' } });
    expect(started.status).toBe(200);
    if (started.status !== 200) return;
    expect(started.body.url).toBe(`${t.baseUrl}/sandbox/checkout/${started.body.id}`);

    const page = await fetch(started.body.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(
      `default-src 'none'; style-src ${/style-src ('sha256-[^']+')/.exec(page.headers.get('content-security-policy') ?? '')?.[1]}; form-action 'self' https://shop.example.com; frame-ancestors 'none'; base-uri 'none'`,
    );
    const html = await page.text();
    expect(html).toContain('Subscribe to Pro');
    expect(html).toContain('$30.00');
    expect(html).toContain('7 days free');
    expect(html).toContain('20% off the first invoice');
    expect(html).toContain('gil+&lt;b&gt;@example.com');
    expect(html).toContain('value="4242 4242 4242 4242"');
    expect(html).toContain(`href="${cancelUrl}"`);

    const pay = (card: string) =>
      fetch(started.body.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ card }).toString(), redirect: 'manual' });
    const declined = await pay('4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    const declinedHtml = await declined.text();
    expect(declinedHtml).toMatch(/class="error" role="alert">[^<]*declined/i);
    expect(declinedHtml).toContain('value="4000 0000 0000 0002"');
    const unknown = await pay('1234');
    expect(unknown.status).toBe(400);
    expect((await gil.client.billing.subscription()).body).toBeNull();

    const paid = await pay('4242 4242 4242 4242');
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(successUrl);
    expect((await gil.client.billing.subscription()).body).toMatchObject({ status: 'trialing', plan: { name: 'Pro' }, trialEnd: expect.any(String) });
    expect((await gil.client.billing.entitlements()).body).toMatchObject({ plan: 'Pro', status: 'trialing' });

    // The page is done: paying again is refused with a link onwards.
    const again = await pay('4242 4242 4242 4242');
    expect(again.status).toBe(409);
    expect(await again.text()).toContain(`href="${successUrl}"`);
    // And a user with a live subscription cannot start another checkout.
    const second = await gil.client.billing.checkout({ body: { priceId: basic.monthly, successUrl, cancelUrl } });
    expect(second.body).toMatchObject({ code: 'subscription_exists' });
  });

  it('refuses a checkout with a foreign URL, a trial the plan does not offer, an unknown promotion code or price', async () => {
    const hal = await signedIn();
    const valid = { priceId: pro.monthly, successUrl: 'https://shop.example.com/ok', cancelUrl: 'https://shop.example.com/no' };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ successUrl: 'https://evil.example.com/ok' }, 400, 'redirect_url_not_allowed'],
      [{ cancelUrl: 'javascript:alert(1)' }, 400, 'invalid_redirect_url'],
      [{ priceId: basic.monthly, trialDays: 7 }, 400, 'trials_not_enabled'],
      [{ trialDays: 0 }, 400, 'invalid_trial_days'],
      [{ trialDays: 1.5 }, 400, 'invalid_trial_days'],
      [{ promotionCode: 'NOPE' }, 400, 'promotion_code_not_found'],
      [{ priceId: crypto.randomUUID() }, 404, 'price_not_found'],
      [{ priceId: 'price_123' }, 404, 'price_not_found'],
    ];
    for (const [patch, status, code] of cases) {
      const res = await hal.client.billing.checkout({ body: { ...valid, ...patch } as typeof valid });
      expect([res.status, (res.body as { code?: string }).code], JSON.stringify(patch)).toEqual([status, code]);
    }
    // A hidden plan's price can be sold by link.
    expect((await hal.client.billing.checkout({ body: { ...valid, priceId: legacyPriceId } })).status).toBe(200);
  });

  it('creates a setup intent with the sandbox secret', async () => {
    const ivy = await signedIn();
    const intent = await ivy.client.billing.setupIntent();
    expect(intent.status).toBe(200);
    expect(intent.body).toEqual({ clientSecret: expect.stringMatching(/_secret_/), publishableKey: expect.any(String) });
  });
});

// ---------------------------------------------------------------------------------------------
// Stripe's webhooks, signed by the Stripe-shaped server
// ---------------------------------------------------------------------------------------------

describe('Stripe webhooks for a project connected to Stripe', () => {
  let store: TestProject;
  let account: ReturnType<FakeStripe['createAccount']>;
  let eventId: string;

  beforeAll(async () => {
    store = await t.createProject({ callbackUrls: ['https://store.example.com/done'] });
    account = stripe.createAccount();
    const billing = t.tollgate.billing;
    const ok = <T>(o: { ok: true; value: T } | { ok: false; error: string; detail?: string }) => {
      if (!o.ok) throw new Error(`${o.error} ${o.detail ?? ''}`);
      return o.value;
    };
    const priceId = await t.inContext(async () => {
      ok(await billing.connectBilling(store.id, { processor: 'stripe', secretKey: account.secretKey, publishableKey: account.publishableKey, webhookSecret: account.webhookSecret }));
      ok(await billing.createPlan(store.id, { name: 'Basic' }));
      return ok(await billing.createPrice(store.id, 'Basic', { name: 'Monthly', amount: 1200, currency: 'usd', interval: 'month' })).id;
    });
    const seeded = await t.seedUser(store.id);
    const client = createClient({ baseUrl: t.baseUrl, accessToken: (await t.issueSession(store.id, seeded)).token });
    const created = await client.billing.subscribe({ body: { priceId, paymentMethodId: 'pm_card_visa' } });
    expect(created.status).toBe(201);
    stripe.addWebhookEndpoint(account.id, `${t.baseUrl}/api/webhooks/stripe/${store.id}`);
    eventId = stripe.events(account.id, 'invoice.paid').at(-1)!.id;
  });

  it('applies a signed event (200), once: a duplicate answers 200 too', async () => {
    for (const path of [`/api/webhooks/stripe/${store.id}`, '/api/webhooks/stripe']) {
      const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId);
      const res = await post(path, { raw: payload, headers: { 'stripe-signature': header } });
      expect([path, res.status, await res.json()]).toEqual([path, 200, { received: true }]);
    }
  });

  it('refuses a tampered body, a wrong secret and a missing header with 400 invalid_webhook_signature', async () => {
    const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId);
    const wrongSecret = stripe.webhooks.signedRequest(account.id, eventId, undefined, { secret: 'whsec_wrong' });
    const cases: Array<[string, Record<string, string>]> = [
      [payload.replace('"invoice.paid"', '"invoice.paid" '), { 'stripe-signature': header }],
      [wrongSecret.payload, { 'stripe-signature': wrongSecret.header }],
      [payload, {}],
    ];
    for (const [raw, headers] of cases) {
      const res = await post(`/api/webhooks/stripe/${store.id}`, { raw, headers });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'Invalid webhook signature', code: 'invalid_webhook_signature' });
    }
  });

  it("refuses another project's path: its webhook secret does not sign this event", async () => {
    const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId);
    const res = await post(`/api/webhooks/stripe/${project.id}`, { raw: payload, headers: { 'stripe-signature': header } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'webhook_project_unknown' });
  });
});
