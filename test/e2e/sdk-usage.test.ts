import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import path from 'node:path';
import express from 'express';
import { createElement, type FunctionComponent, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTollgate, USAGE_BATCH_SIZE, type Tollgate, type UsageEvent, type UsageSubject } from '../../packages/sdk/src';
import { createBrowserClient, type BrowserClient, type BrowserSession, type CreditPack, type MfaChallenge } from '../../packages/sdk/src/browser';
import { startTestApp, type TestApp } from '../support/app';
import { consoleApi, type ConsoleSession } from '../support/console-api';

// The React package imports the browser client by its package name: here, the same source module as above.
vi.mock('@tollgate/sdk/browser', () => import('../../packages/sdk/src/browser'));

/** What the test uses of @tollgate/react, loaded at run time (its sources are TSX, type-checked by packages/tsconfig.json). */
interface ReactPackage {
  TollgateProvider: FunctionComponent<{ client: BrowserClient; locale?: string; children?: ReactNode }>;
  UsageBar: FunctionComponent<{ feature: string; for?: 'user' | 'organization'; label?: string; locale?: string }>;
  CreditPacks: FunctionComponent<{
    feature?: string;
    successUrl: string;
    cancelUrl: string;
    for?: 'user' | 'organization';
    packs?: CreditPack[];
    locale?: string;
  }>;
}
const loadReact = () => import(/* @vite-ignore */ path.resolve(import.meta.dirname, '../../packages/react/src/index.ts')) as Promise<ReactPackage>;

/**
 * Usage-based billing through the SDKs, against a real Tollgate (sandbox processor) and, for the
 * browser client, through the session routes of a real project server (Express); nothing of HTTP is
 * replaced. The meters and the plan's limits are set up as an operator does, through the console's
 * admin API.
 *
 * Server SDK (`tollgate.usage`): `track` of one event and of a batch, retried (the events already
 * recorded answer as duplicates), a conflicting id and an unknown meter refused as TollgateErrors;
 * `check` (nothing recorded), `consume` to the hard limit then refused (`allowed: false`, nothing
 * recorded), a consumption retried with its id counted once, `release` (never more than it holds,
 * an unknown id refused), `grantCredits` (retried with its id: one grant) and `credits`, the credits
 * drawn after the included amount, `get`; and a list of 2,500 events sent in batches of 1,000, the
 * answers summed. Browser client: the user's usage (`usage()`, `refreshUsage()` into the state,
 * `cachedUsage()`), the entitlements' `usage`, and an organization's usage as the active context.
 * React: <UsageBar> rendered on the state so read: its text, credits, progress bar attributes and
 * limit states (warning at 80%, full at 100%, the overage of a billed limit).
 *
 * Credit packs (created by the operator through the admin API): listed by the browser client
 * (`creditPacks()`), bought with `buyCreditPack` and `redirectToCreditPackCheckout` through the
 * session routes and paid on the sandbox's checkout page (its form, a test card), the credits then
 * in the buyer's usage; the refusals (an unknown pack, a return URL not allowed, an organization's
 * pack without an active organization); <CreditPacks> rendered on the packs and the usage read.
 */

const CALLBACK = 'http://127.0.0.1:5173/callback';

let t: TestApp;
let tollgate: Tollgate;
let server: Server;
let base: string;
let projectId: string;
let priceId: string;
let operator: ConsoleSession;
const admin = consoleApi(() => t);

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};

