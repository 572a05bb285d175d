import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { FakeGitHub } from '../support/fake-github';
import { browse, OidcPeer, type IdTokenTamper } from '../support/oidc-provider';
import { failOnUnexpectedRequests } from '../support/peer-server';

let t: TestApp;
let op: OidcPeer;
let gh: FakeGitHub;
let project: TestProject;

const SPEC = {
  missing: { error: 'Missing code or state', code: 'missing_code_or_state' },
  invalid: { error: 'Invalid state', code: 'invalid_state' },
  expired: { error: 'State expired', code: 'state_expired' },
  failed: { error: 'Token exchange failed', code: 'token_exchange_failed' },
};

async function start(provider: string, p = project) {
  const res = await p.client.oauth.start({ params: { provider }, body: { callback_url: p.callbackUrl, state: 'cs' } });
  if (res.status !== 200) throw new Error(`initiation failed: ${res.status}`);
  return res.body.redirect_url;
}

/** Follows the provider's authorization step only: returns Tollgate's callback URL with code and state. */
async function providerCallback(authorizationUrl: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location?.includes('/api/proxy/callback/')) throw new Error(`unexpected provider answer ${res.status}`);
  return location;
}

const get = async (url: string) => {
  const res = await fetch(url, { redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), json: text ? (JSON.parse(text) as unknown) : null };
};

const countUsers = () =>
  t.inContext(async () => Number((await t.tollgate.core.db.query<{ n: string }>('select count(*) as n from users where project_id = ?', [project.id]))[0]!.n));

// A request a look-alike peer has no route for fails the test that made it.
failOnUnexpectedRequests(() => [gh]);

beforeAll(async () => {
  [op, gh] = await Promise.all([OidcPeer.start(), FakeGitHub.start()]);
  t = await startTestApp({ env: { ...op.env(), ...gh.env() } });
  op.configure(t.baseUrl);
  project = await t.createProject();
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(project.id, {
      enable: ['google', 'github', 'azure', 'apple'],
      providerCredentials: [
        { provider: 'google', credentials: op.credentials('google') },
        { provider: 'azure', credentials: op.credentials('azure') },
        { provider: 'apple', credentials: op.credentials('apple') },
        { provider: 'github', credentials: gh.credentials() },
      ],
    }),
  );
  if (!r.ok) throw new Error(r.error);
  op.accounts.set('g-1', { sub: 'g-1', email: 'one@example.com', email_verified: true, name: 'One' });
  gh.accounts.set('octo', { id: 1, login: 'octo', name: null, avatar_url: 'https://a.example/1', emails: [] });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([op?.close(), gh?.close()]);
});

