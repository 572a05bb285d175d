import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';

let t: TestApp;
let smtp: TestSmtp;
let project: TestProject;
let passwordHash: string;
const PASSWORD = 'correct horse 1';
const NEW_PASSWORD = 'battery staple 2';
const CALLBACK = 'https://app.example.com/reset?from=email';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  project = await t.createProject({ name: 'Reset Co', callbackUrls: [CALLBACK] });
  passwordHash = await t.tollgate.core.passwordHasher.hash(PASSWORD);
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const signup = async (email: string, locale?: string) => {
  const res = await project.client.email.signup({ body: { email, password: PASSWORD, callback_url: CALLBACK, ...(locale ? { locale } : {}) } });
  expect(res.status).toBe(200);
  if (res.status !== 200 || !('token' in res.body)) throw new Error('expected a session');
  await smtp.waitFor(email); // the verification email
  return res.body;
};
/** An existing email + password account, written directly (one argon2 hash shared by all). */
async function seed(email: string): Promise<void> {
  await t.inContext(() => {
    const now = t.clock.now();
    return t.tollgate.core.db.query(
      `insert into users (id, project_id, email, provider, email_verified, password_hash, disabled, created_at, updated_at, login_email)
       values (?, ?, ?, 'email', true, ?, false, ?, ?, ?)`,
      [t.tollgate.core.crypto.uuid(), project.id, email, passwordHash, now, now, email],
    );
  });
}
const signin = (email: string, password: string) => project.client.email.signin({ body: { email, password, callback_url: CALLBACK } });
const requestReset = (email: string) => project.client.email.resetPassword({ body: { email, callback_url: CALLBACK } });
const confirm = (token: string, password = NEW_PASSWORD) => project.client.email.confirmPasswordReset({ body: { token, password } });
/** Requests a reset and returns the token of the n-th email to `email` (1-based, counting all its emails). */
async function resetToken(email: string, n: number): Promise<string> {
  expect(await requestReset(email)).toMatchObject({ status: 200, body: { success: true } });
  const mail = await smtp.waitFor(email, n);
  const link = new URL(linkOf(mail));
  expect(`${link.origin}${link.pathname}`).toBe('https://app.example.com/reset');
  expect(link.searchParams.get('from')).toBe('email');
  return link.searchParams.get('token')!;
}