/** An admin API call as the operator, which must answer `status`. */
async function asOperator<T>(method: string, path: string, body: unknown, status: number): Promise<T> {
  const res = await admin.call(`/api/admin/projects/${projectId}${path}`, { method, body, session: operator });
  const answer = (await res.json()) as T;
  expect(res.status, `${method} ${path}: ${JSON.stringify(answer)}`).toBe(status);
  return answer;
}

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.createProject({ callbackUrls: [CALLBACK] });
  projectId = created.id;
  const billing = t.tollgate.billing;
  const plan = await t.inContext(async () => {
    ok(await billing.connectBilling(created.id, { processor: 'sandbox' }));
    const metered = ok(await billing.createPlan(created.id, { name: 'Metered', features: 'reports', audience: 'both' }));
    priceId = ok(await billing.createPrice(created.id, 'Metered', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' })).id;
    return metered;
  });
  operator = await admin.operator(`operator+${crypto.randomUUID()}@example.com`);
  // Two meters, and the plan's limits: 100 API calls a period (a hard limit), 5 reports a day, overage billed.
  await asOperator('POST', '/meters', { key: 'api_calls', name: 'API calls', unit: 'calls', aggregation: 'sum' }, 201);
  await asOperator('POST', '/meters', { key: 'reports', name: 'Reports generated', unit: 'reports', aggregation: 'count' }, 201);
  const updated = await asOperator<{ plan: { usage_limits: unknown[] } }>(
    'PATCH',
    `/plans/${plan.id}`,
    {
      usage_limits: [
        { meter: 'api_calls', included: 100, reset: 'period', overage: 'refuse' },
        { meter: 'reports', included: 5, reset: 'day', overage: 'bill', price: { unit_amount: 50, package_size: 1 } },
      ],
    },
    200,
  );
  expect(updated.plan.usage_limits).toHaveLength(2);

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

const clients: BrowserClient[] = [];
afterAll(() => {
  for (const c of clients) c.destroy();
});

/** A new user on the Metered plan: their browser client and their usage subject. */
async function subscriber(name: string): Promise<{ client: BrowserClient; subject: UsageSubject }> {
  const client = page();
  clients.push(client);
  await client.start();
  const { user } = session(await client.signUp({ email: `${name}+${crypto.randomUUID()}@example.com`, password: 'correct horse 1', name }));
  await client.subscribeWith({ priceId, paymentMethodId: 'pm_card_visa' });
  return { client, subject: { type: 'user', id: user.id } };
}

const event = (subject: UsageSubject, meter: string, value?: number): UsageEvent => ({
  id: `evt_${crypto.randomUUID()}`,
  subject,
  meter,
  ...(value !== undefined ? { value } : {}),
  timestamp: t.clock.now(),
});

describe('usage through the server SDK', () => {
  it('track: one event or a batch; a retried batch counts its recorded events as duplicates; refusals are TollgateErrors', async () => {
    const { subject } = await subscriber('tracker');
    expect(await tollgate.usage.track(event(subject, 'api_calls', 7))).toEqual({ accepted: 1, duplicates: 0 });

    const batch = [event(subject, 'api_calls', 3), event(subject, 'api_calls', 5), event(subject, 'reports')];
    expect(await tollgate.usage.track(batch)).toEqual({ accepted: 3, duplicates: 0 });
    // The same batch again (a retry after a lost answer), then with one new event: each recorded event once.
    expect(await tollgate.usage.track(batch)).toEqual({ accepted: 0, duplicates: 3 });
    expect(await tollgate.usage.track([...batch, event(subject, 'api_calls', 1)])).toEqual({ accepted: 1, duplicates: 3 });

    const usage = await tollgate.usage.get(subject);
    expect(usage.subject).toEqual(subject);
    const calls = usage.features.find((f) => f.feature === 'api_calls');
    expect(calls).toMatchObject({ name: 'API calls', unit: 'calls', included: 100, used: 16, credits: 0, remaining: 84, overage: 0, limit: 'refuse' });
    expect(usage.features.find((f) => f.feature === 'reports')).toMatchObject({ included: 5, used: 1, limit: 'bill' });
    expect(Date.parse(calls!.resetsAt)).toBeGreaterThan(t.clock.now().getTime());

    // An id already recorded with another value is refused, never overwritten; so is an unknown meter, and the batch records nothing.
    await expect(tollgate.usage.track({ ...batch[0]!, value: 4 })).rejects.toMatchObject({ name: 'TollgateError', code: 'usage_event_conflict', status: 400 });
    await expect(tollgate.usage.track([event(subject, 'api_calls', 2), event(subject, 'no_such_meter')])).rejects.toMatchObject({
      code: 'unknown_meter',
      status: 400,
    });
    await expect(tollgate.usage.track(event({ type: 'user', id: 'usr_missing' }, 'api_calls'))).rejects.toMatchObject({ code: 'unknown_subject', status: 400 });
    const old = { ...event(subject, 'api_calls'), timestamp: new Date(t.clock.now().getTime() - 2 * 24 * 3600 * 1000) };
    await expect(tollgate.usage.track(old)).rejects.toMatchObject({ code: 'usage_event_too_old', status: 400 });
    expect((await tollgate.usage.get(subject)).features.find((f) => f.feature === 'api_calls')?.used).toBe(16);
  });

  it('check records nothing; consume to the hard limit, then refused with nothing recorded; a retried consumption counts once', async () => {
    const { subject } = await subscriber('consumer');
    const checked = await tollgate.usage.check({ subject, feature: 'api_calls', amount: 30 });
    expect(checked).toMatchObject({ allowed: true, consumed: 0, eventId: null, feature: 'api_calls', included: 100, used: 0, remaining: 100 });
    expect((await tollgate.usage.check({ subject, feature: 'api_calls', amount: 101 })).allowed).toBe(false);

    const first = await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 60, id: 'job-1' });
    expect(first).toMatchObject({ allowed: true, consumed: 60, used: 60, remaining: 40 });
    expect(first.eventId).toBe('job-1');
    // The same id again (a retry): the first consumption's answer, nothing more recorded.
    const retried = await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 60, id: 'job-1' });
    expect(retried).toMatchObject({ allowed: true, consumed: 60, eventId: 'job-1' });
    expect((await tollgate.usage.get(subject)).features.find((f) => f.feature === 'api_calls')).toMatchObject({ used: 60, remaining: 40 });

    // Up to the limit (amount defaults to 1), then refused: nothing recorded.
    const last = await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 39 });
    expect(last).toMatchObject({ allowed: true, consumed: 39, remaining: 1 });
    expect(last.eventId).toEqual(expect.any(String));
    expect(await tollgate.usage.consume({ subject, feature: 'api_calls' })).toMatchObject({ allowed: true, consumed: 1, used: 100, remaining: 0 });
    const refused = await tollgate.usage.consume({ subject, feature: 'api_calls' });
    expect(refused).toMatchObject({ allowed: false, consumed: 0, eventId: null, used: 100, remaining: 0, overage: 0, limit: 'refuse' });
    expect((await tollgate.usage.get(subject)).features.find((f) => f.feature === 'api_calls')).toMatchObject({ used: 100, overage: 0 });

    // A billed limit always allows: past the 5 included reports the excess is overage.
    const reports = await tollgate.usage.consume({ subject, feature: 'reports', amount: 7 });
    expect(reports).toMatchObject({ allowed: true, consumed: 7, included: 5, used: 7, remaining: 0, overage: 2, limit: 'bill' });

    await expect(tollgate.usage.consume({ subject, feature: 'api_calls', amount: 0 })).rejects.toMatchObject({ code: 'invalid_usage_value', status: 400 });
    await expect(tollgate.usage.check({ subject, feature: 'no_such_meter' })).rejects.toMatchObject({ code: 'unknown_meter', status: 400 });
  });

  it('release gives back what a reservation did not use, never more than it holds', async () => {
    const { subject } = await subscriber('reserver');
    const reserved = await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 50, id: 'estimate-1' });
    expect(reserved).toMatchObject({ allowed: true, consumed: 50, remaining: 50 });

    const settled = await tollgate.usage.release({ subject, id: 'estimate-1', amount: 30 });
    expect(settled).toMatchObject({ feature: 'api_calls', released: 30, used: 20, remaining: 80 });
    // Asking for more than it still holds (20) gives back those 20 only.
    expect(await tollgate.usage.release({ subject, id: 'estimate-1', amount: 30 })).toMatchObject({ released: 20, used: 0, remaining: 100 });
    await expect(tollgate.usage.release({ subject, id: 'no-such-event', amount: 1 })).rejects.toMatchObject({
      name: 'TollgateError',
      code: 'usage_event_not_found',
      status: 404,
    });
  });

  it('credits: granted (a retry with its id grants once), listed, and drawn after the included amount', async () => {
    const { subject } = await subscriber('credited');
    const expiresAt = new Date(t.clock.now().getTime() + 30 * 24 * 3600 * 1000);
    const grant = await tollgate.usage.grantCredits({ id: 'welcome-1', subject, feature: 'api_calls', amount: 25, expiresAt, reason: 'Welcome' });
    expect(grant).toMatchObject({ id: expect.any(String), subject, feature: 'api_calls', amount: 25, remaining: 25, reason: 'Welcome', expired: false });
    expect(Date.parse(grant.expiresAt!)).toBe(expiresAt.getTime());
    const again = await tollgate.usage.grantCredits({ id: 'welcome-1', subject, feature: 'api_calls', amount: 25, expiresAt, reason: 'Welcome' });
    expect(again.id).toBe(grant.id);

    expect((await tollgate.usage.credits(subject)).map((g) => [g.id, g.remaining])).toEqual([[grant.id, 25]]);
    expect(await tollgate.usage.credits(subject, 'reports')).toEqual([]);
    expect((await tollgate.usage.get(subject)).features.find((f) => f.feature === 'api_calls')).toMatchObject({ included: 100, credits: 25, remaining: 125 });

    // 110 units: the 100 included, then 10 of the credits; 16 more would need 1 more than is left.
    expect(await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 110 })).toMatchObject({ allowed: true, credits: 15, remaining: 15 });
    expect(await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 16 })).toMatchObject({ allowed: false, consumed: 0, remaining: 15 });
    expect((await tollgate.usage.credits(subject, 'api_calls'))[0]).toMatchObject({ amount: 25, remaining: 15 });

    await expect(tollgate.usage.grantCredits({ subject, feature: 'api_calls', amount: 0 })).rejects.toMatchObject({
      code: 'invalid_credit_amount',
      status: 400,
    });
    await expect(tollgate.usage.credits({ type: 'user', id: 'usr_missing' })).rejects.toMatchObject({ code: 'unknown_subject', status: 400 });
  });

  it('track sends a list longer than 1,000 in batches of 1,000 and sums their answers', async () => {
    const { subject } = await subscriber('bulk');
    const events = Array.from({ length: 2500 }, () => event(subject, 'reports'));
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      expect(await tollgate.usage.track(events)).toEqual({ accepted: 2500, duplicates: 0 });
      const batches = fetchSpy.mock.calls.filter(([input]) => String(input instanceof Request ? input.url : input).endsWith('/api/v1/usage/events'));
      expect(batches).toHaveLength(Math.ceil(2500 / USAGE_BATCH_SIZE));
      const sizes = batches.map(([input, init]) => (JSON.parse(String(input instanceof Request ? '' : init?.body)) as { events: unknown[] }).events.length);
      expect(sizes).toEqual([1000, 1000, 500]);
    } finally {
      fetchSpy.mockRestore();
    }
    // The second half again with 600 new ones: 1,250 duplicates and 600 accepted, over two batches.
    const more = Array.from({ length: 600 }, () => event(subject, 'reports'));
    expect(await tollgate.usage.track([...events.slice(1250), ...more])).toEqual({ accepted: 600, duplicates: 1250 });
    expect((await tollgate.usage.get(subject)).features.find((f) => f.feature === 'reports')).toMatchObject({ used: 3100, included: 5, overage: 3095 });
    // Nothing to send: nothing sent.
    expect(await tollgate.usage.track([])).toEqual({ accepted: 0, duplicates: 0 });
  });
});

