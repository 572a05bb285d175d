import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTollgate, signWebhook, type Tollgate } from '../../packages/sdk/src';
import type { Project } from '../../domain/project';
import { startTestApp, type TestApp } from '../support/app';

/**
 * The server SDK's helpers against a real Tollgate: requireUser / requireEntitlement in Express
 * (401 and 403 bodies), `authorize` for fetch-based servers, the typed errors, and the session
 * routes a browser uses (sign-up, the refresh cookie and its rotation, sign-out, the public
 * catalog, billing passed through with the user's token).
 */

let t: TestApp;
let project: Project;
let apiKey: string;
let tollgate: Tollgate;
let server: Server;
let base: string;
let proPrice: string;

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};

beforeAll(async () => {
  t = await startTestApp();
  const created = await t.createProject({ callbackUrls: ['http://127.0.0.1/callback'] });
  apiKey = created.apiKey;
  await t.inContext(async () => {
    project = (await t.tollgate.admin.getProject(created.id))!;
    const billing = t.tollgate.billing;
    ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
    ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports' }));
    ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
    ok(await billing.createPlan(project.id, { name: 'Pro', features: 'reports, export' }));
    proPrice = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' })).id;
  });
  tollgate = createTollgate({ baseUrl: t.baseUrl, apiKey });
  const app = express();
  app.use('/tollgate', tollgate.sessionRoutes({ callbackUrl: 'http://127.0.0.1/callback' }).express);
  app.get('/me', tollgate.requireUser(), (req, res) => res.json({ id: (req as unknown as { user: { id: string } }).user.id }));
  app.get('/export', tollgate.requireUser(), tollgate.requireEntitlement({ feature: 'export' }), (_req, res) => res.json({ ok: true }));
  app.get('/pro', tollgate.requireEntitlement({ plan: 'pro' }), (_req, res) => res.json({ ok: true }));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
});

