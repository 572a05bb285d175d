import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTollgate, organizationSatisfies, type ActiveOrganization, type AuthenticatedRequest, type NodeResponseLike } from '../../packages/sdk/src';
import { organizationOfToken, readTokenClaims } from '../../packages/sdk/src/organizations';

/**
 * The server SDK's organization helpers: the role and permission rules, `verify` with the active
 * organization and its `has`, `has(token, { permission, feature })` with the billing check, the
 * middleware's `req.organization` and its 403, and the session routes that pass the user's
 * organization routes through. Tollgate here is a fake behind the global fetch, answering the verify
 * and billing routes as the contract says.
 */

const admin: ActiveOrganization = { id: 'org_1', slug: 'acme', role: 'admin', permissions: ['org:members:manage', 'org:settings:manage', 'reports:read'] };

describe('the rules', () => {
  it('a role check passes for that role only (a role is a name, not a rank)', () => {
    expect(organizationSatisfies(admin, { role: 'admin' })).toBe(true);
    expect(organizationSatisfies(admin, { role: 'owner' })).toBe(false);
    expect(organizationSatisfies({ ...admin, role: 'owner' }, { role: 'admin' })).toBe(false);
  });
  it("a permission check passes when the role's permissions contain it", () => {
    expect(organizationSatisfies(admin, { permission: 'reports:read' })).toBe(true);
    expect(organizationSatisfies(admin, { permission: 'org:delete' })).toBe(false);
  });
  it('both must pass when both are given', () => {
    expect(organizationSatisfies(admin, { role: 'admin', permission: 'reports:read' })).toBe(true);
    expect(organizationSatisfies(admin, { role: 'admin', permission: 'org:delete' })).toBe(false);
    expect(organizationSatisfies(admin, { role: 'member', permission: 'reports:read' })).toBe(false);
  });
  it('no active organization passes nothing', () => {
    expect(organizationSatisfies(null, { role: 'admin' })).toBe(false);
    expect(organizationSatisfies(undefined, { permission: 'reports:read' })).toBe(false);
  });
});

