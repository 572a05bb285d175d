import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { post, signedIn } from '../support/billing';

/**
 * The billing routes as the contract declares them, whatever the use cases answer (the project
 * has no processor connected): request bodies and queries are validated before anything runs, and
 * the OpenAPI document lists every route with its credentials and the Idempotency-Key header.
 */

let t: TestApp;
let project: TestProject;

beforeAll(async () => {
  t = await startTestApp();
  project = await t.createProject({ callbackUrls: ['https://app.example.com/callback'] });
});
afterAll(async () => {
  await t?.close();
});

describe('request validation', () => {
  const cases: Array<[string, string, unknown, RegExp]> = [
    [
      'priceId missing',
      '/api/proxy/billing/checkout',
      { successUrl: 'https://app.example.com/ok', cancelUrl: 'https://app.example.com/no' },
      /Missing body field: priceId/,
    ],
    [
      'priceId empty',
      '/api/proxy/billing/checkout',
      { priceId: '', successUrl: 'https://a', cancelUrl: 'https://b' },
      /priceId: String must contain at least 1/,
    ],
    [
      'trialDays a string',
      '/api/proxy/billing/checkout',
      { priceId: crypto.randomUUID(), successUrl: 'https://a', cancelUrl: 'https://b', trialDays: '7' },
      /trialDays: expected number/,
    ],
    ['paymentMethodId missing', '/api/proxy/billing/subscribe', { priceId: crypto.randomUUID() }, /Missing body field: paymentMethodId/],
    ['paymentMethodId too long', '/api/proxy/billing/subscribe', { priceId: crypto.randomUUID(), paymentMethodId: 'x'.repeat(256) }, /paymentMethodId/],
    // The spec's field is new_price_id: the camelCase spelling is not accepted.
    ['newPriceId for new_price_id', '/api/proxy/billing/subscription/change', { newPriceId: crypto.randomUUID() }, /Missing body field: new_price_id/],
    ['new_price_id a number', '/api/proxy/billing/subscription/change/preview', { new_price_id: 42 }, /new_price_id: expected string/],
    ['at_period_end a string', '/api/proxy/billing/subscription/cancel', { at_period_end: 'yes' }, /at_period_end: expected boolean/],
  ];
  it.each(cases)('answers 400 invalid_request naming the field: %s (%s)', async (_case, path, body, message) => {
    const { token } = await signedIn(t, project.id);
    const res = await post(t, path, { token, body });
    expect(res.status, path).toBe(400);
    const answer = (await res.json()) as { code: string; error: string };
    expect(answer.code, path).toBe('invalid_request');
    expect(answer.error, path).toMatch(message);
  });

  it('refuses an invoice limit outside 1 to 100, or not an integer, with 400 invalid_request', async () => {
    const user = await signedIn(t, project.id);
    for (const limit of ['0', '101', 'ten', '2.5']) {
      const res = await user.client.billing.invoices({ query: { limit: limit as never } });
      expect(res.status, limit).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request' });
    }
  });

  it('accepts an invoice limit of 1 or 100, or none', async () => {
    const user = await signedIn(t, project.id);
    for (const limit of [1, 100]) expect((await user.client.billing.invoices({ query: { limit } })).status).toBe(200);
    expect((await user.client.billing.invoices()).status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  type Operation = { security?: unknown; parameters?: Array<{ name: string; in: string }> };
  let doc: { paths: Record<string, Record<string, Operation>> };
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
  beforeAll(async () => {
    doc = (await (await fetch(`${t.baseUrl}/api/openapi.json`)).json()) as typeof doc;
  });

  it('lists every billing route', () => {
    for (const [method, path] of routes) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });

  it('offers both schemes on the catalog, the access token alone on user routes and none on the Stripe webhook', () => {
    expect(doc.paths['/api/proxy/billing/plans']!.get!.security).toEqual([{ accessToken: [] }, { apiKey: [] }]);
    expect(doc.paths['/api/proxy/billing/subscribe']!.post!.security).toEqual([{ accessToken: [] }]);
    expect(doc.paths['/api/webhooks/stripe']!.post!.security).toEqual([]);
  });

  it('declares the Idempotency-Key header on every billing POST of an end user', () => {
    for (const [method, path] of routes.filter(([m, p]) => m === 'post' && p.startsWith('/api/proxy'))) {
      expect(
        doc.paths[path]![method]!.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key'),
        path,
      ).toBe(true);
    }
  });
});
