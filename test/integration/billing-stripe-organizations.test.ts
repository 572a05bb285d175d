import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BillingEvent } from '../../application/billing/billing.store';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok } from '../support/billing';
import { TestClock } from '../support/clock';
import { startFakeStripe, type AccountKeys, type FakeStripe } from '../support/stripe/server';
import { bearerCall } from '../support/bearer-call';

/**
 * Organizations and seats on Stripe, over HTTP: a project connected to the Stripe-shaped server
 * (test/support/stripe) sells team plans; an organization subscribes (the Stripe customer and
 * subscription name the organization, not a user), its members are entitled, Stripe's webhooks
 * reach the organization's record; automatic seats move the subscription item's quantity at Stripe
 * (an added seat invoiced now, prorated; a freed seat with proration_behavior none; a seat taken
 * again within the period not charged twice), also when 20 invitations are accepted at once; bought
 * seats are previewed and bought, and a declined card leaves them as they were.
 *
 * Tollgate's clock is real time (Stripe signs webhooks with the real time); the Stripe account's
 * clock (`fake.advance`) moves the period on, so a change mid-period is prorated at Stripe's time.
 */

const DAY = 86_400;
const HOUR = 3600;
const CALLBACK = 'https://team.example.com/invited';

/** A TestClock that follows real time. */
class RealTimeClock extends TestClock {
  override now(): Date {
    return new Date();
  }
}

let fake: FakeStripe;
let t: TestApp;
/** Delivery attempts already checked by an earlier test. */
let attemptsSeen = 0;

