import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';

let t: TestApp;

const CALLBACK = 'https://registered.com/auth/callback';
const RATE_LIMIT = 20;

const SPEC = {
  key: { error: 'Invalid API key', code: 'invalid_api_key' },
  missing: { error: 'Missing callback_url parameter', code: 'missing_callback_url' },
  unsupported: { error: 'Unsupported provider', code: 'unsupported_provider' },
  inactive: { error: 'Project not found or inactive', code: 'project_inactive' },
  unregistered: { error: 'Callback URL not registered for this provider', code: 'callback_url_not_registered' },
  disabled: { error: 'Provider not enabled for this project', code: 'provider_not_enabled' },
  limited: { error: 'Too many requests', code: 'rate_limited' },
};

const credentials = {
  google: { clientId: 'g-id', clientSecret: 'g-secret' },
  github: { clientId: 'gh-id', clientSecret: 'gh-secret' },
  discord: { clientId: 'dc-id', clientSecret: 'dc-secret' },
  azure: { clientId: 'az-id', clientSecret: 'az-secret' },
  apple: { clientId: 'com.example.web', teamId: 'TEAM', keyId: 'KEY', privateKey: '-----BEGIN PRIVATE KEY-----\nMIG\n-----END PRIVATE KEY-----' },
};

async function newProject(opts: { enable?: string[]; withCredentials?: boolean } = {}): Promise<TestProject> {
  const p = await t.createProject({ callbackUrls: [CALLBACK] });
  const enable = opts.enable ?? ['google', 'github', 'discord', 'azure', 'apple'];
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(p.id, {
      enable,
      providerCredentials: opts.withCredentials === false ? [] : Object.entries(credentials).map(([provider, c]) => ({ provider, credentials: c })),
    }),
  );
  if (!r.ok) throw new Error(r.error);
  return p;
}

const post = (apiKey: string | null, provider: string, body: Record<string, unknown>) =>
  fetch(`${t.baseUrl}/api/proxy/${provider}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

const getInit = (apiKey: string | null, provider: string, query: Record<string, string>) =>
  fetch(`${t.baseUrl}/api/proxy/${provider}?${new URLSearchParams(query)}`, {
    redirect: 'manual',
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  });

beforeAll(async () => {
  t = await startTestApp({
    env: {
      OAUTH_INITIATION_RATE_LIMIT: String(RATE_LIMIT),
      OAUTH_INITIATION_RATE_WINDOW_SECONDS: '60',
      AZURE_AUTHORIZATION_URL: 'https://login.microsoftonline.example/{tenant}/oauth2/v2.0/authorize',
    },
  });
});
afterAll(() => t?.close());

describe('OAuth initiation error table, in the spec order', () => {
  it('401 Invalid API key comes first, whatever else is wrong', async () => {
    expect(await post(null, 'nope', {})).toEqual({
      status: 401,
      body: { ...SPEC.key, hint: 'Missing Authorization header: send Authorization: Bearer <API_KEY>' },
    });
    expect(await post('tg_unknown', 'google', { callback_url: CALLBACK })).toEqual({ status: 401, body: SPEC.key });
    const res = await getInit('tg_unknown', 'google', { callback_url: CALLBACK });
    expect(res.status).toBe(401);
  });

  it('400 Missing callback_url parameter before Unsupported provider, 404 and 403', async () => {
    const p = await newProject();
    await t.inContext(() => t.tollgate.admin.updateProject(p.id, { active: false }));
    expect(await post(p.apiKey, 'myspace', {})).toEqual({ status: 400, body: SPEC.missing });
    expect(await post(p.apiKey, 'google', { callback_url: '' })).toEqual({ status: 400, body: SPEC.missing });
    const res = await getInit(p.apiKey, 'google', {});
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(SPEC.missing);
  });

  it('400 Unsupported provider before 404 inactive project', async () => {
    const p = await newProject();
    await t.inContext(() => t.tollgate.admin.updateProject(p.id, { active: false }));
    for (const provider of ['myspace', 'email', 'magic-link', 'GOOGLE']) {
      expect(await post(p.apiKey, provider, { callback_url: 'https://unregistered.example/cb' })).toEqual({ status: 400, body: SPEC.unsupported });
    }
    expect(await post(p.apiKey, 'google', { callback_url: 'https://unregistered.example/cb' })).toEqual({ status: 404, body: SPEC.inactive });
  });

  it('403 Callback URL not registered before 403 Provider not enabled', async () => {
    const p = await newProject({ enable: [] });
    expect(await post(p.apiKey, 'github', { callback_url: 'https://unregistered.example/cb' })).toEqual({ status: 403, body: SPEC.unregistered });
    expect(await post(p.apiKey, 'github', { callback_url: CALLBACK })).toEqual({ status: 403, body: SPEC.disabled });
  });

  it.each([
    ['case change', 'https://Registered.com/auth/callback'],
    ['case change in the path', 'https://registered.com/Auth/callback'],
    ['trailing slash', 'https://registered.com/auth/callback/'],
    ['suffix domain', 'https://registered.com.evil.com/auth/callback'],
    ['user-info trick', 'https://registered.com@evil.com/auth/callback'],
    ['encoded slashes', 'https://registered.com%2F%2Fevil.com/auth/callback'],
    ['encoded path slash', 'https://registered.com/auth%2Fcallback'],
    ['fragment', 'https://registered.com/auth/callback#x'],
    ['extra query', 'https://registered.com/auth/callback?next=https://evil.com'],
    ['javascript: URL', 'javascript:alert(document.domain)//https://registered.com/auth/callback'],
    ['http instead of https', 'http://registered.com/auth/callback'],
    ['path traversal', 'https://registered.com/auth/callback/../../evil'],
  ])('refuses the redirect-URI vector: %s', async (_name, url) => {
    const p = await newProject();
    expect(await post(p.apiKey, 'google', { callback_url: url })).toEqual({ status: 403, body: SPEC.unregistered });
  });

  it('429 Too many requests per API key and IP; the window resets with the clock', async () => {
    const p = await newProject();
    const other = await newProject();
    for (let i = 0; i < RATE_LIMIT; i++) expect((await post(p.apiKey, 'github', { callback_url: CALLBACK })).status).toBe(200);
    const refused = await fetch(`${t.baseUrl}/api/proxy/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
      body: JSON.stringify({ callback_url: CALLBACK }),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual(SPEC.limited);
    // GET counts against the same limit; another key is not affected.
    expect((await getInit(p.apiKey, 'github', { callback_url: CALLBACK })).status).toBe(429);
    expect((await post(other.apiKey, 'github', { callback_url: CALLBACK })).status).toBe(200);
    // The checks before the limit still answer first.
    expect(await post(p.apiKey, 'github', {})).toEqual({ status: 400, body: SPEC.missing });
    t.clock.advanceSeconds(61);
    expect((await post(p.apiKey, 'github', { callback_url: CALLBACK })).status).toBe(200);
  });
});

