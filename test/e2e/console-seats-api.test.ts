import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';

/**
 * An organization's billing as the console reads it (GET /api/admin/projects/:projectId/
 * organizations/:orgId/billing) over HTTP against the real server and its worker, on the sandbox:
 * a per-seat team plan made through the admin API, an organization subscribed through the user API
 * with ?for=organization, then the admin route's answer (subscription with its quantity and next
 * invoice, seats used and billed, invoices newest first with their seat lines, members); the seats
 * after a member joins; an organization with no subscription; who may read it.
 */
let t: TestApp;
const { call, operator, member, assertGuarded } = consoleApi(() => t);
let op: ConsoleSession;
let outsider: ConsoleSession;

beforeAll(async () => {
  t = await startTestApp();
  op = await operator('seats-operator@example.com');
  outsider = await member('seats-outsider@example.com', [(await t.createProject({ name: 'Elsewhere' })).id]);
});
afterAll(async () => {
  await t?.close();
});

type OrgBilling = AdminBody<'organizations', 'billing'>;

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};

/** A user API call with an end user's bearer token (or the project's API key). */
async function user<T = Record<string, unknown>>(method: string, path: string, bearer: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/**
 * A project on the sandbox with a Team plan sold to organizations (automatic seats) and its
 * per-seat price, 2000 for the first 2 seats and 1000 per further seat, up to 50: all through the
 * console's admin API.
 */
async function shop(): Promise<{ project: TestProject; priceId: string }> {
  const project = await t.createProject({ name: `Seats ${Date.now()}` });
  const base = `/api/admin/projects/${project.id}`;
  await json(await call(`${base}/billing`, { method: 'PUT', session: op, body: { processor: 'sandbox' } }), 200);
  const plan = await json<AdminBody<'billing', 'createPlan', 201>>(
    await call(`${base}/plans`, { method: 'POST', session: op, body: { name: 'Team', features: 'reports', audience: 'organizations' } }),
    201,
  );
  expect(plan.plan.seat_policy).toEqual({ mode: 'automatic', count_invitations: false, removal: 'period_end' });
  const price = await json<AdminBody<'billing', 'createPrice', 201>>(
    await call(`${base}/plans/${plan.plan.id}/prices`, {
      method: 'POST',
      session: op,
      body: { name: 'Monthly', amount: 2000, interval: 'month', seats: { unit_amount: 1000, included: 2, maximum: 50 } },
    }),
    201,
  );
  expect(price.price.seats).toEqual({ unit_amount: 1000, included: 2, minimum: 1, maximum: 50 });
  return { project, priceId: price.price.id };
}

let n = 0;
async function person(project: TestProject) {
  const u = await t.seedUser(project.id, { email: `seat-${++n}@acme.example` });
  return { user: u, token: (await t.issueSession(project.id, u)).token };
}

/** An organization owned by a new person, with the owner's token for it active. */
async function team(project: TestProject, name: string) {
  const owner = await person(project);
  const org = await user<{ id: string }>('POST', '/api/proxy/organizations', owner.token, { name });
  expect(org.status).toBe(201);
  const active = await user<{ token: string }>('POST', '/api/proxy/organizations/active', owner.token, { organization_id: org.body.id });
  expect(active.status).toBe(200);
  return { id: org.body.id, token: active.body.token };
}

const addMember = async (project: TestProject, orgId: string) => {
  const p = await person(project);
  expect((await user('POST', `/api/v1/organizations/${orgId}/members`, project.apiKey, { user_id: p.user.id, role: 'member' })).status).toBe(201);
};

const billingOf = (projectId: string, orgId: string, session: ConsoleSession | null = op) =>
  call(`/api/admin/projects/${projectId}/organizations/${orgId}/billing`, { session });

describe("an organization's billing in the console", () => {
  it('shows the per-seat subscription with its quantity and next invoice, the seats used and billed, the invoices with their seat lines', async () => {
    const { project, priceId } = await shop();
    const org = await team(project, 'Acme Rockets');
    await addMember(project, org.id);
    await addMember(project, org.id);
    const subscribed = await user<{ quantity: number; status: string }>('POST', '/api/proxy/billing/subscribe?for=organization', org.token, {
      priceId,
      paymentMethodId: 'pm_card_visa',
    });
    expect(subscribed).toMatchObject({ status: 201, body: { status: 'active', quantity: 3 } });

    const billing = await json<OrgBilling>(await billingOf(project.id, org.id), 200);
    expect(billing.members_count).toBe(3);
    expect(billing.seats).toEqual({ used: 3, total: 3 });
    expect(billing.subscription).toMatchObject({
      user_id: null,
      organization_id: org.id,
      status: 'active',
      plan: { name: 'Team' },
      // The price's amount for the seats billed: 2000 for the first 2, 1000 for the third.
      price: { id: priceId, name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' },
      quantity: 3,
      cancel_at_period_end: false,
    });
    expect(billing.subscription!.next_invoice).toMatchObject({ amount: 3000, currency: 'usd' });
    expect(billing.subscription!.next_invoice!.date).toBe(billing.subscription!.current_period_end);
    expect(billing.invoices).toHaveLength(1);
    expect(billing.invoices[0]).toMatchObject({
      organization_id: org.id,
      organization_name: 'Acme Rockets',
      user_id: null,
      user_email: null,
      subscription_id: billing.subscription!.id,
      status: 'paid',
      reason: 'subscription_create',
      currency: 'usd',
      amount_due: 3000,
      amount_paid: 3000,
    });
    expect(billing.invoices[0]!.lines.map((l) => [l.quantity, l.amount, l.proration, l.price_id])).toEqual([[3, 3000, false, priceId]]);

    // A fourth member: the worker moves the quantity to 4, charged now, prorated; the newest invoice comes first.
    await addMember(project, org.id);
    const deadline = Date.now() + 20_000;
    let after = await json<OrgBilling>(await billingOf(project.id, org.id), 200);
    while (after.subscription?.quantity !== 4 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      after = await json<OrgBilling>(await billingOf(project.id, org.id), 200);
    }
    expect(after.subscription!.quantity).toBe(4);
    expect(after.subscription!.price.amount).toBe(4000);
    expect(after.seats).toEqual({ used: 4, total: 4 });
    expect(after.members_count).toBe(4);
    expect(after.subscription!.next_invoice).toMatchObject({ amount: 4000 });
    expect(after.invoices.map((i) => i.reason)).toEqual(['subscription_update', 'subscription_create']);
    expect(after.invoices[0]!.lines.map((l) => [l.proration, l.quantity, Math.sign(l.amount)])).toEqual([
      [true, 3, -1],
      [true, 4, 1],
    ]);
    // The same invoices as the admin invoice list shows them, field for field (without the lines).
    const listed = await json<AdminBody<'billing', 'listInvoices'>>(await call(`/api/admin/projects/${project.id}/billing/invoices`, { session: op }), 200);
    expect(after.invoices.map(({ lines: _, ...rest }) => rest)).toEqual(listed.invoices.filter((i) => i.organization_id === org.id));
  });

  it('answers no subscription, no seats and no invoices for an organization that has none', async () => {
    const { project } = await shop();
    const org = await team(project, 'Globex');
    expect(await json<OrgBilling>(await billingOf(project.id, org.id), 200)).toEqual({ subscription: null, seats: null, invoices: [], members_count: 1 });
  });

  it("answers 404 organization_not_found for another project's organization or an unknown one; needs a console session that may see the project", async () => {
    const { project } = await shop();
    const other = await shop();
    const theirs = await team(other.project, 'Initech');
    for (const orgId of [theirs.id, 'org_unknown']) {
      expect(await json<ErrorBody>(await billingOf(project.id, orgId), 404)).toMatchObject({ code: 'organization_not_found' });
    }
    await assertGuarded([['GET', `/api/admin/projects/${other.project.id}/organizations/${theirs.id}/billing`, undefined]], outsider, op);
  });
});
