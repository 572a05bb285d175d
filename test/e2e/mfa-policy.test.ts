import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import type { ApiBody } from '../support/api-body';
import { startTestApp, type TestApp } from '../support/app';
import { challengeOf, decodeJwt, enrollTotp, post, primarySignIn, seedUser, sessionOf, setPolicy, totpCode } from './mfa-helpers';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
});
afterAll(() => t?.close());

/** A project with `policy`, and a user who has TOTP and backup codes enrolled. */
async function projectWithEnrolledUser(policy: 'off' | 'optional' | 'required') {
  const project = await t.createProject({ name: `Acme ${Math.random().toString(36).slice(2, 8)}` });
  await setPolicy(t, project.id, 'optional', ['totp', 'sms', 'backup_codes']);
  const user = await seedUser(t, project.id);
  const { token } = sessionOf(await primarySignIn(t, project.id, user));
  const { secret } = await enrollTotp(t, token);
  const codes = await post<ApiBody<'mfa', 'backupCodesGenerate'>>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: token });
  expect(codes.status).toBe(200);
  await setPolicy(t, project.id, policy);
  return { project, user, secret, token, backupCodes: codes.body.codes };
}

describe('primary sign-in result by MFA policy and enrollment', () => {
  it('off: token, refresh_token and user, even for a user with MFA enrolled', async () => {
    const { project, user } = await projectWithEnrolledUser('off');
    const outcome = await primarySignIn(t, project.id, user);
    expect(outcome.kind).toBe('session');
    const session = sessionOf(outcome);
    expect(session.token.split('.')).toHaveLength(3);
    expect(session.refreshToken).toMatch(/^rt_/);
    if (outcome.kind === 'session') expect(outcome.user).toMatchObject({ id: user.id, email: user.email, name: user.name, emailVerified: true });
  });

  it('optional with nothing enrolled: token, refresh_token and user', async () => {
    const project = await t.createProject();
    await setPolicy(t, project.id, 'optional');
    const user = await seedUser(t, project.id);
    const outcome = await primarySignIn(t, project.id, user);
    expect(outcome.kind).toBe('session');
  });

  it.each(['optional', 'required'] as const)('%s with a method enrolled: mfa_required, challenge and the enrolled methods, no JWT', async (policy) => {
    const { project, user } = await projectWithEnrolledUser(policy);
    const outcome = challengeOf(await primarySignIn(t, project.id, user));
    expect(outcome).toEqual({
      kind: 'mfa',
      challenge: expect.stringMatching(/^mfa_[\w-]{40,}$/),
      methods: ['totp', 'backup_codes'],
      enrollmentRequired: false,
    });
    expect(JSON.stringify(outcome)).not.toMatch(/eyJ/);
  });

  it('required with nothing enrolled: a challenge with enrollment_required and no methods, no JWT', async () => {
    const project = await t.createProject();
    await setPolicy(t, project.id, 'required');
    const user = await seedUser(t, project.id);
    const outcome = challengeOf(await primarySignIn(t, project.id, user));
    expect(outcome.enrollmentRequired).toBe(true);
    expect(outcome.methods).toEqual([]);
  });

  it('lists only the methods the project allows; enrolled methods it no longer allows do not count', async () => {
    const { project, user } = await projectWithEnrolledUser('optional');
    await setPolicy(t, project.id, 'optional', ['sms']);
    // TOTP is enrolled but no longer allowed, SMS is allowed but not enrolled: nothing usable.
    expect((await primarySignIn(t, project.id, user)).kind).toBe('session');
    await setPolicy(t, project.id, 'required');
    expect(challengeOf(await primarySignIn(t, project.id, user)).enrollmentRequired).toBe(true);
  });
});

