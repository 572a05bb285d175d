import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amountForSeats, createTollgate, type Tollgate } from '../../packages/sdk/src';
import { createBrowserClient, type BrowserClient, type BrowserSession, type MfaChallenge } from '../../packages/sdk/src/browser';
import { startTestApp, type TestApp } from '../support/app';

/**
 * Seats through the SDKs, against a real Tollgate (sandbox processor) through the session routes
 * of a real project server (Express); nothing of HTTP is replaced.
 *
 * Browser client: the catalog's per-seat terms and seat policy, a team subscribed to bought seats
 * with a quantity (`subscribeWith({ quantity, for })`), `previewSeats` and `setSeats` with `{ for:
 * 'organization' }` (the preview is what the change then charges; a member without
 * org:billing:manage is refused), the cached entitlements' `seats` read again after the change; on
 * automatic seats a quantity is refused (`seats_managed_automatically`) and the seats follow the
 * members. Server SDK: `organizationBilling.setSeats(orgId, quantity)` with the API key, and its refusals.
 */

const CALLBACK = 'http://127.0.0.1:5173/callback';

let t: TestApp;
let tollgate: Tollgate;
let server: Server;
let base: string;
let apiKey: string;
let prices: { bought: string; automatic: string; flat: string };

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.createProject({ callbackUrls: [CALLBACK] });
  apiKey = created.apiKey;
  const billing = t.tollgate.billing;
  await t.inContext(async () => {
    ok(await billing.connectBilling(created.id, { processor: 'sandbox' }));
    // Seats: bought by an admin. Team: automatic, invitations counted. Business: a flat price.
    ok(await billing.createPlan(created.id, { name: 'Seats', features: 'reports', audience: 'organizations', seatMode: 'bought' }));
    ok(await billing.createPlan(created.id, { name: 'Team', features: 'reports, sso', audience: 'organizations', seatCountInvitations: true }));
    ok(await billing.createPlan(created.id, { name: 'Business', features: 'reports', audience: 'organizations' }));
    const seats = { unitAmount: 800, included: 3, minimum: 1, maximum: 20 };
    const price = async (plan: string, perSeat: boolean) =>
      ok(await billing.createPrice(created.id, plan, { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month', ...(perSeat ? { seats } : {}) })).id;
    prices = { bought: await price('Seats', true), automatic: await price('Team', true), flat: await price('Business', false) };
  });
  tollgate = createTollgate({ baseUrl: t.baseUrl, apiKey: created.apiKey });
  const app = express();
  app.use('/tollgate', tollgate.sessionRoutes({ callbackUrl: CALLBACK }).express);
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
});

/** A page's browser client: its own cookie jar (the refresh cookie), no timers, no other tabs. */
function page(): BrowserClient {
  const jar = new Map<string, string>();
  const fetchWithCookies: typeof fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(input, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/Max-Age=0\b/.test(line)) jar.delete(name!);
      else jar.set(name!, value.join('='));
    }
    return res;
  };
  return createBrowserClient({ baseUrl: `${base}/tollgate`, fetch: fetchWithCookies, channel: null, locks: null, autoRefresh: false, watchVisibility: false });
}

const session = (answer: BrowserSession | MfaChallenge): BrowserSession => {
  if ('mfa_required' in answer) throw new Error('expected a session, got an MFA challenge');
  return answer;
};

async function signedUp(name: string): Promise<{ client: BrowserClient; id: string }> {
  const client = page();
  await client.start();
  const { user } = session(
    await client.signUp({ email: `${name.toLowerCase().replace(/[^a-z0-9-]/g, '-')}+${crypto.randomUUID()}@example.com`, password: 'correct horse 1', name }),
  );
  return { client, id: user.id };
}

