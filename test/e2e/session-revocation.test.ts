import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedSession } from '../../application/tokens/issue-session';
import type { EndUser } from '../../domain/user';
import { PostgresAuthorizationCodeStore } from '../../infrastructure/persistence/postgres-authorization-code.store';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';
import { enrollTotp, post, setPolicy, totpCode } from './mfa-helpers';

/**
 * Ending a session ends its access tokens too: `POST /api/v1/token/verify` answers valid:false for
 * them at once in the process that ended it, and within a second in every other process of the
 * deployment (B here: another Tollgate on the same database, as test/e2e/scale-out-cache.test.ts
 * runs it), whichever way the session ended.
 */
let smtp: TestSmtp;
let a: TestApp;
let b: TestApp;
let project: TestProject;
const CALLBACK = 'https://app.example.com/callback';

beforeAll(async () => {
  smtp = await startTestSmtp();
  const env = { SMTP_URL: smtp.url, TRUST_PROXY: 'loopback' };
  a = await startTestApp({ env });
  b = await startTestApp({ env, sameDeploymentAs: a, clock: a.clock });
  project = await a.createProject({ callbackUrls: [CALLBACK] });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await smtp?.close();
});

const verifyOn = async (app: TestApp, token: string): Promise<boolean> => {
  const res = await app.client(project.apiKey).token.verify({ body: { token } });
  expect(res.status).toBe(200);
  return res.status === 200 && res.body.valid;
};

/** Both processes accept the token now (B has cached the key, the project and the user). */
async function validEverywhere(...tokens: string[]) {
  for (const token of tokens) {
    expect(await verifyOn(a, token)).toBe(true);
    expect(await verifyOn(b, token)).toBe(true);
  }
}

/**
 * A refuses the tokens as soon as the change returned; B within one second of it (each check a
 * request, no sleeping: B hears of the change through PostgreSQL's NOTIFY).
 */
async function refusedEverywhere(...tokens: string[]) {
  const ended = Date.now();
  for (const token of tokens) expect(await verifyOn(a, token)).toBe(false);
  for (const token of tokens) {
    while (await verifyOn(b, token)) expect(Date.now() - ended, 'process B still accepts the token').toBeLessThan(1000);
  }
  expect(Date.now() - ended).toBeLessThan(1000);
}

const seedUser = () => a.seedUser(project.id);
const newSession = (user: EndUser): Promise<IssuedSession> => a.issueSession(project.id, user);

