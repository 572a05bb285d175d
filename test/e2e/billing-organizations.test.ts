import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { ok } from '../support/billing';
import { bearerCall } from '../support/bearer-call';

/**
 * Organizations as customers, over HTTP on the sandbox: plans sold to users, organizations or
 * both; a team subscribing with `?for=organization` for the token's active organization; who may
 * read and who may change it; members entitled to the team's plan (GET billing/entitlements and
 * token verification with include entitlements); a personal plan beside it; the project server's
 * routes; the events; an organization deleted with a live subscription.
 */

let t: TestApp;
let shop: TestProject;
let other: TestProject;
const plans = { personal: '', team: '', enterprise: '', personalMonthly: '', teamMonthly: '', teamYearly: '', enterpriseMonthly: '' };

beforeAll(async () => {
  t = await startTestApp();
  shop = await t.createProject({ callbackUrls: ['https://shop.example.com/billing/done'] });
  other = await t.createProject();
  const billing = t.tollgate.billing;
  await t.inContext(async () => {
    ok(await billing.connectBilling(shop.id, { processor: 'sandbox' }));
    plans.personal = ok(await billing.createPlan(shop.id, { name: 'Personal', features: 'reports' })).id;
    plans.team = ok(await billing.createPlan(shop.id, { name: 'Team', features: 'reports, sso', audience: 'organizations' })).id;
    plans.enterprise = ok(await billing.createPlan(shop.id, { name: 'Enterprise', features: 'reports, sso, audit', audience: 'both' })).id;
    const price = (plan: string, name: string, amount: number, interval: 'month' | 'year' = 'month') =>
      billing.createPrice(shop.id, plan, { name, amount, currency: 'usd', interval }).then((r) => ok(r).id);
    plans.personalMonthly = await price('Personal', 'Monthly', 900);
    plans.teamMonthly = await price('Team', 'Monthly', 5000);
    plans.teamYearly = await price('Team', 'Yearly', 50000, 'year');
    plans.enterpriseMonthly = await price('Enterprise', 'Monthly', 20000);
  });
});
afterAll(async () => {
  await t?.close();
});

const call = bearerCall(() => t.baseUrl);

let n = 0;
async function person(p: TestProject = shop) {
  const user = await t.seedUser(p.id, { email: `team-${++n}-${Date.now()}@acme.example` });
  const s = await t.issueSession(p.id, user);
  return { user, token: s.token };
}

/** An organization owned by `owner`, with `others` added as members of the given roles. */
async function team(owner: { token: string }, others: Array<{ user: { id: string }; role: string }> = [], p: TestProject = shop) {
  const org = await call<{ id: string; slug: string }>('POST', '/api/proxy/organizations', owner.token, { name: `Acme ${++n}` });
  expect(org.status).toBe(201);
  for (const m of others) {
    const added = await call('POST', `/api/v1/organizations/${org.body.id}/members`, p.apiKey, { user_id: m.user.id, role: m.role });
    expect(added.status).toBe(201);
  }
  return org.body;
}

/** The member's access token with `orgId` active. */
async function activeIn(member: { token: string }, orgId: string): Promise<string> {
  const r = await call<{ token: string }>('POST', '/api/proxy/organizations/active', member.token, { organization_id: orgId });
  expect(r.status).toBe(200);
  return r.body.token;
}

const subscribe = (token: string, priceId: string, forOrg = true) =>
  call<{ id: string; status: string; plan: { name: string } }>('POST', `/api/proxy/billing/subscribe${forOrg ? '?for=organization' : ''}`, token, {
    priceId,
    paymentMethodId: 'pm_card_visa',
  });

const eventsOf = (subscriptionId: string) =>
  t.inContext(async () => ok(await t.tollgate.billing.listEvents(shop.id, { limit: 200 })).filter((e) => e.subscriptionId === subscriptionId));