describe('OAuth callback errors (JSON, never a redirect to the project)', () => {
  it('400 Missing code or state: parameters missing', async () => {
    for (const query of ['', '?code=abc', '?state=abc', '?code=&state=x']) {
      const res = await get(`${t.baseUrl}/api/proxy/callback/github${query}`);
      expect(res.status).toBe(400);
      expect(res.json).toEqual(SPEC.missing);
      expect(res.location).toBeNull();
    }
  });

  it('400 Missing code or state: the user denied access (GitHub and an OpenID provider)', async () => {
    gh.deny = true;
    try {
      const page = await browse(await start('github'), project.callbackUrl);
      expect(page).toMatchObject({ kind: 'page', status: 400, json: SPEC.missing });
    } finally {
      gh.deny = false;
    }
    op.deny = true;
    try {
      const page = await browse(await start('google'), project.callbackUrl);
      expect(page).toMatchObject({ kind: 'page', status: 400, json: SPEC.missing });
    } finally {
      op.deny = false;
    }
  });

  it('400 Invalid state: unknown, replayed, or issued for another provider', async () => {
    gh.nextLogin = 'octo';
    expect(await get(`${t.baseUrl}/api/proxy/callback/github?code=x&state=not-a-state`)).toMatchObject({ status: 400, json: SPEC.invalid });

    const callback = await providerCallback(await start('github'));
    const first = await get(callback);
    expect(first.status).toBe(302);
    expect(first.location).toMatch(/^https:\/\/app\.example\.com\/callback\?code=/);
    expect(await get(callback)).toMatchObject({ status: 400, json: SPEC.invalid });

    // A GitHub state presented at Google's callback is refused there, and stays usable at GitHub's.
    const githubCallback = new URL(await providerCallback(await start('github')));
    const crossed = `${t.baseUrl}/api/proxy/callback/google?code=x&state=${githubCallback.searchParams.get('state')}`;
    expect(await get(crossed)).toMatchObject({ status: 400, json: SPEC.invalid });
    expect((await get(githubCallback.toString())).status).toBe(302);
  });

  it('400 State expired: state older than 10 minutes (10:01 refused, 9:59 accepted)', async () => {
    gh.nextLogin = 'octo';
    const stale = await providerCallback(await start('github'));
    const fresh = await providerCallback(await start('github'));
    t.clock.advanceSeconds(9 * 60 + 59);
    expect((await get(fresh)).status).toBe(302);
    t.clock.advanceSeconds(2);
    expect(await get(stale)).toMatchObject({ status: 400, json: SPEC.expired });
    // Consumed: presenting it again is merely invalid.
    expect(await get(stale)).toMatchObject({ status: 400, json: SPEC.invalid });
  });

  it('500 Token exchange failed: the provider refuses the code or is down', async () => {
    gh.nextLogin = 'octo';
    const callback = new URL(await providerCallback(await start('github')));
    callback.searchParams.set('code', 'forged-code');
    expect(await get(callback.toString())).toMatchObject({ status: 500, json: SPEC.failed });

    gh.failTokenEndpoint = true;
    try {
      expect(await get(await providerCallback(await start('github')))).toMatchObject({ status: 500, json: SPEC.failed });
    } finally {
      gh.failTokenEndpoint = false;
    }
  });

  it('500 Token exchange failed: wrong client secret stored for the project', async () => {
    const p = await t.createProject();
    await t.inContext(() =>
      t.tollgate.admin.updateProject(p.id, {
        enable: ['github', 'apple'],
        providerCredentials: [
          { provider: 'github', credentials: { ...gh.credentials(), clientSecret: 'wrong' } },
          // An Apple key Apple does not know: the client secret it signs is refused.
          { provider: 'apple', credentials: { ...op.credentials('apple'), keyId: 'OTHERKEY' } },
        ],
      }),
    );
    gh.nextLogin = 'octo';
    expect(await browse(await start('github', p), p.callbackUrl)).toMatchObject({ kind: 'page', status: 500, json: SPEC.failed });
    op.nextLogin = 'g-1';
    expect(await browse(await start('apple', p), p.callbackUrl)).toMatchObject({ kind: 'page', status: 500, json: SPEC.failed });
  });

  it.each<[string, IdTokenTamper]>([
    ['wrong issuer', 'iss'],
    ['wrong audience', 'aud'],
    ['wrong nonce', 'nonce'],
    ['a signature by another key', 'signature'],
    ['alg none', 'alg-none'],
  ])('refuses an id_token with %s (500, no user created)', async (_name, tamper) => {
    op.nextLogin = 'g-1';
    const users = await countUsers();
    op.tamper = tamper;
    try {
      expect(await browse(await start('google'), project.callbackUrl)).toMatchObject({ kind: 'page', status: 500, json: SPEC.failed });
    } finally {
      op.tamper = null;
    }
    expect(await countUsers()).toBe(users);
  });

  it('the same flow without tampering succeeds (the refusals above are about the id_token alone)', async () => {
    op.nextLogin = 'g-1';
    const users = await countUsers();
    const result = await browse(await start('google'), project.callbackUrl);
    expect(result.kind).toBe('redirect');
    expect(await countUsers()).toBe(users + 1);
  });

  it('answers 400 Unsupported provider on an unknown provider callback', async () => {
    expect(await get(`${t.baseUrl}/api/proxy/callback/myspace?code=a&state=b`)).toMatchObject({
      status: 400,
      json: { error: 'Unsupported provider', code: 'unsupported_provider' },
    });
  });
});
