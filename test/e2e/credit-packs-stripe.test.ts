import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { bearerCall } from '../support/bearer-call';
import { ok, signedIn } from '../support/billing';
import { StripeApiError } from '../support/stripe/errors';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * Credit packs on Stripe over HTTP: a project connected to the Stripe-shaped server sells a pack
 * through a Checkout Session in payment mode, and Stripe's checkout.session.completed webhook
 * (delivered to the app, signed) grants the credits once; a declined card, an expired session and
 * a redelivered event grant nothing more. The purchase is audited.
 */

let t: TestApp;
let stripe: FakeStripe;
let store: TestProject;
let account: ReturnType<FakeStripe['createAccount']>;
let packId: string;

const SHOP = 'https://store.example.com/credits';
const call = bearerCall(() => t.baseUrl);
const operator = { actor: { kind: 'admin' as const, id: 'test' }, origin: SYSTEM_ORIGIN };

beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await startTestApp({ env: { STRIPE_API_URL: stripe.url, STRIPE_MAX_NETWORK_RETRIES: '0' } });
  store = await t.createProject({ callbackUrls: [SHOP] });
  account = stripe.createAccount();
  packId = await t.inContext(async () => {
    ok(
      await t.tollgate.billing.connectBilling(store.id, {
        processor: 'stripe',
        secretKey: account.secretKey,
        publishableKey: account.publishableKey,
        webhookSecret: account.webhookSecret,
      }),
    );
    ok(await t.tollgate.usage.createMeter(store.id, { key: 'api_calls', name: 'API calls', unit: 'calls' }, operator));
    const pack = ok(
      await t.tollgate.billing.createCreditPack(store.id, {
        meter: 'api_calls',
        name: '500 calls',
        units: 500,
        amount: 900,
        currency: 'usd',
        expiresInDays: 30,
      }),
    );
    return pack.id;
  });
  stripe.addWebhookEndpoint(account.id, `${t.baseUrl}/api/webhooks/stripe/${store.id}`);
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

async function buyer() {
  const user = await signedIn(t, store.id);
  const started = await call<{ id: string; url: string }>('POST', `/api/proxy/billing/credit-packs/${packId}/checkout`, user.token, {
    successUrl: SHOP,
    cancelUrl: SHOP,
  });
  expect(started.status).toBe(200);
  return { ...user, checkout: started.body };
}

const grantsOf = async (userId: string) =>
  (
    await call<{ grants: Array<{ source: string; amount: number; reason: string; expiresAt: string | null }> }>(
      'GET',
      `/api/v1/usage/credits?subjectType=user&subjectId=${userId}`,
      store.apiKey,
    )
  ).body.grants;

describe('credit packs on Stripe', () => {
  it('a paid Checkout Session in payment mode grants the pack once, from the webhook; a redelivery grants nothing more', async () => {
    const u = await buyer();
    expect(u.checkout.url).toContain(`/checkout/${u.checkout.id}`);
    const session = stripe.get(account.id, u.checkout.id) as { mode: string; status: string; metadata: Record<string, string> };
    expect(session).toMatchObject({ mode: 'payment', status: 'open' });
    expect(session.metadata).toMatchObject({ tollgate_project_id: store.id, tollgate_user_id: u.id, tollgate_pack_id: packId });

    // A declined card: the page shows the decline, nothing is granted.
    expect(() => stripe.completeCheckout(u.checkout.id, { paymentMethod: 'pm_card_chargeDeclined' })).toThrow(StripeApiError);
    await stripe.webhooks.settled();
    expect(await grantsOf(u.id)).toEqual([]);

    stripe.completeCheckout(u.checkout.id, { paymentMethod: 'pm_card_visa' });
    await stripe.webhooks.settled();
    expect(await grantsOf(u.id)).toEqual([expect.objectContaining({ source: 'purchase', amount: 500, reason: '500 calls' })]);
    const completed = stripe.events(account.id, 'checkout.session.completed').filter((e) => (e.data.object as { id: string }).id === u.checkout.id);
    expect(completed).toHaveLength(1);
    const delivered = stripe.webhooks.attempts.filter((a) => a.eventId === completed[0]!.id);
    expect(delivered.map((a) => a.status)).toEqual([200]);

    // The same event again (Stripe retries, or a resend from the dashboard): answered, nothing more granted.
    await stripe.webhooks.redeliver(account.id, completed[0]!.id);
    await stripe.webhooks.settled();
    expect(await grantsOf(u.id)).toHaveLength(1);

    await t.tollgate.core.audit.flush();
    const audit = await t.inContext(() => t.tollgate.core.audit.list({ projectId: store.id, action: 'billing.credit_pack.purchased', limit: 10 }));
    expect(audit.filter((e) => e.target?.id === u.id)).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ kind: 'user', id: u.id }),
        details: expect.objectContaining({ pack_id: packId, units: 500, amount: 900, processor: 'stripe', checkout_id: u.checkout.id }),
      }),
    ]);
  });

  it('an expired session grants nothing', async () => {
    const u = await buyer();
    stripe.advance(account.id, 25 * 3600);
    await stripe.webhooks.settled();
    expect(stripe.get(account.id, u.checkout.id)).toMatchObject({ status: 'expired' });
    expect(() => stripe.completeCheckout(u.checkout.id)).toThrow(StripeApiError);
    expect(await grantsOf(u.id)).toEqual([]);
  });
});