describe('usage in the browser client', () => {
  it("reads the user's usage through the session routes, into the state, and with the entitlements", async () => {
    const { client, subject } = await subscriber('reader');
    await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 12 });

    const read = await client.usage();
    expect(read.subject).toEqual(subject);
    expect(read.features.find((f) => f.feature === 'api_calls')).toMatchObject({ included: 100, used: 12, remaining: 88 });

    expect(client.cachedUsage()).toBeNull();
    await client.refreshUsage();
    expect(client.cachedUsage()).toMatchObject({ status: 'ready', loaded: true, error: null });
    expect(client.cachedUsage()?.features.find((f) => f.feature === 'api_calls')?.used).toBe(12);
    expect(client.getState().usage.user?.loaded).toBe(true);

    // Read again with the entitlements, which carry the plan's metered features too.
    await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 8 });
    await client.refreshEntitlements();
    await expect.poll(() => client.cachedUsage()?.features.find((f) => f.feature === 'api_calls')?.used).toBe(20);
    expect(client.entitlements?.usage?.find((f) => f.feature === 'api_calls')).toMatchObject({ used: 20, included: 100 });

    // No active organization: for the organization, Tollgate refuses; the user's own is the active context.
    await expect(client.usage({ for: 'organization' })).rejects.toMatchObject({ name: 'TollgateError', code: 'no_active_organization', status: 400 });
    expect(client.cachedUsage({ for: 'organization' })).toBeNull();

    // Signed out: nothing cached.
    await client.signOut();
    expect(client.getState().usage).toEqual({});
  });

  it("an active organization's usage is the active context's; the user's own stays readable", async () => {
    const { client, subject } = await subscriber('team-owner');
    const org = await client.organizations.create({ name: 'Metered Co' });
    await client.organizations.setActive(org.id);
    const team: UsageSubject = { type: 'organization', id: org.id };
    // The organization has no plan: only its credits can be used.
    await tollgate.usage.grantCredits({ subject: team, feature: 'reports', amount: 10, reason: 'Trial' });
    expect(await tollgate.usage.consume({ subject: team, feature: 'reports', amount: 4 })).toMatchObject({ allowed: true, included: 0, credits: 6 });
    expect(await tollgate.usage.consume({ subject: team, feature: 'reports', amount: 7 })).toMatchObject({ allowed: false, remaining: 6 });

    await client.refreshUsage();
    expect(client.cachedUsage()?.features).toEqual([
      expect.objectContaining({ feature: 'reports', included: 0, used: 4, credits: 6, remaining: 6, limit: 'refuse' }),
    ]);
    expect(client.getState().usage[`organization:${org.id}`]?.loaded).toBe(true);
    expect((await client.usage({ for: 'user' })).subject).toEqual(subject);
    await client.refreshUsage({ for: 'user' });
    expect(
      client
        .cachedUsage({ for: 'user' })
        ?.features.map((f) => f.feature)
        .sort(),
    ).toEqual(['api_calls', 'reports']);
  });
});