describe('password reset', () => {
  it('resets the password end to end: localized link, single use, old password and sessions revoked', async () => {
    const session = await signup('reset@example.com', 'fr');
    const token = await resetToken('reset@example.com', 2);
    const mail = smtp.to('reset@example.com')[1]!;
    expect(mail.subject).toBe('Réinitialisez votre mot de passe Reset Co');
    expect(mail.text.replace(/\s/g, ' ')).toContain('1 heure');

    const res = await confirm(token);
    expect(res).toMatchObject({ status: 200, body: { success: true } });

    expect((await signin('reset@example.com', PASSWORD)).status).toBe(401);
    const fresh = await signin('reset@example.com', NEW_PASSWORD);
    expect(fresh.status).toBe(200);

    const refresh = await t.inContext(() =>
      t.tollgate.core.db.query<{ token_hash: string; revoked_at: Date | null }>(
        'select token_hash, revoked_at from refresh_tokens where user_id = ? order by created_at',
        [session.user.id],
      ),
    );
    const before = refresh.find((r) => r.token_hash === t.tollgate.core.crypto.hash(session.refresh_token))!;
    expect(before.revoked_at).not.toBeNull();
    expect(refresh.filter((r) => r.revoked_at === null)).toHaveLength(1); // the sign-in after the reset

    const again = await confirm(token, 'another pass 3');
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: 'Password reset token already used or replaced by a newer one', code: 'reset_token_used' });
    expect((await signin('reset@example.com', 'another pass 3')).status).toBe(401);
  });

  it('expires the token after 1 hour (injected clock)', async () => {
    await seed('hour@example.com');
    const token = await resetToken('hour@example.com', 1);
    t.clock.advanceSeconds(60 * 60 + 1);
    const res = await confirm(token);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Password reset token expired; request a new one', code: 'reset_token_expired' });
    const within = await resetToken('hour@example.com', 2);
    t.clock.advanceSeconds(59 * 60);
    expect((await confirm(within)).status).toBe(200);
  });

  it('applies the password rules without consuming the token, and refuses unknown tokens', async () => {
    await seed('rules@example.com');
    const token = await resetToken('rules@example.com', 1);
    const weak = await confirm(token, 'nodigits');
    expect(weak.status).toBe(400);
    expect(weak.body).toEqual({ error: 'Password must contain at least one number', code: 'password_missing_number' });
    expect((await confirm(token)).status).toBe(200);
    expect((await confirm('not-a-token')).body).toEqual({ error: 'Invalid password reset token', code: 'invalid_reset_token' });
    // Another project cannot use this project's token.
    const other = await t.createProject();
    const foreign = await other.client.email.confirmPasswordReset({ body: { token, password: NEW_PASSWORD } });
    expect(foreign.body).toMatchObject({ code: 'invalid_reset_token' });
  });

  it('invalidates an earlier token when a newer one is requested', async () => {
    await seed('twice@example.com');
    const first = await resetToken('twice@example.com', 1);
    const second = await resetToken('twice@example.com', 2);
    expect((await confirm(first)).body).toMatchObject({ code: 'reset_token_used' });
    expect((await confirm(second)).status).toBe(200);
  });

  it('answers an unknown email exactly like a known one, with the same work on the request path, and sends it nothing', async () => {
    await seed('known@example.com');
    const known = await fetch(`${t.baseUrl}/api/proxy/email/reset-password`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'known@example.com', callback_url: CALLBACK }),
    });
    const unknown = await fetch(`${t.baseUrl}/api/proxy/email/reset-password`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'unknown@example.com', callback_url: CALLBACK }),
    });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toBe(await known.text());
    expect([...unknown.headers.keys()].filter((h) => h !== 'x-request-id' && h !== 'date').sort()).toEqual(
      [...known.headers.keys()].filter((h) => h !== 'x-request-id' && h !== 'date').sort(),
    );

    // Timing: the request does the same work for a known and an unknown address. It only records
    // a reset request for a background job (which looks the account up), so what it writes, and
    // so the time it takes, does not depend on the account. Checked on what it writes, which no
    // load on the machine can blur: exactly one reset-request message per request, either way.
    const requestsRecorded = async () =>
      Number(
        (
          await t.inContext(() =>
            t.tollgate.core.db.query<{ n: string }>("select count(*) as n from outbox_messages where topic = 'email.password_reset_request'"),
          )
        )[0]!.n,
      );
    for (let i = 0; i < 4; i++) {
      for (const email of ['known@example.com', `unknown${i}@example.com`]) {
        const before = await requestsRecorded();
        await requestReset(email);
        expect(await requestsRecorded(), email).toBe(before + 1);
      }
    }

    // Jobs run in order: once the last known request's email is here, every unknown one was handled.
    await smtp.waitFor('known@example.com', 5);
    expect(smtp.to('unknown@example.com')).toHaveLength(0);
    for (let i = 0; i < 4; i++) expect(smtp.to(`unknown${i}@example.com`)).toHaveLength(0);
    const unknownUsers = await t.inContext(() => t.tollgate.core.db.query("select 1 from users where login_email like 'unknown%'"));
    expect(unknownUsers).toHaveLength(0);
  });

  it('gives exactly one success to 20 parallel confirmations of one token', async () => {
    await seed('race@example.com');
    const token = await resetToken('race@example.com', 1);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => confirm(token, `parallel pass ${i}`)));
    const winners = results.map((r, i) => [r.status, i] as const).filter(([s]) => s === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(19);
    expect((await signin('race@example.com', `parallel pass ${winners[0]![1]}`)).status).toBe(200);
  });
});
