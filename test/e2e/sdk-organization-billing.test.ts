import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTollgate, type Tollgate } from '../../packages/sdk/src';
import { createBrowserClient, type BrowserClient, type BrowserSession, type MfaChallenge, type MyOrganization } from '../../packages/sdk/src/browser';
import { startTestApp, type TestApp } from '../support/app';

/**
 * The SDKs with organizations as customers, against a real Tollgate (sandbox processor) through
 * the session routes of a real project server (Express); nothing of HTTP is replaced.
 *
 * Browser client: the catalog for organizations (`plans({ for: 'organization' })`), a team
 * subscribed with `{ for: 'organization' }`, the entitlements cached for `has()` following the
 * active context (the organization's when one is active, read again on every switch, the user's
 * own otherwise and when the token names an organization the user has left), `has({ plan,
 * permission })` composing the team's plan with the member's role, and a member's change refused
 * with the SDK's `missing_permission`. Server SDK: `verify(token, { include: ['entitlements'] })`
 * and its `has`, `entitlements`/`has`/`requireEntitlement` following the token's context, and
 * `organizationBilling` (subscription, entitlements, invoices, has, cancel) with the API key.
 */

const CALLBACK = 'http://127.0.0.1:5173/callback';

let t: TestApp;
let tollgate: Tollgate;
let server: Server;
let base: string;
let prices: { basic: string; pro: string; team: string };

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.createProject({ callbackUrls: [CALLBACK] });
  const billing = t.tollgate.billing;
  await t.inContext(async () => {
    ok(await billing.connectBilling(created.id, { processor: 'sandbox' }));
    // Basic for users only, Pro for both, Team for organizations only.
    ok(await billing.createPlan(created.id, { name: 'Basic', features: 'reports' }));
    const basic = ok(await billing.createPrice(created.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPlan(created.id, { name: 'Pro', features: 'reports, export', audience: 'both' }));
    const pro = ok(await billing.createPrice(created.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPlan(created.id, { name: 'Team', features: 'reports, export, sso', audience: 'organizations' }));
    const team = ok(await billing.createPrice(created.id, 'Team', { name: 'Monthly', amount: 6000, currency: 'usd', interval: 'month' }));
    prices = { basic: basic.id, pro: pro.id, team: team.id };
  });
  tollgate = createTollgate({ baseUrl: t.baseUrl, apiKey: created.apiKey });
  const app = express();
  app.use('/tollgate', tollgate.sessionRoutes({ callbackUrl: CALLBACK }).express);
  // The project's own API: Pro or above, of the token's context.
  app.get('/api/report', tollgate.requireEntitlement({ plan: 'pro' }), (_req, res) => res.json({ ok: true }));
  app.get('/api/sso', tollgate.requireAccess({ feature: 'sso', permission: 'org:billing:manage' }), (_req, res) => res.json({ ok: true }));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
});

/** A page's browser client: one cookie jar (the refresh cookie), no timers; tabs of one browser share the jar and a channel. */
function page(browser: { jar: Map<string, string>; channel: string } | null = null): BrowserClient {
  const jar = browser?.jar ?? new Map<string, string>();
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
  const channel = browser ? new BroadcastChannel(browser.channel) : null;
  return createBrowserClient({ baseUrl: `${base}/tollgate`, fetch: fetchWithCookies, channel, locks: null, autoRefresh: false, watchVisibility: false });
}

const session = (answer: BrowserSession | MfaChallenge): BrowserSession => {
  if ('mfa_required' in answer) throw new Error('expected a session, got an MFA challenge');
  return answer;
};

async function signedUp(name: string, browser: { jar: Map<string, string>; channel: string } | null = null): Promise<{ client: BrowserClient; id: string }> {
  const client = page(browser);
  await client.start();
  const { user } = session(await client.signUp({ email: `${name.toLowerCase()}+${crypto.randomUUID()}@example.com`, password: 'correct horse 1', name }));
  await client.refreshEntitlements();
  return { client, id: user.id };
}