describe('plans sold to users and to organizations', () => {
  it('GET billing/plans lists the plans of the context: users by default, organizations with ?for=organization', async () => {
    const ada = await person();
    const names = async (query: string, bearer: string) =>
      (await call<{ plans: Array<{ name: string; audience: string }> }>('GET', `/api/proxy/billing/plans${query}`, bearer)).body.plans.map((p) => [
        p.name,
        p.audience,
      ]);
    const personal = [
      ['Personal', 'users'],
      ['Enterprise', 'both'],
    ];
    const teams = [
      ['Team', 'organizations'],
      ['Enterprise', 'both'],
    ];
    expect(await names('', ada.token)).toEqual(personal);
    expect(await names('?for=user', shop.apiKey)).toEqual(personal);
    expect(await names('?for=organization', ada.token)).toEqual(teams);
    expect(await names('?for=organization', shop.apiKey)).toEqual(teams);
    expect(await call('GET', '/api/proxy/billing/plans?for=team', ada.token)).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it('refuses a team plan to a user and a personal plan to an organization (plan_audience_mismatch), before anything is charged', async () => {
    const ada = await person();
    const org = await team(ada);
    const token = await activeIn(ada, org.id);
    expect(await subscribe(ada.token, plans.teamMonthly, false)).toMatchObject({ status: 400, body: { code: 'plan_audience_mismatch' } });
    expect(await subscribe(token, plans.personalMonthly)).toMatchObject({ status: 400, body: { code: 'plan_audience_mismatch' } });
    const checkout = await call('POST', '/api/proxy/billing/checkout?for=organization', token, {
      priceId: plans.personalMonthly,
      successUrl: 'https://shop.example.com/billing/done',
      cancelUrl: 'https://shop.example.com/billing/done',
    });
    expect(checkout).toMatchObject({ status: 400, body: { code: 'plan_audience_mismatch' } });
    expect((await call('GET', '/api/proxy/billing/subscription?for=organization', token)).body).toBeNull();
    expect((await call('GET', '/api/proxy/billing/invoices?for=organization', token)).body).toEqual({ invoices: [] });
  });
});

describe('a team subscribes', () => {
  it("the owner subscribes for the active organization; members are entitled to the team's plan; the owner's own billing is untouched", async () => {
    const ada = await person();
    const bob = await person();
    const org = await team(ada, [{ user: bob.user, role: 'member' }]);
    const adaTeam = await activeIn(ada, org.id);
    const bobTeam = await activeIn(bob, org.id);

    const created = await subscribe(adaTeam, plans.teamMonthly);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', plan: { name: 'Team' } });

    // Any member reads the team's subscription, invoices and entitlements.
    const sub = await call<{ id: string }>('GET', '/api/proxy/billing/subscription?for=organization', bobTeam);
    expect(sub).toMatchObject({ status: 200, body: { id: created.body.id, status: 'active' } });
    const invoices = await call<{ invoices: Array<{ amountPaid: number; currency: string }> }>('GET', '/api/proxy/billing/invoices?for=organization', bobTeam);
    expect(invoices.body.invoices.map((i) => [i.amountPaid, i.currency])).toEqual([[5000, 'usd']]);
    expect((await call('GET', '/api/proxy/billing/entitlements?for=organization', bobTeam)).body).toEqual({
      plan: 'Team',
      status: 'active',
      features: ['reports', 'sso'],
    });
    // Their own (personal) billing is another subject: nothing there.
    expect((await call('GET', '/api/proxy/billing/subscription', adaTeam)).body).toBeNull();
    expect((await call('GET', '/api/proxy/billing/entitlements', bobTeam)).body).toBeNull();

    // The event names the organization, not a user.
    const events = await eventsOf(created.body.id);
    expect(events.map((e) => e.type).sort()).toEqual(['invoice.paid', 'subscription.created']);
    for (const e of events) {
      expect(e.payload).toMatchObject({ organizationId: org.id, userId: null, subscriptionId: created.body.id });
      expect(e.organizationId).toBe(org.id);
    }
    expect(events.find((e) => e.type === 'subscription.created')!.payload.data).toMatchObject({ organizationId: org.id, userId: null });
  });

  it('a member without org:billing:manage reads but cannot subscribe, change, cancel, pause or resume; an admin can', async () => {
    const ada = await person();
    const bob = await person();
    const cy = await person();
    const org = await team(ada, [
      { user: bob.user, role: 'member' },
      { user: cy.user, role: 'admin' },
    ]);
    const bobTeam = await activeIn(bob, org.id);
    const cyTeam = await activeIn(cy, org.id);
    const refused = { status: 403, body: { code: 'missing_permission', error: 'Your role in this organization lacks the permission org:billing:manage' } };
    expect(await subscribe(bobTeam, plans.teamMonthly)).toMatchObject(refused);
    expect(await call('POST', '/api/proxy/billing/setup-intent?for=organization', bobTeam)).toMatchObject(refused);

    expect((await subscribe(cyTeam, plans.teamMonthly)).status).toBe(201);
    for (const [path, body] of [
      ['subscription/change', { new_price_id: plans.enterpriseMonthly }],
      ['subscription/cancel', {}],
      ['subscription/pause', undefined],
      ['subscription/resume', undefined],
    ] as const) {
      expect(await call('POST', `/api/proxy/billing/${path}?for=organization`, bobTeam, body)).toMatchObject(refused);
    }
    // A preview is a read: any member may ask what a change would cost.
    expect(
      (await call('POST', '/api/proxy/billing/subscription/change/preview?for=organization', bobTeam, { new_price_id: plans.enterpriseMonthly })).status,
    ).toBe(200);
    const changed = await call<{ plan: { name: string } }>('POST', '/api/proxy/billing/subscription/change?for=organization', cyTeam, {
      new_price_id: plans.enterpriseMonthly,
    });
    expect(changed).toMatchObject({ status: 200, body: { plan: { name: 'Enterprise' } } });
    expect((await call('GET', '/api/proxy/billing/entitlements?for=organization', bobTeam)).body).toMatchObject({ plan: 'Enterprise' });
    const canceled = await call('POST', '/api/proxy/billing/subscription/cancel?for=organization', cyTeam, {});
    expect(canceled).toMatchObject({ status: 200, body: { status: 'pending_cancellation' } });
  });

  it('one live subscription per organization: 20 subscribes at once by two admins make one subscription and one charge', async () => {
    const ada = await person();
    const cy = await person();
    const org = await team(ada, [{ user: cy.user, role: 'admin' }]);
    const tokens = [await activeIn(ada, org.id), await activeIn(cy, org.id)];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => subscribe(tokens[i % 2]!, plans.teamMonthly)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) expect(['subscription_exists', 'subscription_busy']).toContain(a.body.code);
    const invoices = await call<{ invoices: unknown[] }>('GET', '/api/proxy/billing/invoices?for=organization', tokens[1]!);
    expect(invoices.body.invoices).toHaveLength(1);
  });

  it('without an active organization ?for=organization answers no_active_organization; a member who left answers organization_not_found', async () => {
    const ada = await person();
    const bob = await person();
    const org = await team(ada, [{ user: bob.user, role: 'member' }]);
    for (const path of ['subscription', 'entitlements', 'invoices']) {
      expect(await call('GET', `/api/proxy/billing/${path}?for=organization`, ada.token)).toMatchObject({
        status: 400,
        body: { code: 'no_active_organization' },
      });
    }
    expect(await subscribe(ada.token, plans.teamMonthly)).toMatchObject({ status: 400, body: { code: 'no_active_organization' } });
    const bobTeam = await activeIn(bob, org.id);
    expect((await call('DELETE', `/api/v1/organizations/${org.id}/members/${bob.user.id}`, shop.apiKey)).status).toBe(200);
    // The token still names the organization, but membership is read as it is now.
    expect(await call('GET', '/api/proxy/billing/entitlements?for=organization', bobTeam)).toMatchObject({
      status: 404,
      body: { code: 'organization_not_found' },
    });
  });
});

describe('a personal plan beside the team plan', () => {
  it('each context has its own subscription; token verification with include entitlements answers the active context', async () => {
    const ada = await person();
    const org = await team(ada);
    const adaTeam = await activeIn(ada, org.id);
    expect((await subscribe(ada.token, plans.personalMonthly, false)).status).toBe(201);
    expect((await subscribe(adaTeam, plans.teamYearly)).status).toBe(201);

    const verify = (token: string, include?: string[]) =>
      call<Record<string, unknown>>('POST', '/api/v1/token/verify', shop.apiKey, { token, ...(include ? { include } : {}) });
    const personal = await verify(ada.token, ['entitlements']);
    expect(personal.body).toMatchObject({ valid: true, organization: null, entitlements: { plan: 'Personal', status: 'active', features: ['reports'] } });
    const asTeam = await verify(adaTeam, ['entitlements']);
    expect(asTeam.body).toMatchObject({ valid: true, organization: { id: org.id }, entitlements: { plan: 'Team', features: ['reports', 'sso'] } });
    // Not asked: nothing read, no field.
    expect('entitlements' in (await verify(adaTeam)).body).toBe(false);
    expect(await verify(adaTeam, ['sessions'])).toMatchObject({ status: 400, body: { code: 'invalid_request' } });

    expect((await call('GET', '/api/proxy/billing/entitlements', adaTeam)).body).toMatchObject({ plan: 'Personal' });
    expect((await call('GET', '/api/proxy/billing/entitlements?for=organization', adaTeam)).body).toMatchObject({ plan: 'Team' });
  });
});

describe("the project server's organization billing routes", () => {
  it('reads any organization of the project by id or slug, cancels it; another project sees none', async () => {
    const ada = await person();
    const org = await team(ada);
    const created = await subscribe(await activeIn(ada, org.id), plans.teamMonthly);
    expect(created.status).toBe(201);
    for (const ref of [org.id, org.slug]) {
      expect(await call('GET', `/api/v1/organizations/${ref}/billing/subscription`, shop.apiKey)).toMatchObject({
        status: 200,
        body: { id: created.body.id, status: 'active', plan: { name: 'Team' } },
      });
    }
    expect((await call('GET', `/api/v1/organizations/${org.id}/billing/entitlements`, shop.apiKey)).body).toEqual({
      plan: 'Team',
      status: 'active',
      features: ['reports', 'sso'],
    });
    const invoices = await call<{ invoices: unknown[] }>('GET', `/api/v1/organizations/${org.id}/billing/invoices?limit=5`, shop.apiKey);
    expect(invoices.body.invoices).toHaveLength(1);
    for (const path of ['subscription', 'entitlements', 'invoices']) {
      expect(await call('GET', `/api/v1/organizations/${org.id}/billing/${path}`, other.apiKey)).toMatchObject({
        status: 404,
        body: { code: 'organization_not_found' },
      });
    }
    expect(await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/cancel`, other.apiKey, {})).toMatchObject({ status: 404 });
    expect(await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/cancel`, shop.apiKey, { at_period_end: 'soon' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    const canceled = await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/cancel`, shop.apiKey, { at_period_end: false });
    expect(canceled).toMatchObject({ status: 200, body: { status: 'canceled' } });
    expect((await call('GET', `/api/v1/organizations/${org.id}/billing/entitlements`, shop.apiKey)).body).toBeNull();
    expect(await call('POST', `/api/v1/organizations/${org.id}/billing/subscription/cancel`, shop.apiKey, {})).toMatchObject({
      status: 404,
      body: { code: 'subscription_not_found' },
    });
  });
});

describe('an organization deleted with a live subscription', () => {
  it('has it canceled at period end: no further charge; its invoices stay', async () => {
    const ada = await person();
    const org = await team(ada);
    const created = await subscribe(await activeIn(ada, org.id), plans.teamMonthly);
    expect(created.status).toBe(201);
    expect((await call('DELETE', `/api/proxy/organizations/${org.id}`, ada.token)).status).toBe(200);
    const record = () => t.inContext(async () => ok(await t.tollgate.billing.listSubscriptions(shop.id, { organizationId: org.id })).items[0]!);
    const deadline = Date.now() + 15_000;
    while (!(await record()).cancelAtPeriodEnd && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const after = await record();
    expect(after).toMatchObject({ id: created.body.id, organizationId: org.id, status: 'pending_cancellation', cancelAtPeriodEnd: true });
    const invoices = await t.inContext(async () => ok(await t.tollgate.billing.listProjectInvoices(shop.id, { organizationId: org.id })).items);
    expect(invoices.map((i) => [i.organizationId, i.amountPaid])).toEqual([[org.id, 5000]]);
  });
});