async function signedIn(plan: 'Pro' | null) {
  const user = await t.seedUser(project.id);
  if (plan)
    ok(
      await t.inContext(() =>
        t.tollgate.billing.subscribe({ project, user }, { priceId: proPrice, paymentMethodId: 'pm_card_visa', requestKey: crypto.randomUUID() }),
      ),
    );
  return { user, token: (await t.issueSession(project.id, user)).token };
}
const get = async (path: string, token?: string) => {
  const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('the server helpers', () => {
  it('requireUser: 401 with a clear body without a valid token; req.user with one', async () => {
    const ada = await signedIn(null);
    expect(await get('/me')).toEqual({
      status: 401,
      body: { error: 'Sign in first: send Authorization: Bearer <ACCESS_TOKEN>', code: 'invalid_access_token' },
    });
    expect(await get('/me', 'nope')).toEqual({ status: 401, body: { error: 'Invalid or expired access token', code: 'invalid_access_token' } });
    expect(await get('/me', ada.token)).toEqual({ status: 200, body: { id: ada.user.id } });
  });

  it('requireEntitlement: 403 naming what is missing; passes for the feature and for the plan', async () => {
    const free = await signedIn(null);
    const pro = await signedIn('Pro');
    expect(await get('/export', free.token)).toEqual({
      status: 403,
      body: { error: 'This needs the export feature', code: 'entitlement_required', required: { feature: 'export' } },
    });
    expect(await get('/pro', free.token)).toMatchObject({ status: 403, body: { error: 'This needs the pro plan or above', code: 'entitlement_required' } });
    expect(await get('/pro')).toMatchObject({ status: 401 });
    expect(await get('/export', pro.token)).toEqual({ status: 200, body: { ok: true } });
    expect(await get('/pro', pro.token)).toEqual({ status: 200, body: { ok: true } });
  });

  it('authorize for fetch servers; has, entitlements and verifyToken; typed errors with the API code', async () => {
    const pro = await signedIn('Pro');
    const request = (token?: string) => new Request('http://app.test/x', { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const granted = await tollgate.authorize(request(pro.token), { plan: 'Basic', feature: 'export' });
    expect(granted).toMatchObject({ user: { id: pro.user.id }, token: pro.token });
    const refused = await tollgate.authorize(request(), { plan: 'Pro' });
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(401);
    expect(await tollgate.entitlements(pro.token)).toEqual({ plan: 'Pro', status: 'active', features: ['reports', 'export'] });
    expect(await tollgate.has(pro.token, { plan: 'basic' })).toBe(true);
    expect((await tollgate.verifyToken(pro.token))?.id).toBe(pro.user.id);
    expect(await tollgate.verifyToken('nope')).toBeNull();
    await expect(tollgate.entitlements('nope')).rejects.toMatchObject({ name: 'TollgateError', code: 'invalid_access_token', status: 401 });
    const wrongKey = createTollgate({ baseUrl: t.baseUrl, apiKey: 'tg_wrong' });
    await expect(wrongKey.verifyToken(pro.token)).rejects.toMatchObject({ code: 'invalid_api_key', status: 401, message: 'Invalid API key' });
  });

  it('verifyWebhook with the secret given to createTollgate', async () => {
    const withSecret = createTollgate({ baseUrl: t.baseUrl, apiKey, webhookSecret: 'whsec_test' });
    const payload = JSON.stringify({ id: 'e1', type: 'test', created: new Date().toISOString(), projectId: project.id, data: {} });
    const timestamp = Date.now();
    const headers = { 'x-service-timestamp': String(timestamp), 'x-service-signature': await signWebhook('whsec_test', timestamp, payload) };
    expect(await withSecret.verifyWebhook({ payload, headers })).toMatchObject({ id: 'e1', type: 'test' });
    await expect(withSecret.verifyWebhook({ payload: `${payload} `, headers })).rejects.toMatchObject({ reason: 'invalid_signature', status: 401 });
  });
});

describe('the session routes a browser uses', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/tollgate${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const cookieOf = (res: Response) => res.headers.get('set-cookie') ?? '';

  it('signs up into an HttpOnly cookie, refreshes by rotating it, and signs out', async () => {
    const signup = await post('/session/signup', { email: 'bea@example.com', password: 'correct horse 1', name: 'Bea' });
    expect(signup.status).toBe(200);
    const session = (await signup.json()) as { token: string; expiresAt: string; user: { email: string }; refresh_token?: string };
    expect(session).toMatchObject({ token: expect.any(String), expiresAt: expect.any(String), user: { email: 'bea@example.com', provider: 'email' } });
    expect(session.refresh_token).toBeUndefined();
    const cookie = cookieOf(signup);
    expect(cookie).toMatch(/^tollgate_session=rt_[^;]+; Path=\/tollgate\/session; Max-Age=2592000; HttpOnly; SameSite=Lax$/);
    const first = cookie.split(';')[0]!;

    const refreshed = await post('/session/refresh', {}, { cookie: first });
    expect(refreshed.status).toBe(200);
    const second = cookieOf(refreshed).split(';')[0]!;
    expect(second).not.toBe(first);
    expect(((await refreshed.json()) as { user: { email: string } }).user.email).toBe('bea@example.com');

    const out = await post('/session/signout', {}, { cookie: second });
    expect(out.status).toBe(200);
    expect(cookieOf(out)).toMatch(/^tollgate_session=; .*Max-Age=0/);
    const after = await post('/session/refresh', {}, { cookie: second });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ code: 'invalid_refresh_token' });
    expect(await (await post('/session/refresh', {})).json()).toEqual({ error: 'No session: sign in first', code: 'not_signed_in' });
  });

  it("answers Tollgate's errors as they are, and takes JSON only", async () => {
    const bad = await post('/session/signin', { email: 'nobody@example.com', password: 'wrong password 1' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: 'Invalid email or password', code: 'invalid_credentials' });
    const form = await fetch(`${base}/tollgate/session/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=a',
    });
    expect(form.status).toBe(415);
  });

  it('passes billing through with the user token, and shows the catalog to visitors', async () => {
    const visitor = await fetch(`${base}/tollgate/api/proxy/billing/plans`);
    expect(visitor.status).toBe(200);
    expect(((await visitor.json()) as { plans: Array<{ name: string }> }).plans.map((p) => p.name)).toEqual(['Basic', 'Pro']);
    expect((await fetch(`${base}/tollgate/api/proxy/billing/entitlements`)).status).toBe(401);
    const pro = await signedIn('Pro');
    const mine = await fetch(`${base}/tollgate/api/proxy/billing/entitlements`, { headers: { authorization: `Bearer ${pro.token}` } });
    expect(await mine.json()).toMatchObject({ plan: 'Pro', status: 'active' });
    expect((await fetch(`${base}/tollgate/elsewhere`)).status).toBe(404);
  });
});
