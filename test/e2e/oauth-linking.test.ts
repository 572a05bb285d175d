import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { FakeGitHub } from '../support/fake-github';
import { browse, OidcPeer } from '../support/oidc-provider';
import { failOnUnexpectedRequests } from '../support/peer-server';

let t: TestApp;
let op: OidcPeer;
let gh: FakeGitHub;
let off: TestProject;
let on: TestProject;

async function setUp(p: TestProject, allowAccountLinking: boolean) {
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(p.id, {
      enable: ['google', 'github', 'azure'],
      allowAccountLinking,
      providerCredentials: [
        { provider: 'google', credentials: op.credentials('google') },
        { provider: 'azure', credentials: op.credentials('azure') },
        { provider: 'github', credentials: gh.credentials() },
      ],
    }),
  );
  if (!r.ok) throw new Error(r.error);
}

type Start = { link_to?: string; link_token?: string };

async function start(p: TestProject, provider: string, extra: Start = {}) {
  return p.client.oauth.start({ params: { provider }, body: { callback_url: p.callbackUrl, ...extra } });
}

/** A full sign-in as `login` at `provider`; returns the exchanged session or the callback error page. */
async function signIn(p: TestProject, provider: 'google' | 'azure' | 'github', login: string, extra: Start = {}) {
  if (provider === 'github') gh.nextLogin = login;
  else op.nextLogin = login;
  const started = await start(p, provider, extra);
  if (started.status !== 200) throw new Error(`initiation answered ${started.status}`);
  const back = await browse(started.body.redirect_url, p.callbackUrl);
  if (back.kind === 'page') return { error: back };
  const res = await p.client.session.exchange({ body: { code: back.url.searchParams.get('code')! } });
  if (res.status !== 200 || !('token' in res.body)) throw new Error(`exchange answered ${res.status}`);
  return { session: res.body };
}

async function userId(p: TestProject, provider: 'google' | 'azure' | 'github', login: string, extra: Start = {}) {
  const r = await signIn(p, provider, login, extra);
  if (!r.session) throw new Error(`sign-in failed: ${r.error.status} ${r.error.body}`);
  return r.session;
}

const identities = (p: TestProject, id: string) =>
  t.inContext(() =>
    t.tollgate.core.db.query<{ provider: string; provider_user_id: string }>(
      'select provider, provider_user_id from user_identities where project_id = ? and user_id = ? order by provider',
      [p.id, id],
    ),
  );

const ghAccount = (login: string, id: number, email: string, verified = true) =>
  gh.accounts.set(login, { id, login, name: login, avatar_url: `https://a.example/${id}`, emails: [{ email, primary: true, verified, visibility: null }] });

// A request a look-alike peer has no route for fails the test that made it.
failOnUnexpectedRequests(() => [gh]);

beforeAll(async () => {
  [op, gh] = await Promise.all([OidcPeer.start(), FakeGitHub.start()]);
  t = await startTestApp({ env: { ...op.env(), ...gh.env() } });
  op.configure(t.baseUrl);
  off = await t.createProject();
  on = await t.createProject();
  await setUp(off, false);
  await setUp(on, true);
  op.accounts.set('g-lin', { sub: 'g-lin', email: 'Lin@Example.com', email_verified: true, name: 'Lin' });
  ghAccount('gh-lin', 101, 'lin@example.com');
  op.accounts.set('g-unv', { sub: 'g-unv', email: 'unverified@example.com', email_verified: false, name: 'U' });
  ghAccount('gh-unv', 102, 'unverified@example.com');
  op.accounts.set('az-mut', { sub: 'az-mut', email: 'lin@example.com', name: 'Mallory' });
  ghAccount('gh-unverified-primary', 103, 'lin@example.com', false);
  op.accounts.set('g-pending', { sub: 'g-pending', email: 'pending@example.com', email_verified: true });
  op.accounts.set('g-a', { sub: 'g-a', email: 'a@example.com', email_verified: true, name: 'A' });
  op.accounts.set('g-b', { sub: 'g-b', email: 'b@example.com', email_verified: true, name: 'B' });
  ghAccount('gh-other', 104, 'someone-else@example.com');
  ghAccount('gh-b2', 105, 'b2@example.com');
});
afterAll(async () => {
  await t?.close();
  await Promise.all([op?.close(), gh?.close()]);
});

describe('account linking off', () => {
  it('a sign-in with a new provider creates a new end user, even when the verified email matches', async () => {
    const google = await userId(off, 'google', 'g-lin');
    const github = await userId(off, 'github', 'gh-lin');
    expect(github.user.id).not.toBe(google.user.id);
    expect(github.user.email).toBe('lin@example.com');
    // The identity, not the email, identifies the user.
    expect((await userId(off, 'github', 'gh-lin')).user.id).toBe(github.user.id);
  });

  it('refuses explicit linking at initiation', async () => {
    const a = await userId(off, 'google', 'g-a');
    const res = await start(off, 'github', { link_to: a.user.id, link_token: a.token });
    expect(res).toMatchObject({ status: 400, body: { code: 'account_linking_disabled' } });
  });
});

