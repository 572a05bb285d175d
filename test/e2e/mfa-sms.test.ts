import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../contract';
import type { ApiBody } from '../support/api-body';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { startFakeSms, type FakeSms } from '../support/fake-sms';
import { challengeOf, freshIp, post, primarySignIn, seedUser, sessionOf, setPolicy } from './mfa-helpers';
import { failOnUnexpectedRequests } from '../support/peer-server';

let t: TestApp;
let sms: FakeSms;
let project: TestProject;
let phoneCounter = 0;
const newPhone = () => `+1415555${String(1000 + ++phoneCounter).padStart(4, '0')}`;

// A request a look-alike peer has no route for fails the test that made it.
failOnUnexpectedRequests(() => [sms]);

beforeAll(async () => {
  sms = await startFakeSms();
  t = await startTestApp({ env: { ...sms.env, TRUST_PROXY: 'loopback' } });
  project = await t.createProject({ name: 'Texting Co' });
  await setPolicy(t, project.id, 'optional', ['totp', 'sms', 'backup_codes']);
});
afterAll(async () => {
  await t?.close();
  await sms?.close();
});

/** sms/phone + sms/phone/verify + sms/enable with `bearer`; returns the phone number. */
async function enrollSms(bearer: string, phone = newPhone()) {
  const before = sms.countTo(phone);
  expect((await post(t, '/api/proxy/mfa/sms/phone', { phone }, { bearer })).status).toBe(200);
  const code = await sms.nextCode(phone, before);
  const verified = await post(t, '/api/proxy/mfa/sms/phone/verify', { code }, { bearer });
  expect(verified.status).toBe(200);
  expect((await post(t, '/api/proxy/mfa/sms/enable', undefined, { bearer })).status).toBe(200);
  return phone;
}

async function sendSignInCode(challenge: string, phone: string) {
  const before = sms.countTo(phone);
  const res = await post(t, '/api/proxy/mfa/sms/send-code', { challenge });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true });
  return sms.nextCode(phone, before);
}

