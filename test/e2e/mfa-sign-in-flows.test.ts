import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiBody, ChallengeBody, SessionBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { FakeGitHub } from '../support/fake-github';
import { browse } from '../support/oidc-provider';
import { startTestSmtp, type TestSmtp } from '../support/smtp';
import { decodeJwt, enrollTotp, post, setPolicy, totpCode } from './mfa-helpers';
import { failOnUnexpectedRequests } from '../support/peer-server';

/**
 * The policy table through the real primary sign-ins: email signup and signin, the magic-link
 * click, and the OAuth code exchange. Every row: off, optional without enrollment, optional and
 * required with a method enrolled, required without enrollment.
 */

let t: TestApp;
let smtp: TestSmtp;
let gh: FakeGitHub;
let dataDir: string;

// A request a look-alike peer has no route for fails the test that made it.
failOnUnexpectedRequests(() => [gh]);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-mfa-flows-'));
  [smtp, gh] = await Promise.all([startTestSmtp(), FakeGitHub.start()]);
  t = await startTestApp({ env: { SMTP_URL: smtp.url, ...gh.env(), TRUST_PROXY: 'loopback', TOLLGATE_DATA_DIR: dataDir } });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([smtp?.close(), gh?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const PASSWORD = 'correct horse 42';

async function emailProject(): Promise<TestProject> {
  const p = await t.createProject();
  const r = await t.inContext(() =>
    t.tollgate.admin.updateProject(p.id, {
      enable: ['email', 'magic-link', 'github'],
      providerCredentials: [{ provider: 'github', credentials: gh.credentials() }],
    }),
  );
  if (!r.ok) throw new Error(r.error);
  return p;
}

const signup = (p: TestProject, email: string) =>
  post(t, '/api/proxy/email/signup', { email, password: PASSWORD, name: 'Flow User', callback_url: p.callbackUrl }, { bearer: p.apiKey });
const signin = (p: TestProject, email: string) =>
  post(t, '/api/proxy/email/signin', { email, password: PASSWORD, callback_url: p.callbackUrl }, { bearer: p.apiKey });

function expectSession(body: unknown): asserts body is SessionBody {
  expect(body).toMatchObject({ token: expect.any(String), user: { id: expect.any(String) } });
  expect((body as Partial<ChallengeBody>).mfa_required).toBeUndefined();
}
function expectChallenge(body: unknown, methods: string[]): asserts body is ChallengeBody {
  expect(body).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^mfa_/), methods });
}
function expectEnrollment(body: unknown): asserts body is ChallengeBody {
  expect(body).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^mfa_/), methods: [], enrollment_required: true });
}

describe('email signup and signin', () => {
  it('answers every row of the policy table', async () => {
    const p = await emailProject();
    const email = `flow-${Date.now()}@example.com`;

    // off: a session.
    const first = await signup(p, email);
    expect(first.status).toBe(200);
    expectSession(first.body);
    expect(first.body.refresh_token).toMatch(/^rt_/);

    // optional, nothing enrolled: a session. Enroll TOTP with it.
    await setPolicy(t, p.id, 'optional', ['totp', 'backup_codes']);
    const optional = await signin(p, email);
    expectSession(optional.body);
    const { secret } = await enrollTotp(t, optional.body.token);

    // optional, enrolled: a challenge and no JWT; then the full sequence to a session.
    const challenged = await signin(p, email);
    expect(challenged.status).toBe(200);
    expectChallenge(challenged.body, ['totp']);
    const verified = await post<ApiBody<'mfa', 'verify'>>(t, '/api/proxy/mfa/verify', {
      challenge: challenged.body.challenge,
      code: totpCode(t, secret),
      method: 'totp',
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ refresh_token: expect.stringMatching(/^rt_/), user: { id: first.body.user.id, email } });
    expect(decodeJwt(verified.body.token)).toMatchObject({ sub: first.body.user.id, provider: 'email' });

    // required, enrolled: a challenge.
    await setPolicy(t, p.id, 'required');
    expectChallenge((await signin(p, email)).body, ['totp']);

    // required, nothing enrolled: a new signup gets an enrollment challenge, which finishes through TOTP setup.
    const newcomer = await signup(p, `new-${email}`);
    expect(newcomer.status).toBe(200);
    expectEnrollment(newcomer.body);
    const { verify } = await enrollTotp(t, newcomer.body.challenge);
    expect(verify.body).toMatchObject({ success: true, token: expect.any(String), user: { email: `new-${email}` } });

    // off again: a session, though TOTP stays enrolled.
    await setPolicy(t, p.id, 'off');
    expectSession((await signin(p, email)).body);
  });
});

