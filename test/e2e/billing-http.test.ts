import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type TollgateClient } from '../../contract';
import { requestFingerprint } from '../../domain/billing/idempotency';
import { renderCheckoutPage } from '../../apps/server/http/sandbox-checkout.page';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * What the HTTP layer of billing does on its own, whatever the use cases answer: the auth kinds of
 * the catalog routes, request validation, Idempotency-Key, the webhook route's refusals, the
 * sandbox checkout page's HTML, and the OpenAPI document.
 */

let t: TestApp;
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
  t = await startTestApp();
  project = await t.createProject({ callbackUrls: ['https://app.example.com/callback'] });
  const seeded = await t.seedUser(project.id, { email: 'billing-http@example.com' });
  userId = seeded.id;
  token = (await t.issueSession(project.id, seeded)).token;
  user = createClient({ baseUrl: t.baseUrl, accessToken: token });
});
afterAll(() => t?.close());

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
    ['/api/proxy/billing/checkout', { priceId: 'price_1', successUrl: 'https://a', cancelUrl: 'https://b' }, /priceId: Invalid uuid/],
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
    await t.inContext(() => store.begin(`${project.id}:${userId}`, key, fingerprint, t.clock.now()));
    const res = await post('/api/proxy/billing/subscription/pause', { token, key });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 'A request with this Idempotency-Key is still in progress', code: 'idempotency_key_in_progress' });
    // Once it is answered, the answer is replayed.
    await t.inContext(() => store.complete(`${project.id}:${userId}`, key, 200, { stored: true }, t.clock.now()));
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