beforeAll(async () => {
  fake = await startFakeStripe();
  // The worker runs: the organization.seats job moves automatic seats.
  t = await startTestApp({ clock: new RealTimeClock(), env: { STRIPE_API_URL: fake.url } });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

afterEach(async () => {
  await fake.webhooks.settled();
  // Every parameter Tollgate sent exists for the pinned API version.
  try {
    fake.assertNoUnexpectedRequests();
  } finally {
    fake.unexpected.length = 0;
  }
  // Every webhook was answered 200.
  const attempts = fake.webhooks.attempts.slice(attemptsSeen);
  attemptsSeen = fake.webhooks.attempts.length;
  expect(attempts.filter((a) => a.status !== 200).map((a) => `${a.type} ${a.status} ${a.error ?? ''}`)).toEqual([]);
});

const call = bearerCall(() => t.baseUrl);

interface Shop {
  project: TestProject;
  keys: AccountKeys;
  stripe: Stripe;
  /** Team: automatic seats, 2000 for the first 2 seats, 1000 per further seat, at most 50. */
  automatic: string;
  /** Seats: bought seats, same terms. */
  bought: string;
  /** Business: a flat 9000 a month, sold to organizations. */
  flat: string;
}

/** A project selling team plans through its own Stripe account, whose webhooks reach Tollgate over HTTP. */
async function shop(): Promise<Shop> {
  const project = await t.createProject({ callbackUrls: [CALLBACK] });
  const keys = fake.createAccount();
  fake.addWebhookEndpoint(keys.id, `${t.baseUrl}/api/webhooks/stripe/${project.id}`);
  const billing = t.tollgate.billing;
  const ids = await t.inContext(async () => {
    ok(await billing.createPlan(project.id, { name: 'Team', features: 'reports', audience: 'organizations' }));
    ok(await billing.createPlan(project.id, { name: 'Seats', features: 'reports', audience: 'organizations', seatMode: 'bought' }));
    ok(await billing.createPlan(project.id, { name: 'Business', features: ['reports', 'sso'], audience: 'organizations' }));
    const seats = { unitAmount: 1000, included: 2, minimum: 1, maximum: 50 };
    const price = (plan: string, amount: number, perSeat: boolean) =>
      billing
        .createPrice(project.id, plan, { name: 'Monthly', amount, currency: 'usd', interval: 'month', ...(perSeat ? { seats } : {}) })
        .then((r) => ok(r).id);
    const prices = { automatic: await price('Team', 2000, true), bought: await price('Seats', 2000, true), flat: await price('Business', 9000, false) };
    ok(
      await billing.connectBilling(project.id, {
        processor: 'stripe',
        secretKey: keys.secretKey,
        publishableKey: keys.publishableKey,
        webhookSecret: keys.webhookSecret,
      }),
    );
    return prices;
  });
  await fake.webhooks.settled();
  const stripe = new Stripe(keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
  return { project, keys, stripe, ...ids };
}

let n = 0;
async function person(s: Shop) {
  const user = await t.seedUser(s.project.id, { email: `stripe-seat-${++n}-${Date.now()}@acme.example` });
  const session = await t.issueSession(s.project.id, user);
  return { user, token: session.token };
}

/** A token whose active organization is `orgId`. */
const activeIn = async (token: string, orgId: string) =>
  (await call<{ token: string }>('POST', '/api/proxy/organizations/active', token, { organization_id: orgId })).body.token;

/** An organization owned by a new person, with the owner's token for it active. */
async function team(s: Shop) {
  const owner = await person(s);
  const org = await call<{ id: string }>('POST', '/api/proxy/organizations', owner.token, { name: `Acme ${++n}` });
  expect(org.status).toBe(201);
  return { id: org.body.id, owner, token: await activeIn(owner.token, org.body.id) };
}
type Team = Awaited<ReturnType<typeof team>>;

const addMember = async (s: Shop, orgId: string) => {
  const p = await person(s);
  expect((await call('POST', `/api/v1/organizations/${orgId}/members`, s.project.apiKey, { user_id: p.user.id, role: 'member' })).status).toBe(201);
  return p;
};
const removeMember = async (s: Shop, orgId: string, userId: string) =>
  expect((await call('DELETE', `/api/v1/organizations/${orgId}/members/${userId}`, s.project.apiKey)).status).toBe(200);

interface Sub {
  id: string;
  quantity: number;
  status: string;
  cancelAtPeriodEnd: boolean;
  currentPeriodEnd: string;
}
interface Invoice {
  reason: string;
  status: string;
  amountDue: number;
  amountPaid: number;
  lines: Array<{ amount: number; quantity: number | null; proration: boolean }>;
}

const subscribe = (org: Team, priceId: string, extra: Record<string, unknown> = {}) =>
  call<Sub>('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId, paymentMethodId: 'pm_card_visa', ...extra });
const subscription = (token: string) => call<Sub>('GET', '/api/proxy/billing/subscription?for=organization', token).then((r) => r.body);
const invoices = (token: string) =>
  call<{ invoices: Invoice[] }>('GET', '/api/proxy/billing/invoices?for=organization&limit=100', token).then((r) => r.body.invoices);

/** The Stripe subscription of a Tollgate subscription (its metadata names Tollgate's id). */
function stripeSubscription(s: Shop, subscriptionId: string): Stripe.Subscription {
  const found = fake.list<Stripe.Subscription>(s.keys.id, 'subscription').find((x) => x.metadata.tollgate_subscription_id === subscriptionId);
  if (!found) throw new Error(`no Stripe subscription for ${subscriptionId}`);
  return found;
}
/** The subscription item's quantity at Stripe. */
const quantityAtStripe = (s: Shop, subscriptionId: string) => stripeSubscription(s, subscriptionId).items.data[0]!.quantity;
/** A Stripe subscription's invoices (not drafts), oldest first (Stripe lists the newest first). */
const stripeInvoices = (s: Shop, stripeSubscriptionId: string) =>
  fake
    .list<Stripe.Invoice>(s.keys.id, 'invoice')
    .filter((i) => i.parent?.subscription_details?.subscription === stripeSubscriptionId && i.status !== 'draft')
    .reverse();
/** The quantity updates Tollgate sent for a Stripe subscription: [quantity, proration_behavior]. */
const quantityUpdates = (s: Shop, stripeSubscriptionId: string) =>
  fake.requests
    .filter((r) => r.account === s.keys.id && r.method === 'POST' && r.path === `/v1/subscriptions/${stripeSubscriptionId}` && r.status === 200 && !r.replayed)
    .map((r) => r.params as { items?: Array<{ quantity?: string }>; proration_behavior?: string })
    .filter((p) => p.items?.[0]?.quantity !== undefined)
    .map((p) => [Number(p.items![0]!.quantity), p.proration_behavior]);

/** Waits for the seats job to bring Tollgate's record, and so Stripe's item, to `quantity`. */
async function quantityBecomes(s: Shop, token: string, quantity: number): Promise<Sub> {
  const deadline = Date.now() + 15_000;
  let sub = await subscription(token);
  while (sub.quantity !== quantity && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    sub = await subscription(token);
  }
  expect(sub.quantity).toBe(quantity);
  expect(quantityAtStripe(s, sub.id)).toBe(quantity);
  return sub;
}

/** Waits until no seats job is left to run, so a quantity that should not move is seen not to. */
async function seatJobsDone(): Promise<void> {
  const deadline = Date.now() + 15_000;
  const pending = async () =>
    t.inContext(async () =>
      Number(
        (
          await t.tollgate.core.db.query<{ n: string }>(`select count(*) as n from outbox_messages where topic = 'organization.seats' and status = 'pending'`)
        )[0]?.n ?? 0,
      ),
    );
  while ((await pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(await pending()).toBe(0);
}

/** The project's events about an organization, oldest first. */
async function eventsOf(s: Shop, organizationId: string): Promise<BillingEvent[]> {
  const all = await t.inContext(async () => ok(await t.tollgate.billing.listEvents(s.project.id, { limit: 500 })));
  return all.filter((e) => e.organizationId === organizationId && !e.type.startsWith('organization.')).reverse();
}

describe('an organization subscribed on Stripe', () => {
  it('is the Stripe customer and subscription (organizationId, no userId); members are entitled; webhooks reach its record', async () => {
    const s = await shop();
    const org = await team(s);
    const member = await addMember(s, org.id);

    const created = await subscribe(org, s.flat);
    expect(created).toMatchObject({ status: 201, body: { status: 'active', quantity: 1 } });
    await fake.webhooks.settled();

    const stripeSub = stripeSubscription(s, created.body.id);
    expect(stripeSub.metadata).toMatchObject({
      tollgate_project_id: s.project.id,
      tollgate_organization_id: org.id,
      tollgate_subscription_id: created.body.id,
    });
    expect(stripeSub.metadata).not.toHaveProperty('tollgate_user_id');
    const customer = fake.get<Stripe.Customer>(s.keys.id, stripeSub.customer as string)!;
    expect(customer.metadata).toEqual({ tollgate_project_id: s.project.id, tollgate_organization_id: org.id });
    expect(fake.list<Stripe.Customer>(s.keys.id, 'customer')).toHaveLength(1);
    expect(stripeInvoices(s, stripeSub.id).map((i) => [i.billing_reason, i.amount_paid])).toEqual([['subscription_create', 9000]]);

    // A member, acting for the organization, is entitled; for themself they are not.
    const memberToken = await activeIn(member.token, org.id);
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', memberToken)).toMatchObject({
      status: 200,
      body: { plan: 'Business', status: 'active', features: ['reports', 'sso'] },
    });
    expect((await call('GET', '/api/proxy/billing/entitlements', member.token)).body).toBeNull();
    // A member without org:billing:manage cannot change it.
    expect(await call('POST', '/api/proxy/billing/subscription/cancel?for=organization', memberToken, { at_period_end: true })).toMatchObject({
      status: 403,
    });

    // A renewal at Stripe (invoice.paid) and a cancellation made in Stripe's dashboard
    // (customer.subscription.updated) reach the organization's record.
    fake.advance(s.keys.id, 31 * DAY + 2 * HOUR);
    await fake.webhooks.settled();
    await s.stripe.subscriptions.update(stripeSub.id, { cancel_at_period_end: true });
    await fake.webhooks.settled();

    const renewed = stripeSubscription(s, created.body.id);
    const record = await subscription(memberToken);
    expect(record).toMatchObject({ id: created.body.id, status: 'pending_cancellation', cancelAtPeriodEnd: true });
    expect(new Date(record.currentPeriodEnd).getTime()).toBe(renewed.items.data[0]!.current_period_end * 1000);
    expect((await invoices(memberToken)).map((i) => [i.reason, i.status, i.amountPaid])).toEqual([
      ['subscription_cycle', 'paid', 9000],
      ['subscription_create', 'paid', 9000],
    ]);
    const server = await call<{ cancelAtPeriodEnd: boolean }>('GET', `/api/v1/organizations/${org.id}/billing/subscription`, s.project.apiKey);
    expect(server).toMatchObject({ status: 200, body: { id: created.body.id, cancelAtPeriodEnd: true } });

    const events = await eventsOf(s, org.id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'invoice.paid', 'invoice.paid', 'subscription.updated']);
    for (const e of events) {
      expect(e).toMatchObject({ organizationId: org.id, userId: null, subscriptionId: created.body.id });
      expect(e.payload).toMatchObject({ organizationId: org.id, userId: null });
    }
    expect(events.filter((e) => e.type === 'invoice.paid').map((e) => e.payload.amount)).toEqual([9000, 9000]);
    // No billing event was recorded for the owner or the member as users.
    const all = await t.inContext(async () => ok(await t.tollgate.billing.listEvents(s.project.id, { limit: 500 })));
    expect(all.filter((e) => !e.type.startsWith('organization.') && e.userId !== null)).toEqual([]);
  });
});

describe('automatic seats on Stripe', () => {
  it('follow the members: an added seat invoiced now, prorated; a freed one with no proration; taken again, not charged twice', async () => {
    const s = await shop();
    const org = await team(s);
    await addMember(s, org.id);
    const created = await subscribe(org, s.automatic);
    expect(created).toMatchObject({ status: 201, body: { status: 'active', quantity: 2 } });
    const stripeId = stripeSubscription(s, created.body.id).id;
    expect(quantityAtStripe(s, created.body.id)).toBe(2);
    expect(stripeInvoices(s, stripeId).map((i) => [i.billing_reason, i.amount_paid])).toEqual([['subscription_create', 2000]]);

    // Half of the month on: a member joins, the third seat is invoiced now for the half month left.
    fake.advance(s.keys.id, 15 * DAY);
    const carol = await addMember(s, org.id);
    await quantityBecomes(s, org.token, 3);
    const [, update] = stripeInvoices(s, stripeId);
    expect(update).toMatchObject({ billing_reason: 'subscription_update', status: 'paid' });
    expect(update!.lines.data.map((l) => [l.quantity, Math.sign(l.amount)])).toEqual([
      [2, -1],
      [3, 1],
    ]);
    expect(update!.amount_paid).toBeGreaterThan(400);
    expect(update!.amount_paid).toBeLessThan(600);
    const [latest] = await invoices(org.token);
    expect(latest).toMatchObject({ reason: 'subscription_update', status: 'paid', amountPaid: update!.amount_paid });
    expect(latest!.lines.map((l) => [l.proration, l.quantity])).toEqual([
      [true, 2],
      [true, 3],
    ]);
    const carolToken = await activeIn(carol.token, org.id);
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', carolToken)).toMatchObject({
      status: 200,
      body: { plan: 'Team', status: 'active', seats: { used: 3, total: 3 } },
    });

    // Carol leaves: 2 seats from the renewal on, nothing invoiced or credited now.
    await removeMember(s, org.id, carol.user.id);
    await quantityBecomes(s, org.token, 2);
    // She comes back within the period: her seat is paid for, nothing is invoiced again.
    expect((await call('POST', `/api/v1/organizations/${org.id}/members`, s.project.apiKey, { user_id: carol.user.id, role: 'member' })).status).toBe(201);
    await quantityBecomes(s, org.token, 3);
    await seatJobsDone();
    await fake.webhooks.settled();
    expect(quantityUpdates(s, stripeId)).toEqual([
      [3, 'always_invoice'],
      [2, 'none'],
      [3, 'none'],
    ]);
    expect(stripeInvoices(s, stripeId)).toHaveLength(2);
    expect(fake.list<Stripe.InvoiceItem>(s.keys.id, 'invoiceitem').filter((i) => i.invoice === null)).toEqual([]);
    expect(await invoices(org.token)).toHaveLength(2);

    // The organization's events carry the quantity, organizationId and no user.
    const updates = (await eventsOf(s, org.id)).filter((e) => e.type === 'subscription.updated');
    expect(updates.map((e) => e.payload.quantity)).toEqual([3, 2, 3]);
    expect(updates.every((e) => e.userId === null && e.payload.organizationId === org.id)).toBe(true);
  });

  it('20 invitations accepted at once: the item quantity equals the members, the prorated invoices add up to each seat once', async () => {
    const s = await shop();
    const org = await team(s);
    const created = await subscribe(org, s.automatic);
    expect(created).toMatchObject({ status: 201, body: { quantity: 1 } });
    const stripeId = stripeSubscription(s, created.body.id).id;
    fake.advance(s.keys.id, 15 * DAY);

    const invitees = await Promise.all(Array.from({ length: 20 }, () => person(s)));
    const ids = await Promise.all(
      invitees.map(async (p) => {
        const invited = await call<{ id: string }>('POST', `/api/proxy/organizations/${org.id}/invitations`, org.token, {
          email: p.user.email,
          role: 'member',
          callback_url: CALLBACK,
        });
        expect(invited.status).toBe(201);
        return invited.body.id;
      }),
    );
    // Invitations are not counted on this plan: nothing moved yet.
    await seatJobsDone();
    expect(quantityAtStripe(s, created.body.id)).toBe(1);

    const accepted = await Promise.all(invitees.map((p, i) => call('POST', '/api/proxy/invitations/accept', p.token, { invitation_id: ids[i] })));
    expect(accepted.map((a) => a.status)).toEqual(Array(20).fill(200));
    await quantityBecomes(s, org.token, 21);
    await seatJobsDone();
    await fake.webhooks.settled();
    expect(quantityAtStripe(s, created.body.id)).toBe(21);
    const members = await call<{ members: unknown[] }>('GET', `/api/v1/organizations/${org.id}/members`, s.project.apiKey);
    expect(members.body.members).toHaveLength(21);

    // Stripe's prorated invoices chain: each goes from the quantity the previous one left, from 1 to 21.
    const updates = stripeInvoices(s, stripeId).filter((i) => i.billing_reason === 'subscription_update');
    expect(updates.length).toBeGreaterThan(0);
    let quantity = 1;
    let seats = 0;
    for (const u of updates) {
      expect(u.status).toBe('paid');
      const lines = u.lines.data;
      expect(lines).toHaveLength(2);
      const [from, to] = [lines.find((l) => l.amount < 0 || l.description?.startsWith('Unused')), lines.find((l) => l.amount > 0)];
      expect(from?.quantity).toBe(quantity);
      quantity = to!.quantity!;
      seats += quantity - Math.max(from!.quantity!, 2);
    }
    expect(quantity).toBe(21);
    // The 19 seats beyond the 2 included, 1000 each for the half month left (each invoice rounds once).
    expect(seats).toBe(19);
    const total = updates.reduce((sum, u) => sum + u.amount_paid, 0);
    expect(Math.abs(total - 19 * 500)).toBeLessThanOrEqual(19 * 20);
    // Tollgate's record of them is Stripe's.
    const recorded = (await invoices(org.token)).filter((i) => i.reason === 'subscription_update');
    expect(recorded.map((i) => i.amountPaid).sort((a, b) => a - b)).toEqual(updates.map((u) => u.amount_paid).sort((a, b) => a - b));
    // Only quantity increases were sent, each prorated.
    expect(quantityUpdates(s, stripeId).every(([, behaviour]) => behaviour === 'always_invoice')).toBe(true);
  });
});

describe('bought seats on Stripe', () => {
  it('are previewed and bought (invoiced now, prorated); a declined card answers 402 card_declined and leaves the quantity', async () => {
    const s = await shop();
    const org = await team(s);
    await addMember(s, org.id);
    const created = await subscribe(org, s.bought, { quantity: 3 });
    expect(created).toMatchObject({ status: 201, body: { quantity: 3 } });
    const stripeSub = stripeSubscription(s, created.body.id);
    expect(stripeSub.items.data[0]!.quantity).toBe(3);
    expect(stripeInvoices(s, stripeSub.id).map((i) => i.amount_paid)).toEqual([3000]);

    fake.advance(s.keys.id, 15 * DAY);
    const preview = await call<{ amountDue: number; lines: Array<{ quantity: number; amount: number }> }>(
      'POST',
      '/api/proxy/billing/subscription/seats/preview?for=organization',
      org.token,
      { quantity: 5 },
    );
    expect(preview.status).toBe(200);
    expect(preview.body.lines.map((l) => [l.quantity, Math.sign(l.amount)])).toEqual([
      [3, -1],
      [5, 1],
    ]);
    // Two more seats for half the month: about 1000.
    expect(preview.body.amountDue).toBeGreaterThan(900);
    expect(preview.body.amountDue).toBeLessThan(1100);
    expect(quantityAtStripe(s, created.body.id)).toBe(3);

    const bought = await call<Sub>('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 5 });
    expect(bought).toMatchObject({ status: 200, body: { quantity: 5 } });
    expect(quantityAtStripe(s, created.body.id)).toBe(5);
    const [, charge] = stripeInvoices(s, stripeSub.id);
    expect(charge).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', amount_paid: preview.body.amountDue });
    expect(quantityUpdates(s, stripeSub.id)).toEqual([[5, 'always_invoice']]);
    await fake.webhooks.settled();
    expect((await invoices(org.token))[0]).toMatchObject({ reason: 'subscription_update', amountPaid: preview.body.amountDue });

    // The card on file is now one whose every charge fails.
    const card = await s.stripe.paymentMethods.attach('pm_card_chargeCustomerFail', { customer: stripeSub.customer as string });
    await s.stripe.subscriptions.update(stripeSub.id, { default_payment_method: card.id });
    await fake.webhooks.settled();
    const paidBefore = stripeInvoices(s, stripeSub.id).filter((i) => i.status === 'paid').length;
    const declined = await call('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 7 });
    expect(declined).toMatchObject({ status: 402, body: { code: 'card_declined' } });
    const byServer = await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/seats`, s.project.apiKey, { quantity: 6 });
    expect(byServer).toMatchObject({ status: 402, body: { code: 'card_declined' } });
    await fake.webhooks.settled();
    expect(quantityAtStripe(s, created.body.id)).toBe(5);
    expect(stripeSubscription(s, created.body.id).status).toBe('active');
    expect(stripeInvoices(s, stripeSub.id).filter((i) => i.status === 'paid')).toHaveLength(paidBefore);
    expect(await subscription(org.token)).toMatchObject({ status: 'active', quantity: 5 });
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', org.token)).toMatchObject({
      body: { plan: 'Seats', status: 'active', seats: { used: 2, total: 5 } },
    });
  });
});
