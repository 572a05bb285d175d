import path from 'node:path';
import { createElement, type FunctionComponent, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BrowserClient, type ActiveOrganization, type ChannelLike, type MyOrganization, type OrganizationCheck } from '../../packages/sdk/src/browser';

// The React package imports the browser client by its package name: here, the same source module as above.
vi.mock('@tollgate/sdk/browser', () => import('../../packages/sdk/src/browser'));

/**
 * What the test uses of @tollgate/react, loaded at run time: its sources are TSX that import
 * `@tollgate/sdk/browser`, which packages/tsconfig.json type-checks (the root project has no JSX).
 */
interface ReactPackage {
  TollgateProvider: FunctionComponent<{ client: BrowserClient; locale?: string; children?: ReactNode }>;
  Protect: FunctionComponent<{ role?: string; permission?: string; plan?: string; feature?: string; fallback?: ReactNode; children?: ReactNode }>;
  useOrganization(): { isLoaded: boolean; active: ActiveOrganization | null; organization: MyOrganization | null; has(check: OrganizationCheck): boolean };
}
const reactEntry = path.resolve(import.meta.dirname, '../../packages/react/src/index.ts');
const loadReact = () => import(/* @vite-ignore */ reactEntry) as Promise<ReactPackage>;

/**
 * The browser client's organizations: the active organization read from the `org` claim of the
 * token held, the switch (a new access token replaces the old one, in this tab and the others, and
 * every later call carries it), the list kept in the state and read again after a change, a new
 * token after leaving the active organization; and @tollgate/react's <Protect role permission> and
 * useOrganization() on that state. The "server" is the project server's session routes as the
 * browser sees them, with Tollgate's organization routes behind them.
 */

const ORGS = {
  org_1: { id: 'org_1', name: 'Acme', slug: 'acme', role: 'admin', permissions: ['org:members:manage', 'reports:read'] },
  org_2: { id: 'org_2', name: 'Globex', slug: 'globex', role: 'member', permissions: [] as string[] },
} as const;
type OrgId = keyof typeof ORGS;

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

function projectServer() {
  let n = 0;
  let active: OrgId | null = null;
  const memberOf = new Set<OrgId>(['org_1', 'org_2']);
  const requests: Array<{ method: string; path: string; token: string | null }> = [];
  const issued: string[] = [];
  const token = () => {
    const iat = Math.floor(Date.now() / 1000);
    const org = active && memberOf.has(active) ? ORGS[active] : null;
    const claims = { sub: 'u1', iat, exp: iat + 300, n: ++n, ...(org ? { org: { id: org.id, slg: org.slug, rol: org.role, per: org.permissions } } : {}) };
    const t = `${b64({ alg: 'HS256' })}.${b64(claims)}.sig`;
    issued.push(t);
    return t;
  };
  const user = { id: 'u1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true };
  const session = () => ({ token: token(), expiresAt: new Date(Date.now() + 300_000).toISOString(), user });
  const myOrgs = () => [...memberOf].map((id) => ({ ...ORGS[id], image_url: null, members_count: 2 }));

  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const path = String(input);
    const method = init.method ?? 'GET';
    const auth = new Headers(init.headers).get('authorization');
    requests.push({ method, path, token: auth?.replace(/^Bearer /, '') ?? null });
    const body = typeof init.body === 'string' && init.body ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    await new Promise((r) => setTimeout(r, 1));
    if (path === '/tollgate/session/refresh') return Response.json(session());
    if (path === '/tollgate/api/proxy/organizations/active') {
      const id = body.organization_id as OrgId | null;
      if (id !== null && !memberOf.has(id)) return Response.json({ error: 'Organization not found', code: 'organization_not_found' }, { status: 404 });
      active = id;
      const org = id ? ORGS[id] : null;
      return Response.json({ token: token(), organization: org ? { id: org.id, slug: org.slug, role: org.role, permissions: org.permissions } : null });
    }
    if (path === '/tollgate/api/proxy/organizations' && method === 'GET')
      return Response.json({ organizations: myOrgs(), required: false, can_create: true, suggestions: [] });
    if (path === '/tollgate/api/proxy/organizations' && method === 'POST') return Response.json({ ...ORGS.org_1, name: body.name }, { status: 201 });
    if (path === '/tollgate/api/proxy/invitations') return Response.json({ invitations: [] });
    const leave = /^\/tollgate\/api\/proxy\/organizations\/(org_\d)\/leave$/.exec(path);
    if (leave) {
      memberOf.delete(leave[1] as OrgId);
      return Response.json({ success: true });
    }
    const join = /^\/tollgate\/api\/proxy\/organizations\/(org_\d)\/join$/.exec(path);
    if (join && method === 'POST') {
      memberOf.add(join[1] as OrgId);
      return Response.json({ ...ORGS[join[1] as OrgId], image_url: null, members_count: 3 });
    }
    // The active organization's plan (Team, with export) and the user's own (Free, without it).
    if (path === '/tollgate/api/proxy/billing/entitlements?for=organization') {
      if (active === null || !memberOf.has(active)) return Response.json({ error: 'No active organization', code: 'no_active_organization' }, { status: 400 });
      return Response.json({ plan: 'Team', status: 'active', features: ['export'] });
    }
    if (path === '/tollgate/api/proxy/billing/entitlements') return Response.json({ plan: 'Free', status: 'active', features: [] });
    if (path === '/tollgate/api/proxy/billing/products') return Response.json({ products: [] });
    return Response.json({ error: 'Not found', code: 'not_found' }, { status: 404 });
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    requests,
    issued,
    memberOf,
    refreshes: () => requests.filter((r) => r.path.endsWith('/session/refresh')).length,
  };
}