describe('magic link', () => {
  async function clickMagicLink(p: TestProject, email: string): Promise<URL> {
    // Security notices (a factor added, say) go to the same address: count magic-link mails only.
    const linkIn = (text: string) => /https?:\/\/[^\s"<>]+magic-link\/verify\?token=[\w%.-]+/.exec(text)?.[0];
    const isLink = (m: { text: string }) => linkIn(m.text) !== undefined;
    const before = smtp.to(email).filter(isLink).length;
    const sent = await post(t, '/api/proxy/email/magic-link/send', { email, callback_url: p.callbackUrl }, { bearer: p.apiKey });
    expect(sent.status).toBe(200);
    const mail = await smtp.waitFor(email, before + 1, undefined, isLink);
    const link = linkIn(mail.text);
    if (!link) throw new Error(`no magic link in: ${mail.text}`);
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  it('redirects with a token or, when MFA applies, with mfa_required and the challenge', async () => {
    const p = await emailProject();
    const email = `magic-${Date.now()}@example.com`;

    const off = await clickMagicLink(p, email);
    expect(off.searchParams.get('token')).toBeTruthy();
    const userId = decodeJwt(off.searchParams.get('token')!).sub;

    await setPolicy(t, p.id, 'optional', ['totp', 'backup_codes']);
    const optional = await clickMagicLink(p, email);
    const token = optional.searchParams.get('token')!;
    expect(decodeJwt(token)).toMatchObject({ sub: userId, provider: 'magic-link' });
    expect(optional.searchParams.get('challenge')).toBeNull();
    const { secret } = await enrollTotp(t, token);

    const challenged = await clickMagicLink(p, email);
    expect(challenged.searchParams.get('token')).toBeNull();
    expect(challenged.searchParams.get('mfa_required')).toBe('true');
    const challenge = challenged.searchParams.get('challenge')!;
    const verified = await post<ApiBody<'mfa', 'verify'>>(t, '/api/proxy/mfa/verify', { challenge, code: totpCode(t, secret), method: 'totp' });
    expect(verified.status).toBe(200);
    // The session after MFA is the magic-link one: provider magic-link, 15 minutes.
    const claims = decodeJwt(verified.body.token);
    expect(claims).toMatchObject({ sub: userId, provider: 'magic-link' });
    expect(claims.exp - claims.iat).toBe(15 * 60);

    await setPolicy(t, p.id, 'required');
    const required = await clickMagicLink(p, email);
    expect(required.searchParams.get('mfa_required')).toBe('true');
    expect(required.searchParams.get('token')).toBeNull();

    // A user with nothing enrolled gets a challenge that opens the setup endpoints.
    const newcomer = await clickMagicLink(p, `new-${email}`);
    expect(newcomer.searchParams.get('token')).toBeNull();
    const enrollChallenge = newcomer.searchParams.get('challenge')!;
    expect((await post(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: enrollChallenge })).status).toBe(200);
  });
});

describe('OAuth code exchange', () => {
  let login = 0;
  async function oauthSignIn(p: TestProject, account: string) {
    gh.nextLogin = account;
    const start = await p.client.oauth.start({ params: { provider: 'github' }, body: { callback_url: p.callbackUrl } });
    if (start.status !== 200) throw new Error(`initiation answered ${start.status}`);
    const back = await browse(start.body.redirect_url, p.callbackUrl);
    if (back.kind !== 'redirect') throw new Error('no redirect to the callback');
    const code = back.url.searchParams.get('code')!;
    return post(t, '/api/proxy/token/exchange', { code }, { bearer: p.apiKey });
  }
  function githubAccount() {
    const name = `octo${++login}`;
    gh.accounts.set(name, {
      id: 900000 + login,
      login: name,
      name: 'Octo',
      avatar_url: 'https://avatars.example/octo.png',
      emails: [{ email: `${name}-${Date.now()}@github.example`, primary: true, verified: true, visibility: 'public' }],
    });
    return name;
  }

  it('answers every row of the policy table', async () => {
    const p = await emailProject();
    const account = githubAccount();

    const off = await oauthSignIn(p, account);
    expect(off.status).toBe(200);
    expectSession(off.body);

    await setPolicy(t, p.id, 'optional', ['totp', 'backup_codes']);
    const optional = await oauthSignIn(p, account);
    expectSession(optional.body);
    const { secret } = await enrollTotp(t, optional.body.token);

    const challenged = await oauthSignIn(p, account);
    expect(challenged.status).toBe(200);
    expectChallenge(challenged.body, ['totp']);
    const verified = await post<ApiBody<'mfa', 'verify'>>(t, '/api/proxy/mfa/verify', {
      challenge: challenged.body.challenge,
      code: totpCode(t, secret),
      method: 'totp',
    });
    expect(verified.status).toBe(200);
    const claims = decodeJwt(verified.body.token);
    expect(claims).toMatchObject({ sub: off.body.user.id, provider: 'github' });
    expect(claims.exp - claims.iat).toBe(5 * 60);
    expect(verified.body.refresh_token).toMatch(/^rt_/);

    await setPolicy(t, p.id, 'required');
    expectChallenge((await oauthSignIn(p, account)).body, ['totp']);
    expectEnrollment((await oauthSignIn(p, githubAccount())).body);

    await setPolicy(t, p.id, 'off');
    expectSession((await oauthSignIn(p, account)).body);
  });
});
