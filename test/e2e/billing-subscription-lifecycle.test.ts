import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { billingEventTypes, createSandboxShop, ok, type SandboxCatalog, subscribed } from '../support/billing';

/**
 * A live subscription changed over HTTP through the SDK, on the sandbox processor: a change of
 * price with its prorated invoice (previewed first), pause and resume, and cancellation at the end
 * of the period or now. Each test subscribes a user of its own.
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

describe('changing the price, half way through the month', () => {
  /** A user on Basic monthly, 15 days into the period (the sandbox's clock, like a Stripe test clock). */
  async function halfWayOnBasic() {
    const user = await subscribed(t, shop.id, catalog.basic.monthly);
    ok(await t.inContext(() => t.tollgate.billing.advanceSandbox(shop.id, 15)));
    return user;
  }
  async function previewOfPro(user: Awaited<ReturnType<typeof halfWayOnBasic>>) {
    const preview = await user.client.billing.changePreview({ body: { new_price_id: catalog.pro.monthly } });
    expect(preview.status).toBe(200);
    if (preview.status !== 200) throw new Error(`preview: ${preview.status}`);
    return preview.body;
  }

  it('previews a prorated charge: less than the full difference, a credit line and a line for the new price', async () => {
    const bob = await halfWayOnBasic();
    const preview = await previewOfPro(bob);
    expect(preview.currency).toBe('usd');
    expect(preview.amountDue).toBeGreaterThan(0);
    expect(preview.amountDue).toBeLessThan(2000);
    expect(preview.lines.some((l) => l.proration && l.amount < 0)).toBe(true);
    expect(preview.lines.some((l) => l.proration && l.amount > 0 && l.priceId === catalog.pro.monthly)).toBe(true);
  });

  it('changes nothing with a preview', async () => {
    const bob = await halfWayOnBasic();
    await previewOfPro(bob);
    expect((await bob.client.billing.subscription()).body).toMatchObject({ plan: { name: 'Basic' } });
  });

  it('refuses a change to the current price with same_price', async () => {
    const bob = await halfWayOnBasic();
    expect((await bob.client.billing.change({ body: { new_price_id: catalog.basic.monthly } })).body).toMatchObject({ code: 'same_price' });
  });

  it('answers 200 with the same subscription on the new plan and price', async () => {
    const bob = await halfWayOnBasic();
    const changed = await bob.client.billing.change({ body: { new_price_id: catalog.pro.monthly } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: bob.subscriptionId, status: 'active', plan: { name: 'Pro' }, price: { id: catalog.pro.monthly, amount: 3000 } });
  });

  it('charges the previewed amount on a paid prorated invoice, listed before the first one', async () => {
    const bob = await halfWayOnBasic();
    const preview = await previewOfPro(bob);
    await bob.client.billing.change({ body: { new_price_id: catalog.pro.monthly } });
    const invoices = await bob.client.billing.invoices({ query: { limit: 10 } });
    if (invoices.status !== 200) throw new Error('invoices');
    expect(invoices.body.invoices).toHaveLength(2);
    const [prorated, first] = invoices.body.invoices;
    expect(prorated).toMatchObject({ status: 'paid', amountPaid: preview.amountDue, subscriptionId: bob.subscriptionId });
    expect(prorated!.lines.some((l) => l.proration)).toBe(true);
    expect(first).toMatchObject({ amountPaid: 1000 });
    expect(new Date(prorated!.createdAt).getTime()).toBeGreaterThanOrEqual(new Date(first!.createdAt).getTime());
    expect((await bob.client.billing.invoices({ query: { limit: 1 } })).body).toEqual({ invoices: [prorated] });
  });

  it("entitles the user to the new plan's features", async () => {
    const bob = await halfWayOnBasic();
    await bob.client.billing.change({ body: { new_price_id: catalog.pro.monthly } });
    expect((await bob.client.billing.entitlements()).body).toEqual({ plan: 'Pro', status: 'active', features: ['reports', 'export', 'sso'] });
  });

  it("records subscription.updated and the proration's invoice.paid", async () => {
    const bob = await halfWayOnBasic();
    await bob.client.billing.change({ body: { new_price_id: catalog.pro.monthly } });
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'invoice.paid']);
  });
});

describe('pausing and resuming', () => {
  const onPro = () => subscribed(t, shop.id, catalog.pro.monthly);

  it('pauses: 200 paused with no next invoice, no entitlements, and a subscription.updated event', async () => {
    const bob = await onPro();
    const paused = await bob.client.billing.pause();
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', pausedAt: expect.any(String), nextInvoice: null });
    expect((await bob.client.billing.entitlements()).body).toBeNull();
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated']);
  });

  it('refuses pausing a paused subscription with subscription_paused', async () => {
    const bob = await onPro();
    await bob.client.billing.pause();
    expect((await bob.client.billing.pause()).body).toMatchObject({ code: 'subscription_paused' });
  });

  it('refuses changing the price of a paused subscription with subscription_paused', async () => {
    const bob = await onPro();
    await bob.client.billing.pause();
    expect((await bob.client.billing.change({ body: { new_price_id: catalog.pro.yearly } })).body).toMatchObject({ code: 'subscription_paused' });
  });

  it('resumes a paused subscription: 200 active, pausedAt null, and a subscription.updated event', async () => {
    const bob = await onPro();
    await bob.client.billing.pause();
    const resumed = await bob.client.billing.resume();
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', pausedAt: null });
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'subscription.updated']);
  });

  it('refuses resuming a subscription that is running again with subscription_not_resumable', async () => {
    const bob = await onPro();
    await bob.client.billing.pause();
    await bob.client.billing.resume();
    expect((await bob.client.billing.resume()).body).toMatchObject({ code: 'subscription_not_resumable' });
  });
});

describe('cancelling', () => {
  const onPro = () => subscribed(t, shop.id, catalog.pro.monthly);

  it('cancels at the end of the period by default: pending cancellation, still entitled', async () => {
    const bob = await onPro();
    const pending = await bob.client.billing.cancel({ body: {} });
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ status: 'pending_cancellation', cancelAtPeriodEnd: true });
    expect((await bob.client.billing.entitlements()).body).toMatchObject({ plan: 'Pro', status: 'pending_cancellation' });
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated']);
  });

  it('refuses scheduling the cancellation again with cancellation_scheduled', async () => {
    const bob = await onPro();
    await bob.client.billing.cancel({ body: {} });
    expect((await bob.client.billing.cancel({ body: { at_period_end: true } })).body).toMatchObject({ code: 'cancellation_scheduled' });
  });

  it('withdraws a scheduled cancellation on resume', async () => {
    const bob = await onPro();
    await bob.client.billing.cancel({ body: {} });
    expect((await bob.client.billing.resume()).body).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'subscription.updated']);
  });

  it('cancels now with at_period_end false: over at once, no subscription or entitlements left, subscription.canceled', async () => {
    const bob = await onPro();
    const canceled = await bob.client.billing.cancel({ body: { at_period_end: false } });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', canceledAt: expect.any(String), endedAt: expect.any(String) });
    expect((await bob.client.billing.subscription()).body).toBeNull();
    expect((await bob.client.billing.entitlements()).body).toBeNull();
    expect(await billingEventTypes(t, shop.id, bob.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.canceled']);
  });

  it('refuses cancelling an ended subscription with subscription_not_found', async () => {
    const bob = await onPro();
    await bob.client.billing.cancel({ body: { at_period_end: false } });
    expect((await bob.client.billing.cancel({ body: {} })).body).toMatchObject({ code: 'subscription_not_found' });
  });
});