const clients: BrowserClient[] = [];
const tab = (server: ReturnType<typeof projectServer>, channel: ChannelLike | null = null) => {
  const client = new BrowserClient({ baseUrl: '/tollgate', fetch: server.fetch, locks: null, channel, autoRefresh: false, watchVisibility: false });
  clients.push(client);
  return client;
};
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
});

describe('the active organization in a page', () => {
  it('switching holds the new token at once: the state, has() and every later call use it', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    expect(client.getState().organization).toBeNull();
    expect(client.has({ role: 'admin' })).toBe(false);

    const answered = await client.organizations.setActive('org_1');
    expect(answered).toEqual({ id: 'org_1', slug: 'acme', role: 'admin', permissions: ['org:members:manage', 'reports:read'] });
    const switched = server.issued.at(-1)!;
    expect(client.getState().organization).toEqual(answered);
    expect(client.organization?.slug).toBe('acme');
    expect(await client.getToken()).toBe(switched);
    expect(client.has({ permission: 'reports:read' })).toBe(true);
    expect(client.has({ role: 'admin', permission: 'org:delete' })).toBe(false);

    // The next call carries the new token; no refresh was needed for it.
    await client.organizations.mine();
    expect(server.requests.at(-1)).toMatchObject({ path: '/tollgate/api/proxy/organizations', token: switched });
    expect(server.refreshes()).toBe(1);

    // Combined with the billing check: both parts must pass (the entitlements are read again after a switch).
    await client.refreshEntitlements();
    expect(server.requests.filter((r) => r.path.includes('/billing/entitlements')).at(-1)).toMatchObject({
      path: '/tollgate/api/proxy/billing/entitlements?for=organization',
      token: switched,
    });
    expect(client.has({ permission: 'reports:read', feature: 'export' })).toBe(true);
    expect(client.has({ permission: 'reports:read', feature: 'sso' })).toBe(false);

    // Back to none.
    expect(await client.organizations.setActive(null)).toBeNull();
    expect(client.getState().organization).toBeNull();
  });

  it('a refused switch changes nothing', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    const before = await client.getToken();
    await expect(client.organizations.setActive('org_9')).rejects.toMatchObject({ name: 'TollgateError', code: 'organization_not_found', status: 404 });
    expect(await client.getToken()).toBe(before);
    expect(client.getState().organization).toBeNull();
  });

  it('the other tabs adopt the switched token and its organization', async () => {
    const server = projectServer();
    const name = `tollgate-orgs-${Math.random()}`;
    const a = tab(server, new BroadcastChannel(name));
    const b = tab(server, new BroadcastChannel(name));
    await a.start();
    await new Promise((r) => setTimeout(r, 20));
    await a.organizations.setActive('org_2');
    await new Promise((r) => setTimeout(r, 20));
    expect(b.getState().organization).toMatchObject({ id: 'org_2', role: 'member' });
    expect(await b.getToken()).toBe(await a.getToken());
  });

  it('keeps the list of organizations in the state, reads it again after a change, and gets a new token after leaving the active one', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    expect(client.getState().organizations).toMatchObject({ status: 'idle', loaded: false });
    await client.organizations.refresh();
    expect(client.getState().organizations).toMatchObject({ status: 'ready', loaded: true, canCreate: true, invitations: [] });
    expect(client.getState().organizations.list.map((o) => o.id)).toEqual(['org_1', 'org_2']);

    await client.organizations.setActive('org_1');
    const refreshesBefore = server.refreshes();
    await client.organizations.leave('org_1');
    // A new token from the session: the membership is gone, so it names no organization.
    expect(server.refreshes()).toBe(refreshesBefore + 1);
    expect(client.getState().organization).toBeNull();
    expect(client.getState().organizations.list.map((o) => o.id)).toEqual(['org_2']);

    // Joining a suggested organization answers it and reads the list again; the active one stays as it was.
    const joined = await client.organizations.join('org_1');
    expect(joined.id).toBe('org_1');
    expect(server.requests.filter((r) => r.method === 'POST' && r.path === '/tollgate/api/proxy/organizations/org_1/join')).toHaveLength(1);
    expect(client.getState().organizations.list.map((o) => o.id)).toEqual(['org_2', 'org_1']);
    expect(client.getState().organization).toBeNull();
  });

  it('signing out forgets the organization and the list', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    await client.organizations.refresh();
    await client.organizations.setActive('org_1');
    await client.signOut().catch(() => undefined);
    expect(client.getState()).toMatchObject({ status: 'signed-out', organization: null, organizations: { status: 'idle', list: [], loaded: false } });
  });
});