describe('MFA policy changes', () => {
  it('off -> required: a user without MFA is prompted to enroll at the next sign-in', async () => {
    const project = await t.createProject();
    const user = await seedUser(t, project.id);
    expect((await primarySignIn(t, project.id, user)).kind).toBe('session');
    await setPolicy(t, project.id, 'required');
    expect(challengeOf(await primarySignIn(t, project.id, user)).enrollmentRequired).toBe(true);
  });

  it('required -> optional: enrolled users keep MFA, others are no longer forced', async () => {
    const { project, user } = await projectWithEnrolledUser('required');
    const other = await seedUser(t, project.id);
    expect(challengeOf(await primarySignIn(t, project.id, other)).enrollmentRequired).toBe(true);
    await setPolicy(t, project.id, 'optional');
    expect(challengeOf(await primarySignIn(t, project.id, user)).methods).toEqual(['totp', 'backup_codes']);
    expect((await primarySignIn(t, project.id, other)).kind).toBe('session');
  });

  it('required -> off: MFA is not enforced, but enrollments are kept for when it returns', async () => {
    const { project, user, secret } = await projectWithEnrolledUser('required');
    await setPolicy(t, project.id, 'off');
    expect((await primarySignIn(t, project.id, user)).kind).toBe('session');
    await setPolicy(t, project.id, 'optional');
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    const res = await post(t, '/api/proxy/mfa/verify', { challenge, code: totpCode(t, secret), method: 'totp' });
    expect(res.status).toBe(200);
  });
});

describe('required policy: enrollment with the challenge as Bearer', () => {
  it('setup -> verify-setup finishes the sign-in; backup codes follow with the new access token', async () => {
    const project = await t.createProject({ name: 'Enroll Corp' });
    await setPolicy(t, project.id, 'required', ['totp', 'backup_codes']);
    const user = await seedUser(t, project.id, `enroll-${Date.now()}@example.com`);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user, { provider: 'github', ttlSeconds: 300 }));

    const setup = await post<ApiBody<'mfa', 'totpSetup'>>(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: challenge });
    expect(setup.status).toBe(200);
    const { secret, uri, qr_code } = setup.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const parsed = new URL(uri);
    expect(parsed.protocol).toBe('otpauth:');
    expect(uri.startsWith(`otpauth://totp/${encodeURIComponent('Enroll Corp')}:${encodeURIComponent(user.email!)}?`)).toBe(true);
    expect(parsed.searchParams.get('secret')).toBe(secret);
    expect(parsed.searchParams.get('issuer')).toBe('Enroll Corp');
    expect(qr_code).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);

    // A wrong code does not enroll and does not spend the challenge.
    const wrong = await post(t, '/api/proxy/mfa/totp/verify-setup', { code: totpCode(t, secret, 120) }, { bearer: challenge });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: 'Invalid code', code: 'mfa_invalid_code' });

    const done = await post<Extract<ApiBody<'mfa', 'totpVerifySetup'>, { token: string }>>(
      t,
      '/api/proxy/mfa/totp/verify-setup',
      { code: totpCode(t, secret) },
      { bearer: challenge },
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ success: true, refresh_token: expect.stringMatching(/^rt_/), user: { id: user.id, email: user.email } });
    // The session carries what the primary sign-in asked for: provider and lifetime.
    const claims = decodeJwt(done.body.token);
    expect(claims.provider).toBe('github');
    expect(claims.exp - claims.iat).toBe(300);
    const verified = await project.client.token.verify({ body: { token: done.body.token } });
    expect(verified.body).toMatchObject({ valid: true, user: { id: user.id } });

    // The challenge is spent: it no longer opens the setup endpoints.
    expect((await post(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: challenge })).status).toBe(401);

    const codes = await post<ApiBody<'mfa', 'backupCodesGenerate'>>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: done.body.token });
    expect(codes.status).toBe(200);
    expect(codes.body.codes).toHaveLength(10);
    expect(new Set(codes.body.codes).size).toBe(10);
    for (const c of codes.body.codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);

    t.clock.advanceSeconds(30);
    const next = challengeOf(await primarySignIn(t, project.id, user));
    expect(next).toMatchObject({ enrollmentRequired: false, methods: ['totp', 'backup_codes'] });
  });

  it('the enrollment challenge opens only the setup endpoints, and only for 5 minutes', async () => {
    const project = await t.createProject();
    await setPolicy(t, project.id, 'required');
    const user = await seedUser(t, project.id);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    for (const path of ['/api/proxy/mfa/totp/disable', '/api/proxy/mfa/sms/disable']) {
      const res = await post<ErrorBody>(t, path, { code: '123456' }, { bearer: challenge });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_access_token');
    }
    // Nothing enrolled yet: backup codes need TOTP or SMS first.
    const early = await post<ErrorBody>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: challenge });
    expect(early.status).toBe(400);
    expect(early.body.code).toBe('mfa_not_enrolled');
    expect((await post(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: challenge })).status).toBe(200);
    t.clock.advanceSeconds(5 * 60 + 1);
    const late = await post(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: challenge });
    expect(late.status).toBe(401);
  });

  it('an ordinary sign-in challenge is no Bearer credential at all', async () => {
    const { project, user } = await projectWithEnrolledUser('required');
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    for (const path of ['/api/proxy/mfa/totp/setup', '/api/proxy/mfa/backup-codes/generate', '/api/proxy/mfa/sms/enable']) {
      expect((await post(t, path, undefined, { bearer: challenge })).status).toBe(401);
    }
  });
});