describe('a session ended by any path is refused by token verify at once, in every process', () => {
  it('sign out (token/revoke): that session only', async () => {
    const user = await seedUser();
    const [s1, s2] = [await newSession(user), await newSession(user)];
    await validEverywhere(s1.token, s2.token);
    expect((await project.client.session.revoke({ body: { refresh_token: s1.refreshToken } })).status).toBe(200);
    await refusedEverywhere(s1.token);
    await validEverywhere(s2.token);
  });

  it('a replayed authorization code ends the session its first exchange started', async () => {
    const user = await seedUser();
    // The code the OAuth callback would have handed to the browser.
    const code = `code-${a.tollgate.core.crypto.randomToken(16)}`;
    await a.inContext(() =>
      new PostgresAuthorizationCodeStore(a.tollgate.core.db).insert(
        {
          id: a.tollgate.core.crypto.uuid(),
          projectId: project.id,
          userId: user.id,
          provider: 'github',
          ip: '198.51.100.4',
          userAgent: 'Safari/18',
          createdAt: a.clock.now(),
          expiresAt: new Date(a.clock.now().getTime() + 60_000),
        },
        a.tollgate.core.crypto.hash(code),
      ),
    );
    const first = await project.client.session.exchange({ body: { code } });
    if (first.status !== 200 || !('token' in first.body)) throw new Error(`exchange answered ${first.status}`);
    await validEverywhere(first.body.token);
    expect((await project.client.session.exchange({ body: { code } })).status).toBe(400);
    await refusedEverywhere(first.body.token);
  });

  it('refresh-token reuse detection ends the session: the tokens minted before and after rotation', async () => {
    const user = await seedUser();
    const s = await newSession(user);
    const rotated = await project.client.session.refresh({ body: { refresh_token: s.refreshToken } });
    if (rotated.status !== 200) throw new Error(`refresh answered ${rotated.status}`);
    await validEverywhere(s.token, rotated.body.token);
    a.clock.advanceSeconds(11); // past the reuse grace window: the retired token is presumed stolen
    expect(await project.client.session.refresh({ body: { refresh_token: s.refreshToken } })).toMatchObject({
      status: 401,
      body: { code: 'refresh_token_reused' },
    });
    await refusedEverywhere(s.token, rotated.body.token);
  });

  it('a password reset ends every session of the user; a sign-in right after it is valid', async () => {
    const email = `reset-${Date.now()}@example.com`;
    const signup = await project.client.email.signup({ body: { email, password: 'correct horse 1', callback_url: CALLBACK } });
    if (signup.status !== 200 || !('token' in signup.body)) throw new Error(`signup answered ${signup.status}`);
    await smtp.waitFor(email); // the verification email
    await validEverywhere(signup.body.token);
    expect((await project.client.email.resetPassword({ body: { email, callback_url: CALLBACK } })).status).toBe(200);
    const token = new URL(linkOf(await smtp.waitFor(email, 2))).searchParams.get('token')!;
    expect((await project.client.email.confirmPasswordReset({ body: { token, password: 'battery staple 2' } })).status).toBe(200);
    await refusedEverywhere(signup.body.token);
    // The clock has not moved: a session started in the same instant is not caught by the reset.
    const signin = await project.client.email.signin({ body: { email, password: 'battery staple 2', callback_url: CALLBACK } });
    if (signin.status !== 200 || !('token' in signin.body)) throw new Error(`signin answered ${signin.status}`);
    await validEverywhere(signin.body.token);
  });

  it('a disabled user: refused, and enabling the user again does not revive the sessions it ended', async () => {
    const user = await seedUser();
    const s = await newSession(user);
    await validEverywhere(s.token);
    await a.inContext(() => a.tollgate.admin.setUserDisabled({ projectId: project.id, userId: user.id, disabled: true }));
    await refusedEverywhere(s.token);
    await a.inContext(() => a.tollgate.admin.setUserDisabled({ projectId: project.id, userId: user.id, disabled: false }));
    await b.tollgate.core.invalidation.sync();
    expect(await verifyOn(a, s.token)).toBe(false);
    expect(await verifyOn(b, s.token)).toBe(false);
    await validEverywhere((await newSession(user)).token);
  });

  it("sign out everywhere (the CLI's user sign-out) ends every session of the user", async () => {
    const user = await seedUser();
    const [s1, s2] = [await newSession(user), await newSession(user)];
    const bystander = await newSession(await seedUser());
    await validEverywhere(s1.token, s2.token, bystander.token);
    expect(await a.inContext(() => a.tollgate.admin.signOutEverywhere({ projectId: project.id, userId: user.id }))).toBe(2);
    await refusedEverywhere(s1.token, s2.token);
    await validEverywhere(bystander.token);
  });

  it('removing an MFA factor (policy optional or required) ends every other session of the user, not the one that removed it', async () => {
    const mfaProject = await a.createProject();
    await setPolicy(a, mfaProject.id, 'optional');
    const user = await a.seedUser(mfaProject.id);
    const [mine, other] = [await a.issueSession(mfaProject.id, user), await a.issueSession(mfaProject.id, user)];
    const { secret } = await enrollTotp(a, mine.token);
    const verify = async (app: TestApp, token: string) => (await app.client(mfaProject.apiKey).token.verify({ body: { token } })).body;
    expect(await verify(b, other.token)).toMatchObject({ valid: true });
    expect((await post(a, '/api/proxy/mfa/totp/disable', { code: totpCode(a, secret) }, { bearer: mine.token })).status).toBe(200);
    expect(await verify(a, other.token)).toMatchObject({ valid: false });
    await b.tollgate.core.invalidation.sync();
    expect(await verify(b, other.token)).toMatchObject({ valid: false });
    expect(await verify(a, mine.token)).toMatchObject({ valid: true });
    expect(await verify(b, mine.token)).toMatchObject({ valid: true });
  });

  it('a process started after the revocations refuses them too (loaded at start, or asked of the database until then)', async () => {
    const user = await seedUser();
    const s = await newSession(user);
    await project.client.session.revoke({ body: { refresh_token: s.refreshToken } });
    const c = await startTestApp({ sameDeploymentAs: a, clock: a.clock });
    try {
      expect((await c.client(project.apiKey).token.verify({ body: { token: s.token } })).body).toMatchObject({ valid: false });
      // Once its set is loaded, it answers from memory, and still refuses.
      await c.tollgate.core.invalidation.sync();
      await expect.poll(() => c.tollgate.core.revokedSessions.current).toBe(true);
      expect((await c.client(project.apiKey).token.verify({ body: { token: s.token } })).body).toMatchObject({ valid: false });
    } finally {
      await c.close();
    }
  });
});
