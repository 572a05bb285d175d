import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import type { ApiBody, SessionBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { challengeOf, enrollTotp, freshIp, post, primarySignIn, seedUser, sessionOf, setPolicy, totpCode } from './mfa-helpers';

let t: TestApp;
let project: TestProject;

beforeAll(async () => {
  // Behind a proxy on loopback: X-Forwarded-For names the client, so each test can be its own IP.
  t = await startTestApp({ env: { TRUST_PROXY: 'loopback' } });
  project = await t.createProject();
  await setPolicy(t, project.id, 'optional', ['totp', 'backup_codes']);
});
afterAll(() => t?.close());

async function enrolledUser(withBackupCodes = false) {
  const user = await seedUser(t, project.id);
  const { token } = sessionOf(await primarySignIn(t, project.id, user));
  const { secret } = await enrollTotp(t, token);
  let backupCodes: string[] = [];
  if (withBackupCodes) {
    const res = await post<ApiBody<'mfa', 'backupCodesGenerate'>>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: token });
    expect(res.status).toBe(200);
    backupCodes = res.body.codes;
  }
  return { user, secret, token, backupCodes };
}

const newChallenge = async (user: Awaited<ReturnType<typeof enrolledUser>>['user']) => challengeOf(await primarySignIn(t, project.id, user)).challenge;
/** mfa/verify from `ip`; `T` is what the test reads the answer as (the session, or ErrorBody for a refusal). */
const verify = <T = unknown>(body: Record<string, unknown>, ip?: string) => post<T>(t, '/api/proxy/mfa/verify', body, ip ? { ip } : {});

describe('TOTP verification', () => {
  it('accepts the previous step (-30 s) and refuses codes 60 s away in either direction', async () => {
    const { user, secret } = await enrolledUser();
    // Enrollment spent the previous step; move on so that the step before now is unused.
    t.clock.advanceSeconds(30);
    const challenge = await newChallenge(user);
    for (const offset of [-60, 60, -90, 90]) {
      const res = await verify<ErrorBody>({ challenge, code: totpCode(t, secret, offset), method: 'totp' });
      expect(res.status, `offset ${offset}`).toBe(400);
      expect(res.body.code).toBe('mfa_invalid_code');
    }
    const second = await newChallenge(user);
    const ok = await verify({ challenge: second, code: totpCode(t, secret, -30), method: 'totp' });
    expect(ok.status).toBe(200);
  });

  it('accepts the next step (+30 s) too', async () => {
    const { user, secret } = await enrolledUser();
    const res = await verify({ challenge: await newChallenge(user), code: totpCode(t, secret, 30), method: 'totp' });
    expect(res.status).toBe(200);
  });

  it('never accepts the same time step twice for a user, nor an earlier one', async () => {
    const { user, secret } = await enrolledUser();
    const code = totpCode(t, secret);
    expect((await verify({ challenge: await newChallenge(user), code, method: 'totp' })).status).toBe(200);
    const replay = await verify<ErrorBody>({ challenge: await newChallenge(user), code, method: 'totp' });
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('mfa_invalid_code');
    const older = await verify({ challenge: await newChallenge(user), code: totpCode(t, secret, -30), method: 'totp' });
    expect(older.status).toBe(400);
    t.clock.advanceSeconds(30);
    expect((await verify({ challenge: await newChallenge(user), code: totpCode(t, secret), method: 'totp' })).status).toBe(200);
  });

  it('one code sent in parallel on one challenge succeeds once', async () => {
    const { user, secret } = await enrolledUser();
    const challenge = await newChallenge(user);
    const code = totpCode(t, secret);
    const results = await Promise.all(Array.from({ length: 5 }, () => verify({ challenge, code, method: 'totp' })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(4);
  });
});

describe('challenges', () => {
  it('refuses an expired challenge (5 minutes) and a reused one', async () => {
    const { user, secret } = await enrolledUser();
    const expiring = await newChallenge(user);
    t.clock.advanceSeconds(5 * 60);
    const expired = await verify({ challenge: expiring, code: totpCode(t, secret), method: 'totp' });
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ error: 'Invalid or expired MFA challenge', code: 'mfa_invalid_challenge' });

    const challenge = await newChallenge(user);
    t.clock.advanceSeconds(4 * 60 + 59);
    expect((await verify({ challenge, code: totpCode(t, secret), method: 'totp' })).status).toBe(200);
    t.clock.advanceSeconds(30);
    const reused = await verify<ErrorBody>({ challenge, code: totpCode(t, secret), method: 'totp' });
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe('mfa_invalid_challenge');
    const unknown = await verify<ErrorBody>({ challenge: `mfa_${'x'.repeat(43)}`, code: '123456', method: 'totp' });
    expect(unknown.body.code).toBe('mfa_invalid_challenge');
  });

  it('stores challenges, TOTP secrets and backup codes only hashed or encrypted', async () => {
    const { user, secret, backupCodes } = await enrolledUser(true);
    const challenge = await newChallenge(user);
    const dump = await t.inContext(async () => {
      const q = t.tollgate.core.db.query.bind(t.tollgate.core.db);
      const rows = [
        ...(await q('select * from mfa_challenges where user_id = ?', [user.id])),
        ...(await q('select * from mfa_totp_factors where user_id = ?', [user.id])),
        ...(await q('select * from mfa_backup_codes where user_id = ?', [user.id])),
      ];
      return JSON.stringify(rows);
    });
    expect(dump).not.toContain(challenge);
    expect(dump).toContain(t.tollgate.core.crypto.hash(challenge));
    expect(dump).not.toContain(secret);
    for (const c of backupCodes) expect(dump).not.toContain(c);
  });
});

