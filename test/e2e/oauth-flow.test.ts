import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { FakeDiscord } from '../support/fake-discord';
import { FakeGitHub } from '../support/fake-github';
import { browse, OidcPeer } from '../support/oidc-provider';
import { failOnUnexpectedRequests } from '../support/peer-server';

let t: TestApp;
let op: OidcPeer;
let gh: FakeGitHub;
let dc: FakeDiscord;
let project: TestProject;

async function configure(p: TestProject) {
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(p.id, {
      enable: ['google', 'github', 'discord', 'azure', 'apple'],
      providerCredentials: [
        { provider: 'google', credentials: op.credentials('google') },
        { provider: 'azure', credentials: op.credentials('azure') },
        { provider: 'apple', credentials: op.credentials('apple') },
        { provider: 'github', credentials: gh.credentials() },
        { provider: 'discord', credentials: dc.credentials() },
      ],
    }),
  );
  if (!r.ok) throw new Error(r.error);
}

/** Initiation through the API, then the end user's browser through the provider and back. */
async function signIn(p: TestProject, provider: string, state = 'client-state', browser: Record<string, string> = {}) {
  const start = await p.client.oauth.start({ params: { provider }, body: { callback_url: p.callbackUrl, state } });
  expect(start.status).toBe(200);
  if (start.status !== 200) throw new Error('initiation failed');
  const result = await browse(start.body.redirect_url, p.callbackUrl, undefined, browser);
  if (result.kind !== 'redirect') throw new Error(`expected a redirect to the callback URL, got ${result.status} ${result.body}`);
  return result.url;
}

async function exchange(p: TestProject, code: string) {
  const res = await p.client.session.exchange({ body: { code } });
  expect(res.status).toBe(200);
  if (res.status !== 200 || !('token' in res.body)) throw new Error('exchange failed');
  return res.body;
}

/**
 * Disables or re-enables a user by writing the store, as an operator would, then waits until this
 * process's caches have heard of it (the listener's round trip), so the next request sees it.
 */
/** The operator's action (as the CLI runs it); it returns once this process's caches dropped the user. */
async function setDisabled(userId: string, disabled: boolean) {
  const done = await t.inContext(() => t.tollgate.admin.setUserDisabled({ projectId: project.id, userId, disabled }));
  if (!done.ok) throw new Error(done.error);
}

// A request a look-alike peer has no route for fails the test that made it.
failOnUnexpectedRequests(() => [gh, dc]);

