import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../domain/billing/idempotency';
import { PostgresIdempotentRequestStore } from '../../infrastructure/persistence/postgres-idempotent-request.store';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { billingEventTypes, createSandboxShop, post, type SandboxCatalog, signedIn } from '../support/billing';

/**
 * The Idempotency-Key header on the billing POSTs of an end user, over HTTP: which keys are
 * accepted, what a key replays and to whom, what a key with another request answers, concurrent
 * requests with one key, and a subscribe retried with its key on the sandbox processor.
 */

let t: TestApp;
let shop: TestProject;
let catalog: SandboxCatalog;

beforeAll(async () => {
  t = await startTestApp();
  ({ shop, catalog } = await createSandboxShop(t));
});
afterAll(async () => {
  await t?.close();
});

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

describe('which keys are accepted', () => {
  it.each(ROUTES)('refuses a malformed key with 400 invalid_idempotency_key on %s', async (path, body) => {
    const { token } = await signedIn(t, shop.id);
    for (const key of ['has space', 'x'.repeat(256), 'tab\there']) {
      const res = await post(t, path, { token, key, body });
      expect(res.status, `${path} ${key.slice(0, 10)}`).toBe(400);
      expect(await res.json()).toEqual({ error: 'Invalid Idempotency-Key: 1 to 255 printable ASCII characters', code: 'invalid_idempotency_key' });
    }
  });

  it('keeps nothing for a request refused for its shape: the same key works once the body is fixed', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const bad = await post(t, '/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: 'no' } });
    expect(bad.status).toBe(400);
    const good = await post(t, '/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: false } });
    expect(good.status).not.toBe(422);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('what a key replays', () => {
  it('answers the stored status and body again for the same key and body, with Idempotent-Replayed: true', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const first = await post(t, '/api/proxy/billing/setup-intent', { token, key });
    const firstBody = await first.json();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 2; i++) {
      const again = await post(t, '/api/proxy/billing/setup-intent', { token, key });
      expect(again.status).toBe(first.status);
      expect(await again.json()).toEqual(firstBody);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
  });

  it('takes an empty JSON object for the same request as no body (a body-less POST)', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const first = await post(t, '/api/proxy/billing/setup-intent', { token, key });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const withEmptyBody = await post(t, '/api/proxy/billing/setup-intent', { token, key, body: {} });
    expect(withEmptyBody.headers.get('idempotent-replayed')).toBe('true');
  });

  it('compares bodies as JSON: key order and spacing do not matter', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const first = await post(t, '/api/proxy/billing/subscription/cancel', { token, key, raw: '{"at_period_end":true}' });
    const same = await post(t, '/api/proxy/billing/subscription/cancel', { token, key, raw: '{ "at_period_end" : true }\n' });
    expect(same.status).toBe(first.status);
    expect(same.headers.get('idempotent-replayed')).toBe('true');
  });

  it('scopes keys to the user: another user with the same key runs its own request', async () => {
    const [one, other] = [await signedIn(t, shop.id), await signedIn(t, shop.id)];
    const key = crypto.randomUUID();
    await post(t, '/api/proxy/billing/subscription/cancel', { token: one.token, key, body: { at_period_end: true } });
    const res = await post(t, '/api/proxy/billing/subscription/cancel', { token: other.token, key, body: { at_period_end: false } });
    expect(res.status).not.toBe(422);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('a key with another request', () => {
  it('answers 422 idempotency_key_reused for another body', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    await post(t, '/api/proxy/billing/subscription/cancel', { token, key, raw: '{"at_period_end":true}' });
    const other = await post(t, '/api/proxy/billing/subscription/cancel', { token, key, body: { at_period_end: false } });
    expect(other.status).toBe(422);
    expect(await other.json()).toEqual({ error: 'This Idempotency-Key was used with a different request', code: 'idempotency_key_reused' });
  });

  it('answers 422 for the same key on another route', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    await post(t, '/api/proxy/billing/subscription/cancel', { token, key, raw: '{"at_period_end":true}' });
    const elsewhere = await post(t, '/api/proxy/billing/subscription/pause', { token, key });
    expect(elsewhere.status).toBe(422);
  });
});

describe('a key whose first request is still running', () => {
  const PAUSE = '/api/proxy/billing/subscription/pause';
  /** A request with `key` that has begun (in another process, say) and not answered yet. */
  async function begun(userId: string, key: string) {
    const store = new PostgresIdempotentRequestStore(t.tollgate.core.db);
    const fingerprint = t.tollgate.core.crypto.hash(requestFingerprint({ method: 'POST', path: PAUSE, body: {} }));
    const lease = { holder: crypto.randomUUID(), now: t.clock.now(), expiresAt: new Date(t.clock.now().getTime() + 10_000) };
    await t.inContext(() => store.begin(`${shop.id}:${userId}`, key, fingerprint, lease));
    return {
      answer: (status: number, body: unknown) => t.inContext(() => store.complete(`${shop.id}:${userId}`, key, lease.holder, status, body, t.clock.now())),
    };
  }

  it('answers 409 idempotency_key_in_progress while the first request with the key is running', async () => {
    const user = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    await begun(user.id, key);
    const res = await post(t, PAUSE, { token: user.token, key });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 'A request with this Idempotency-Key is still in progress', code: 'idempotency_key_in_progress' });
  });

  it("replays the first request's answer once it is answered", async () => {
    const user = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const first = await begun(user.id, key);
    await first.answer(200, { stored: true });
    const replay = await post(t, PAUSE, { token: user.token, key });
    expect([replay.status, await replay.json(), replay.headers.get('idempotent-replayed')]).toEqual([200, { stored: true }, 'true']);
  });

  it('lets exactly one of concurrent first requests with one key run; the others wait (409) or replay its answer', async () => {
    const { token } = await signedIn(t, shop.id);
    const key = crypto.randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await post(t, '/api/proxy/billing/setup-intent', { token, key });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body: (await res.json()) as { code?: string } };
      }),
    );
    const ran = answers.filter((a) => !a.replayed && a.body.code !== 'idempotency_key_in_progress');
    expect(ran).toHaveLength(1);
    for (const a of answers.filter((x) => x.replayed)) expect(a).toEqual({ ...ran[0], replayed: true });
  });
});

