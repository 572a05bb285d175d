import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import type { TestApp, TestProject } from '../support/app';
import { startTestApp } from '../support/app';
import type { AdminBody } from '../support/api-body';
import { bearerCall } from '../support/bearer-call';
import { consoleApi, type ConsoleSession } from '../support/console-api';

/**
 * Usage-based billing in the console's admin API over HTTP against the real server: meters
 * (create, the refusals of a taken or bad key, rename and unit), a plan's usage limits (round trip
 * through create, list and update; a bad limit and an unknown meter refused), a subject's usage
 * after usage is tracked by the project server with its API key (used, included, credits, overage,
 * the window, usage per day), credits granted by an operator, the top consumers of a meter this
 * month, credit packs (create, list newest first, the refusals of bad terms and unknown meters,
 * archive: no longer sold), and who may call them (a project the account may not see answers 404).
 */
let t: TestApp;
const { call, operator, member, assertGuarded } = consoleApi(() => t);
const bearer = bearerCall(() => t.baseUrl);
let op: ConsoleSession;
let outsider: ConsoleSession;

beforeAll(async () => {
  t = await startTestApp();
  op = await operator('usage-operator@example.com');
  outsider = await member('usage-outsider@example.com', [(await t.createProject({ name: 'Elsewhere' })).id]);
});
afterAll(async () => {
  await t?.close();
});

type Meter = AdminBody<'usage', 'createMeter', 201>['meter'];
type SubjectUsage = AdminBody<'usage', 'subjectUsage'>;
type Plan = AdminBody<'billing', 'createPlan', 201>['plan'];

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const refusal = async (res: Response, status: number, code: string) => expect(await json<ErrorBody>(res, status)).toMatchObject({ code });

const base = (project: TestProject) => `/api/admin/projects/${project.id}`;
const post = (path: string, body: unknown) => call(path, { method: 'POST', session: op, body });

/** A project on the sandbox, connected through the admin API. */
async function project(): Promise<TestProject> {
  const p = await t.createProject({ name: `Usage ${Date.now()}` });
  await json(await call(`${base(p)}/billing`, { method: 'PUT', session: op, body: { processor: 'sandbox' } }), 200);
  return p;
}

const createMeter = async (p: TestProject, body: Record<string, unknown>) => (await json<{ meter: Meter }>(await post(`${base(p)}/meters`, body), 201)).meter;

/** The first of this UTC month and of the next: the window of a limit that resets each month. */
function thisMonth() {
  const now = t.clock.now();
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    next: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    today: now.toISOString().slice(0, 10),
  };
}

let n = 0;
/** A user of the project subscribed (through the user API, on the sandbox) to `priceId`, or not subscribed. */
async function customer(p: TestProject, priceId: string | null) {
  const user = await t.seedUser(p.id, { email: `usage-${++n}@acme.example` });
  if (priceId) {
    const token = (await t.issueSession(p.id, user)).token;
    expect((await bearer('POST', '/api/proxy/billing/subscribe', token, { priceId, paymentMethodId: 'pm_card_visa' })).status).toBe(201);
  }
  return user;
}

