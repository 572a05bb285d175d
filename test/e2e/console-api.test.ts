import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import type { AdminBody } from '../support/api-body';

/**
 * The admin API the web console calls, over HTTP against the real server: console sessions
 * (cookie + CSRF header), expiry by the test clock, one-time links, operator and member access,
 * and every project, settings and API-key route.
 */
let t: TestApp;

interface Session {
  cookie: string;
  csrf: string;
}

const api = (path: string, init: { method?: string; body?: unknown; session?: Session | null; csrf?: string | null } = {}) => {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.session) headers.cookie = init.session.cookie;
  const csrf = init.csrf === undefined ? init.session?.csrf : init.csrf;
  if (csrf) headers['x-csrf-token'] = csrf;
  return fetch(`${t.baseUrl}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
};

async function sessionFrom(res: Response): Promise<Session> {
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^tollgate_console=tgc_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
  const body = (await res.json()) as { csrf_token: string };
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token };
}

async function operator(email: string): Promise<Session> {
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email, role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  const token = created.value.link!.token;
  return sessionFrom(await api('/api/admin/session/link', { method: 'POST', body: { token } }));
}

async function member(email: string, projectIds: string[]): Promise<Session> {
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email, role: 'member', password: 'member pass 1' }));
  if (!created.ok) throw new Error(created.error);
  await t.inContext(async () => {
    for (const id of projectIds)
      await t.tollgate.core.db.query('insert into console_memberships (account_id, project_id, created_at) values (?, ?, now())', [
        created.value.account.id,
        id,
      ]);
  });
  return sessionFrom(await api('/api/admin/session', { method: 'POST', body: { email, password: 'member pass 1' } }));
}

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
});
afterAll(async () => {
  await t?.close();
});

describe('console sessions', () => {
  it('a one-time link signs in once; the session carries its CSRF token; sign-out ends it', async () => {
    const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'Op1@Example.com', role: 'operator' }));
    if (!created.ok) throw new Error(created.error);
    const token = created.value.link!.token;
    const s = await sessionFrom(await api('/api/admin/session/link', { method: 'POST', body: { token } }));
    const again = await api('/api/admin/session/link', { method: 'POST', body: { token } });
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: 'sign_in_link_invalid' });

    const me = await api('/api/admin/session', { session: s });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ account: { email: 'Op1@example.com', role: 'operator' }, csrf_token: s.csrf, signup_mode: 'invite' });

    const out = await api('/api/admin/session', { method: 'DELETE', session: s });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await api('/api/admin/session', { session: s })).status).toBe(401);
  });

  it('an expired link is refused', async () => {
    const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'late@example.com', role: 'operator' }));
    if (!created.ok) throw new Error(created.error);
    t.clock.advanceSeconds(3601);
    const r = await api('/api/admin/session/link', { method: 'POST', body: { token: created.value.link!.token } });
    expect(r.status).toBe(401);
  });

  it('without a session every admin route answers 401; a state-changing call without or with a wrong CSRF token 403', async () => {
    const none = await api('/api/admin/projects');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'console_session_required' });
    expect((await api('/api/admin/projects', { session: { cookie: 'tollgate_console=tgc_forged', csrf: 'x' } })).status).toBe(401);

    const s = await operator('csrf@example.com');
    const missing = await api('/api/admin/projects', { method: 'POST', body: { name: 'No CSRF' }, session: s, csrf: null });
    expect(missing.status).toBe(403);
    expect(await missing.json()).toMatchObject({ code: 'csrf_token_invalid' });
    const wrong = await api('/api/admin/projects', { method: 'POST', body: { name: 'Wrong CSRF' }, session: s, csrf: 'a'.repeat(64) });
    expect(wrong.status).toBe(403);
    // Nothing was created by the refused calls.
    const list = (await (await api('/api/admin/projects', { session: s })).json()) as { projects: { name: string }[] };
    expect(list.projects.map((p) => p.name)).not.toContain('No CSRF');
  });

  it('a session ends after 12 hours idle and after 7 days in any case (the injected clock)', async () => {
    const s = await operator('expiry@example.com');
    t.clock.advanceSeconds(11 * 3600);
    expect((await api('/api/admin/session', { session: s })).status).toBe(200);
    t.clock.advanceSeconds(11 * 3600); // 11 h since the last request: still alive
    expect((await api('/api/admin/session', { session: s })).status).toBe(200);
    t.clock.advanceSeconds(12 * 3600 + 1);
    expect((await api('/api/admin/session', { session: s })).status).toBe(401);

    const kept = await operator('absolute@example.com');
    // Used every 11 hours, it stays alive for 165 hours; the next request, at 176 hours, is past 7 days.
    for (let i = 0; i < 15; i++) {
      t.clock.advanceSeconds(11 * 3600);
      expect((await api('/api/admin/session', { session: kept })).status).toBe(200);
    }
    t.clock.advanceSeconds(11 * 3600);
    expect((await api('/api/admin/session', { session: kept })).status).toBe(401);
  });

  it('password sign-in: set in the console, wrong password refused, rate-limited per address', async () => {
    const s = await operator('pw@example.com');
    const weak = await api('/api/admin/account/password', { method: 'PUT', body: { password: 'onlyletters' }, session: s });
    expect(weak.status).toBe(400);
    expect(await weak.json()).toMatchObject({ code: 'password_missing_number' });
    expect((await api('/api/admin/account/password', { method: 'PUT', body: { password: 'console pass 1' }, session: s })).status).toBe(200);

    await sessionFrom(await api('/api/admin/session', { method: 'POST', body: { email: 'PW@example.com', password: 'console pass 1' } }));
    const wrong = await api('/api/admin/session', { method: 'POST', body: { email: 'pw@example.com', password: 'nope nope 1' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: 'invalid_console_credentials' });
    const unknown = await api('/api/admin/session', { method: 'POST', body: { email: 'nobody@example.com', password: 'nope nope 1' } });
    expect(unknown.status).toBe(401);
    let last = 0;
    for (let i = 0; i < 9 && last !== 429; i++)
      last = (await api('/api/admin/session', { method: 'POST', body: { email: 'pw@example.com', password: 'x' } })).status;
    expect(last).toBe(429);
  });

  it('sign-up is refused in invite mode', async () => {
    expect(await (await api('/api/admin/signup')).json()).toEqual({ signup_mode: 'invite' });
    const r = await api('/api/admin/signup', { method: 'POST', body: { email: 'new@example.com', password: 'new pass 12' } });
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ code: 'console_signup_closed' });
  });
});

describe('projects, settings and API keys', () => {
  it('an operator creates a project (key shown once), changes its settings and manages its keys', async () => {
    const s = await operator('projects@example.com');
    const bad = await api('/api/admin/projects', { method: 'POST', body: { name: '  ' }, session: s });
    expect(bad.status).toBe(400);

    const created = await api('/api/admin/projects', { method: 'POST', body: { name: 'Console app', callback_urls: ['https://c.example/cb'] }, session: s });
    expect(created.status).toBe(201);
    const { project, api_key } = (await created.json()) as {
      project: { id: string; providers: { provider: string; redirect_uri: string | null }[] };
      api_key: string;
    };
    expect(api_key).toMatch(/^tg_/);
    expect(project.providers.find((p) => p.provider === 'google')?.redirect_uri).toBe(`${t.baseUrl}/api/proxy/callback/google`);
    // The key works against the project API.
    expect((await t.client(api_key).token.verify({ body: { token: 'x' } })).status).toBe(200);

    const patch = await api(`/api/admin/projects/${project.id}`, {
      method: 'PATCH',
      session: s,
      body: {
        enable: ['google'],
        provider_credentials: [{ provider: 'google', credentials: { clientId: 'cid', clientSecret: 'secret' } }],
        add_callback_urls: ['https://c.example/other'],
        allow_account_linking: true,
        mfa_policy: 'required',
        mfa_methods: ['totp'],
        default_locale: 'it',
      },
    });
    expect(patch.status).toBe(200);
    const updated = ((await patch.json()) as AdminBody<'projects', 'update'>).project;
    expect(updated.settings).toMatchObject({
      enabled_providers: ['email', 'google'],
      callback_urls: ['https://c.example/cb', 'https://c.example/other'],
      allow_account_linking: true,
      mfa_policy: 'required',
      mfa_methods: ['totp'],
      default_locale: 'it',
    });
    expect(updated.providers.find((p) => p.provider === 'google')).toMatchObject({ enabled: true, credentials_configured: true });
    expect(JSON.stringify(updated)).not.toContain('secret');
    const invalid = await api(`/api/admin/projects/${project.id}`, { method: 'PATCH', session: s, body: { add_callback_urls: ['ftp://x'] } });
    expect(invalid.status).toBe(400);
    // Incomplete or malformed credentials are refused when set, naming the field; nothing is stored.
    const refusals: Array<[string, Record<string, string>, string]> = [
      ['github', { clientId: 'x' }, 'Invalid OAuth provider credentials for github: clientSecret is missing (github needs clientId, clientSecret)'],
      [
        'azure',
        { clientId: 'x', clientSecret: 'azure-secret-value', tenant: 'bad tenant!' },
        'Invalid OAuth provider credentials for azure: tenant is malformed',
      ],
      [
        'apple',
        { clientId: 'com.example.web', teamId: 'T', keyId: 'K', privateKey: 'not-a-key-value' },
        'Invalid OAuth provider credentials for apple: privateKey is malformed',
      ],
      [
        'google',
        { clientId: 'x', clientSecret: 'google-secret-value', teamId: 'T' },
        'Invalid OAuth provider credentials for google: teamId is not used by google',
      ],
    ];
    for (const [provider, credentials, message] of refusals) {
      const refused = await api(`/api/admin/projects/${project.id}`, {
        method: 'PATCH',
        session: s,
        body: { enable: [provider], provider_credentials: [{ provider, credentials }] },
      });
      const body = (await refused.json()) as { error: string; code: string };
      expect({ provider, status: refused.status, code: body.code }).toEqual({ provider, status: 400, code: 'invalid_provider_credentials' });
      expect(body.error.startsWith(message)).toBe(true);
      expect(body.error).not.toContain(credentials.clientSecret ?? credentials.privateKey ?? '\u0000');
    }
    const unchanged = ((await (await api(`/api/admin/projects/${project.id}`, { session: s })).json()) as AdminBody<'projects', 'get'>).project;
    expect(unchanged.providers.filter((p) => p.credentials_configured).map((p) => p.provider)).toEqual(['google']);
    expect(unchanged.settings.enabled_providers).toEqual(['email', 'google']);

    const key = await api(`/api/admin/projects/${project.id}/api-keys`, { method: 'POST', session: s, body: { label: 'ci' } });
    expect(key.status).toBe(201);
    const k = (await key.json()) as { api_key: string; key: { id: string; prefix: string } };
    expect(k.api_key.startsWith(k.key.prefix)).toBe(true);
    const listed = (await (await api(`/api/admin/projects/${project.id}/api-keys`, { session: s })).json()) as {
      api_keys: { id: string; label: string | null }[];
    };
    expect(listed.api_keys.map((x) => x.label)).toEqual(['default', 'ci']);
    expect((await api(`/api/admin/projects/${project.id}/api-keys/${k.key.id}`, { method: 'DELETE', session: s })).status).toBe(200);
    const twice = await api(`/api/admin/projects/${project.id}/api-keys/${k.key.id}`, { method: 'DELETE', session: s });
    expect(twice.status).toBe(404);
    expect((await t.client(k.api_key).token.verify({ body: { token: 'x' } })).status).toBe(401);

    // Deactivating answers 404 to the project's API key from then on.
    expect((await api(`/api/admin/projects/${project.id}`, { method: 'PATCH', session: s, body: { active: false } })).status).toBe(200);
    expect((await t.client(api_key).token.verify({ body: { token: 'x' } })).status).toBe(404);
  });

  it("a member sees only its projects: another project's routes answer 404; it cannot create projects in invite mode", async () => {
    const mine = await t.createProject({ name: 'Mine' });
    const other = await t.createProject({ name: 'Other' });
    const s = await member('member@example.com', [mine.id]);
    const list = (await (await api('/api/admin/projects', { session: s })).json()) as { projects: { id: string }[] };
    expect(list.projects.map((p) => p.id)).toEqual([mine.id]);
    expect((await api(`/api/admin/projects/${mine.id}`, { session: s })).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', `/api/admin/projects/${other.id}`, undefined],
      ['PATCH', `/api/admin/projects/${other.id}`, { name: 'Taken' }],
      ['GET', `/api/admin/projects/${other.id}/api-keys`, undefined],
      ['POST', `/api/admin/projects/${other.id}/api-keys`, {}],
      ['DELETE', `/api/admin/projects/${other.id}/api-keys/00000000-0000-4000-8000-000000000000`, undefined],
    ] as const) {
      const r = await api(path, { method, session: s, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(await r.json()).toMatchObject({ code: 'project_not_found' });
    }
    const create = await api('/api/admin/projects', { method: 'POST', body: { name: 'Nope' }, session: s });
    expect(create.status).toBe(403);
    expect(await create.json()).toMatchObject({ code: 'console_operator_only' });
  });
});
