import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app';
import { runCli } from '../support/cli';
import type { ErrorBody } from '../../contract';
import type { AdminBody } from '../support/api-body';
import { consoleApi, type ConsoleSession } from '../support/console-api';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';
import { authenticatorApp } from './mfa-helpers';

/**
 * Two-step sign-in for console accounts, over HTTP against the real server: an authenticator app
 * set up and confirmed on the Account routes, then asked for by every way in (password, one-time
 * link, invitation), codes spent once, attempts limited per account, turning it off with a code,
 * and `tollgate admin totp-remove` for an account that lost its app. Codes come from otpauth (not
 * the server's TOTP library) at the test clock's time.
 */
let t: TestApp;
let smtp: TestSmtp;
const { call, sessionFrom, operator } = consoleApi(() => t);

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const json = async <T = unknown>(res: Response, status: number): Promise<T> => {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body as T;
};
const codeAt = (secret: string) => authenticatorApp(secret).generate({ timestamp: t.clock.now().getTime() });
/** The next time step: the code just used cannot be used again. */
const nextStep = () => t.clock.advanceSeconds(30);
const signIn = (email: string, password: string, code?: string) =>
  call('/api/admin/session', { method: 'POST', body: code === undefined ? { email, password } : { email, password, code } });

/** An operator with a password and a confirmed authenticator app; answers its secret and session. */
async function withApp(email: string, password = 'console pass 1'): Promise<{ secret: string; session: ConsoleSession; id: string }> {
  const session = await operator(email);
  await json(await call('/api/admin/account/password', { method: 'PUT', body: { password }, session }), 200);
  const setup = await json<AdminBody<'session', 'startTotp'>>(await call('/api/admin/account/totp', { method: 'POST', session }), 200);
  await json(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: codeAt(setup.secret) }, session }), 200);
  nextStep();
  const me = await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200);
  return { secret: setup.secret, session, id: me.account.id };
}

describe('setting up an authenticator app', () => {
  it('start gives a secret and its QR code, pending until a first code confirms it; then the session says totp_enabled', async () => {
    const session = await operator('setup@example.com');
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account).toMatchObject({ totp_enabled: false });

    const first = await json<AdminBody<'session', 'startTotp'>>(await call('/api/admin/account/totp', { method: 'POST', session }), 200);
    expect(first.secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(first.uri).toBe(
      `otpauth://totp/Tollgate%20console:setup%40example.com?secret=${first.secret}&period=30&digits=6&algorithm=SHA1&issuer=Tollgate%20console`,
    );
    expect(first.qr_code).toMatch(/^data:image\/png;base64,/);
    // Starting again replaces a pending secret: a code of the first one no longer confirms.
    const setup = await json<AdminBody<'session', 'startTotp'>>(await call('/api/admin/account/totp', { method: 'POST', session }), 200);
    expect(setup.secret).not.toBe(first.secret);
    expect(await json(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: codeAt(first.secret) }, session }), 401)).toMatchObject({
      code: 'console_totp_invalid',
      error: 'Wrong code, or a code already used: enter the current code from your authenticator app',
    });
    // Pending: it is not asked for at sign-in yet.
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account.totp_enabled).toBe(false);

    // Stored encrypted, never as the secret itself.
    const [row] = await t.inContext(() =>
      t.tollgate.core.db.query<{ totp_secret_encrypted: string }>("select totp_secret_encrypted from console_accounts where email_key = 'setup@example.com'"),
    );
    expect(row!.totp_secret_encrypted).not.toContain(setup.secret);

    expect((await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: 'abcdef' }, session })).status).toBe(401);
    await json(
      await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: codeAt(setup.secret).replace(/^(\d{3})/, '$1 ') }, session }),
      200,
    );
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account.totp_enabled).toBe(true);
    // The account is told by email.
    const notice = await smtp.waitFor('setup@example.com');
    expect(notice.subject).toBe('Two-step sign-in is on for your Tollgate console account');
    expect(notice.text).toContain(`${t.config.publicUrl}/dashboard/account`);

    expect(await json(await call('/api/admin/account/totp', { method: 'POST', session }), 409)).toMatchObject({ code: 'console_totp_already_enabled' });
    expect(await json(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: codeAt(setup.secret) }, session }), 409)).toMatchObject({
      code: 'console_totp_already_enabled',
    });
  });

  it('confirm before start answers console_totp_not_started; an empty code is a 400 with the form message', async () => {
    const session = await operator('early@example.com');
    expect(await json(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: '123456' }, session }), 409)).toMatchObject({
      code: 'console_totp_not_started',
    });
    const empty = await json<ErrorBody>(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: ' ' }, session }), 400);
    expect(empty.error).toContain('Enter the 6-digit code from your authenticator app');
  });

  it('the account routes answer 401 without a session and 403 without the CSRF token', async () => {
    const session = await operator('guarded@example.com');
    for (const [path, body] of [
      ['/api/admin/account/totp', undefined],
      ['/api/admin/account/totp/confirm', { code: '123456' }],
      ['/api/admin/account/totp/disable', { code: '123456' }],
    ] as const) {
      expect((await call(path, { method: 'POST', body })).status, `${path} without a session`).toBe(401);
      expect(await json(await call(path, { method: 'POST', body, session, csrf: null }), 403)).toMatchObject({ code: 'csrf_token_invalid' });
    }
  });
});

