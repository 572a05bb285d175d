import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp';

let t: TestApp;
let smtp: TestSmtp;
let project: TestProject;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  project = await t.createProject({ name: 'Verify Co' });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** Signs up `email` and returns the code of its verification email. */
async function signupAndCode(email: string): Promise<string> {
  const res = await project.client.email.signup({ body: { email, password: PASSWORD, callback_url: project.callbackUrl } });
  expect(res.status).toBe(200);
  return codeOf(await smtp.waitFor(email));
}
const verify = (email: string, code: string) => project.client.email.verify({ body: { email, code } });
const resend = (email: string) => project.client.email.resendVerification({ body: { email, callback_url: project.callbackUrl } });
const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

const WRONG = { error: 'Invalid verification code', code: 'invalid_verification_code' };
const INVALIDATED = { error: 'Too many failed attempts; this code no longer works, request a new code', code: 'verification_code_invalidated' };
const EXPIRED = { error: 'Verification code expired; request a new code', code: 'verification_code_expired' };

describe('email verification codes', () => {
  it('invalidates the code on the 3rd failed attempt, even for the right code afterwards', async () => {
    const code = await signupAndCode('three@example.com');
    const wrong = otherCode(code);
    expect((await verify('three@example.com', wrong)).body).toEqual(WRONG);
    expect((await verify('three@example.com', 'abcdef')).body).toEqual(WRONG);
    const third = await verify('three@example.com', wrong);
    expect(third.status).toBe(400);
    expect(third.body).toEqual(INVALIDATED);
    const right = await verify('three@example.com', code);
    expect(right.status).toBe(400);
    expect(right.body).toEqual(INVALIDATED);

    // A new code works again.
    expect((await resend('three@example.com')).status).toBe(200);
    const fresh = codeOf(await smtp.waitFor('three@example.com', 2));
    const ok = await verify('three@example.com', fresh);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true, user: { email: 'three@example.com', email_verified: true } });
  });

  it('accepts a code at 4:59 and refuses it at 5:01 (injected clock)', async () => {
    const early = await signupAndCode('early@example.com');
    const late = await signupAndCode('late@example.com');
    t.clock.advanceSeconds(4 * 60 + 59);
    expect((await verify('early@example.com', early)).status).toBe(200);
    t.clock.advanceSeconds(2);
    const res = await verify('late@example.com', late);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(EXPIRED);
  });

  it('replaces the previous code on resend', async () => {
    const first = await signupAndCode('resend@example.com');
    expect(await resend('resend@example.com')).toMatchObject({ status: 200, body: { success: true } });
    const second = codeOf(await smtp.waitFor('resend@example.com', 2));
    if (second !== first) {
      expect((await verify('resend@example.com', first)).body).toEqual(WRONG);
    }
    const res = await verify('resend@example.com', second);
    expect(res.status).toBe(200);
    // Used once, it is gone.
    expect((await verify('resend@example.com', second)).body).toEqual(WRONG);
  });

  it('rate-limits resends per email with 429 and Retry-After, and answers unknown or verified emails the same', async () => {
    await signupAndCode('limited@example.com');
    for (let i = 0; i < 3; i++) expect((await resend('limited@example.com')).status).toBe(200);
    const res = await fetch(`${t.baseUrl}/api/proxy/email/verify/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'LIMITED@example.com', callback_url: project.callbackUrl }),
    });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: 'Too many requests', code: 'rate_limited' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    await smtp.waitFor('limited@example.com', 4);

    expect(await resend('ghost@example.com')).toMatchObject({ status: 200, body: { success: true } });
    expect(await resend('three@example.com')).toMatchObject({ status: 200, body: { success: true } });
    expect(await smtp.settle('ghost@example.com', 700)).toHaveLength(0);
    expect(smtp.to('limited@example.com')).toHaveLength(4);
    expect(smtp.to('three@example.com')).toHaveLength(2);
  });

  it('gives exactly one success to 20 parallel submissions of the right code', async () => {
    const code = await signupAndCode('race@example.com');
    const results = await Promise.all(Array.from({ length: 20 }, () => verify('race@example.com', code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body).toEqual(WRONG);
  });

  it('stores codes only as hashes', async () => {
    const code = await signupAndCode('hashed@example.com');
    const rows = await t.inContext(() =>
      t.tollgate.core.db.query<Record<string, unknown>>(`select c.* from email_verification_codes c join users u on u.id = c.user_id where u.login_email = ?`, [
        'hashed@example.com',
      ]),
    );
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(rows[0]!.code_hash).toBe(t.tollgate.core.crypto.hash(code));
  });
});