describe('<UsageBar> on the usage read through the session routes', () => {
  const attribute = (html: string, name: string) => new RegExp(`${name}="([^"]*)"`).exec(html)?.[1];
  const text = (html: string, block: string) => new RegExp(`class="tg-usage__${block}"[^>]*>([^<]*)<`).exec(html)?.[1];

  it('shows used of included with the reset date, the credits, and the limit states, as an accessible progress bar', async () => {
    const { TollgateProvider, UsageBar } = await loadReact();
    const { client, subject } = await subscriber('bar');
    const bar = async (feature: string, props: { label?: string; locale?: string } = {}) => {
      await client.refreshUsage();
      return renderToStaticMarkup(createElement(TollgateProvider, { client, locale: 'en' }, createElement(UsageBar, { feature, ...props })));
    };
    const resets = async (feature: string) => {
      const standing = (await tollgate.usage.get(subject)).features.find((f) => f.feature === feature)!;
      return new Date(standing.resetsAt).toLocaleDateString('en', { month: 'short', day: 'numeric' });
    };

    await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 12 });
    let html = await bar('api_calls');
    expect(attribute(html, 'class')).toBe('tg-usage');
    expect(text(html, 'label')).toBe('API calls');
    expect(text(html, 'text')).toBe(`12 of 100 calls used · resets ${await resets('api_calls')}`);
    expect(attribute(html, 'role')).toBe('progressbar');
    expect([attribute(html, 'aria-valuemin'), attribute(html, 'aria-valuenow'), attribute(html, 'aria-valuemax')]).toEqual(['0', '12', '100']);
    expect(attribute(html, 'aria-valuetext')).toBe(text(html, 'text'));
    expect(html).toContain('style="width:12%"');
    expect(html).not.toContain('tg-usage__credits');
    expect(html).not.toContain('tg-usage__note');

    // 80% and more: nearly at the limit.
    await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 73 });
    html = await bar('api_calls');
    expect(html).toContain('class="tg-usage tg-usage--warning"');
    expect(text(html, 'note')).toBe('Nearly at the limit');
    expect(attribute(html, 'aria-valuetext')).toBe(`${text(html, 'text')} · Nearly at the limit`);

    // 100%: the hard limit reached; the next consumption is refused and the bar stays full.
    await tollgate.usage.consume({ subject, feature: 'api_calls', amount: 15 });
    expect((await tollgate.usage.consume({ subject, feature: 'api_calls' })).allowed).toBe(false);
    html = await bar('api_calls');
    expect(html).toContain('class="tg-usage tg-usage--full"');
    expect(text(html, 'note')).toBe('Limit reached');
    expect(attribute(html, 'aria-valuenow')).toBe('100');
    expect(html).toContain('style="width:100%"');

    // Credits: shown, and what can be used grows by them (100 used of 150).
    await tollgate.usage.grantCredits({ subject, feature: 'api_calls', amount: 50 });
    html = await bar('api_calls');
    expect(attribute(html, 'class')).toBe('tg-usage');
    expect(text(html, 'credits')).toBe('Credits left: 50');
    expect([attribute(html, 'aria-valuenow'), attribute(html, 'aria-valuemax')]).toEqual(['100', '150']);

    // A billed limit past its 5 included reports: the overage, billed.
    await tollgate.usage.consume({ subject, feature: 'reports', amount: 1234 });
    html = await bar('reports', { label: 'Reports' });
    expect(html).toContain('class="tg-usage tg-usage--over"');
    expect(text(html, 'label')).toBe('Reports');
    expect(text(html, 'text')).toBe(`1,234 of 5 reports used · resets ${await resets('reports')}`);
    expect(text(html, 'note')).toBe('1,229 over the limit, billed');
    expect([attribute(html, 'aria-valuenow'), attribute(html, 'aria-valuemax')]).toEqual(['5', '5']);

    // In another locale: its strings and numbers.
    html = await bar('reports', { locale: 'de' });
    expect(text(html, 'note')).toBe('1.229 über dem Limit, wird berechnet');
    expect(attribute(html, 'lang')).toBe('de');

    // A feature the subject is not metered on, and signed out: nothing.
    expect(await bar('no_such_meter')).toBe('');
    await client.signOut();
    expect(await bar('api_calls')).toBe('');
  });
});