describe('phone number and SMS enrollment', () => {
  it('verifies a phone through the Messages API, then enables SMS', async () => {
    const user = await seedUser(t, project.id);
    const { token } = sessionOf(await primarySignIn(t, project.id, user));
    const phone = newPhone();

    const invalid = await post<ErrorBody>(t, '/api/proxy/mfa/sms/phone', { phone: '0612345678' }, { bearer: token });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('mfa_invalid_phone');
    const early = await post(t, '/api/proxy/mfa/sms/enable', undefined, { bearer: token });
    expect(early.status).toBe(400);
    expect(early.body).toEqual({ error: 'The account has no verified phone number', code: 'mfa_phone_not_verified' });

    expect((await post(t, '/api/proxy/mfa/sms/phone', { phone }, { bearer: token })).status).toBe(200);
    const message = await sms.waitFor(phone);
    expect(message.from).toBe(sms.from);
    expect(sms.rejected).toBe(0);
    expect(message.body).toMatch(/^\d{6} is your Texting Co verification code\. It expires in 5 minutes\.$/);
    const code = /^(\d{6})/.exec(message.body)![1]!;

    const wrong = await post<ErrorBody>(t, '/api/proxy/mfa/sms/phone/verify', { code: code === '000000' ? '111111' : '000000' }, { bearer: token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('mfa_invalid_code');
    const right = await post(t, '/api/proxy/mfa/sms/phone/verify', { code }, { bearer: token });
    expect(right.status).toBe(200);
    expect(right.body).toEqual({ success: true, phone });
    expect(await t.inContext(() => t.tollgate.core.db.query('select phone, phone_verified from users where id = ?', [user.id]))).toEqual([
      { phone, phone_verified: true },
    ]);
    const enabled = await post(t, '/api/proxy/mfa/sms/enable', undefined, { bearer: token });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({ success: true });
    expect(challengeOf(await primarySignIn(t, project.id, user)).methods).toEqual(['sms']);
  });

  it('a phone code stops working after 3 failed attempts, and after 5 minutes', async () => {
    const user = await seedUser(t, project.id);
    const { token } = sessionOf(await primarySignIn(t, project.id, user));
    const phone = newPhone();
    await post(t, '/api/proxy/mfa/sms/phone', { phone }, { bearer: token });
    const code = await sms.nextCode(phone);
    const wrong = code === '999999' ? '999998' : '999999';
    for (let i = 0; i < 3; i++) {
      expect((await post<ErrorBody>(t, '/api/proxy/mfa/sms/phone/verify', { code: wrong }, { bearer: token })).body.code).toBe('mfa_invalid_code');
    }
    const blocked = await post<ErrorBody>(t, '/api/proxy/mfa/sms/phone/verify', { code }, { bearer: token });
    expect(blocked.status).toBe(400);
    expect(blocked.body.code).toBe('mfa_code_expired');

    await post(t, '/api/proxy/mfa/sms/phone', { phone }, { bearer: token });
    const second = await sms.nextCode(phone, 1);
    t.clock.advanceSeconds(5 * 60);
    // The 5-minute access token expired with it: sign in again.
    const token2 = sessionOf(await primarySignIn(t, project.id, user)).token;
    expect((await post<ErrorBody>(t, '/api/proxy/mfa/sms/phone/verify', { code: second }, { bearer: token2 })).body.code).toBe('mfa_code_expired');

    await post(t, '/api/proxy/mfa/sms/phone', { phone }, { bearer: token2 });
    const third = await sms.nextCode(phone, 2);
    t.clock.advanceSeconds(4 * 60 + 59);
    const token3 = sessionOf(await primarySignIn(t, project.id, user)).token;
    expect((await post(t, '/api/proxy/mfa/sms/phone/verify', { code: third }, { bearer: token3 })).status).toBe(200);
  });
});

describe('signing in with SMS', () => {
  it('send-code texts a code for the challenge; verify with it issues the session', async () => {
    const user = await seedUser(t, project.id);
    const phone = await enrollSms(sessionOf(await primarySignIn(t, project.id, user)).token);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user, { provider: 'google' }));

    const none = await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge, code: '123456', method: 'sms' });
    expect(none.body.code).toBe('mfa_code_expired');
    const code = await sendSignInCode(challenge, phone);
    const stored = await t.inContext(() => t.tollgate.core.db.query('select * from mfa_sms_codes where user_id = ?', [user.id]));
    expect(JSON.stringify(stored)).not.toContain(`"${code}"`);

    const res = await post(t, '/api/proxy/mfa/verify', { challenge, code, method: 'sms' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token: expect.any(String), refresh_token: expect.stringMatching(/^rt_/), user: { id: user.id } });

    // The code belonged to that challenge only.
    const other = challengeOf(await primarySignIn(t, project.id, user)).challenge;
    expect((await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge: other, code, method: 'sms' })).body.code).toBe('mfa_code_expired');
  });

  it('a new code replaces the old one; codes die with their 5-minute challenge', async () => {
    const user = await seedUser(t, project.id);
    const phone = await enrollSms(sessionOf(await primarySignIn(t, project.id, user)).token);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    const first = await sendSignInCode(challenge, phone);
    const second = await sendSignInCode(challenge, phone);
    if (first !== second)
      expect((await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge, code: first, method: 'sms' })).body.code).toBe('mfa_invalid_code');
    const late = challengeOf(await primarySignIn(t, project.id, user)).challenge;
    const code = await sendSignInCode(late, phone);
    t.clock.advanceSeconds(4 * 60);
    const stillFresh = challengeOf(await primarySignIn(t, project.id, user)).challenge;
    const freshCode = await sendSignInCode(stillFresh, phone);
    t.clock.advanceSeconds(61);
    // `late` is past its 5 minutes (challenge and code); `stillFresh` is at 61 s.
    expect((await post<ErrorBody>(t, '/api/proxy/mfa/verify', { challenge: late, code, method: 'sms' })).body.code).toBe('mfa_invalid_challenge');
    expect((await post(t, '/api/proxy/mfa/verify', { challenge: stillFresh, code: freshCode, method: 'sms' })).status).toBe(200);
  });

  it('limits codes sent per challenge', async () => {
    const user = await seedUser(t, project.id);
    const phone = await enrollSms(sessionOf(await primarySignIn(t, project.id, user)).token);
    // The phone verification text counted against the user's window; start a fresh one.
    t.clock.advanceSeconds(15 * 60);
    const { challenge } = challengeOf(await primarySignIn(t, project.id, user));
    for (let i = 0; i < 5; i++) expect((await post(t, '/api/proxy/mfa/sms/send-code', { challenge }, { ip: freshIp() })).status).toBe(200);
    const sixth = await post(t, '/api/proxy/mfa/sms/send-code', { challenge }, { ip: freshIp() });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toBeTruthy();
    expect(sms.countTo(phone)).toBeLessThanOrEqual(6);
  });

  it('send-code refuses unknown challenges and users without SMS', async () => {
    expect((await post<ErrorBody>(t, '/api/proxy/mfa/sms/send-code', { challenge: 'mfa_nope' })).body.code).toBe('mfa_invalid_challenge');
    const p = await t.createProject();
    await setPolicy(t, p.id, 'required', ['totp', 'sms']);
    const user = await seedUser(t, p.id);
    const { challenge } = challengeOf(await primarySignIn(t, p.id, user));
    const res = await post<ErrorBody>(t, '/api/proxy/mfa/sms/send-code', { challenge });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('mfa_method_not_enrolled');
  });
});

