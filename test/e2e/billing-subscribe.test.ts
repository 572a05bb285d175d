import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { billingEventTypes, createSandboxShop, type SandboxCatalog, signedIn, subscribed } from '../support/billing';

/**
 * Subscribing over HTTP through the SDK, on the sandbox processor: the subscription, its first
 * invoice, the entitlements and the events it records; declined cards, a second subscription,
 * concurrent subscribes, the setup intent a payment form confirms a card with, and the user
 * routes' refusal of the project's API key.
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

describe('before subscribing', () => {
  it('answers no subscription and no entitlements for a new user', async () => {
    const ada = await signedIn(t, shop.id);
    expect((await ada.client.billing.subscription()).body).toBeNull();
    expect((await ada.client.billing.entitlements()).body).toBeNull();
  });

  it('creates a setup intent with the sandbox secret', async () => {
    const ivy = await signedIn(t, shop.id);
    const intent = await ivy.client.billing.setupIntent();
    expect(intent.status).toBe(200);
    expect(intent.body).toEqual({ clientSecret: expect.stringMatching(/_secret_/), publishableKey: expect.any(String) });
  });

  it("refuses the project's API key on the user routes: they need the end user's access token", async () => {
    const res = await shop.client.billing.subscription();
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'invalid_access_token', hint: "This route takes an end user's access token, not the project's API key" });
  });
});

describe('subscribing with pm_card_visa', () => {
  it('answers 201 with the subscription: active, its plan, price, next invoice and card; no user id or processor; ISO dates', async () => {
    const ada = await signedIn(t, shop.id);
    const created = await ada.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(created.status).toBe(201);
    if (created.status !== 201) return;
    const sub = created.body;
    expect(sub).toMatchObject({
      status: 'active',
      plan: { id: catalog.basic.planId, name: 'Basic' },
      price: { id: catalog.basic.monthly, name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' },
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
  });

  it('answers the same subscription at GET /subscription', async () => {
    const ada = await signedIn(t, shop.id);
    const created = await ada.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(created.status).toBe(201);
    const current = await ada.client.billing.subscription();
    expect(current.status).toBe(200);
    expect(current.body).toEqual(created.body);
  });

  it('bills the first period on one paid invoice', async () => {
    const ada = await subscribed(t, shop.id, catalog.basic.monthly);
    const invoices = await ada.client.billing.invoices();
    expect(invoices.status).toBe(200);
    if (invoices.status !== 200) return;
    expect(invoices.body.invoices).toHaveLength(1);
    expect(invoices.body.invoices[0]).toMatchObject({
      subscriptionId: ada.subscriptionId,
      status: 'paid',
      currency: 'usd',
      subtotal: 1000,
      amountDue: 1000,
      amountPaid: 1000,
      lines: [expect.objectContaining({ amount: 1000, proration: false, priceId: catalog.basic.monthly })],
    });
  });

  it("entitles the user to the plan's features", async () => {
    const ada = await subscribed(t, shop.id, catalog.basic.monthly);
    expect((await ada.client.billing.entitlements()).body).toEqual({ plan: 'Basic', status: 'active', features: ['reports', 'export'] });
  });

  it('records subscription.created and invoice.paid', async () => {
    const ada = await subscribed(t, shop.id, catalog.basic.monthly);
    expect(await billingEventTypes(t, shop.id, ada.id)).toEqual(['subscription.created', 'invoice.paid']);
  });

  it('refuses a second subscription with 409 subscription_exists: change it instead', async () => {
    const ada = await subscribed(t, shop.id, catalog.basic.monthly);
    const again = await ada.client.billing.subscribe({ body: { priceId: catalog.pro.monthly, paymentMethodId: 'pm_card_visa' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'subscription_exists' });
  });

  it('makes one subscription out of 20 concurrent subscribes: one 201, the rest 409, one charge', async () => {
    const dan = await signedIn(t, shop.id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => dan.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_visa' } })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
    for (const a of answers.filter((x) => x.status === 409)) expect(['subscription_exists', 'subscription_busy']).toContain((a.body as { code: string }).code);
    const invoices = await dan.client.billing.invoices();
    expect(invoices.status === 200 && invoices.body.invoices).toHaveLength(1);
  });
});

describe('a declined card', () => {
  it('answers 402 card_declined, records payment.failed and leaves nothing live', async () => {
    const cyd = await signedIn(t, shop.id);
    const declined = await cyd.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' } });
    expect(declined.status).toBe(402);
    expect(declined.body).toMatchObject({ code: 'card_declined', error: expect.stringMatching(/declined/i) });
    expect((await cyd.client.billing.subscription()).body).toBeNull();
    expect(await billingEventTypes(t, shop.id, cyd.id)).toEqual(['payment.failed']);
  });

  it('does not stop another card from subscribing', async () => {
    const cyd = await signedIn(t, shop.id);
    await cyd.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_chargeDeclined' } });
    expect((await cyd.client.billing.subscribe({ body: { priceId: catalog.basic.monthly, paymentMethodId: 'pm_card_mastercard' } })).status).toBe(201);
  });
});