beforeAll(async () => {
  [op, gh, dc] = await Promise.all([OidcPeer.start(), FakeGitHub.start(), FakeDiscord.start()]);
  t = await startTestApp({ env: { ...op.env(), ...gh.env(), ...dc.env() } });
  op.configure(t.baseUrl);
  project = await t.createProject();
  await configure(project);
  op.accounts.set('g-ada', { sub: 'g-ada', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', picture: 'https://img.example/ada.png' });
  op.accounts.set('ms-bob', { sub: 'ms-bob', email: 'bob@contoso.example', name: 'Bob' });
  op.accounts.set('ms-eve', { sub: 'ms-eve', email: 'eve@contoso.example', name: 'Eve', xms_edov: true });
  op.accounts.set('apple-cy', { sub: '001234.apple.cy', email: 'cy@privaterelay.appleid.com', email_verified: true });
  gh.accounts.set('octo', {
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    avatar_url: 'https://avatars.githubusercontent.com/u/583231',
    emails: [
      { email: 'octo@old.example', primary: false, verified: true, visibility: null },
      { email: 'octocat@github.example', primary: true, verified: true, visibility: 'public' },
    ],
  });
  dc.accounts.set('80351110224678912', {
    id: '80351110224678912',
    username: 'nelly',
    global_name: 'Nelly',
    avatar: 'a_8342729096ea3675442027381ff50dfe',
    email: 'nelly@discord.example',
    verified: true,
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([op?.close(), gh?.close(), dc?.close()]);
});

describe('OAuth sign-in, end to end through real HTTP redirects', () => {
  it('Google: initiation, provider login, callback, redirect with code and state, exchange, verify, refresh', async () => {
    op.nextLogin = 'g-ada';
    const back = await signIn(project, 'google', 'opaque/state?x=1');
    expect(back.origin + back.pathname).toBe(project.callbackUrl);
    expect([...back.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(back.searchParams.get('state')).toBe('opaque/state?x=1');
    const body = await exchange(project, back.searchParams.get('code')!);
    expect(body.refresh_token).toMatch(/^rt_/);
    expect(body.user).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace', email_verified: true });
    const claims = decodeJwt(body.token);
    expect(claims).toMatchObject({
      sub: body.user.id,
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      picture: 'https://img.example/ada.png',
      provider: 'google',
      email_verified: true,
      iss: t.config.publicUrl,
      aud: project.id,
    });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(typeof claims.jti).toBe('string');

    const verified = await project.client.token.verify({ body: { token: body.token } });
    expect(verified.body).toMatchObject({ valid: true, user: { id: body.user.id, provider: 'google', picture: 'https://img.example/ada.png' } });

    const refreshed = await project.client.session.refresh({ body: { refresh_token: body.refresh_token } });
    expect(refreshed.status).toBe(200);
    if (refreshed.status !== 200) return;
    expect(refreshed.body.refresh_token).not.toBe(body.refresh_token);
    expect(decodeJwt(refreshed.body.token)).toMatchObject({ sub: body.user.id, provider: 'google' });

    // A second sign-in with the same Google account is the same end user.
    const again = await exchange(project, (await signIn(project, 'google')).searchParams.get('code')!);
    expect(again.user.id).toBe(body.user.id);
  });
});

describe('each provider normalizes to the same profile shape', () => {
  it('Microsoft Entra (azure): email counts as verified only with the verified-domain signal', async () => {
    op.nextLogin = 'ms-bob';
    const bob = await exchange(project, (await signIn(project, 'azure')).searchParams.get('code')!);
    expect(bob.user).toMatchObject({ email: 'bob@contoso.example', name: 'Bob', email_verified: false });
    expect(decodeJwt(bob.token)).toMatchObject({ provider: 'azure', email_verified: false, picture: null });

    op.nextLogin = 'ms-eve';
    const eve = await exchange(project, (await signIn(project, 'azure')).searchParams.get('code')!);
    expect(eve.user).toMatchObject({ email: 'eve@contoso.example', email_verified: true });
  });

  it('Apple: form_post callback, ES256 client secret, name from the first-authorization user field', async () => {
    op.nextLogin = 'apple-cy';
    op.appleUser = { firstName: 'Cy', lastName: 'Young' };
    let first: Awaited<ReturnType<typeof exchange>>;
    try {
      const before = op.tokenRequests;
      first = await exchange(project, (await signIn(project, 'apple')).searchParams.get('code')!);
      expect(op.tokenRequests).toBe(before + 1);
      expect(first.user).toMatchObject({ email: 'cy@privaterelay.appleid.com', email_verified: true, name: 'Cy Young' });
      expect(decodeJwt(first.token)).toMatchObject({ provider: 'apple', name: 'Cy Young' });
    } finally {
      // Later authorizations carry no user field: the name is kept.
      op.appleUser = null;
    }
    const second = await exchange(project, (await signIn(project, 'apple')).searchParams.get('code')!);
    expect(second.user).toMatchObject({ id: first.user.id, name: 'Cy Young' });
  });

  it('GitHub: /user plus the primary verified address of /user/emails', async () => {
    gh.nextLogin = 'octo';
    const body = await exchange(project, (await signIn(project, 'github')).searchParams.get('code')!);
    expect(body.user).toMatchObject({ email: 'octocat@github.example', name: 'The Octocat', email_verified: true });
    expect(decodeJwt(body.token)).toMatchObject({ provider: 'github', picture: 'https://avatars.githubusercontent.com/u/583231' });
    expect(gh.requests).toEqual(expect.arrayContaining(['GET /user', 'GET /user/emails']));
  });

  it('Discord: /users/@me with the avatar URL built from its hash', async () => {
    dc.nextLogin = '80351110224678912';
    const body = await exchange(project, (await signIn(project, 'discord')).searchParams.get('code')!);
    expect(body.user).toMatchObject({ email: 'nelly@discord.example', name: 'Nelly', email_verified: true });
    expect(decodeJwt(body.token)).toMatchObject({
      provider: 'discord',
      picture: 'https://cdn.discordapp.com/avatars/80351110224678912/a_8342729096ea3675442027381ff50dfe.gif',
    });
  });

  it('token verify answers valid:false once the user is disabled', async () => {
    // An account of its own: the shared 'octo' user of the other tests is never disabled.
    gh.accounts.set('octo-off', { id: 583299, login: 'octo-off', name: 'Off', avatar_url: 'https://a.example/off', emails: [] });
    gh.nextLogin = 'octo-off';
    const body = await exchange(project, (await signIn(project, 'github')).searchParams.get('code')!);
    expect((await project.client.token.verify({ body: { token: body.token } })).body).toMatchObject({ valid: true }); // cached now
    await setDisabled(body.user.id, true);
    try {
      expect((await project.client.token.verify({ body: { token: body.token } })).body).toEqual({ valid: false, user: null, expiresAt: null });
      const refresh = await project.client.session.refresh({ body: { refresh_token: body.refresh_token } });
      expect(refresh.status).toBe(401);
    } finally {
      await setDisabled(body.user.id, false);
    }
  });
});

describe('POST /api/proxy/token/exchange', () => {
  const githubCode = async (p = project) => {
    gh.nextLogin = 'octo';
    return (await signIn(p, 'github')).searchParams.get('code')!;
  };

  it('the code is single use; redeeming it again fails and revokes the refresh tokens minted from it', async () => {
    const code = await githubCode();
    const first = await exchange(project, code);
    const replay = await project.client.session.exchange({ body: { code } });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ error: 'Invalid or expired authorization code', code: 'invalid_authorization_code' });
    const refresh = await project.client.session.refresh({ body: { refresh_token: first.refresh_token } });
    expect(refresh.status).toBe(401);
  });

  it("the session remembers the browser's user agent at the callback, not the project server's that redeemed the code", async () => {
    t.clock.advanceSeconds(1); // the newest of the user's sessions is this one
    const back = await signIn(project, 'github', 'client-state', { 'user-agent': 'Firefox/140 (the browser)' });
    const res = await fetch(`${t.baseUrl}/api/proxy/token/exchange`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json', 'user-agent': 'project-server/1.0' },
      body: JSON.stringify({ code: back.searchParams.get('code') }),
    });
    const body = (await res.json()) as { user: { id: string } };
    const sessions = await project.client.sessions.listForUser({ params: { userId: body.user.id } });
    if (sessions.status !== 200) throw new Error(`list answered ${sessions.status}`);
    expect(sessions.body.sessions[0]).toMatchObject({ provider: 'github', user_agent: 'Firefox/140 (the browser)', ip: '127.0.0.1' });
    expect(sessions.body.sessions.map((s) => s.user_agent)).not.toContain('project-server/1.0');
  });

  it('is valid 60 seconds: accepted at 60 s, refused at 61 s (injected clock)', async () => {
    const late = await githubCode();
    const onTime = await githubCode();
    t.clock.advanceSeconds(59);
    await exchange(project, onTime);
    t.clock.advanceSeconds(2);
    const res = await project.client.session.exchange({ body: { code: late } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_authorization_code' });
  });

  it("is bound to its project: another project's API key cannot redeem it (and does not burn it)", async () => {
    const other = await t.createProject();
    const code = await githubCode();
    const res = await other.client.session.exchange({ body: { code } });
    expect(res.status).toBe(400);
    await exchange(project, code);
  });

  it('refuses unknown codes, a bad API key with 401, and a missing body field with 400', async () => {
    expect((await project.client.session.exchange({ body: { code: 'nope' } })).status).toBe(400);
    expect((await t.client('tg_wrong').session.exchange({ body: { code: 'nope' } })).status).toBe(401);
    const raw = await fetch(`${t.baseUrl}/api/proxy/token/exchange`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(raw.status).toBe(400);
  });

  it('50 parallel exchanges of one code give exactly one success', async () => {
    const code = await githubCode();
    const results = await Promise.all(Array.from({ length: 50 }, () => project.client.session.exchange({ body: { code } })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(49);
    // The 49 replays revoked what the winner minted.
    const winner = results.find((r) => r.status === 200)!.body as { refresh_token: string };
    expect((await project.client.session.refresh({ body: { refresh_token: winner.refresh_token } })).status).toBe(401);
  });
});

describe('the exchange goes through the primary sign-in gate', () => {
  it('under a required MFA policy the exchange answers a challenge and no JWT', async () => {
    const p = await t.createProject();
    await configure(p);
    const r = await t.inContext(() => t.tollgate.admin.updateProject(p.id, { mfaPolicy: 'required' }));
    expect(r.ok).toBe(true);
    gh.nextLogin = 'octo';
    const code = (await signIn(p, 'github')).searchParams.get('code')!;
    const res = await p.client.session.exchange({ body: { code } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mfa_required: true, enrollment_required: true });
    expect(res.body).not.toHaveProperty('token');
    expect(res.body).not.toHaveProperty('refresh_token');
  });
});