describe('required policy: enrollment by SMS with the challenge as Bearer', () => {
  it('phone -> verify -> enable -> backup codes -> send-code -> verify', async () => {
    const p = await t.createProject({ name: 'Strict Co' });
    await setPolicy(t, p.id, 'required', ['sms', 'backup_codes']);
    const user = await seedUser(t, p.id);
    const first = challengeOf(await primarySignIn(t, p.id, user));
    expect(first).toMatchObject({ enrollmentRequired: true, methods: [] });
    const phone = await enrollSms(first.challenge);
    const codes = await post<ApiBody<'mfa', 'backupCodesGenerate'>>(t, '/api/proxy/mfa/backup-codes/generate', undefined, { bearer: first.challenge });
    expect(codes.status).toBe(200);
    expect(codes.body.codes).toHaveLength(10);
    const smsCode = await sendSignInCode(first.challenge, phone);
    const done = await post<ApiBody<'mfa', 'verify'>>(t, '/api/proxy/mfa/verify', { challenge: first.challenge, code: smsCode, method: 'sms' });
    expect(done.status).toBe(200);
    expect(done.body.user.id).toBe(user.id);
    expect(challengeOf(await primarySignIn(t, p.id, user))).toMatchObject({ enrollmentRequired: false, methods: ['sms', 'backup_codes'] });
  });
});

describe('removing SMS', () => {
  it('needs a texted code; under the required policy the last method stays', async () => {
    const p = await t.createProject();
    await setPolicy(t, p.id, 'optional', ['sms', 'backup_codes']);
    const user = await seedUser(t, p.id);
    const { token } = sessionOf(await primarySignIn(t, p.id, user));
    const phone = await enrollSms(token);

    await setPolicy(t, p.id, 'required');
    const kept = await post<ErrorBody>(t, '/api/proxy/mfa/sms/disable', { code: '123456' }, { bearer: token });
    expect(kept.status).toBe(409);
    expect(kept.body.code).toBe('mfa_last_method');

    await setPolicy(t, p.id, 'optional');
    const before = sms.countTo(phone);
    expect((await post(t, '/api/proxy/mfa/sms/disable/send-code', undefined, { bearer: token })).status).toBe(200);
    const code = await sms.nextCode(phone, before);
    const wrong = await post<ErrorBody>(t, '/api/proxy/mfa/sms/disable', { code: code === '000000' ? '000001' : '000000' }, { bearer: token });
    expect(wrong.body.code).toBe('mfa_invalid_code');
    const done = await post(t, '/api/proxy/mfa/sms/disable', { code }, { bearer: token });
    expect(done.status).toBe(200);
    expect((await primarySignIn(t, p.id, user)).kind).toBe('session');
  });
});

describe('production without SMS configuration', () => {
  let prod: TestApp;
  beforeAll(async () => {
    prod = await startTestApp({ env: { NODE_ENV: 'production', TOLLGATE_SECRET_KEY: randomBytes(32).toString('base64') } });
  });
  afterAll(() => prod?.close());

  it('answers 503 for the SMS methods', async () => {
    const p = await prod.createProject();
    const r = await prod.inContext(() => prod.tollgate.admin.updateProject(p.id, { mfaPolicy: 'optional', mfaMethods: ['totp', 'sms'] }));
    expect(r.ok).toBe(true);
    const user = await seedUser(prod, p.id);
    const { token } = sessionOf(await primarySignIn(prod, p.id, user));
    for (const [path, body] of [
      ['/api/proxy/mfa/sms/phone', { phone: '+14155550100' }],
      ['/api/proxy/mfa/sms/phone/verify', { code: '123456' }],
      ['/api/proxy/mfa/sms/enable', undefined],
    ] as const) {
      const res = await post(prod, path, body, { bearer: token });
      expect(res.status, path).toBe(503);
      expect(res.body).toEqual({ error: 'SMS delivery is not configured for this deployment', code: 'sms_unavailable' });
    }
    // TOTP still works.
    expect((await post(prod, '/api/proxy/mfa/totp/setup', undefined, { bearer: token })).status).toBe(200);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address is limited', async () => {
    const p = await prod.createProject();
    await prod.inContext(() => prod.tollgate.admin.updateProject(p.id, { mfaPolicy: 'required' }));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const user = await seedUser(prod, p.id);
      const { challenge } = challengeOf(await primarySignIn(prod, p.id, user));
      statuses.push((await post(prod, '/api/proxy/mfa/verify', { challenge, code: '000000', method: 'totp' }, { ip: freshIp() })).status);
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
  });
});