describe('backup codes', () => {
  it('each code works once', async () => {
    const { user, backupCodes } = await enrolledUser(true);
    const [code] = backupCodes;
    expect((await verify({ challenge: await newChallenge(user), code: code!.toUpperCase(), method: 'backup_codes' })).status).toBe(200);
    const again = await verify<ErrorBody>({ challenge: await newChallenge(user), code, method: 'backup_codes' });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('mfa_invalid_code');
    expect((await verify({ challenge: await newChallenge(user), code: backupCodes[1], method: 'backup_codes' })).status).toBe(200);
  });

  it('a new generation invalidates every earlier code', async () => {
    const { user, token, backupCodes } = await enrolledUser(true);
    const regenerated = await post<ApiBody<'mfa', 'backupCodesGenerate'>>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: token });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.codes.some((c: string) => backupCodes.includes(c))).toBe(false);
    const old = await verify({ challenge: await newChallenge(user), code: backupCodes[0], method: 'backup_codes' });
    expect(old.status).toBe(400);
    const fresh = await verify({ challenge: await newChallenge(user), code: regenerated.body.codes[0], method: 'backup_codes' });
    expect(fresh.status).toBe(200);
  });

  it('parallel use of one code on different challenges gives exactly one success', async () => {
    const { user, backupCodes } = await enrolledUser(true);
    const challenges = await Promise.all(Array.from({ length: 5 }, () => newChallenge(user)));
    const results = await Promise.all(challenges.map((challenge) => verify({ challenge, code: backupCodes[0], method: 'backup_codes' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400]);
  });
});

describe('rate limits of mfa/verify', () => {
  it('the 6th attempt from one IP within 15 minutes answers 429 with Retry-After', async () => {
    const ip = freshIp();
    // Five different users and challenges, so that only the per-IP limit can trip.
    const users = [];
    for (let i = 0; i < 6; i++) users.push(await enrolledUser());
    for (const u of users.slice(0, 5)) {
      const res = await verify({ challenge: await newChallenge(u.user), code: '000000', method: 'totp' }, ip);
      expect(res.status).toBe(400);
    }
    const sixth = await verify({ challenge: await newChallenge(users[5]!.user), code: totpCode(t, users[5]!.secret), method: 'totp' }, ip);
    expect(sixth.status).toBe(429);
    expect(sixth.body).toEqual({ error: 'Too many requests', code: 'rate_limited' });
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(sixth.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    // Another address is not affected; after 15 minutes the address may try again.
    expect((await verify({ challenge: await newChallenge(users[5]!.user), code: totpCode(t, users[5]!.secret), method: 'totp' })).status).toBe(200);
    t.clock.advanceSeconds(15 * 60);
    const later = await verify({ challenge: await newChallenge(users[0]!.user), code: totpCode(t, users[0]!.secret), method: 'totp' }, ip);
    expect(later.status).toBe(200);
  });

  it('rotating X-Forwarded-For does not help: the challenge and the user are limited too', async () => {
    const { user, secret } = await enrolledUser();
    const challenge = await newChallenge(user);
    for (let i = 0; i < 5; i++) expect((await verify({ challenge, code: '000000', method: 'totp' }, freshIp())).status).toBe(400);
    const sixth = await verify({ challenge, code: totpCode(t, secret), method: 'totp' }, freshIp());
    expect(sixth.status).toBe(429);
    // A new challenge of the same user from yet another address: the per-user limit holds.
    const other = await verify({ challenge: await newChallenge(user), code: totpCode(t, secret), method: 'totp' }, freshIp());
    expect(other.status).toBe(429);
  });
});

describe('removing TOTP', () => {
  it('needs a current code, keeps the last method under the required policy, and then drops backup codes', async () => {
    const p = await t.createProject();
    await setPolicy(t, p.id, 'required', ['totp', 'backup_codes']);
    const user = await seedUser(t, p.id);
    const { challenge } = challengeOf(await primarySignIn(t, p.id, user));
    const { secret, verify: finished } = await enrollTotp(t, challenge);
    // With an enrollment challenge, verify-setup finishes the sign-in: its answer carries the session.
    const token = (finished.body as SessionBody).token;
    expect((await post(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: token })).status).toBe(200);

    const last = await post<ErrorBody>(t, '/api/proxy/mfa/totp/disable', { code: totpCode(t, secret) }, { bearer: token });
    expect(last.status).toBe(409);
    expect(last.body.code).toBe('mfa_last_method');

    await setPolicy(t, p.id, 'optional');
    const wrong = await post<ErrorBody>(t, '/api/proxy/mfa/totp/disable', { code: totpCode(t, secret, 90) }, { bearer: token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('mfa_invalid_code');
    const done = await post(t, '/api/proxy/mfa/totp/disable', { code: totpCode(t, secret) }, { bearer: token });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ success: true });
    expect((await primarySignIn(t, p.id, user)).kind).toBe('session');
    const again = await post<ErrorBody>(t, '/api/proxy/mfa/totp/disable', { code: totpCode(t, secret) }, { bearer: token });
    expect(again.body.code).toBe('mfa_method_not_enrolled');
  });

  it('answers 409 to a second setup once TOTP is enrolled', async () => {
    const { token } = await enrolledUser();
    const res = await post<ErrorBody>(t, '/api/proxy/mfa/totp/setup', undefined, { bearer: token });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('totp_already_enrolled');
  });
});
