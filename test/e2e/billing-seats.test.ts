import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok } from '../support/billing';
import { bearerCall } from '../support/bearer-call';

/**
 * Seats over HTTP on the sandbox: per-seat prices sold to organizations; automatic seats following
 * the members (an added seat charged now, prorated; a freed one billed no more from the renewal;
 * one freed and taken again within the period charged once; 20 invitations accepted at once);
 * bought seats (previewed, bought by a member with org:billing:manage, invitations held within them:
 * seats_exhausted); entitlements with seats; events with the quantity; bad quantities.
 */

let t: TestApp;
const CALLBACK = 'https://team.example.com/invited';

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const call = bearerCall(() => t.baseUrl);

interface Shop {
  project: TestProject;
  automatic: string;
  bought: string;
  flat: string;
}

/**
 * A project on the sandbox with a Team plan (automatic seats: 2000 for the first 2 seats, 1000 per
 * further seat, at most 50), a Seats plan (bought seats, same terms) and a flat Business plan.
 */
async function shop(): Promise<Shop> {
  const project = await t.createProject({ callbackUrls: [CALLBACK] });
  const billing = t.tollgate.billing;
  return t.inContext(async () => {
    ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
    ok(await billing.createPlan(project.id, { name: 'Team', features: 'reports', audience: 'organizations' }));
    ok(await billing.createPlan(project.id, { name: 'Seats', features: 'reports', audience: 'organizations', seatMode: 'bought' }));
    ok(await billing.createPlan(project.id, { name: 'Business', features: 'reports', audience: 'organizations' }));
    const seats = { unitAmount: 1000, included: 2, minimum: 1, maximum: 50 };
    const price = (plan: string, amount: number, perSeat: boolean) =>
      billing
        .createPrice(project.id, plan, { name: 'Monthly', amount, currency: 'usd', interval: 'month', ...(perSeat ? { seats } : {}) })
        .then((r) => ok(r).id);
    return { project, automatic: await price('Team', 2000, true), bought: await price('Seats', 2000, true), flat: await price('Business', 9000, false) };
  });
}

let n = 0;
async function person(s: Shop) {
  const user = await t.seedUser(s.project.id, { email: `seat-${++n}-${Date.now()}@acme.example` });
  const session = await t.issueSession(s.project.id, user);
  return { user, token: session.token };
}

/** An organization owned by a new person, with the owner's token for it active. */
async function team(s: Shop) {
  const owner = await person(s);
  const org = await call<{ id: string }>('POST', '/api/proxy/organizations', owner.token, { name: `Acme ${++n}` });
  expect(org.status).toBe(201);
  const active = await call<{ token: string }>('POST', '/api/proxy/organizations/active', owner.token, { organization_id: org.body.id });
  return { id: org.body.id, owner, token: active.body.token };
}

const addMember = async (s: Shop, orgId: string, role = 'member') => {
  const p = await person(s);
  expect((await call('POST', `/api/v1/organizations/${orgId}/members`, s.project.apiKey, { user_id: p.user.id, role })).status).toBe(201);
  return p;
};

interface Sub {
  id: string;
  quantity: number;
  status: string;
}
interface Invoice {
  reason: string;
  amountDue: number;
  subtotal: number;
  lines: Array<{ amount: number; quantity: number | null; proration: boolean; description: string }>;
}

const subscription = (token: string) => call<Sub>('GET', '/api/proxy/billing/subscription?for=organization', token).then((r) => r.body);
const invoices = (token: string) =>
  call<{ invoices: Invoice[] }>('GET', '/api/proxy/billing/invoices?for=organization&limit=100', token).then((r) => r.body.invoices);

/** Waits for the seats job to bring the quantity to `quantity`. */
async function quantityBecomes(token: string, quantity: number): Promise<Sub> {
  const deadline = Date.now() + 20_000;
  let sub = await subscription(token);
  while (sub.quantity !== quantity && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    sub = await subscription(token);
  }
  expect(sub.quantity).toBe(quantity);
  return sub;
}

