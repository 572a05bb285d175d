import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import type { AdminBody } from '../support/api-body';
import type { TestApp, TestProject } from '../support/app';
import { startTestApp } from '../support/app';
import { bearerCall } from '../support/bearer-call';
import { consoleApi, type ConsoleSession } from '../support/console-api';

/**
 * The console's project overview over HTTP against the real server and database: an empty project
 * answers empty series over 7, 30 and 90 days; sign-ups, sign-ins (and a refused one) and a token
 * refresh on two days give the sign-ups, daily and monthly active users and sign-ins by method;
 * factors give the MFA adoption; subscriptions on the sandbox (monthly, yearly, in two currencies,
 * one canceled) give the live subscriptions by plan, the MRR per currency with its change and the
 * churn; deliveries give the webhook success rate and lag. A bad range is refused (400
 * invalid_overview_range); no session answers 401, a member of another project 404, a member of
 * the project reads it.
 */
let t: TestApp;
const { call, operator, member } = consoleApi(() => t);
const bearer = bearerCall(() => t.baseUrl);
let op: ConsoleSession;

const PASSWORD = 'correct horse 1';
type Overview = AdminBody<'overview', 'get'>;

let operators = 0;
/** A fresh operator's session: moving the clock by days ends the one before (sessions idle out after 12 hours). */
const signInOperator = async () => {
  op = await operator(`overview-operator-${++operators}@example.com`);
};

beforeAll(async () => {
  t = await startTestApp();
});
beforeEach(signInOperator);
afterAll(async () => {
  await t?.close();
});

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const base = (p: { id: string }) => `/api/admin/projects/${p.id}`;

/** The overview as the console reads it, after the audit log wrote what it buffered. */
async function overview(p: { id: string }, range?: string, session: ConsoleSession = op): Promise<Overview> {
  await t.tollgate.core.audit.flush();
  return json<Overview>(await call(`${base(p)}/overview${range === undefined ? '' : `?range=${range}`}`, { session }), 200);
}