describe('primary auth -> challenge -> verify -> JWT and refresh token', () => {
  it('verifies with TOTP and issues the session the primary sign-in would have issued', async () => {
    const { project, user, secret } = await projectWithEnrolledUser('optional');
    const outcome = challengeOf(await primarySignIn(t, project.id, user, { provider: 'magic-link', ttlSeconds: 900 }));
    const res = await post<ApiBody<'mfa', 'verify'>>(t, '/api/proxy/mfa/verify', { challenge: outcome.challenge, code: totpCode(t, secret), method: 'totp' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['refresh_token', 'token', 'user']);
    expect(res.body.user).toEqual({ id: user.id, email: user.email, name: user.name, email_verified: true });
    const claims = decodeJwt(res.body.token);
    expect(claims).toMatchObject({ sub: user.id, provider: 'magic-link', aud: project.id });
    expect(claims.exp - claims.iat).toBe(900);
    const rows = await t.inContext(() =>
      t.tollgate.core.db.query<{ provider: string }>('select provider from refresh_tokens where token_hash = ?', [
        t.tollgate.core.crypto.hash(res.body.refresh_token),
      ]),
    );
    expect(rows).toEqual([{ provider: 'magic-link' }]);
  });

  it('refuses a method the project does not allow, and one the user has not enrolled, with 400', async () => {
    const { project, user, secret } = await projectWithEnrolledUser('optional');
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    const sms = await post(t, '/api/proxy/mfa/verify', { challenge, code: '123456', method: 'sms' });
    expect(sms.status).toBe(400);
    expect(sms.body).toEqual({ error: 'MFA method not enrolled', code: 'mfa_method_not_enrolled' });
    await setPolicy(t, project.id, 'optional', ['sms']);
    await setPolicy(t, project.id, 'optional', ['totp']);
    const noSms = await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge, code: '123456', method: 'sms' });
    expect(noSms.status).toBe(400);
    expect(noSms.body.code).toBe('mfa_method_not_allowed');
    const bad = await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge, code: '123456', method: 'email' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    const ok = await post(t, '/api/proxy/mfa/verify', { challenge, code: totpCode(t, secret), method: 'totp' });
    expect(ok.status).toBe(200);
  });

  it('refuses setup while the project policy is off', async () => {
    const project = await t.createProject();
    const user = await seedUser(t, project.id);
    const { token } = sessionOf(await primarySignIn(t, project.id, user));
    const res = await post(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'MFA is not enabled for this project', code: 'mfa_disabled' });
    expect((await post(t, '/api/proxy/mfa/totp/setup')).status).toBe(401);
  });
});