describe('a subscribe retried with its key, on the sandbox processor', () => {
  it('answers the same 201 again, replayed, whatever the order of the body fields', async () => {
    const eve = await signedIn(t, shop.id);
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const first = await eve.client.billing.subscribe({ headers, body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(first.status).toBe(201);
    const retry = await eve.client.billing.subscribe({ headers, body: { paymentMethodId: 'pm_card_visa', priceId: catalog.basic.monthly } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('charges once: after a retry and the key with another price (422), one invoice', async () => {
    const eve = await signedIn(t, shop.id);
    const headers = { 'idempotency-key': crypto.randomUUID() };
    await eve.client.billing.subscribe({ headers, body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_visa' } });
    await eve.client.billing.subscribe({ headers, body: { paymentMethodId: 'pm_card_visa', priceId: catalog.basic.monthly } });
    const other = await eve.client.billing.subscribe({ headers, body: { priceId: catalog.pro.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(other.status).toBe(422);
    const invoices = await eve.client.billing.invoices();
    expect(invoices.status === 200 && invoices.body.invoices).toHaveLength(1);
  });

  it('keeps a declined attempt too: retrying it with its key answers the same 402, with one payment.failed', async () => {
    const fay = await signedIn(t, shop.id);
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const body = { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' };
    const declined = await fay.client.billing.subscribe({ headers, body });
    const again = await fay.client.billing.subscribe({ headers, body });
    expect([declined.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([402, 402, 'true']);
    expect(await billingEventTypes(t, shop.id, fay.id)).toEqual(['payment.failed']);
  });
});