describe('@tollgate/react on that state', async () => {
  const { TollgateProvider, Protect, useOrganization } = await loadReact();
  const render = (client: BrowserClient, child: ReturnType<typeof createElement>) =>
    renderToStaticMarkup(createElement(TollgateProvider, { client, locale: 'en' }, child));
  const protect = (props: Record<string, string>) => createElement(Protect, { ...props, fallback: 'no' }, 'yes');

  it('<Protect role permission> follows the token of the active organization, and every part must pass', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    expect(render(client, protect({ permission: 'reports:read' }))).toBe('no');
    await client.organizations.setActive('org_1');
    expect(render(client, protect({ permission: 'reports:read' }))).toBe('yes');
    expect(render(client, protect({ role: 'admin' }))).toBe('yes');
    expect(render(client, protect({ role: 'owner' }))).toBe('no');
    expect(render(client, protect({ role: 'admin', permission: 'org:delete' }))).toBe('no');
    await client.refreshEntitlements();
    expect(render(client, protect({ permission: 'reports:read', feature: 'export' }))).toBe('yes');
    expect(render(client, protect({ permission: 'reports:read', feature: 'sso' }))).toBe('no');
  });

  it('useOrganization() answers the claim at once and the details from the list', async () => {
    const server = projectServer();
    const client = tab(server);
    await client.start();
    await client.organizations.setActive('org_2');
    const Show = () => {
      const { isLoaded, active, organization, has } = useOrganization();
      return `${isLoaded}|${active?.slug}|${organization?.name ?? '-'}|${has({ role: 'member' })}`;
    };
    expect(render(client, createElement(Show))).toBe('false|globex|-|true');
    await client.organizations.refresh();
    expect(render(client, createElement(Show))).toBe('true|globex|Globex|true');
  });
});