const report = async (client: BrowserClient) => (await fetch(`${base}/api/report`, { headers: { authorization: `Bearer ${await client.getToken()}` } })).status;

/** Until `check` passes (a message between tabs arrives on its own time). */
async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('a team as the customer, through the SDKs', () => {
  const olgasBrowser = { jar: new Map<string, string>(), channel: `tollgate-${crypto.randomUUID()}` };
  let olga: BrowserClient;
  let piet: BrowserClient;
  let pietId: string;
  let acme: MyOrganization;
  afterAll(() => {
    olga?.destroy();
    piet?.destroy();
  });

  it('lists the plans sold to organizations, and subscribes the active organization on the sandbox', async () => {
    ({ client: olga } = await signedUp('Olga', olgasBrowser));
    expect((await olga.plans()).map((p) => p.name)).toEqual(['Basic', 'Pro']);
    expect((await olga.plans({ for: 'organization' })).map((p) => p.name)).toEqual(['Pro', 'Team']);

    // Without an active organization, acting for one is refused.
    await expect(olga.subscription({ for: 'organization' })).rejects.toMatchObject({ name: 'TollgateError', code: 'no_active_organization', status: 400 });

    acme = await olga.organizations.create({ name: 'Acme' });
    await olga.organizations.setActive(acme.id);
    await olga.refreshEntitlements();
    expect(olga.getState().billing).toMatchObject({ status: 'ready', entitlements: null, organizationId: acme.id });

    // A plan not sold to organizations; then the team's plan, with a Stripe test card on the sandbox.
    await expect(olga.subscribeWith({ priceId: prices.basic, paymentMethodId: 'pm_card_visa', for: 'organization' })).rejects.toMatchObject({
      code: 'plan_audience_mismatch',
      status: 400,
    });
    const subscribed = await olga.subscribeWith({ priceId: prices.team, paymentMethodId: 'pm_card_visa', for: 'organization' });
    expect(subscribed).toMatchObject({ status: 'active', plan: { name: 'Team' } });

    // The cached entitlements are the team's (read again after the change): has() composes them with the role.
    expect(olga.getState().billing).toMatchObject({ entitlements: { plan: 'Team', status: 'active' }, organizationId: acme.id });
    expect(olga.has({ plan: 'pro' })).toBe(true);
    expect(olga.has({ plan: 'team', feature: 'sso', permission: 'org:billing:manage' })).toBe(true);
    expect(await report(olga)).toBe(200);

    // The team's reads; the user's own are apart (nothing personal).
    expect(await olga.subscription({ for: 'organization' })).toMatchObject({ id: subscribed.id, plan: { name: 'Team' } });
    expect(await olga.readEntitlements({ for: 'organization' })).toMatchObject({ plan: 'Team' });
    expect((await olga.invoices({ for: 'organization', limit: 5 })).map((i) => i.status)).toEqual(['paid']);
    expect(await olga.subscription()).toBeNull();
    expect(await olga.readEntitlements()).toBeNull();
    expect(await olga.invoices(5)).toEqual([]);
    // A second subscription of the team, by checkout, is refused; a change to Pro is a downgrade (nothing due now).
    await expect(olga.checkout({ priceId: prices.pro, successUrl: CALLBACK, cancelUrl: CALLBACK, for: 'organization' })).rejects.toMatchObject({
      code: 'subscription_exists',
    });
    expect(await olga.previewChange(prices.pro, { for: 'organization' })).toMatchObject({ amountDue: 0 });
  });

  it("another tab follows a switch: it adopts the new token and reads the new context's entitlements", async () => {
    const second = page(olgasBrowser);
    try {
      await second.start();
      expect(second.getState()).toMatchObject({ organization: { id: acme.id }, billing: { entitlements: { plan: 'Team' }, organizationId: acme.id } });
      await olga.organizations.setActive(null);
      await until(() => second.getState().organization === null && second.getState().billing.status === 'ready');
      expect(second.getState().billing).toMatchObject({ entitlements: null, organizationId: null });
      expect(second.has({ plan: 'pro' })).toBe(false);
      await olga.organizations.setActive(acme.id);
      await until(() => second.getState().billing.organizationId === acme.id);
      expect(second.has({ plan: 'pro', permission: 'org:billing:manage' })).toBe(true);
      await olga.refreshEntitlements();
      expect(olga.has({ plan: 'team' })).toBe(true);
    } finally {
      second.destroy();
    }
  });

  it("a member is entitled to the team's plan while the team is active, and gets missing_permission for changes", async () => {
    ({ client: piet, id: pietId } = await signedUp('Piet'));
    const added = await tollgate.client.serverOrganizations.addMember({ params: { orgId: acme.id }, body: { user_id: pietId, role: 'member' } });
    expect(added.status).toBe(201);
    expect(piet.has({ plan: 'basic' })).toBe(false);

    // Switching reads the team's entitlements: has({ plan }) passes from them, without a plan of his own.
    await piet.organizations.setActive(acme.id);
    await piet.refreshEntitlements();
    expect(piet.getState().billing).toMatchObject({ entitlements: { plan: 'Team' }, organizationId: acme.id, loaded: true });
    expect(piet.has({ plan: 'pro' })).toBe(true);
    expect(piet.has({ feature: 'sso' })).toBe(true);
    // ...but not with a permission his role lacks: both parts must pass.
    expect(piet.has({ plan: 'pro', permission: 'org:billing:manage' })).toBe(false);
    expect(await report(piet)).toBe(200);

    // Reads are for every member; changes need org:billing:manage: the SDK's error says so.
    expect(await piet.subscription({ for: 'organization' })).toMatchObject({ plan: { name: 'Team' } });
    const refusal = { name: 'TollgateError', code: 'missing_permission', status: 403 };
    await expect(piet.cancel({ for: 'organization' })).rejects.toMatchObject(refusal);
    await expect(piet.changePlan(prices.pro, { for: 'organization' })).rejects.toMatchObject(refusal);
    await expect(piet.checkout({ priceId: prices.pro, successUrl: CALLBACK, cancelUrl: CALLBACK, for: 'organization' })).rejects.toMatchObject(refusal);
    await expect(piet.pause({ for: 'organization' })).rejects.toMatchObject(refusal);
    expect(await olga.subscription({ for: 'organization' })).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });

    // Back to his personal account: his own entitlements (none), read again by the switch.
    await piet.organizations.setActive(null);
    await piet.refreshEntitlements();
    expect(piet.getState().billing).toMatchObject({ entitlements: null, organizationId: null });
    expect(piet.has({ plan: 'pro' })).toBe(false);
    expect(await report(piet)).toBe(403);
  });

  it('the server SDK: verify with the entitlements of the context, has and requireEntitlement follow it', async () => {
    await piet.organizations.setActive(acme.id);
    const inTeam = await piet.getToken();
    const verified = await tollgate.verify(inTeam, { include: ['entitlements'] });
    expect(verified).toMatchObject({ organization: { id: acme.id, role: 'member' }, entitlements: { plan: 'Team', status: 'active' } });
    expect(verified!.plans.map((p) => p.name)).toEqual(['Basic', 'Pro', 'Team']);
    expect(verified!.has({ plan: 'pro', feature: 'sso' })).toBe(true);
    expect(verified!.has({ plan: 'pro', permission: 'org:billing:manage' })).toBe(false);
    expect(verified!.has({ role: 'member' })).toBe(true);
    // Without include, no entitlements are read or answered.
    expect(await tollgate.verify(inTeam)).not.toHaveProperty('entitlements');

    expect(await tollgate.entitlements(inTeam)).toMatchObject({ plan: 'Team' });
    expect(await tollgate.entitlements(inTeam, { for: 'user' })).toBeNull();
    expect(await tollgate.entitlements(inTeam, { for: 'organization' })).toMatchObject({ plan: 'Team' });
    expect(await tollgate.has(inTeam, { plan: 'pro' })).toBe(true);
    expect(await tollgate.has(inTeam, { plan: 'pro', role: 'member' })).toBe(true);
    expect(await tollgate.has(inTeam, { feature: 'sso', permission: 'org:billing:manage' })).toBe(false);
    const get = async (path: string, token: string) => {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as { code?: string } };
    };
    expect(await get('/api/sso', inTeam)).toMatchObject({ status: 403, body: { code: 'missing_permission' } });
    expect(await get('/api/sso', await olga.getToken())).toEqual({ status: 200, body: { ok: true } });

    await piet.organizations.setActive(null);
    const personal = await piet.getToken();
    expect((await tollgate.verify(personal, { include: ['entitlements'] }))?.entitlements).toBeNull();
    expect(await tollgate.has(personal, { plan: 'pro' })).toBe(false);
    expect(await get('/api/report', personal)).toMatchObject({ status: 403, body: { code: 'entitlement_required' } });
    await expect(tollgate.entitlements(personal, { for: 'organization' })).rejects.toMatchObject({ code: 'no_active_organization', status: 400 });
  });

  it("a token that names a team its user has left counts the user's own entitlements", async () => {
    await piet.organizations.setActive(acme.id);
    await piet.refreshEntitlements();
    const stale = await piet.getToken();
    expect(piet.getState().billing.organizationId).toBe(acme.id);
    const removed = await tollgate.client.serverOrganizations.removeMember({ params: { orgId: acme.id, userId: pietId } });
    expect(removed.status).toBe(200);
    // The token held still names the team (its claim): the browser reads the user's instead, as verify does.
    expect(piet.getState().organization?.id).toBe(acme.id);
    await piet.refreshEntitlements();
    expect(piet.getState().billing).toMatchObject({ status: 'ready', entitlements: null, organizationId: null });
    expect(piet.has({ plan: 'pro' })).toBe(false);
    expect(await tollgate.entitlements(stale)).toBeNull();
    expect(await tollgate.has(stale, { plan: 'pro' })).toBe(false);
  });

  it("the project server reads and cancels any team's billing with the API key", async () => {
    const billing = tollgate.organizationBilling;
    expect(await billing.subscription(acme.slug)).toMatchObject({ plan: { name: 'Team' }, status: 'active' });
    expect(await billing.entitlements(acme.id)).toEqual({ plan: 'Team', status: 'active', features: ['reports', 'export', 'sso'] });
    expect((await billing.invoices(acme.id, { limit: 1 })).map((i) => i.status)).toEqual(['paid']);
    expect(await billing.has(acme.slug, { plan: 'pro', feature: 'sso' })).toBe(true);
    expect(await billing.has(acme.slug, { plan: 'enterprise' })).toBe(false);
    await expect(billing.subscription('no-such-team')).rejects.toMatchObject({ name: 'TollgateError', code: 'organization_not_found', status: 404 });

    expect(await billing.cancel(acme.id)).toMatchObject({ cancelAtPeriodEnd: true });
    // Olga's page reads the change when it reads again (here, by hand; a page does it when the tab shows again).
    await olga.refreshEntitlements();
    expect(olga.getState().billing.entitlements).toMatchObject({ plan: 'Team', status: 'pending_cancellation' });
    expect(await billing.cancel(acme.id, { atPeriodEnd: false })).toMatchObject({ status: 'canceled' });
    await olga.refreshEntitlements();
    expect(olga.getState().billing).toMatchObject({ entitlements: null, organizationId: acme.id });
    expect(olga.has({ plan: 'basic' })).toBe(false);
    expect(await billing.subscription(acme.id)).toBeNull();
  });
});