describe('signing in with an authenticator app', () => {
  it('the password alone answers console_totp_required (no session); a wrong code is refused; the right one signs in, once per code', async () => {
    const { secret } = await withApp('two@example.com');

    const bare = await signIn('two@example.com', 'console pass 1');
    expect(await json(bare, 401)).toEqual({ code: 'console_totp_required', error: 'Enter the 6-digit code from your authenticator app' });
    expect(bare.headers.get('set-cookie')).toBeNull();
    // A wrong password says nothing about the second step, code or not.
    expect(await json(await signIn('two@example.com', 'wrong pass 1', codeAt(secret)), 401)).toMatchObject({ code: 'invalid_console_credentials' });
    expect(await json(await signIn('two@example.com', 'console pass 1', '000000'), 401)).toMatchObject({ code: 'console_totp_invalid' });

    const code = codeAt(secret);
    const session = await sessionFrom(await signIn('two@example.com', 'console pass 1', code));
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account).toMatchObject({
      email: 'two@example.com',
      totp_enabled: true,
    });
    // The same code (its time step is spent) does not sign in again.
    expect(await json(await signIn('two@example.com', 'console pass 1', code), 401)).toMatchObject({ code: 'console_totp_invalid' });
    nextStep();
    await sessionFrom(await signIn('two@example.com', 'console pass 1', codeAt(secret)));
  });

  it('a one-time link asks for the code too, and is not used up until the code is right', async () => {
    const { secret } = await withApp('linked@example.com');
    const link = await t.inContext(() => t.tollgate.admin.console.issueSignInLinkByEmail('linked@example.com'));
    if (!link.ok) throw new Error(link.error);
    const redeem = (code?: string) =>
      call('/api/admin/session/link', { method: 'POST', body: code === undefined ? { token: link.value.token } : { token: link.value.token, code } });

    expect(await json(await redeem(), 401)).toMatchObject({ code: 'console_totp_required' });
    expect(await json(await redeem('111111'), 401)).toMatchObject({ code: 'console_totp_invalid' });
    await sessionFrom(await redeem(codeAt(secret)));
    nextStep();
    expect(await json(await redeem(codeAt(secret)), 401)).toMatchObject({ code: 'sign_in_link_invalid' });
  });

  it('an invitation accepted by an existing account with an app asks for its code', async () => {
    const op = await operator('inviter@example.com');
    const projectId = (await t.createProject({ name: 'Invited' })).id;
    // A member account (of no project yet) with an app.
    const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'guest@example.com', role: 'member', password: 'guest pass 1' }));
    if (!created.ok) throw new Error(created.error);
    const guest = await sessionFrom(await signIn('guest@example.com', 'guest pass 1'));
    const setup = await json<AdminBody<'session', 'startTotp'>>(await call('/api/admin/account/totp', { method: 'POST', session: guest }), 200);
    await json(await call('/api/admin/account/totp/confirm', { method: 'POST', body: { code: codeAt(setup.secret) }, session: guest }), 200);
    nextStep();

    await json(await call(`/api/admin/projects/${projectId}/invitations`, { method: 'POST', body: { email: 'guest@example.com' }, session: op }), 201);
    const invitation = await smtp.waitFor('guest@example.com', 1, 10_000, (m) => m.subject.startsWith('You are invited'));
    const token = decodeURIComponent(new URL(linkOf(invitation)).hash.replace(/^#token=/, ''));
    const accept = (code?: string) => call('/api/admin/invitations/accept', { method: 'POST', body: code === undefined ? { token } : { token, code } });

    expect(await json(await accept(), 401)).toMatchObject({ code: 'console_totp_required' });
    const session = await sessionFrom(await accept(codeAt(setup.secret)));
    const projects = await json<AdminBody<'projects', 'list'>>(await call('/api/admin/projects', { session }), 200);
    expect(projects.projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
  });

  it('codes are limited per account: 10 tries in 15 minutes, then 429 with Retry-After even for the right code', async () => {
    const { secret } = await withApp('limited@example.com');
    const link = await t.inContext(() => t.tollgate.admin.console.issueSignInLinkByEmail('limited@example.com'));
    if (!link.ok) throw new Error(link.error);
    const redeem = (code: string) => call('/api/admin/session/link', { method: 'POST', body: { token: link.value.token, code } });
    // The code that confirmed the app was the first of the ten; nine wrong ones follow.
    for (let i = 0; i < 9; i++) expect((await redeem(String(100000 + i))).status).toBe(401);
    const limited = await redeem(codeAt(secret));
    expect(await json(limited, 429)).toMatchObject({ code: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The limit covers every way in: the password sign-in too.
    expect((await signIn('limited@example.com', 'console pass 1', codeAt(secret))).status).toBe(429);
    t.clock.advanceSeconds(15 * 60);
    await sessionFrom(await redeem(codeAt(secret)));
  });
});

describe('turning it off', () => {
  it('the account turns it off with a current code; then the password alone signs in', async () => {
    const { secret, session } = await withApp('off@example.com');
    // Operators see who has an app in the accounts list.
    const listed = async () =>
      (await json<AdminBody<'members', 'listAccounts'>>(await call('/api/admin/accounts', { session }), 200)).accounts.find(
        (a: { email: string }) => a.email === 'off@example.com',
      );
    expect(await listed()).toMatchObject({ role: 'operator', totp_enabled: true });
    expect(await json(await call('/api/admin/account/totp/disable', { method: 'POST', body: { code: '222222' }, session }), 401)).toMatchObject({
      code: 'console_totp_invalid',
    });
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account.totp_enabled).toBe(true);
    await json(await call('/api/admin/account/totp/disable', { method: 'POST', body: { code: codeAt(secret) }, session }), 200);
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session }), 200)).account.totp_enabled).toBe(false);
    // Told by email: when it was turned on, and now that it is off (a wrong code told nothing).
    expect((await smtp.waitFor('off@example.com', 2)).subject).toBe('Two-step sign-in is off for your Tollgate console account');
    expect((await smtp.settle('off@example.com', 300)).map((m) => m.subject)).toEqual([
      'Two-step sign-in is on for your Tollgate console account',
      'Two-step sign-in is off for your Tollgate console account',
    ]);
    expect(await listed()).toMatchObject({ totp_enabled: false });
    expect(await json(await call('/api/admin/account/totp/disable', { method: 'POST', body: { code: codeAt(secret) }, session }), 409)).toMatchObject({
      code: 'console_totp_not_enabled',
    });
    await sessionFrom(await signIn('off@example.com', 'console pass 1'));
  });

  it('tollgate admin totp-remove removes the app of an account that lost it and ends its sessions', async () => {
    const { session } = await withApp('lost@example.com');
    const env = { DATABASE_URL: t.database.url, TOLLGATE_SECRET_KEY: t.secretKey.toString('base64'), NODE_ENV: 'test' };

    const removed = await runCli(['admin', 'totp-remove', '--email', 'Lost@Example.com'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('Removed the authenticator app of lost@example.com and ended its console sessions');
    expect((await call('/api/admin/session', { session })).status).toBe(401);
    const fresh = await sessionFrom(await signIn('lost@example.com', 'console pass 1'));
    expect((await json<AdminBody<'session', 'get'>>(await call('/api/admin/session', { session: fresh }), 200)).account.totp_enabled).toBe(false);
    // The account learns that someone removed its app from the shell.
    const removedNotice = await smtp.waitFor('lost@example.com', 2);
    expect(removedNotice.subject).toBe('The authenticator app of your Tollgate console account was removed');
    expect(removedNotice.text).toContain('tollgate admin totp-remove');

    const again = await runCli(['admin', 'totp-remove', '--email', 'lost@example.com'], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('This account has no authenticator app');
    const unknown = await runCli(['admin', 'totp-remove', '--email', 'nobody@example.com'], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('No console account with this email');
  });
});