const day = (offset = 0) => new Date(t.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
const sql = (text: string, params: unknown[]) => t.inContext(() => t.tollgate.core.db.query(text, params));

async function proxy<T = unknown>(p: TestProject, path: string, body: unknown) {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}
const signUp = (p: TestProject, email: string) =>
  proxy<{ token: string; refresh_token: string; user: { id: string } }>(p, '/api/proxy/email/signup', {
    email,
    password: PASSWORD,
    callback_url: p.callbackUrl,
  });
const signIn = (p: TestProject, email: string, password = PASSWORD) =>
  proxy<{ refresh_token: string }>(p, '/api/proxy/email/signin', { email, password, callback_url: p.callbackUrl });

describe('an empty project', () => {
  it('answers the range of days and empty series for 7, 30 and 90 days, 30 by default', async () => {
    const p = await t.createProject({ name: 'Empty overview' });
    for (const range of ['7', '30', '90', undefined]) {
      const o = await overview(p, range);
      const days = Number(range ?? 30);
      expect(o.range).toBe(days);
      expect(o.days).toHaveLength(days);
      expect(o.days[days - 1]).toBe(day());
      expect(o.days[0]).toBe(day(1 - days));
      expect(o).toEqual({
        range: days,
        days: o.days,
        sign_ups: { total: 0, daily: [] },
        active_users: { today: { daily: 0, monthly: 0 }, daily: [] },
        sign_ins: { methods: [], succeeded: 0, failed: 0, daily: [] },
        mfa: { users: 0, with_factor: 0, share: null, by_method: { totp: 0, sms: 0, passkey: 0 }, daily: [] },
        subscriptions: { active: 0, plans: [], daily: [] },
        revenue: [],
        churn: { total: 0, daily: [] },
        webhooks: { succeeded: 0, failed: 0, pending: 0, success_rate: null, daily: [] },
      });
    }
  });
});

describe('users, sign-ins and MFA', () => {
  it('counts sign-ups, daily and monthly active users, sign-ins by method with failures, and users with a factor', async () => {
    const p = await t.createProject({ name: 'Users overview' });
    const first = day();
    // Day one: two sign-ups (each signs the user in), a sign-in, a refused sign-in, a refresh.
    const ada = await signUp(p, 'ada@overview.example');
    const bob = await signUp(p, 'bob@overview.example');
    expect([ada.status, bob.status]).toEqual([200, 200]);
    expect((await signIn(p, 'ada@overview.example')).status).toBe(200);
    expect((await signIn(p, 'bob@overview.example', 'wrong password 9')).status).toBe(401);
    expect((await signIn(p, 'nobody@overview.example')).status).toBe(401);
    expect((await proxy(p, '/api/proxy/token/refresh', { refresh_token: ada.body.refresh_token })).status).toBe(200);

    // Day two: a third sign-up and bob signs in.
    t.clock.advance(86_400_000);
    await signInOperator();
    const second = day();
    const cyd = await signUp(p, 'cyd@overview.example');
    expect(cyd.status).toBe(200);
    expect((await signIn(p, 'bob@overview.example')).status).toBe(200);

    // Ada has a confirmed authenticator app, bob an SMS factor, cyd an authenticator app not yet confirmed.
    const now = t.clock.now();
    await sql('insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at, confirmed_at) values (?, ?, ?, ?, ?)', [
      ada.body.user.id,
      p.id,
      'x',
      now,
      now,
    ]);
    await sql('insert into mfa_sms_factors (user_id, project_id, enrolled_at) values (?, ?, ?)', [bob.body.user.id, p.id, now]);
    await sql('insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at) values (?, ?, ?, ?)', [cyd.body.user.id, p.id, 'x', now]);

    const o = await overview(p, '7');
    expect(o.sign_ups).toEqual({
      total: 3,
      daily: [
        { date: first, count: 2 },
        { date: second, count: 1 },
      ],
    });
    expect(o.active_users).toEqual({
      today: { daily: 2, monthly: 3 },
      daily: [
        { date: first, daily: 2, monthly: 2 },
        { date: second, daily: 2, monthly: 3 },
      ],
    });
    expect(o.sign_ins).toEqual({
      methods: ['email'],
      succeeded: 5,
      failed: 2,
      daily: [
        { date: first, method: 'email', succeeded: 3, failed: 2 },
        { date: second, method: 'email', succeeded: 2, failed: 0 },
      ],
    });
    expect(o.mfa).toEqual({
      users: 3,
      with_factor: 2,
      share: 2 / 3,
      by_method: { totp: 1, sms: 1, passkey: 0 },
      daily: [
        { date: first, users: 2, with_factor: 0 },
        { date: second, users: 3, with_factor: 2 },
      ],
    });

    // 29 days after day two: ada (last seen on day one) has left the 30 days; bob and cyd (day two) are still in them.
    t.clock.advance(29 * 86_400_000);
    await signInOperator();
    const later = await overview(p, '30');
    expect(later.days[0]).toBe(second);
    expect(later.active_users.today).toEqual({ daily: 0, monthly: 2 });
    expect(later.active_users.daily).toEqual([
      { date: second, daily: 2, monthly: 3 },
      ...later.days.slice(1, 29).map((date) => ({ date, daily: 0, monthly: 3 })),
      { date: later.days[29], daily: 0, monthly: 2 },
    ]);
    t.clock.advance(86_400_000);
    await signInOperator();
    expect((await overview(p, '30')).active_users.today).toEqual({ daily: 0, monthly: 0 });
    expect((await overview(p, '90')).sign_ups.total).toBe(3);

    // Users' active days older than 32 days are pruned (ada's day one, bob's two, cyd's one); the counts stay.
    const before = (await overview(p, '90')).active_users.daily;
    t.clock.advance(5 * 86_400_000);
    await signInOperator();
    const cutoff = day(-32);
    expect(cutoff > second).toBe(true);
    expect(await t.inContext(() => t.tollgate.core.stores.overview.deleteBefore(cutoff, 10_000))).toBe(4);
    expect(await t.inContext(() => t.tollgate.core.stores.overview.deleteBefore(cutoff, 10_000))).toBe(0);
    expect((await overview(p, '90')).active_users.daily).toEqual(before);
  });
});

describe('subscriptions, revenue and churn', () => {
  it('counts live subscriptions by plan, MRR per currency (yearly divided by 12) with its change, and canceled subscriptions', async () => {
    const p = await t.createProject({ name: 'Billing overview' });
    await json(await call(`${base(p)}/billing`, { method: 'PUT', session: op, body: { processor: 'sandbox' } }), 200);
    const post = (path: string, body: unknown) => call(`${base(p)}${path}`, { method: 'POST', session: op, body });
    const plan = async (name: string) => (await json<{ plan: { id: string } }>(await post('/plans', { name }), 201)).plan.id;
    const price = async (planId: string, body: Record<string, unknown>) =>
      (await json<{ price: { id: string } }>(await post(`/plans/${planId}/prices`, { name: 'Price', ...body }), 201)).price.id;
    const pro = await plan('Pro');
    const basic = await plan('Basic');
    const proMonthly = await price(pro, { amount: 1000, interval: 'month' });
    const proYearly = await price(pro, { amount: 9000, interval: 'year' });
    const basicEur = await price(basic, { amount: 500, interval: 'month', currency: 'eur' });

    let n = 0;
    const subscriber = async (priceId: string) => {
      const user = await t.seedUser(p.id, { email: `payer-${++n}@overview.example` });
      const token = (await t.issueSession(p.id, user)).token;
      const r = await bearer('POST', '/api/proxy/billing/subscribe', token, { priceId, paymentMethodId: 'pm_card_visa' });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return token;
    };
    await subscriber(proMonthly);
    await subscriber(proYearly);
    await subscriber(basicEur);
    const leaving = await subscriber(proMonthly);
    const canceled = await bearer('POST', '/api/proxy/billing/subscription/cancel', leaving, { at_period_end: false });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);

    const o = await overview(p, '7');
    const today = day();
    expect(o.subscriptions).toEqual({
      active: 3,
      plans: [
        { id: pro, name: 'Pro', active: 2 },
        { id: basic, name: 'Basic', active: 1 },
      ],
      daily: [
        { date: today, plan_id: pro, active: 2 },
        { date: today, plan_id: basic, active: 1 },
      ],
    });
    expect(o.revenue).toEqual([
      { currency: 'eur', mrr: 500, start_mrr: 0, change: 500, daily: [{ date: today, mrr: 500 }] },
      // 1,000 a month plus 9,000 a year (750 a month); the canceled subscription no longer counts.
      { currency: 'usd', mrr: 1750, start_mrr: 0, change: 1750, daily: [{ date: today, mrr: 1750 }] },
    ]);
    expect(o.churn).toEqual({ total: 1, daily: [{ date: today, count: 1 }] });

    // A week later the change is measured from the day before the range: nothing changed since.
    t.clock.advance(8 * 86_400_000);
    await signInOperator();
    const later = await overview(p, '7');
    expect(later.revenue.map((r) => [r.currency, r.mrr, r.start_mrr, r.change, r.daily.length])).toEqual([
      ['eur', 500, 500, 0, 7],
      ['usd', 1750, 1750, 0, 7],
    ]);
    expect(later.churn).toEqual({ total: 0, daily: [] });
    expect(later.subscriptions.active).toBe(3);
  });
});