const track = async (p: TestProject, events: unknown[]) => {
  const r = await bearer<{ accepted: number }>('POST', '/api/v1/usage/events', p.apiKey, { events });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

describe('meters in the console', () => {
  it('creates a meter, lists it, refuses a taken key (409) and a bad key (400), renames it and changes its unit', async () => {
    const p = await project();
    const calls = await createMeter(p, { key: 'api_calls', name: 'API calls', unit: 'calls' });
    expect(calls).toMatchObject({ key: 'api_calls', name: 'API calls', unit: 'calls', aggregation: 'sum' });
    expect(calls.id).toEqual(expect.any(String));
    expect(Number.isNaN(Date.parse(calls.created_at))).toBe(false);
    // The name defaults to the key; the aggregation is kept.
    expect(await createMeter(p, { key: 'reports', aggregation: 'count' })).toMatchObject({ key: 'reports', name: 'reports', unit: '', aggregation: 'count' });

    await refusal(await post(`${base(p)}/meters`, { key: 'api_calls', name: 'Again' }), 409, 'meter_key_taken');
    for (const key of ['API_calls', '1calls', 'api-calls', '', 'a'.repeat(65)])
      await refusal(await post(`${base(p)}/meters`, { key }), 400, 'invalid_meter_key');
    await refusal(await post(`${base(p)}/meters`, { key: 'tokens', aggregation: 'average' }), 400, 'invalid_meter_aggregation');

    const renamed = await json<{ meter: Meter }>(
      await call(`${base(p)}/meters/api_calls`, { method: 'PATCH', session: op, body: { name: 'Requests', unit: 'requests' } }),
      200,
    );
    expect(renamed.meter).toEqual({ ...calls, name: 'Requests', unit: 'requests' });
    await refusal(await call(`${base(p)}/meters/nothing`, { method: 'PATCH', session: op, body: { name: 'X' } }), 404, 'meter_not_found');
    await refusal(await call(`${base(p)}/meters/api_calls`, { method: 'PATCH', session: op, body: { name: '' } }), 400, 'invalid_meter_name');

    const listed = await json<AdminBody<'usage', 'listMeters'>>(await call(`${base(p)}/meters`, { session: op }), 200);
    expect(listed.meters.map((m) => [m.key, m.name, m.unit, m.aggregation])).toEqual([
      ['api_calls', 'Requests', 'requests', 'sum'],
      ['reports', 'reports', '', 'count'],
    ]);
  });
});

describe("a plan's usage limits", () => {
  it('round-trips usage_limits through create, list and update (the list is replaced), and refuses a bad limit or an unknown meter', async () => {
    const p = await project();
    await createMeter(p, { key: 'api_calls', name: 'API calls', unit: 'calls' });
    await createMeter(p, { key: 'reports', name: 'Reports', aggregation: 'count' });
    const limits = [
      { meter: 'api_calls', included: 5000, reset: 'period', overage: 'bill', price: { unit_amount: 200, package_size: 1000 } },
      { meter: 'reports', included: 10, reset: 'day', overage: 'refuse', price: null },
    ];
    const created = await json<{ plan: Plan }>(await post(`${base(p)}/plans`, { name: 'Pro', usage_limits: limits }), 201);
    expect(created.plan.usage_limits).toEqual(limits);
    const listed = await json<AdminBody<'billing', 'listPlans'>>(await call(`${base(p)}/plans`, { session: op }), 200);
    expect(listed.plans.find((plan) => plan.id === created.plan.id)!.usage_limits).toEqual(limits);

    // Defaults: reset period, overage refuse; a package size of 1 when left out.
    const updated = await json<{ plan: Plan }>(
      await call(`${base(p)}/plans/${created.plan.id}`, {
        method: 'PATCH',
        session: op,
        body: {
          usage_limits: [
            { meter: 'reports', included: 3 },
            { meter: 'api_calls', included: 0, overage: 'bill', price: { unit_amount: 1 } },
          ],
        },
      }),
      200,
    );
    expect(updated.plan.usage_limits).toEqual([
      { meter: 'reports', included: 3, reset: 'period', overage: 'refuse', price: null },
      { meter: 'api_calls', included: 0, reset: 'period', overage: 'bill', price: { unit_amount: 1, package_size: 1 } },
    ]);

    const patch = (usage_limits: unknown) => call(`${base(p)}/plans/${created.plan.id}`, { method: 'PATCH', session: op, body: { usage_limits } });
    for (const bad of [
      [{ meter: 'api_calls', included: 10, overage: 'bill' }], // billed without a price
      [{ meter: 'api_calls', included: 10, overage: 'refuse', price: { unit_amount: 100, package_size: 1 } }], // a price without billing
      [{ meter: 'api_calls', included: -1 }],
      [{ meter: 'api_calls', included: 1.5 }],
      [{ meter: 'api_calls', included: 10, reset: 'week' }],
      [{ meter: 'api_calls', included: 10, overage: 'bill', price: { unit_amount: 0, package_size: 1 } }],
      [{ meter: 'api_calls', included: 10, overage: 'bill', price: { unit_amount: 100, package_size: 0 } }],
      [
        { meter: 'api_calls', included: 1 },
        { meter: 'api_calls', included: 2 },
      ], // twice the same meter
    ]) {
      await refusal(await patch(bad), 400, 'invalid_usage_limit');
    }
    await refusal(await patch([{ meter: 'storage', included: 1 }]), 400, 'unknown_meter');
    await refusal(
      await post(`${base(p)}/plans`, { name: 'Broken', usage_limits: [{ meter: 'api_calls', included: 1, overage: 'never' }] }),
      400,
      'invalid_usage_limit',
    );
    // Nothing refused was kept.
    const after = await json<AdminBody<'billing', 'listPlans'>>(await call(`${base(p)}/plans`, { session: op }), 200);
    expect(after.plans.map((plan) => [plan.name, plan.usage_limits.length])).toEqual([['Pro', 2]]);
  });
});

describe("a subject's usage, credits and the top consumers", () => {
  it("shows a subscriber's usage per day with its limit, grants credits, and lists the month's top consumers", async () => {
    const p = await project();
    await createMeter(p, { key: 'api_calls', name: 'API calls', unit: 'calls' });
    await createMeter(p, { key: 'exports', name: 'Exports', unit: 'exports' });
    const plan = await json<{ plan: Plan }>(
      await post(`${base(p)}/plans`, {
        name: 'Pro',
        usage_limits: [{ meter: 'api_calls', included: 100, reset: 'month', overage: 'bill', price: { unit_amount: 200, package_size: 10 } }],
      }),
      201,
    );
    const price = await json<AdminBody<'billing', 'createPrice', 201>>(
      await post(`${base(p)}/plans/${plan.plan.id}/prices`, { name: 'Monthly', amount: 1000, interval: 'month' }),
      201,
    );
    const ada = await customer(p, price.price.id);
    const bob = await customer(p, price.price.id);
    const cyd = await customer(p, null);
    const { start, next, today } = thisMonth();
    const yesterday = new Date(t.clock.now().getTime() - 20 * 3600_000);
    const earlier = yesterday.toISOString().slice(0, 10) < start.slice(0, 10) ? null : yesterday;
    await track(p, [
      { id: 'a-1', subject: { type: 'user', id: ada.id }, meter: 'api_calls', value: 70, ...(earlier ? { timestamp: earlier.toISOString() } : {}) },
      { id: 'a-2', subject: { type: 'user', id: ada.id }, meter: 'api_calls', value: 45 },
      { id: 'b-1', subject: { type: 'user', id: bob.id }, meter: 'api_calls', value: 30 },
    ]);

    const usageOf = async (id: string) => json<SubjectUsage>(await call(`${base(p)}/usage/user/${id}`, { session: op }), 200);
    const before = await usageOf(ada.id);
    expect(before.subject).toEqual({ type: 'user', id: ada.id, label: ada.email });
    expect(before.plan).toBe('Pro');
    expect(before.grants).toEqual([]);
    expect(before.features).toHaveLength(1);
    expect(before.features[0]).toMatchObject({
      feature: 'api_calls',
      name: 'API calls',
      unit: 'calls',
      included: 100,
      used: 115,
      credits: 0,
      remaining: 0,
      overage: 15,
      limit: 'bill',
      window_start: start,
      resets_at: next,
    });
    // Usage per day of the window: 70 then 45, or 115 on one day when the test runs early in the month.
    const days = before.features[0]!.daily;
    expect(days.reduce((sum, d) => sum + d.used, 0)).toBe(115);
    expect(days[days.length - 1]!.date).toBe(today);
    expect(days.map((d) => d.used)).toEqual(earlier && earlier.toISOString().slice(0, 10) !== today ? [70, 45] : [115]);

    // Credits granted by an operator: drawn after the included amount (the 15 past it now come from them).
    const expiresAt = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const granted = await json<AdminBody<'usage', 'grantCredits', 201>>(
      await post(`${base(p)}/usage/credits`, {
        subject_type: 'user',
        subject_id: ada.id,
        feature: 'api_calls',
        amount: 500,
        expires_at: expiresAt,
        reason: 'Goodwill',
      }),
      201,
    );
    expect(granted.grant).toMatchObject({ feature: 'api_calls', amount: 500, expires_at: expiresAt, reason: 'Goodwill', source: 'operator', expired: false });
    await track(p, [{ id: 'a-3', subject: { type: 'user', id: ada.id }, meter: 'api_calls', value: 20 }]);
    const after = await usageOf(ada.id);
    expect(after.features[0]).toMatchObject({ used: 135, included: 100, credits: 480, remaining: 480, overage: 15 });
    expect(after.grants).toEqual([{ ...granted.grant, remaining: 480 }]);

    // A user without a plan: no limit, so a grant makes the feature appear (credits only).
    const plain = await usageOf(cyd.id);
    expect(plain).toMatchObject({ plan: null, features: [], grants: [] });
    await json(await post(`${base(p)}/usage/credits`, { subject_type: 'user', subject_id: cyd.id, feature: 'exports', amount: 3 }), 201);
    const credited = await usageOf(cyd.id);
    expect(credited.features).toEqual([
      expect.objectContaining({ feature: 'exports', included: 0, used: 0, credits: 3, remaining: 3, limit: 'refuse', daily: [] }),
    ]);
    expect(credited.grants.map((g) => [g.feature, g.amount, g.remaining, g.expires_at, g.reason])).toEqual([['exports', 3, 3, null, '']]);

    // The grant's refusals.
    const grant = (body: Record<string, unknown>) =>
      post(`${base(p)}/usage/credits`, { subject_type: 'user', subject_id: ada.id, feature: 'api_calls', amount: 5, ...body });
    await refusal(await grant({ amount: 0 }), 400, 'invalid_credit_amount');
    await refusal(await grant({ amount: 2.5 }), 400, 'invalid_credit_amount');
    await refusal(await grant({ expires_at: new Date(t.clock.now().getTime() - 60_000).toISOString() }), 400, 'invalid_credit_expiry');
    await refusal(await grant({ reason: 'x'.repeat(201) }), 400, 'invalid_credit_reason');
    await refusal(await grant({ feature: 'nothing' }), 400, 'unknown_meter');
    await refusal(await grant({ subject_id: '00000000-0000-4000-8000-000000000000' }), 400, 'unknown_subject');
    await refusal(await call(`${base(p)}/usage/user/00000000-0000-4000-8000-000000000000`, { session: op }), 400, 'unknown_subject');

    // This month's top consumers of api_calls, most first, named by email.
    const top = await json<AdminBody<'usage', 'topConsumers'>>(await call(`${base(p)}/usage/top?feature=api_calls`, { session: op }), 200);
    expect(top.feature).toBe('api_calls');
    expect(top.since).toBe(start);
    expect(top.consumers).toEqual([
      { subject_type: 'user', subject_id: ada.id, label: ada.email, used: 135, overage: 15 },
      { subject_type: 'user', subject_id: bob.id, label: bob.email, used: 30, overage: 0 },
    ]);
    const first = await json<AdminBody<'usage', 'topConsumers'>>(await call(`${base(p)}/usage/top?feature=api_calls&limit=1`, { session: op }), 200);
    expect(first.consumers.map((c) => c.subject_id)).toEqual([ada.id]);
    expect((await json<AdminBody<'usage', 'topConsumers'>>(await call(`${base(p)}/usage/top?feature=exports`, { session: op }), 200)).consumers).toEqual([]);
    await refusal(await call(`${base(p)}/usage/top?feature=nothing`, { session: op }), 400, 'unknown_meter');
    await refusal(await call(`${base(p)}/usage/top?feature=api_calls&limit=500`, { session: op }), 400, 'invalid_request');
  });

  it("shows an organization's usage, labelled by its name", async () => {
    const p = await project();
    await createMeter(p, { key: 'seats_sync', name: 'Syncs' });
    const owner = await customer(p, null);
    const token = (await t.issueSession(p.id, owner)).token;
    const org = await bearer<{ id: string }>('POST', '/api/proxy/organizations', token, { name: 'Acme Rockets' });
    expect(org.status).toBe(201);
    await json(await post(`${base(p)}/usage/credits`, { subject_type: 'organization', subject_id: org.body.id, feature: 'seats_sync', amount: 50 }), 201);
    await track(p, [{ id: 'o-1', subject: { type: 'organization', id: org.body.id }, meter: 'seats_sync', value: 8 }]);
    const usage = await json<SubjectUsage>(await call(`${base(p)}/usage/organization/${org.body.id}`, { session: op }), 200);
    expect(usage.subject).toEqual({ type: 'organization', id: org.body.id, label: 'Acme Rockets' });
    expect(usage.features).toEqual([expect.objectContaining({ feature: 'seats_sync', used: 8, credits: 42, remaining: 42, overage: 0 })]);
    const top = await json<AdminBody<'usage', 'topConsumers'>>(await call(`${base(p)}/usage/top?feature=seats_sync`, { session: op }), 200);
    expect(top.consumers).toEqual([{ subject_type: 'organization', subject_id: org.body.id, label: 'Acme Rockets', used: 8, overage: 0 }]);
    // A user's id is not an organization.
    await refusal(await call(`${base(p)}/usage/organization/${owner.id}`, { session: op }), 400, 'unknown_subject');
  });
});

describe('credit packs in the console', () => {
  type Pack = AdminBody<'billing', 'createCreditPack', 201>['pack'];
  const createPack = async (p: TestProject, body: Record<string, unknown>) =>
    (await json<{ pack: Pack }>(await post(`${base(p)}/credit-packs`, body), 201)).pack;
  const listPacks = async (p: TestProject) =>
    (await json<AdminBody<'billing', 'listCreditPacks'>>(await call(`${base(p)}/credit-packs`, { session: op }), 200)).packs;

  it('creates packs, lists them newest first, refuses bad terms and unknown meters, and archives one (no longer sold)', async () => {
    const p = await project();
    await createMeter(p, { key: 'api_calls', name: 'API calls', unit: 'calls' });
    const calls = await createPack(p, { feature: 'api_calls', name: '500 calls', units: 500, amount: 900, expires_in_days: 30 });
    // The currency defaults to the connection's (the sandbox's USD); the expiry to none.
    expect(calls).toMatchObject({ feature: 'api_calls', name: '500 calls', units: 500, amount: 900, currency: 'usd', expires_in_days: 30, active: true });
    expect(calls.id).toEqual(expect.any(String));
    expect(calls.created_at).toBe(t.clock.now().toISOString());
    t.clock.advance(60_000);
    const big = await createPack(p, { feature: 'api_calls', name: ' 10,000 calls ', units: 10_000, amount: 1500, currency: 'eur' });
    expect(big).toMatchObject({ name: '10,000 calls', units: 10_000, amount: 1500, currency: 'eur', expires_in_days: null, active: true });
    expect(await listPacks(p)).toEqual([big, calls]);

    const create = (body: Record<string, unknown>) =>
      post(`${base(p)}/credit-packs`, { feature: 'api_calls', name: 'Pack', units: 100, amount: 500, expires_in_days: 7, ...body });
    for (const bad of [
      { units: 0 },
      { units: 1.5 },
      { units: 10 ** 12 + 1 },
      { amount: 0 },
      { amount: -100 },
      { amount: 2.5 },
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { expires_in_days: 0 },
      { expires_in_days: 3661 },
      { expires_in_days: 1.5 },
      { currency: 'xyz' },
      { feature: 'API-calls' },
    ]) {
      await refusal(await create(bad), 400, 'invalid_credit_pack');
    }
    await refusal(await create({ feature: 'storage' }), 400, 'unknown_meter');
    // The error carries the API's message, which the console shows as is.
    const message = await json<ErrorBody>(await create({ units: 0 }), 400);
    expect(message.error).toContain('Invalid credit pack: a meter key, a name of 1 to 100 characters, 1 to 10^12 units');
    // Nothing refused was kept.
    expect((await listPacks(p)).map((pack) => pack.name)).toEqual(['10,000 calls', '500 calls']);

    // Archived: listed for the operator as inactive, no longer sold to a signed-in user.
    const user = await customer(p, null);
    const token = (await t.issueSession(p.id, user)).token;
    const forSale = async () => (await bearer<{ packs: Array<{ id: string }> }>('GET', '/api/proxy/billing/credit-packs', token)).body.packs.map((x) => x.id);
    expect(await forSale()).toEqual([big.id, calls.id]);
    const archived = await json<{ pack: Pack }>(await post(`${base(p)}/credit-packs/${calls.id}/archive`, undefined), 200);
    expect(archived.pack).toEqual({ ...calls, active: false });
    expect(await listPacks(p)).toEqual([big, { ...calls, active: false }]);
    expect(await forSale()).toEqual([big.id]);
    // Archiving it again changes nothing.
    expect((await json<{ pack: Pack }>(await post(`${base(p)}/credit-packs/${calls.id}/archive`, undefined), 200)).pack.active).toBe(false);

    // No such pack here: an unknown id, not an id at all, or another project's pack.
    await refusal(await post(`${base(p)}/credit-packs/00000000-0000-4000-8000-000000000000/archive`, undefined), 404, 'credit_pack_not_found');
    await refusal(await post(`${base(p)}/credit-packs/nothing/archive`, undefined), 404, 'credit_pack_not_found');
    const other = await project();
    await refusal(await post(`${base(other)}/credit-packs/${big.id}/archive`, undefined), 404, 'credit_pack_not_found');
    expect(await listPacks(other)).toEqual([]);
    expect((await listPacks(p)).map((pack) => [pack.name, pack.active])).toEqual([
      ['10,000 calls', true],
      ['500 calls', false],
    ]);
  });
});

describe('who may call the usage routes', () => {
  it('needs a console session that may see the project (404 project_not_found otherwise) and a CSRF token to change anything', async () => {
    const p = await project();
    await createMeter(p, { key: 'api_calls' });
    const pack = (
      await json<{ pack: { id: string } }>(await post(`${base(p)}/credit-packs`, { feature: 'api_calls', name: 'Kept', units: 5, amount: 100 }), 201)
    ).pack;
    const user = await customer(p, null);
    await assertGuarded(
      [
        ['GET', `${base(p)}/meters`, undefined],
        ['POST', `${base(p)}/meters`, { key: 'other' }],
        ['PATCH', `${base(p)}/meters/api_calls`, { name: 'Calls' }],
        ['GET', `${base(p)}/usage/user/${user.id}`, undefined],
        ['POST', `${base(p)}/usage/credits`, { subject_type: 'user', subject_id: user.id, feature: 'api_calls', amount: 5 }],
        ['GET', `${base(p)}/usage/top?feature=api_calls`, undefined],
        ['GET', `${base(p)}/credit-packs`, undefined],
        ['POST', `${base(p)}/credit-packs`, { feature: 'api_calls', name: 'Pack', units: 100, amount: 500 }],
        ['POST', `${base(p)}/credit-packs/${pack.id}/archive`, undefined],
      ],
      outsider,
      op,
    );
    // Nothing the refused calls sent was kept.
    const meters = await json<AdminBody<'usage', 'listMeters'>>(await call(`${base(p)}/meters`, { session: op }), 200);
    expect(meters.meters.map((m) => [m.key, m.name])).toEqual([['api_calls', 'api_calls']]);
    expect((await json<SubjectUsage>(await call(`${base(p)}/usage/user/${user.id}`, { session: op }), 200)).grants).toEqual([]);
    const packs = await json<AdminBody<'billing', 'listCreditPacks'>>(await call(`${base(p)}/credit-packs`, { session: op }), 200);
    expect(packs.packs.map((x) => [x.name, x.active])).toEqual([['Kept', true]]);
    await refusal(await call(`/api/admin/projects/no-such-project/meters`, { session: op }), 404, 'project_not_found');
  });
});