/** Waits until no seats job is left to run, so a quantity that should not move is seen not to. */
async function settled(): Promise<void> {
  const deadline = Date.now() + 20_000;
  const pending = async () =>
    t.inContext(async () =>
      Number(
        (
          await t.tollgate.core.db.query<{ n: string }>(`select count(*) as n from outbox_messages where topic = 'organization.seats' and status = 'pending'`)
        )[0]?.n ?? 0,
      ),
    );
  while ((await pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(await pending()).toBe(0);
}

const advance = (s: Shop, days: number) => t.inContext(() => t.tollgate.billing.advanceSandbox(s.project.id, days)).then(ok);

describe('per-seat prices', () => {
  it('are shown with their terms and the plan seat policy; a per-seat price on a plan sold only to users is refused', async () => {
    const s = await shop();
    const plans = await call<{ plans: Array<{ name: string; seatPolicy: unknown; prices: Array<{ amount: number; seats: unknown }> }> }>(
      'GET',
      '/api/proxy/billing/plans?for=organization',
      s.project.apiKey,
    );
    expect(plans.body.plans.map((p) => [p.name, p.seatPolicy, p.prices[0]!.amount, p.prices[0]!.seats])).toEqual([
      ['Team', { mode: 'automatic', countInvitations: false, removal: 'period_end' }, 2000, { unitAmount: 1000, included: 2, minimum: 1, maximum: 50 }],
      ['Seats', { mode: 'bought', countInvitations: false, removal: 'period_end' }, 2000, { unitAmount: 1000, included: 2, minimum: 1, maximum: 50 }],
      ['Business', { mode: 'automatic', countInvitations: false, removal: 'period_end' }, 9000, null],
    ]);
    const refused = await t.inContext(async () => {
      const billing = t.tollgate.billing;
      ok(await billing.createPlan(s.project.id, { name: 'Solo' }));
      return [
        await billing.createPrice(s.project.id, 'Solo', { name: 'M', amount: 500, currency: 'usd', interval: 'month', seats: { unitAmount: 100 } }),
        await billing.createPrice(s.project.id, 'Team', { name: 'M', amount: 500, currency: 'usd', interval: 'month', seats: { unitAmount: 0 } }),
        await billing.createPrice(s.project.id, 'Team', {
          name: 'M',
          amount: 500,
          currency: 'usd',
          interval: 'month',
          seats: { unitAmount: 100, minimum: 5, maximum: 2 },
        }),
        await billing.updatePlan(s.project.id, 'Team', { audience: 'users' }),
      ].map((r) => (r.ok ? 'ok' : r.error));
    });
    expect(refused).toEqual(['seats_not_for_users', 'invalid_seat_pricing', 'invalid_seat_pricing', 'seats_not_for_users']);
  });
});

describe('automatic seats', () => {
  it('start at the members; an added member is charged now, prorated; entitlements and events carry the seats', async () => {
    const s = await shop();
    const org = await team(s);
    await addMember(s, org.id);
    const created = await call<Sub>('POST', '/api/proxy/billing/subscribe?for=organization', org.token, {
      priceId: s.automatic,
      paymentMethodId: 'pm_card_visa',
    });
    expect(created).toMatchObject({ status: 201, body: { status: 'active', quantity: 2 } });
    expect((await invoices(org.token)).map((i) => [i.reason, i.amountDue, i.lines.map((l) => l.quantity)])).toEqual([['subscription_create', 2000, [2]]]);
    // A quantity is not chosen on automatic seats.
    const chosen = await call('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 5 });
    expect(chosen).toMatchObject({ status: 409, body: { code: 'seats_managed_automatically' } });

    await advance(s, 15);
    const carol = await addMember(s, org.id);
    await quantityBecomes(org.token, 3);
    const [update] = await invoices(org.token);
    // Half of the month left: 3 seats cost 3000, 2 seats 2000; the remaining time on 3 less the unused time on 2.
    expect(update!.reason).toBe('subscription_update');
    expect(update!.lines.map((l) => [l.proration, l.quantity, Math.sign(l.amount)])).toEqual([
      [true, 2, -1],
      [true, 3, 1],
    ]);
    expect(update!.amountDue).toBe(update!.subtotal);
    expect(update!.amountDue).toBeGreaterThan(400);
    expect(update!.amountDue).toBeLessThan(600);

    const carolToken = (await call<{ token: string }>('POST', '/api/proxy/organizations/active', carol.token, { organization_id: org.id })).body.token;
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', carolToken)).toMatchObject({
      status: 200,
      body: { plan: 'Team', status: 'active', features: ['reports'], seats: { used: 3, total: 3 } },
    });
    const verified = await call<{ entitlements: unknown }>('POST', '/api/v1/token/verify', s.project.apiKey, { token: carolToken, include: ['entitlements'] });
    expect(verified.body.entitlements).toEqual({ plan: 'Team', status: 'active', features: ['reports'], seats: { used: 3, total: 3 } });
    // A user's own entitlements keep their shape.
    expect((await call('GET', '/api/proxy/billing/entitlements', carol.token)).body).toBeNull();

    const events = await t.inContext(async () => ok(await t.tollgate.billing.listEvents(s.project.id, { limit: 50 })));
    const updated = events.find((e) => e.type === 'subscription.updated' && e.subscriptionId === created.body.id);
    expect(updated?.payload).toMatchObject({ organizationId: org.id, userId: null, quantity: 3, data: { quantity: 3 } });
  });

  it('a freed seat is billed no more from the renewal; taken again within the period it is not charged twice', async () => {
    const s = await shop();
    const org = await team(s);
    const bob = await addMember(s, org.id);
    expect(
      (await call('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId: s.automatic, paymentMethodId: 'pm_card_visa' })).status,
    ).toBe(201);
    await advance(s, 10);
    const carol = await addMember(s, org.id);
    await quantityBecomes(org.token, 3);
    const charged = (await invoices(org.token)).length;

    // Carol leaves: the quantity drops for the next renewal, nothing is credited now.
    expect((await call('DELETE', `/api/v1/organizations/${org.id}/members/${carol.user.id}`, s.project.apiKey)).status).toBe(200);
    await quantityBecomes(org.token, 2);
    // Carol comes back within the period: her seat was paid for, nothing is charged again.
    expect((await call('POST', `/api/v1/organizations/${org.id}/members`, s.project.apiKey, { user_id: carol.user.id, role: 'member' })).status).toBe(201);
    await quantityBecomes(org.token, 3);
    expect(await invoices(org.token)).toHaveLength(charged);

    // Bob and Carol leave; the renewal bills 2 seats (the minimum of the base), and nothing was credited.
    for (const who of [bob, carol]) expect((await call('DELETE', `/api/v1/organizations/${org.id}/members/${who.user.id}`, s.project.apiKey)).status).toBe(200);
    await quantityBecomes(org.token, 1);
    await settled();
    expect(await invoices(org.token)).toHaveLength(charged);
    await advance(s, 25);
    const [renewal] = await invoices(org.token);
    expect(renewal).toMatchObject({ reason: 'subscription_cycle', amountDue: 2000 });
    expect(renewal!.lines.map((l) => l.quantity)).toEqual([1]);
  });

  it('20 invitations accepted at once: the quantity equals the members, each seat charged once', async () => {
    const s = await shop();
    const org = await team(s);
    expect(
      (await call('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId: s.automatic, paymentMethodId: 'pm_card_visa' })).status,
    ).toBe(201);
    await advance(s, 15);
    const invitees = await Promise.all(Array.from({ length: 20 }, () => person(s)));
    const ids: string[] = [];
    for (const p of invitees) {
      const invited = await call<{ id: string }>('POST', `/api/proxy/organizations/${org.id}/invitations`, org.token, {
        email: p.user.email,
        role: 'member',
        callback_url: CALLBACK,
      });
      expect(invited.status).toBe(201);
      ids.push(invited.body.id);
    }
    const accepted = await Promise.all(invitees.map((p, i) => call('POST', '/api/proxy/invitations/accept', p.token, { invitation_id: ids[i] })));
    expect(accepted.map((a) => a.status)).toEqual(Array(20).fill(200));
    await quantityBecomes(org.token, 21);
    await settled();
    expect((await subscription(org.token)).quantity).toBe(21);

    // Each change is charged from the quantity the previous one left: the seats charged add up to 20, none twice.
    const updates = (await invoices(org.token)).filter((i) => i.reason === 'subscription_update');
    let seats = 0;
    for (const u of updates) {
      const from = u.lines.find((l) => l.amount < 0)?.quantity ?? 0;
      const to = u.lines.find((l) => l.amount > 0)!.quantity!;
      seats += to - Math.max(from, 2);
    }
    expect(seats).toBe(19);
    // 19 seats beyond the 2 included at 1000 each, for the half month left (each change rounds once).
    const total = updates.reduce((sum, u) => sum + u.amountDue, 0);
    expect(Math.abs(total - 19 * 500)).toBeLessThanOrEqual(19 * 20);
  });
});

describe('a payment being retried', () => {
  it('keeps the seats as they are while past due: members keep their access, nothing moves', async () => {
    const s = await shop();
    const priceId = await t.inContext(async () => {
      const billing = t.tollgate.billing;
      ok(
        await billing.createPlan(s.project.id, {
          name: 'Trial team',
          audience: 'organizations',
          features: 'reports',
          trialsEnabled: true,
          defaultTrialDays: 7,
        }),
      );
      const seats = { unitAmount: 1000, included: 1 };
      return ok(await billing.createPrice(s.project.id, 'Trial team', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month', seats })).id;
    });
    const org = await team(s);
    await addMember(s, org.id);
    // A card that attaches but whose every charge fails: the trial's end leaves the subscription past due.
    const created = await call<Sub>('POST', '/api/proxy/billing/subscribe?for=organization', org.token, {
      priceId,
      paymentMethodId: 'pm_card_chargeCustomerFail',
    });
    expect(created.body).toMatchObject({ status: 'trialing', quantity: 2 });
    await advance(s, 8);
    expect(await subscription(org.token)).toMatchObject({ status: 'past_due', quantity: 2 });
    const carol = await addMember(s, org.id);
    await settled();
    expect(await subscription(org.token)).toMatchObject({ status: 'past_due', quantity: 2 });
    const carolToken = (await call<{ token: string }>('POST', '/api/proxy/organizations/active', carol.token, { organization_id: org.id })).body.token;
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', carolToken)).toMatchObject({
      body: { plan: 'Trial team', status: 'past_due', seats: { used: 3, total: 2 } },
    });
  });
});

describe('a paused subscription', () => {
  it('keeps its seats while paused, and follows the members again once resumed', async () => {
    const s = await shop();
    const org = await team(s);
    await addMember(s, org.id);
    expect(
      (await call('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId: s.automatic, paymentMethodId: 'pm_card_visa' })).status,
    ).toBe(201);
    expect((await call('POST', '/api/proxy/billing/subscription/pause?for=organization', org.token, {})).status).toBe(200);
    await addMember(s, org.id);
    await settled();
    expect(await subscription(org.token)).toMatchObject({ status: 'paused', quantity: 2 });
    expect((await call('POST', '/api/proxy/billing/subscription/resume?for=organization', org.token, {})).status).toBe(200);
    await quantityBecomes(org.token, 3);
  });
});

describe('bought seats', () => {
  it('are bought with a preview by a member with org:billing:manage; invitations are held within them', async () => {
    const s = await shop();
    const org = await team(s);
    const bob = await addMember(s, org.id);
    const bobToken = (await call<{ token: string }>('POST', '/api/proxy/organizations/active', bob.token, { organization_id: org.id })).body.token;
    const subscribe = (quantity: unknown) =>
      call<Sub>('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId: s.bought, paymentMethodId: 'pm_card_visa', quantity });
    expect(await subscribe(1)).toMatchObject({ status: 400, body: { code: 'quantity_below_seats_in_use' } });
    expect(await subscribe(51)).toMatchObject({ status: 400, body: { code: 'quantity_above_maximum' } });
    expect(await subscribe(2.5)).toMatchObject({ status: 400, body: { code: 'invalid_quantity' } });
    expect(await subscribe(3)).toMatchObject({ status: 201, body: { quantity: 3 } });
    expect((await invoices(org.token))[0]).toMatchObject({ amountDue: 3000 });

    // One seat is free: one invitation fits, the next is refused.
    const invite = (email: string) =>
      call('POST', `/api/proxy/organizations/${org.id}/invitations`, org.token, { email, role: 'member', callback_url: CALLBACK });
    expect((await invite(`one-${n}@acme.example`)).status).toBe(201);
    expect(await invite(`two-${n}@acme.example`)).toMatchObject({ status: 409, body: { code: 'seats_exhausted' } });
    expect(
      await call('POST', `/api/v1/organizations/${org.id}/members`, s.project.apiKey, { user_id: (await person(s)).user.id, role: 'member' }),
    ).toMatchObject({
      status: 409,
      body: { code: 'seats_exhausted' },
    });

    await advance(s, 15);
    const preview = await call<{ amountDue: number; lines: Array<{ quantity: number }> }>(
      'POST',
      '/api/proxy/billing/subscription/seats/preview?for=organization',
      bobToken,
      {
        quantity: 5,
      },
    );
    expect(preview.status).toBe(200);
    expect(preview.body.lines.map((l) => l.quantity)).toEqual([3, 5]);
    expect(await call('POST', '/api/proxy/billing/subscription/seats?for=organization', bobToken, { quantity: 5 })).toMatchObject({
      status: 403,
      body: { code: 'missing_permission' },
    });
    for (const [quantity, code] of [
      [-1, 'invalid_quantity'],
      [2.5, 'invalid_quantity'],
      [51, 'quantity_above_maximum'],
      [2, 'quantity_below_seats_in_use'],
      [3, 'same_quantity'],
    ] as const) {
      expect(await call('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity }), String(quantity)).toMatchObject({
        status: 400,
        body: { code },
      });
    }
    expect(await call('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 'five' })).toMatchObject({ status: 400 });
    const bought = await call<Sub>('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 5 });
    expect(bought).toMatchObject({ status: 200, body: { quantity: 5 } });
    const [charge] = await invoices(org.token);
    expect(charge).toMatchObject({ reason: 'subscription_update', amountDue: preview.body.amountDue });
    expect((await invite(`two-${n}@acme.example`)).status).toBe(201);
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', bobToken)).toMatchObject({ body: { seats: { used: 4, total: 5 } } });

    // The project server sets them too; another project's key cannot name the organization.
    expect(await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/seats`, s.project.apiKey, { quantity: 6 })).toMatchObject({
      status: 200,
      body: { quantity: 6 },
    });
    // Each change is in the audit log: the member's as the user, the project server's as its API key.
    await t.tollgate.core.audit.flush();
    const audit = await t.inContext(() => t.tollgate.core.audit.list({ projectId: s.project.id, action: 'billing.seats', limit: 50 }));
    expect(
      audit.map((e) => [e.action, e.actor.kind, e.actor.kind === 'admin' && (e.actor.id ?? '').startsWith('api_key:'), e.details.quantity ?? e.reason]),
    ).toEqual([
      ['billing.seats', 'admin', true, 6],
      ['billing.seats', 'user', false, 5],
      ['billing.seats.failed', 'user', false, 'same_quantity'],
      ['billing.seats.failed', 'user', false, 'quantity_below_seats_in_use'],
      ['billing.seats.failed', 'user', false, 'quantity_above_maximum'],
      ['billing.seats.failed', 'user', false, 'invalid_quantity'],
      ['billing.seats.failed', 'user', false, 'invalid_quantity'],
      ['billing.seats.failed', 'user', false, 'missing_permission'],
    ]);
    const stranger = await shop();
    expect(await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/seats`, stranger.project.apiKey, { quantity: 7 })).toMatchObject({
      status: 404,
      body: { code: 'organization_not_found' },
    });
  });

  it('a flat price has no seats to buy, and a personal subscription none either', async () => {
    const s = await shop();
    const org = await team(s);
    expect(
      (await call('POST', '/api/proxy/billing/subscribe?for=organization', org.token, { priceId: s.flat, paymentMethodId: 'pm_card_visa' })).body,
    ).toMatchObject({
      quantity: 1,
    });
    expect(await call('POST', '/api/proxy/billing/subscription/seats?for=organization', org.token, { quantity: 3 })).toMatchObject({
      status: 400,
      body: { code: 'not_per_seat' },
    });
    expect(await call('POST', '/api/proxy/billing/subscription/seats', org.owner.token, { quantity: 3 })).toMatchObject({
      status: 404,
      body: { code: 'subscription_not_found' },
    });
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', org.token)).toMatchObject({ body: { plan: 'Business' } });
    expect(((await call('GET', '/api/proxy/billing/entitlements?for=organization', org.token)).body as Record<string, unknown>).seats).toBeUndefined();
  });
});