describe('webhook deliveries', () => {
  it('gives the success rate of finished deliveries and the lag of those delivered, per day', async () => {
    const p = await t.createProject({ name: 'Webhooks overview' });
    const endpoint = crypto.randomUUID();
    const now = t.clock.now();
    await sql(
      `insert into webhook_endpoints (id, project_id, url, secret_enc, secret_prefix, created_at, updated_at)
       values (?, ?, 'https://hooks.example.com/in', 'x', 'whsec_x', ?, ?)`,
      [endpoint, p.id, now, now],
    );
    const delivery = (status: string, lagMs: number | null) =>
      sql(
        `insert into webhook_deliveries (id, project_id, endpoint_id, event_type, payload, status, created_at, completed_at)
         values (?, ?, ?, 'user.created', '{}', ?, ?, ?)`,
        [crypto.randomUUID(), p.id, endpoint, status, now, lagMs === null ? null : new Date(now.getTime() + lagMs)],
      );
    for (const lag of [1000, 2000, 3000]) await delivery('succeeded', lag);
    await delivery('failed', 60_000);
    await delivery('pending', null);

    const o = await overview(p, '7');
    expect(o.webhooks).toEqual({
      succeeded: 3,
      failed: 1,
      pending: 1,
      success_rate: 0.75,
      daily: [{ date: day(), succeeded: 3, failed: 1, pending: 1, lag_p50_ms: 2000, lag_p95_ms: 2900 }],
    });
  });
});

describe('refusals and roles', () => {
  it('refuses a bad range, answers 401 without a session and 404 to a member of another project; a member of the project reads it', async () => {
    const p = await t.createProject({ name: 'Guarded overview' });
    for (const range of ['5', 'abc', '30.5', '007', '-7', '']) {
      const res = await call(`${base(p)}/overview?range=${range}`, { session: op });
      if (range === '') {
        expect(res.status).toBe(200);
        continue;
      }
      const body = await json<ErrorBody>(res, 400);
      expect(body).toEqual({ error: 'Invalid range: 7, 30 or 90 (days ending today, UTC)', code: 'invalid_overview_range' });
    }
    expect((await call(`${base(p)}/overview`)).status).toBe(401);
    const outsider = await member('overview-outsider@example.com', [(await t.createProject({ name: 'Elsewhere' })).id]);
    expect(await json(await call(`${base(p)}/overview`, { session: outsider }), 404)).toMatchObject({ code: 'project_not_found' });
    expect(await json(await call('/api/admin/projects/not-a-uuid/overview', { session: op }), 404)).toMatchObject({ code: 'project_not_found' });
    const insider = await member('overview-insider@example.com', [p.id]);
    expect((await overview(p, '90', insider)).range).toBe(90);
  });
});
