import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok, post, signedIn } from '../support/billing';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * Stripe's webhooks over HTTP (POST /api/webhooks/stripe and /api/webhooks/stripe/{projectId}):
 * what is refused before anything is trusted, and the events of a project connected to the
 * Stripe-shaped server, signed by it.
 */

let t: TestApp;
let stripe: FakeStripe;
/** A project with no processor connected. */
let other: TestProject;
/** A project connected to Stripe, with Basic monthly for sale. */
let store: TestProject;
let account: ReturnType<FakeStripe['createAccount']>;
let priceId: string;

beforeAll(async () => {
  // Webhooks are held: the tests post Stripe's signed requests themselves.
  stripe = await startFakeStripe({ holdWebhooks: true });
  t = await startTestApp({ env: { STRIPE_API_URL: stripe.url, STRIPE_MAX_NETWORK_RETRIES: '0' } });
  other = await t.createProject({ callbackUrls: ['https://app.example.com/callback'] });
  store = await t.createProject({ callbackUrls: ['https://store.example.com/done'] });
  account = stripe.createAccount();
  const billing = t.tollgate.billing;
  priceId = await t.inContext(async () => {
    ok(
      await billing.connectBilling(store.id, {
        processor: 'stripe',
        secretKey: account.secretKey,
        publishableKey: account.publishableKey,
        webhookSecret: account.webhookSecret,
      }),
    );
    ok(await billing.createPlan(store.id, { name: 'Basic' }));
    return ok(await billing.createPrice(store.id, 'Basic', { name: 'Monthly', amount: 1200, currency: 'usd', interval: 'month' })).id;
  });
  stripe.addWebhookEndpoint(account.id, `${t.baseUrl}/api/webhooks/stripe/${store.id}`);
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

/** The id of the invoice.paid event of a new user's subscription to the store. */
async function invoicePaidEvent(): Promise<string> {
  const user = await signedIn(t, store.id);
  const created = await user.client.billing.subscribe({ body: { priceId, paymentMethodId: 'pm_card_visa' } });
  expect(created.status).toBe(201);
  return stripe.events(account.id, 'invoice.paid').at(-1)!.id;
}

describe('before anything is trusted', () => {
  const event = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_1', metadata: {} } } });

  it('answers 400 for a missing or bad signature, on the shared path and on any project path', async () => {
    for (const path of ['/api/webhooks/stripe', `/api/webhooks/stripe/${other.id}`, `/api/webhooks/stripe/${crypto.randomUUID()}`]) {
      for (const headers of [{}, { 'stripe-signature': 't=1,v1=deadbeef' }] as Array<Record<string, string>>) {
        const res = await post(t, path, { raw: event, headers });
        expect(res.status, path).toBe(400);
        const body = (await res.json()) as { code: string };
        expect(['invalid_webhook_signature', 'webhook_project_unknown'], `${path} ${body.code}`).toContain(body.code);
      }
    }
  });

  it('answers 400 invalid_request for a project id that is not one', async () => {
    const res = await post(t, '/api/webhooks/stripe/not-a-project', { raw: event, headers: { 'stripe-signature': 't=1,v1=00' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_request' });
  });
});

describe('a project connected to Stripe', () => {
  it("applies a signed event (200) on the project's path, once: a duplicate on the shared path answers 200 too", async () => {
    const eventId = await invoicePaidEvent();
    for (const path of [`/api/webhooks/stripe/${store.id}`, '/api/webhooks/stripe']) {
      const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId);
      const res = await post(t, path, { raw: payload, headers: { 'stripe-signature': header } });
      expect([path, res.status, await res.json()]).toEqual([path, 200, { received: true }]);
    }
  });

  const forgeries: Array<[string, (eventId: string) => { raw: string; headers: Record<string, string> }]> = [
    [
      'a tampered body',
      (eventId) => {
        const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId);
        return { raw: payload.replace('"invoice.paid"', '"invoice.paid" '), headers: { 'stripe-signature': header } };
      },
    ],
    [
      'a signature with the wrong secret',
      (eventId) => {
        const { payload, header } = stripe.webhooks.signedRequest(account.id, eventId, undefined, { secret: 'whsec_wrong' });
        return { raw: payload, headers: { 'stripe-signature': header } };
      },
    ],
    ['no Stripe-Signature header', (eventId) => ({ raw: stripe.webhooks.signedRequest(account.id, eventId).payload, headers: {} })],
  ];
  it.each(forgeries)('refuses %s with 400 invalid_webhook_signature', async (_case, forge) => {
    const res = await post(t, `/api/webhooks/stripe/${store.id}`, forge(await invoicePaidEvent()));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Invalid webhook signature', code: 'invalid_webhook_signature' });
  });

  it("refuses another project's path: its webhook secret does not sign this event", async () => {
    const { payload, header } = stripe.webhooks.signedRequest(account.id, await invoicePaidEvent());
    const res = await post(t, `/api/webhooks/stripe/${other.id}`, { raw: payload, headers: { 'stripe-signature': header } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'webhook_project_unknown' });
  });
});
