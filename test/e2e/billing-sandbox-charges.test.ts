import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../contract';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

/**
 * What a user pays on the sandbox processor over HTTP, through the SDK and the sandbox's checkout
 * page, where a path used to give something free or charge twice: a second trial from checkouts
 * opened up front, a pause across a renewal, and a second subscription from two checkouts both paid.
 * (billing-stripe.test.ts checks the same on the Stripe-shaped server.)
 */

let t: TestApp;
let shop: TestProject;
let basic: string;
let pro: string;

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string; detail?: string }): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
  return outcome.value;
};

async function signedIn() {
  const seeded = await t.seedUser(shop.id);
  const session = await t.issueSession(shop.id, seeded);
  return { id: seeded.id, client: createClient({ baseUrl: t.baseUrl, accessToken: session.token }) };
}
type User = Awaited<ReturnType<typeof signedIn>>;

const events = async (userId: string) =>
  ok(await t.inContext(() => t.tollgate.billing.listEvents(shop.id, { limit: 100 })))
    .filter((e) => e.userId === userId)
    .reverse();

async function openCheckout(user: User, priceId: string, trialDays?: number): Promise<string> {
  const started = await user.client.billing.checkout({
    body: { priceId, successUrl: 'https://shop.example.com/done', cancelUrl: 'https://shop.example.com/pricing', ...(trialDays ? { trialDays } : {}) },
  });
  if (started.status !== 200) throw new Error(`checkout: ${started.status} ${JSON.stringify(started.body)}`);
  return started.body.url;
}

async function pay(url: string): Promise<void> {
  const paid = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'card=4242+4242+4242+4242',
    redirect: 'manual',
  });
  expect(paid.status).toBe(303);
}

const advance = (days: number) => t.inContext(() => t.tollgate.billing.advanceSandbox(shop.id, days)).then(ok);

/** The user's live subscription (fails the test when there is none). */
async function subscriptionOf(user: User) {
  const res = await user.client.billing.subscription();
  if (res.status !== 200 || res.body === null) throw new Error(`no subscription: ${res.status}`);
  return res.body;
}

async function invoicesOf(user: User) {
  const res = await user.client.billing.invoices({ query: { limit: 20 } });
  if (res.status !== 200) throw new Error(`invoices: ${res.status}`);
  return res.body.invoices;
}

beforeAll(async () => {
  t = await startTestApp();
  shop = await t.createProject({ callbackUrls: ['https://shop.example.com/done'] });
  await t.inContext(async () => {
    const billing = t.tollgate.billing;
    ok(await billing.connectBilling(shop.id, { processor: 'sandbox' }));
    ok(await billing.createPlan(shop.id, { name: 'Basic', features: 'reports' }));
    basic = ok(await billing.createPrice(shop.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' })).id;
    ok(await billing.createPlan(shop.id, { name: 'Pro', features: 'reports, sso', trialsEnabled: true }));
    pro = ok(await billing.createPrice(shop.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' })).id;
  });
});
afterAll(async () => {
  await t?.close();
});

describe('billing on the sandbox: no free trial twice, no free period, no double charge', () => {
  it('gives one trial per user even with two trial checkouts opened up front: the second starts active and is charged at once', async () => {
    const ann = await signedIn();
    const first = await openCheckout(ann, pro, 14);
    const second = await openCheckout(ann, pro, 14);
    await pay(first);
    expect((await ann.client.billing.subscription()).body).toMatchObject({ status: 'trialing' });
    expect((await ann.client.billing.cancel({ body: { at_period_end: false } })).status).toBe(200);

    await pay(second);
    const sub = await subscriptionOf(ann);
    expect(sub).toMatchObject({ status: 'active', plan: { name: 'Pro' } });
    expect((await ann.client.billing.entitlements()).body).toMatchObject({ plan: 'Pro', status: 'active' });
    const paid = (await invoicesOf(ann)).filter((i) => i.subscriptionId === sub.id && i.amountPaid > 0);
    expect(paid.map((i) => i.amountPaid)).toEqual([3000]);
    expect((await events(ann.id)).filter((e) => e.subscriptionId === sub.id).map((e) => e.type)).toEqual(['subscription.created', 'invoice.paid']);
  });

  it('charges the period a resume lands in when it began while paused (pause a day around the renewal)', async () => {
    const bea = await signedIn();
    const subscribed = await bea.client.billing.subscribe({ body: { priceId: basic, paymentMethodId: 'pm_card_visa' } });
    expect(subscribed.status).toBe(201);
    const startedAt =
      subscribed.status === 201 ? new Date(subscribed.body.currentPeriodEnd).getTime() - new Date(subscribed.body.currentPeriodStart).getTime() : 0;
    // The issue's steps: 29.5 days on, pause, one more day, resume (a 30- or 31-day month: the renewal passes while paused).
    await advance(startedAt / 86_400_000 - 0.5);
    expect((await bea.client.billing.pause()).status).toBe(200);
    await advance(1);
    expect(await invoicesOf(bea)).toHaveLength(1);

    const resumed = await bea.client.billing.resume();
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', pausedAt: null });
    expect((await bea.client.billing.entitlements()).body).toMatchObject({ plan: 'Basic', status: 'active' });
    const invoices = await invoicesOf(bea);
    expect(invoices.map((i) => [i.reason, i.status, i.amountPaid])).toEqual([
      ['subscription_update', 'paid', 1000],
      ['subscription_create', 'paid', 1000],
    ]);
    if (resumed.status === 200) expect(resumed.body.currentPeriodStart).toBe(invoices[0]!.lines[0]!.periodStart);
    expect((await events(bea.id)).map((e) => e.type)).toEqual([
      'subscription.created',
      'invoice.paid',
      'subscription.updated',
      'invoice.paid',
      'subscription.updated',
    ]);
  });

  it('refunds the charge of a second subscription from two checkouts both paid, on the invoice, with invoice.refunded and an audit entry', async () => {
    const cy = await signedIn();
    const first = await openCheckout(cy, basic);
    const second = await openCheckout(cy, basic);
    await pay(first);
    await pay(second);

    const live = await subscriptionOf(cy);
    const subs = ok(await t.inContext(() => t.tollgate.billing.listSubscriptions(shop.id, { userId: cy.id, limit: 10 }))).items;
    expect(subs.map((s) => [s.id === live.id, s.status]).sort()).toEqual([
      [false, 'canceled'],
      [true, 'active'],
    ]);
    const invoices = await invoicesOf(cy);
    expect(invoices.map((i) => [i.subscriptionId === live.id, i.amountPaid, i.amountRefunded]).sort()).toEqual([
      [false, 1000, 1000],
      [true, 1000, 0],
    ]);
    const refunded = invoices.find((i) => i.amountRefunded > 0)!;
    const all = await events(cy.id);
    expect(all.filter((e) => e.subscriptionId === refunded.subscriptionId).map((e) => e.type)).toEqual(['invoice.paid', 'invoice.refunded']);
    expect(all.find((e) => e.type === 'invoice.refunded')!.payload).toMatchObject({
      amount: 1000,
      currency: 'usd',
      data: { id: refunded.id, amountRefunded: 1000 },
    });
    await t.tollgate.core.audit.flush();
    const audit = await t.inContext(() => t.tollgate.core.audit.list({ projectId: shop.id, action: 'billing.refund', limit: 10 }));
    expect(audit).toEqual([
      expect.objectContaining({ userId: cy.id, details: expect.objectContaining({ invoice_id: refunded.id, amount: 1000, reason: 'duplicate' }) }),
    ]);
  });
});