describe('credit packs through the browser client and <CreditPacks>', () => {
  const SHOP = 'http://127.0.0.1:5173/credits';
  const PAID = `${SHOP}?paid=1`;
  let callsId: string;
  let reportsId: string;

  /** Pays a sandbox checkout page with `card`, as its form does. */
  const pay = (url: string, card: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ card }).toString(),
      redirect: 'manual',
    });

  beforeAll(async () => {
    // A second apart (the test clock stands still): listed newest first.
    const pack = async (body: object) => {
      t.clock.advance(1000);
      return (await asOperator<{ pack: { id: string } }>('POST', '/credit-packs', body, 201)).pack.id;
    };
    callsId = await pack({ feature: 'api_calls', name: '500 calls', units: 500, amount: 900, currency: 'usd', expires_in_days: 30 });
    reportsId = await pack({ feature: 'reports', name: 'Report bundle', units: 10, amount: 250, currency: 'usd', expires_in_days: null });
    const archived = await pack({ feature: 'reports', name: 'Old bundle', units: 1, amount: 100, currency: 'usd' });
    await asOperator('POST', `/credit-packs/${archived}/archive`, undefined, 200);
  });

  it('lists the packs for sale, buys one through the sandbox checkout, and the credits are in the usage', async () => {
    const { client, subject } = await subscriber('pack-buyer');
    const packs = await client.creditPacks();
    // The active packs, newest first; the archived one is not for sale.
    expect(packs.map((p) => [p.id, p.name])).toEqual([
      [reportsId, 'Report bundle'],
      [callsId, '500 calls'],
    ]);
    expect(packs[1]).toMatchObject({ feature: 'api_calls', units: 500, amount: 900, currency: 'usd', expiresInDays: 30, active: true });
    expect(packs[0]).toMatchObject({ feature: 'reports', units: 10, amount: 250, expiresInDays: null });

    const checkout = await client.buyCreditPack(callsId, { successUrl: PAID, cancelUrl: SHOP });
    expect(checkout).toEqual({ id: expect.any(String), url: expect.stringContaining(`/sandbox/checkout/${checkout.id}`) });
    const page = await (await fetch(checkout.url)).text();
    expect(page).toContain('Buy 500 calls');
    expect(page).toContain('$9.00');
    expect((await client.usage()).features.find((f) => f.feature === 'api_calls')).toMatchObject({ credits: 0, remaining: 100 });

    const paid = await pay(checkout.url, '4242424242424242');
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(PAID);
    // Back on the page (a new page load reads the usage): the 500 credits after the 100 included.
    await client.refreshUsage();
    expect(client.cachedUsage()?.features.find((f) => f.feature === 'api_calls')).toMatchObject({ included: 100, credits: 500, remaining: 600 });
    const [grant] = await tollgate.usage.credits(subject, 'api_calls');
    expect(grant).toMatchObject({ source: 'purchase', amount: 500, remaining: 500, reason: '500 calls' });
    expect(Date.parse(grant!.expiresAt!)).toBeGreaterThan(t.clock.now().getTime() + 29 * 86_400_000);
    // Paying the same checkout again grants nothing more.
    expect((await pay(checkout.url, '4242424242424242')).status).toBeGreaterThanOrEqual(400);
    expect((await client.usage()).features.find((f) => f.feature === 'api_calls')?.credits).toBe(500);
  });

  it('redirectToCreditPackCheckout sends the browser to the checkout; refusals are TollgateErrors', async () => {
    const { client } = await subscriber('pack-redirect');
    const assign = vi.fn<(url: string) => void>();
    vi.stubGlobal('location', { assign });
    try {
      await client.redirectToCreditPackCheckout(reportsId, { successUrl: PAID, cancelUrl: SHOP });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(assign).toHaveBeenCalledTimes(1);
    const url = assign.mock.calls[0]![0];
    expect(url).toMatch(/\/sandbox\/checkout\//);
    expect((await pay(url, '4242424242424242')).status).toBe(303);
    expect((await client.usage()).features.find((f) => f.feature === 'reports')).toMatchObject({ included: 5, credits: 10, remaining: 15 });

    await expect(client.buyCreditPack('cpk_missing', { successUrl: PAID, cancelUrl: SHOP })).rejects.toMatchObject({
      name: 'TollgateError',
      code: 'credit_pack_not_found',
      status: 404,
    });
    await expect(client.buyCreditPack(callsId, { successUrl: 'https://evil.example.com/', cancelUrl: SHOP })).rejects.toMatchObject({
      code: 'redirect_url_not_allowed',
      status: 400,
    });
    await expect(client.buyCreditPack(callsId, { for: 'organization', successUrl: PAID, cancelUrl: SHOP })).rejects.toMatchObject({
      code: 'no_active_organization',
      status: 400,
    });
  });

  it('<CreditPacks> lists the packs with their terms and a Buy button each', async () => {
    const { TollgateProvider, CreditPacks } = await loadReact();
    const { client } = await subscriber('pack-list');
    const packs = await client.creditPacks();
    const render = async (props: { feature?: string; for?: 'user' | 'organization'; packs?: CreditPack[]; locale?: string } = {}) => {
      await client.refreshUsage({ for: props.for ?? 'user' }).catch(() => undefined);
      return renderToStaticMarkup(
        createElement(TollgateProvider, { client, locale: 'en' }, createElement(CreditPacks, { successUrl: PAID, cancelUrl: SHOP, packs, ...props })),
      );
    };
    const all = (html: string, block: string) => [...html.matchAll(new RegExp(`class="tg-credit-packs__${block}"[^>]*>([^<]*)<`, 'g'))].map((m) => m[1]);

    // The meter's unit from the usage read, the price from minor units, the expiry.
    let html = await render();
    expect(html).toMatch(/^<div class="tg-credit-packs" lang="en" dir="ltr">/);
    expect(html).toContain('role="list"');
    expect(all(html, 'name')).toEqual(['Report bundle', '500 calls']);
    expect(all(html, 'terms')).toEqual(['10 reports · $2.50 · never expires', '500 calls · $9.00 · expires 30 days after purchase']);
    expect(all(html, 'button')).toEqual(['Buy', 'Buy']);
    // Each button is described by its pack's name and terms.
    const described = [...html.matchAll(/aria-describedby="([^"]+)"/g)].map((m) => m[1]!.split(' '));
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(described).toHaveLength(2);
    for (const pair of described) for (const ref of pair) expect(ids).toContain(ref);

    // One meter's packs only; none of a meter: said so.
    html = await render({ feature: 'api_calls' });
    expect(all(html, 'terms')).toEqual(['500 calls · $9.00 · expires 30 days after purchase']);
    expect(all(html, 'empty')).toEqual([]);
    expect(all(await render({ feature: 'no_such_meter' }), 'empty')).toEqual(['No credit packs are available.']);

    // Another locale: its strings and its money format.
    html = await render({ feature: 'api_calls', locale: 'de' });
    expect(html).toContain('lang="de"');
    expect(all(html, 'terms')).toEqual(['500 calls · 9,00\u00a0$ · verfällt 30 Tage nach dem Kauf']);
    expect(all(html, 'button')).toEqual(['Kaufen']);

    // Not read yet: loading (the packs are read on mount).
    html = await render({ packs: undefined });
    expect(html).toContain('aria-busy="true"');
    expect(all(html, 'loading')).toEqual(['Loading…']);

    // For an organization: nothing without an active one; with one that has no usage of the meter, "credits".
    expect(await render({ for: 'organization' })).toBe('');
    const org = await client.organizations.create({ name: 'Pack Co' });
    await client.organizations.setActive(org.id);
    html = await render({ for: 'organization', feature: 'api_calls' });
    expect(all(html, 'terms')).toEqual(['500 credits · $9.00 · expires 30 days after purchase']);

    // Signed out: nothing.
    await client.signOut();
    expect(await render()).toBe('');
  });
});