/** A JWT-shaped token with these claims (the SDK never checks a signature: Tollgate does). */
const jwt = (claims: Record<string, unknown>) => {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}.sig`;
};

describe("the token's org claim, read for display", () => {
  it('answers {id, slug, role, permissions} from {id, slg, rol, per}', () => {
    const token = jwt({ sub: 'u1', org: { id: 'org_1', slg: 'acme', rol: 'admin', per: ['reports:read', 7] } });
    expect(organizationOfToken(token)).toEqual({ id: 'org_1', slug: 'acme', role: 'admin', permissions: ['reports:read'] });
  });
  it('answers null for a token without one, a malformed claim or no JWT at all', () => {
    expect(organizationOfToken(jwt({ sub: 'u1' }))).toBeNull();
    expect(organizationOfToken(jwt({ sub: 'u1', org: { id: 'org_1', slg: 'acme' } }))).toBeNull();
    expect(organizationOfToken('not-a-token')).toBeNull();
    expect(organizationOfToken('a.%%%.c')).toBeNull();
  });
  it('reads UTF-8 claims', () => {
    expect(readTokenClaims(jwt({ name: 'Zoë 日本' }))?.name).toBe('Zoë 日本');
  });
});

// --- a fake Tollgate behind the global fetch ------------------------------------------------

const user = { id: 'u1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true };
interface FakeToken {
  organization: ActiveOrganization | null;
  features: string[] | null;
}
let tokens: Map<string, FakeToken>;
let calls: Array<{ method: string; path: string; authorization: string | null; body: string | null }>;

function fakeTollgate(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(String(input));
  const headers = new Headers(init.headers);
  const body = typeof init.body === 'string' ? init.body : null;
  const method = (init.method ?? 'GET').toUpperCase();
  calls.push({ method, path: `${url.pathname}${url.search}`, authorization: headers.get('authorization'), body });
  const bearer = headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
  if (url.pathname === '/api/v1/token/verify') {
    const known = tokens.get((JSON.parse(body ?? '{}') as { token: string }).token);
    return Promise.resolve(
      known
        ? Response.json({ valid: true, user, expiresAt: '2030-01-01T00:00:00.000Z', organization: known.organization })
        : Response.json({ valid: false, user: null, expiresAt: null, organization: null }),
    );
  }
  if (url.pathname === '/api/proxy/billing/entitlements') {
    const known = tokens.get(bearer);
    if (!known) return Promise.resolve(Response.json({ error: 'Invalid or expired access token', code: 'invalid_access_token' }, { status: 401 }));
    return Promise.resolve(Response.json(known.features ? { plan: 'Pro', status: 'active', features: known.features } : null));
  }
  if (url.pathname.startsWith('/api/proxy/email/')) return Promise.resolve(Response.json({ success: true }));
  if (url.pathname.startsWith('/api/proxy/')) return Promise.resolve(Response.json({ passed: true, method, path: url.pathname }, { status: 201 }));
  return Promise.resolve(Response.json({ error: 'Not found', code: 'not_found' }, { status: 404 }));
}

beforeEach(() => {
  tokens = new Map([
    ['t-admin', { organization: admin, features: ['export'] }],
    ['t-member', { organization: { id: 'org_1', slug: 'acme', role: 'member', permissions: [] }, features: null }],
    ['t-none', { organization: null, features: ['export'] }],
  ]);
  calls = [];
  vi.stubGlobal('fetch', vi.fn(fakeTollgate));
});
afterEach(() => {
  vi.unstubAllGlobals();
});

const tollgate = () => createTollgate({ baseUrl: 'http://tollgate.test', apiKey: 'tg_key', fetch: (...args) => fakeTollgate(...args) });

describe('verify and has', () => {
  it('verify answers the user, the active organization and has({ role, permission }) on it, without another call', async () => {
    const auth = await tollgate().verify('t-admin');
    expect(auth).toMatchObject({ user: { id: 'u1' }, organization: admin, token: 't-admin', expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(auth!.has({ permission: 'reports:read' })).toBe(true);
    expect(auth!.has({ role: 'admin', permission: 'org:delete' })).toBe(false);
    expect(calls).toHaveLength(1);
    const none = await tollgate().verify('t-none');
    expect(none!.organization).toBeNull();
    expect(none!.has({ role: 'member' })).toBe(false);
    expect(await tollgate().verify('nope')).toBeNull();
  });

  it('has(token, { permission, feature }) needs both: the verify answer and the entitlements', async () => {
    const tg = tollgate();
    expect(await tg.has('t-admin', { permission: 'reports:read', feature: 'export' })).toBe(true);
    expect(calls.map((c) => c.path).sort()).toEqual(['/api/proxy/billing/entitlements', '/api/v1/token/verify']);
    expect(await tg.has('t-admin', { permission: 'reports:read', feature: 'sso' })).toBe(false);
    expect(await tg.has('t-none', { permission: 'reports:read', feature: 'export' })).toBe(false);
    expect(await tg.has('t-member', { role: 'member' })).toBe(true);
    expect(await tg.has('t-member', { role: 'member', feature: 'export' })).toBe(false);
    // A token Tollgate does not accept is a no, not an error, once a role or permission is asked.
    expect(await tg.has('nope', { permission: 'reports:read', feature: 'export' })).toBe(false);
    // Billing alone asks no verify, as before.
    calls = [];
    expect(await tg.has('t-admin', { feature: 'export' })).toBe(true);
    expect(calls.map((c) => c.path)).toEqual(['/api/proxy/billing/entitlements']);
  });
});

/** Runs a Node-style middleware on a request with this Bearer token; answers what it sent, or the request it passed on. */
function runMiddleware(mw: (req: never, res: NodeResponseLike, next: (e?: unknown) => void) => void, token: string | null) {
  const req = { headers: token ? { authorization: `Bearer ${token}` } : {} } as Record<string, unknown>;
  return new Promise<{ passed: AuthenticatedRequest | null; status: number; body: unknown }>((resolve, reject) => {
    const res: NodeResponseLike = {
      statusCode: 200,
      setHeader: () => undefined,
      end: (text?: string) => resolve({ passed: null, status: res.statusCode, body: text ? JSON.parse(text) : null }),
    };
    mw(req as never, res, (error) => (error ? reject(error) : resolve({ passed: req as unknown as AuthenticatedRequest, status: 200, body: null })));
  });
}

describe('the middleware and check', () => {
  it('requireUser sets req.user, req.organization and req.tollgate with has()', async () => {
    const { passed } = await runMiddleware(tollgate().requireUser(), 't-admin');
    expect(passed!.user.id).toBe('u1');
    expect(passed!.organization).toEqual(admin);
    expect(passed!.tollgate.organization).toEqual(admin);
    expect(passed!.tollgate.has({ role: 'admin' })).toBe(true);
    const none = await runMiddleware(tollgate().requireUser(), 't-none');
    expect(none.passed!.organization).toBeNull();
  });

  it('requireAccess: 403 missing_permission without the role or permission, 403 entitlement_required without the plan or feature', async () => {
    const tg = tollgate();
    const reports = tg.requireAccess({ permission: 'reports:read', feature: 'export' });
    expect((await runMiddleware(reports, 't-admin')).passed?.organization).toEqual(admin);
    expect(await runMiddleware(reports, 't-member')).toMatchObject({
      status: 403,
      body: {
        code: 'missing_permission',
        error: 'This needs the reports:read permission in the active organization',
        required: { permission: 'reports:read', feature: 'export' },
      },
    });
    expect(await runMiddleware(reports, 't-none')).toMatchObject({
      status: 403,
      body: { code: 'missing_permission', error: 'This needs an active organization, with the reports:read permission' },
    });
    const adminOnly = tg.requireAccess({ role: 'admin', feature: 'sso' });
    expect(await runMiddleware(adminOnly, 't-admin')).toMatchObject({
      status: 403,
      body: { code: 'entitlement_required', error: 'This needs the sso feature' },
    });
    expect(await runMiddleware(reports, null)).toMatchObject({ status: 401, body: { code: 'invalid_access_token' } });
  });

  it('authorize answers the verified token with its organization and has(), or the 403 Response', async () => {
    const tg = tollgate();
    const ok = await tg.authorize(new Request('http://app.test/', { headers: { authorization: 'Bearer t-admin' } }), { role: 'admin' });
    expect(ok).not.toBeInstanceOf(Response);
    expect((ok as Exclude<typeof ok, Response>).has({ permission: 'org:members:manage' })).toBe(true);
    const refused = await tg.authorize(new Request('http://app.test/', { headers: { authorization: 'Bearer t-member' } }), { role: 'admin' });
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(403);
    expect(await (refused as Response).json()).toMatchObject({ code: 'missing_permission', error: 'This needs the admin role in the active organization' });
  });
});

describe('the session routes pass the user organization routes through', () => {
  const routes = () => tollgate().sessionRoutes({ callbackUrl: 'https://app.test/callback' });
  const send = (path: string, init: RequestInit = {}) => routes().fetch(new Request(`https://app.test/tollgate${path}`, init), '/tollgate');

  it("passes organizations, invitations and roles with the user's token, and nothing of the project server's routes", async () => {
    const auth = { authorization: 'Bearer t-admin' };
    for (const [method, path] of [
      ['GET', '/api/proxy/organizations'],
      ['POST', '/api/proxy/organizations/active'],
      ['PATCH', '/api/proxy/organizations/org_1/members/u2'],
      ['DELETE', '/api/proxy/organizations/org_1/invitations/inv_1'],
      ['GET', '/api/proxy/organization-roles'],
      ['GET', '/api/proxy/invitations'],
      ['POST', '/api/proxy/invitations/accept'],
    ] as const) {
      calls = [];
      const body = method === 'GET' ? undefined : JSON.stringify({});
      const res = await send(path, { method, headers: { ...auth, 'content-type': 'application/json' }, ...(body ? { body } : {}) });
      expect(res?.status, `${method} ${path}`).toBe(201);
      expect(calls).toEqual([{ method, path, authorization: 'Bearer t-admin', body: body ?? null }]);
    }
    calls = [];
    for (const path of ['/api/v1/organizations', '/api/proxy/organizationsX', '/api/proxy/admin/organizations', '/api/proxy/organization-roles/x']) {
      expect(await send(path, { headers: auth }), path).toBeNull();
    }
    expect(calls).toEqual([]);
  });

  it("gives an invitation without callback_url the session routes' callbackUrl, and keeps one that has it", async () => {
    const post = (body: object) =>
      send('/api/proxy/organizations/org_1/invitations', {
        method: 'POST',
        headers: { authorization: 'Bearer t-admin', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await post({ email: 'grace@example.com', role: 'member' });
    await post({ email: 'grace@example.com', callback_url: 'https://app.test/join' });
    expect(calls.map((c) => JSON.parse(c.body!))).toEqual([
      { email: 'grace@example.com', role: 'member', callback_url: 'https://app.test/callback' },
      { email: 'grace@example.com', callback_url: 'https://app.test/join' },
    ]);
  });

  it("verifies the token user's own address with a code, and refuses without a token", async () => {
    const json = { 'content-type': 'application/json' };
    const verified = await send('/session/verify-email', {
      method: 'POST',
      headers: { ...json, authorization: 'Bearer t-admin' },
      body: JSON.stringify({ code: '123456', email: 'someone@else.test' }),
    });
    expect(verified?.status).toBe(200);
    const call = calls.find((c) => c.path === '/api/proxy/email/verify')!;
    expect(call.authorization).toBe('Bearer tg_key');
    expect(JSON.parse(call.body!)).toEqual({ email: 'ada@example.com', code: '123456' });
    const anonymous = await send('/session/verify-email', { method: 'POST', headers: json, body: JSON.stringify({ code: '123456' }) });
    expect(anonymous?.status).toBe(401);
    calls = [];
    await send('/session/resend-verification', { method: 'POST', headers: { ...json, authorization: 'Bearer t-admin' }, body: '{}' });
    expect(JSON.parse(calls.find((c) => c.path === '/api/proxy/email/verify/resend')!.body!)).toEqual({
      email: 'ada@example.com',
      callback_url: 'https://app.test/callback',
    });
  });
});