describe('OAuth initiation success', () => {
  let p: TestProject;
  beforeAll(async () => {
    p = await newProject();
  });

  const params = async (provider: string, body: Record<string, unknown> = {}) => {
    const res = await post(p.apiKey, provider, { callback_url: CALLBACK, ...body });
    expect(res.status).toBe(200);
    return new URL(res.body.redirect_url as string);
  };

  it('builds each provider URL with its scopes, PKCE S256, Tollgate state and (OpenID) a nonce', async () => {
    const expected = {
      google: { origin: 'https://accounts.google.com', scope: 'openid email profile', nonce: true },
      github: { origin: 'https://github.com', scope: 'read:user user:email', nonce: false },
      discord: { origin: 'https://discord.com', scope: 'identify email', nonce: false },
      azure: { origin: 'https://login.microsoftonline.example', scope: 'openid email profile', nonce: true },
      apple: { origin: 'https://appleid.apple.com', scope: 'name email', nonce: true },
    } as const;
    for (const [provider, e] of Object.entries(expected)) {
      const url = await params(provider, { state: 'client-opaque' });
      const q = url.searchParams;
      expect(url.origin).toBe(e.origin);
      expect(q.get('scope')).toBe(e.scope);
      expect(q.get('client_id')).toBe(credentials[provider as keyof typeof credentials].clientId);
      expect(q.get('redirect_uri')).toBe(`${t.baseUrl}/api/proxy/callback/${provider}`);
      expect(q.get('code_challenge_method')).toBe('S256');
      expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
      expect(q.get('state')).toMatch(/^[\w-]{43}$/);
      expect(q.get('state')).not.toBe('client-opaque');
      expect(q.has('nonce')).toBe(e.nonce);
    }
    const apple = await params('apple');
    expect(apple.searchParams.get('response_mode')).toBe('form_post');
    expect(apple.searchParams.get('response_type')).toBe('code');
  });

  it("Entra: the tenant is `common` by default and the project's tenant when set", async () => {
    expect((await params('azure')).pathname).toBe('/common/oauth2/v2.0/authorize');
    await t.inContext(() =>
      t.tollgate.admin.updateProject(p.id, {
        providerCredentials: [{ provider: 'azure', credentials: { ...credentials.azure, tenant: 'contoso.onmicrosoft.com' } }],
      }),
    );
    expect((await params('azure')).pathname).toBe('/contoso.onmicrosoft.com/oauth2/v2.0/authorize');
  });

  it('stores the state hashed, single use, expiring in 10 minutes, bound to project, provider and callback', async () => {
    const state = (await params('github', { state: 'mine', locale: 'fr' })).searchParams.get('state')!;
    const rows = await t.inContext(() =>
      t.tollgate.core.db.query<Record<string, unknown>>('select * from oauth_states where state_hash = ?', [createHash('sha256').update(state).digest('hex')]),
    );
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ project_id: p.id, provider: 'github', callback_url: CALLBACK, client_state: 'mine', locale: 'fr', used_at: null });
    expect(new Date(row.expires_at as string).getTime() - new Date(row.created_at as string).getTime()).toBe(600_000);
    expect(JSON.stringify(row)).not.toContain(state);
  });

  it('GET answers 302 to the provider with the same checks', async () => {
    const res = await getInit(p.apiKey, 'discord', { callback_url: CALLBACK, state: 's' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^https:\/\/discord\.com\/oauth2\/authorize\?/);
    const bad = await getInit(p.apiKey, 'discord', { callback_url: 'https://evil.com/' });
    expect(bad.status).toBe(403);
    expect(await bad.json()).toEqual(SPEC.unregistered);
  });

  it('refuses an unsupported locale and a provider without client credentials with clear errors', async () => {
    expect(await post(p.apiKey, 'google', { callback_url: CALLBACK, locale: 'xx' })).toEqual({
      status: 400,
      body: { error: 'Unsupported locale', code: 'unsupported_locale' },
    });
    const bare = await newProject({ withCredentials: false });
    expect(await post(bare.apiKey, 'google', { callback_url: CALLBACK })).toMatchObject({ status: 403, body: { code: 'provider_not_configured' } });
  });
});