describe('email-based linking (allowAccountLinking on)', () => {
  it('links when the provider asserts the email verified and the existing account email is verified', async () => {
    const google = await userId(on, 'google', 'g-lin');
    expect(google.user.email_verified).toBe(true);
    const github = await userId(on, 'github', 'gh-lin');
    expect(github.user.id).toBe(google.user.id);
    expect(await identities(on, google.user.id)).toEqual([
      { provider: 'github', provider_user_id: '101' },
      { provider: 'google', provider_user_id: 'g-lin' },
    ]);
  });

  it('never links on an email the provider does not verify (GitHub unverified primary, Entra mutable email)', async () => {
    const owner = (await userId(on, 'google', 'g-lin')).user.id;
    const azure = await userId(on, 'azure', 'az-mut');
    expect(azure.user.id).not.toBe(owner);
    const github = await userId(on, 'github', 'gh-unverified-primary');
    expect(github.user.id).not.toBe(owner);
  });

  it('never links to an existing account whose email is not verified', async () => {
    const existing = await userId(on, 'google', 'g-unv');
    expect(existing.user.email_verified).toBe(false);
    const github = await userId(on, 'github', 'gh-unv');
    expect(github.user.id).not.toBe(existing.user.id);

    // Same with an email/password account that never confirmed its address.
    const pending = await t.inContext(async () => {
      const now = t.clock.now();
      const u = {
        id: t.tollgate.core.crypto.uuid(),
        projectId: on.id,
        email: 'pending@example.com',
        name: null,
        picture: null,
        provider: 'email',
        emailVerified: false,
        locale: null,
        disabled: false,
        createdAt: now,
        updatedAt: now,
      };
      await t.tollgate.core.stores.users.insert(u);
      return u.id;
    });
    expect((await userId(on, 'google', 'g-pending')).user.id).not.toBe(pending);
  });
});

describe('explicit linking (link_to + link_token)', () => {
  it('attaches the provider account to the user named by link_to, whatever its email', async () => {
    const a = await userId(on, 'google', 'g-a');
    const linked = await userId(on, 'github', 'gh-other', { link_to: a.user.id, link_token: a.token });
    expect(linked.user.id).toBe(a.user.id);
    expect(linked.user.email).toBe('a@example.com');
    expect((await identities(on, a.user.id)).map((i) => i.provider)).toEqual(['github', 'google']);
    // Later sign-ins with that GitHub account are user A.
    expect((await userId(on, 'github', 'gh-other')).user.id).toBe(a.user.id);
  });

  it('rejects at initiation anything but a valid, unexpired JWT of this project whose sub equals link_to', async () => {
    const a = await userId(on, 'google', 'g-a');
    const b = await userId(on, 'google', 'g-b');
    const elsewhere = await t.createProject();
    await setUp(elsewhere, true);
    const foreign = await userId(elsewhere, 'google', 'g-a');
    const invalid = { status: 400, body: { error: 'link_token must be a valid access token of the user named by link_to', code: 'invalid_link_token' } };

    expect(await start(on, 'github', { link_to: a.user.id, link_token: b.token })).toMatchObject(invalid);
    expect(await start(on, 'github', { link_to: a.user.id, link_token: 'not.a.jwt' })).toMatchObject(invalid);
    expect(await start(on, 'github', { link_to: foreign.user.id, link_token: foreign.token })).toMatchObject(invalid);
    expect(await start(on, 'github', { link_to: 'nobody', link_token: a.token })).toMatchObject(invalid);
    expect(await start(on, 'github', { link_to: a.user.id })).toMatchObject({ status: 400, body: { code: 'link_request_incomplete' } });
    expect(await start(on, 'github', { link_token: a.token })).toMatchObject({ status: 400, body: { code: 'link_request_incomplete' } });

    t.clock.advanceSeconds(301);
    expect(await start(on, 'github', { link_to: a.user.id, link_token: a.token })).toMatchObject(invalid);
  });

  it('never moves an identity already attached to another user', async () => {
    const a = await userId(on, 'google', 'g-a');
    const b = await userId(on, 'github', 'gh-b2');
    // B asks to link the Google account that already belongs to A.
    const r = await signIn(on, 'google', 'g-a', { link_to: b.user.id, link_token: b.token });
    expect(r.error).toMatchObject({ status: 409, json: { error: 'This provider account is already linked to another user', code: 'identity_already_linked' } });
    expect((await userId(on, 'google', 'g-a')).user.id).toBe(a.user.id);
    expect((await identities(on, b.user.id)).map((i) => i.provider)).toEqual(['github']);
  });
});