/** An organization made by a new user, active in their client; `member` joins it (added by the project server) and makes it active too. */
async function team(name: string) {
  const owner = await signedUp(`${name}-owner`);
  const org = await owner.client.organizations.create({ name });
  await owner.client.organizations.setActive(org.id);
  const member = await signedUp(`${name}-member`);
  const added = await fetch(`${t.baseUrl}/api/v1/organizations/${org.id}/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: member.id, role: 'member' }),
  });
  expect(added.status).toBe(201);
  await member.client.organizations.setActive(org.id);
  return { org, owner: owner.client, member: member.client };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

describe('seats through the SDKs', () => {
  const clients: BrowserClient[] = [];
  afterAll(() => {
    for (const c of clients) c.destroy();
  });

  it('the catalog carries per-seat terms and the seat policy; amountForSeats prices a quantity as Tollgate does', async () => {
    const { client } = await signedUp('Reader');
    clients.push(client);
    const plans = await client.plans({ for: 'organization' });
    expect(plans.map((p) => [p.name, p.seatPolicy.mode, p.seatPolicy.countInvitations, p.prices[0]!.seats])).toEqual([
      ['Seats', 'bought', false, { unitAmount: 800, included: 3, minimum: 1, maximum: 20 }],
      ['Team', 'automatic', true, { unitAmount: 800, included: 3, minimum: 1, maximum: 20 }],
      ['Business', 'automatic', false, null],
    ]);
    const perSeat = plans[0]!.prices[0]!;
    expect([1, 3, 4, 10].map((q) => amountForSeats(perSeat, q))).toEqual([2000, 2000, 2800, 7600]);
    expect(amountForSeats(plans[2]!.prices[0]!, 10)).toBe(2000);
  });

  it('bought seats: subscribed with a quantity, previewed and set by an admin; the cached entitlements follow; a member is refused', async () => {
    const { org, owner, member } = await team('Bought Co');
    clients.push(owner, member);

    // A quantity below the seats in use (2 members) is refused; 4 seats are bought.
    await expect(owner.subscribeWith({ priceId: prices.bought, paymentMethodId: 'pm_card_visa', quantity: 1, for: 'organization' })).rejects.toMatchObject({
      name: 'TollgateError',
      code: 'quantity_below_seats_in_use',
      status: 400,
    });
    const subscribed = await owner.subscribeWith({ priceId: prices.bought, paymentMethodId: 'pm_card_visa', quantity: 4, for: 'organization' });
    expect(subscribed).toMatchObject({ status: 'active', quantity: 4, plan: { name: 'Seats' } });
    expect(owner.entitlements).toMatchObject({ plan: 'Seats', seats: { used: 2, total: 4 } });
    const [first] = await owner.invoices({ for: 'organization' });
    expect(first).toMatchObject({ amountDue: 2800 });
    expect(first!.lines.map((l) => l.quantity)).toEqual([4]);

    // The preview of 6 seats (2 more, the whole period left: 1600) is what setting them charges.
    const preview = await owner.previewSeats(6, { for: 'organization' });
    expect(preview.lines.map((l) => l.quantity)).toEqual([4, 6]);
    expect(preview.amountDue).toBe(1600);
    // A member reads the preview but cannot buy.
    expect((await member.previewSeats(6, { for: 'organization' })).amountDue).toBe(1600);
    await expect(member.setSeats(6, { for: 'organization' })).rejects.toMatchObject({ code: 'missing_permission', status: 403 });
    expect(member.has({ permission: 'org:billing:manage' })).toBe(false);

    const changed = await owner.setSeats(6, { for: 'organization' });
    expect(changed).toMatchObject({ quantity: 6, plan: { name: 'Seats' } });
    // setSeats reads the entitlements again: used of the new total.
    expect(owner.entitlements?.seats).toEqual({ used: 2, total: 6 });
    expect(owner.getState().billing.organizationId).toBe(org.id);
    const [charge] = await owner.invoices({ for: 'organization' });
    expect(charge).toMatchObject({ reason: 'subscription_update', amountDue: preview.amountDue });
    expect(charge!.lines.filter((l) => l.proration).map((l) => l.quantity)).toEqual([4, 6]);
    // Other members read the new seats the next time they read the entitlements.
    await member.refreshEntitlements();
    expect(member.entitlements?.seats).toEqual({ used: 2, total: 6 });

    // Below the seats in use, the same quantity, and without { for: 'organization' } (a user has no seats): refused.
    await expect(owner.setSeats(1, { for: 'organization' })).rejects.toMatchObject({ code: 'quantity_below_seats_in_use', status: 400 });
    await expect(owner.setSeats(6, { for: 'organization' })).rejects.toMatchObject({ code: 'same_quantity', status: 400 });
    await expect(owner.previewSeats(7)).rejects.toMatchObject({ code: 'subscription_not_found', status: 404 });

    // The project's server sets them with the API key, by the organization's id.
    const server = await tollgate.organizationBilling.setSeats(org.id, 8);
    expect(server).toMatchObject({ quantity: 8, plan: { name: 'Seats' } });
    expect(await tollgate.organizationBilling.entitlements(org.id)).toMatchObject({ plan: 'Seats', seats: { used: 2, total: 8 } });
    await expect(tollgate.organizationBilling.setSeats(org.id, 21)).rejects.toMatchObject({
      name: 'TollgateError',
      code: 'quantity_above_maximum',
      status: 400,
    });
    await expect(tollgate.organizationBilling.setSeats('org_missing', 3)).rejects.toMatchObject({ code: 'organization_not_found', status: 404 });
  });

  it('automatic seats: no quantity is chosen; the seats follow the members and the invitations the plan counts', async () => {
    const { org, owner, member } = await team('Automatic Co');
    clients.push(owner, member);
    await expect(owner.subscribeWith({ priceId: prices.automatic, paymentMethodId: 'pm_card_visa', quantity: 5, for: 'organization' })).rejects.toMatchObject({
      code: 'seats_managed_automatically',
      status: 409,
    });
    const subscribed = await owner.subscribeWith({ priceId: prices.automatic, paymentMethodId: 'pm_card_visa', for: 'organization' });
    expect(subscribed).toMatchObject({ quantity: 2 });
    expect(owner.entitlements?.seats).toEqual({ used: 2, total: 2 });
    await expect(owner.setSeats(5, { for: 'organization' })).rejects.toMatchObject({ code: 'seats_managed_automatically', status: 409 });
    await expect(tollgate.organizationBilling.setSeats(org.id, 5)).rejects.toMatchObject({ code: 'seats_managed_automatically', status: 409 });

    // Two invitations (counted by the plan): 4 seats held, past the 3 included; the added seat is charged now.
    for (const email of ['carol', 'dan']) await owner.organizations.invite(org.id, { email: `${email}+${crypto.randomUUID()}@example.com`, role: 'member' });
    const moved = await until(
      () => owner.subscription({ for: 'organization' }),
      (s) => s?.quantity === 4,
    );
    expect(moved?.quantity).toBe(4);
    await owner.refreshEntitlements();
    expect(owner.entitlements?.seats).toEqual({ used: 4, total: 4 });
    const invoices = await until(
      () => owner.invoices({ for: 'organization' }),
      (list) => list.some((i) => i.amountDue === 800),
    );
    const charge = invoices.find((i) => i.amountDue === 800);
    expect(charge).toMatchObject({ reason: 'subscription_update', amountDue: 800 });
    expect(charge!.lines.filter((l) => l.proration && l.amount > 0).map((l) => l.quantity)).toEqual([4]);
  });

  it('a flat price has no seats to set', async () => {
    const { org, owner } = await team('Flat Co');
    clients.push(owner);
    const subscribed = await owner.subscribeWith({ priceId: prices.flat, paymentMethodId: 'pm_card_visa', for: 'organization' });
    expect(subscribed.quantity).toBe(1);
    expect(owner.entitlements).toMatchObject({ plan: 'Business' });
    expect(owner.entitlements?.seats ?? null).toBeNull();
    await expect(owner.previewSeats(3, { for: 'organization' })).rejects.toMatchObject({ code: 'not_per_seat', status: 400 });
    await expect(tollgate.organizationBilling.setSeats(org.id, 3)).rejects.toMatchObject({ code: 'not_per_seat', status: 400 });
  });
});
