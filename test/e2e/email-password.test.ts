import argon2 from 'argon2';
import { decodeJwt, jwtVerify } from 'jose';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate } from '../../apps/server/tollgate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp';

let t: TestApp;
let smtp: TestSmtp;
let project: TestProject;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'Acme <no-reply@acme.test>' } });
  project = await t.createProject({ name: 'Acme' });
  await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['magic-link'] }));
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const signup = (p: TestProject, body: { email: string; password?: string; name?: string; locale?: string }) =>
  p.client.email.signup({ body: { password: PASSWORD, callback_url: p.callbackUrl, ...body } });
const signin = (p: TestProject, body: { email: string; password?: string; locale?: string }) =>
  p.client.email.signin({ body: { password: PASSWORD, callback_url: p.callbackUrl, ...body } });
const post = (path: string, body: unknown, apiKey = project.apiKey) =>
  fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const core = () => t.tollgate.core;
const userRow = (email: string) =>
  t.inContext(
    async () =>
      (
        await core().db.query<{ id: string; email: string; password_hash: string; locale: string | null; email_verified: boolean }>(
          'select id, email, password_hash, locale, email_verified from users where login_email = ?',
          [email.toLowerCase()],
        )
      )[0],
  );

describe('email + password', () => {
  it("signs up, sends the code in the user's locale, verifies it, then signs in with email_verified true", async () => {
    const res = await signup(project, { email: 'ada@example.com', name: 'Ada', locale: 'de' });
    expect(res.status).toBe(200);
    if (res.status !== 200 || !('token' in res.body)) throw new Error('expected a session');
    expect(res.body.user).toEqual({ id: expect.any(String), email: 'ada@example.com', name: 'Ada', email_verified: false });
    expect(res.body.refresh_token).toMatch(/^rt_/);
    expect(res.headers.get('cache-control')).toBe('no-store');

    const secret = new Uint8Array(Buffer.from(project.signingSecret, 'base64url'));
    const { payload, protectedHeader } = await jwtVerify(res.body.token, secret, {
      issuer: t.config.publicUrl,
      audience: project.id,
      currentDate: t.clock.now(),
    });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ sub: res.body.user.id, email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: false });
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(payload.jti).toEqual(expect.any(String));

    const mail = await smtp.waitFor('ada@example.com');
    expect(mail.subject).toBe('Ihr Bestätigungscode für Acme');
    expect(mail.lang).toBe('de');
    expect(mail.dir).toBe('ltr');
    expect(mail.from).toContain('no-reply@acme.test');
    expect(mail.text).toContain('5 Minuten');
    const code = codeOf(mail);
    expect(mail.html).toContain(code);

    const before = await signin(project, { email: 'ada@example.com' });
    expect(before.body).toMatchObject({ user: { email_verified: false } });

    const verified = await project.client.email.verify({ body: { email: 'ada@example.com', code } });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ success: true, user: { id: res.body.user.id, email: 'ada@example.com', name: 'Ada', email_verified: true } });

    const after = await signin(project, { email: 'ADA@Example.com' });
    expect(after.status).toBe(200);
    if (after.status !== 200 || !('token' in after.body)) throw new Error('expected a session');
    expect(after.body.user).toEqual({ id: res.body.user.id, email: 'ada@example.com', name: 'Ada', email_verified: true });
    expect(decodeJwt(after.body.token)).toMatchObject({ provider: 'email', email_verified: true, sub: res.body.user.id });
  });

  it('answers 409 for an email that is already registered, whatever its case', async () => {
    const res = await signup(project, { email: 'ADA@EXAMPLE.COM' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'An account with this email already exists', code: 'email_already_registered' });
  });

  it('makes name optional (null) and normalizes the address it stores and mails', async () => {
    const res = await signup(project, { email: '  Grace.Hopper@EXAMPLE.org ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { email: 'Grace.Hopper@example.org', name: null, email_verified: false } });
    const mail = await smtp.waitFor('grace.hopper@example.org');
    expect(mail.parsed.to && !Array.isArray(mail.parsed.to) ? mail.parsed.to.value[0]!.address : '').toBe('Grace.Hopper@example.org');
  });

  it.each([
    ['short1', 'Password must be at least 8 characters long', 'password_too_short'],
    [`${'a'.repeat(128)}1`, 'Password must be at most 128 characters long', 'password_too_long'],
    ['12345678', 'Password must contain at least one letter', 'password_missing_letter'],
    ['abcdefgh', 'Password must contain at least one number', 'password_missing_number'],
  ])('refuses the password %j with its own message', async (password, error, code) => {
    const res = await signup(project, { email: 'rules@example.com', password });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, code });
  });

  it.each(['a@x.com,b@y.com', '"quoted"@example.com', 'ada＠example.com', 'no-at-sign', 'a@b@example.com', 'spaces in@example.com'])(
    'refuses the address %j',
    async (email) => {
      const res = await signup(project, { email });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Invalid email address', code: 'invalid_email' });
    },
  );

  it('gives an unknown email and a wrong password the same 401, the same time, and no email', async () => {
    await signup(project, { email: 'timing@example.com' });
    await smtp.waitFor('timing@example.com');
    const wrong = await signin(project, { email: 'timing@example.com', password: 'wrong password 1' });
    const unknown = await signin(project, { email: 'nobody@example.com' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'Invalid email or password', code: 'invalid_credentials' });
    expect(unknown.body).toEqual(wrong.body);

    const time = async (email: string, password: string) => {
      const started = performance.now();
      await signin(project, { email, password });
      return performance.now() - started;
    };
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const known: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time('timing@example.com', `wrong password ${i}`));
      missing.push(await time(`nobody${i}@example.com`, `wrong password ${i}`));
    }
    // Both paths run one argon2 verification; without the decoy the unknown path would be ~50x faster.
    const ratio = median(missing) / median(known);
    expect(ratio).toBeGreaterThan(1 / 3);
    expect(ratio).toBeLessThan(3);
    expect(smtp.to('nobody@example.com')).toHaveLength(0);
    expect(await smtp.settle('timing@example.com', 300)).toHaveLength(1);
  });

  it('rehashes a password hash made with weaker argon2 parameters on the next sign-in', async () => {
    await signup(project, { email: 'legacy@example.com' });
    const weak = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const { id } = (await userRow('legacy@example.com'))!;
    await t.inContext(() => core().db.query('update users set password_hash = ? where id = ?', [weak, id]));

    const res = await signin(project, { email: 'legacy@example.com' });
    expect(res.status).toBe(200);
    const row = (await userRow('legacy@example.com'))!;
    expect(row.password_hash).not.toBe(weak);
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$/);
    expect(row.password_hash.split('$')[3]!.split(',').sort()).toEqual(['m=19456', 'p=1', 't=2']);
    expect(await argon2.verify(row.password_hash, PASSWORD)).toBe(true);
  });

  it('requires a registered callback URL on every endpoint that takes one', async () => {
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['/api/proxy/email/signup', { email: 'cb@example.com', password: PASSWORD }],
      ['/api/proxy/email/signin', { email: 'cb@example.com', password: PASSWORD }],
      ['/api/proxy/email/verify/resend', { email: 'cb@example.com' }],
      ['/api/proxy/email/reset-password', { email: 'cb@example.com' }],
      ['/api/proxy/email/magic-link/send', { email: 'cb@example.com' }],
    ];
    for (const [path, body] of bodies) {
      for (const callback_url of ['https://evil.example/callback', `${project.callbackUrl}/`, project.callbackUrl.toUpperCase()]) {
        const res = await post(path, { ...body, callback_url });
        expect(res.status, `${path} ${callback_url}`).toBe(403);
        expect(await res.json()).toEqual({ error: 'Callback URL not registered for this provider', code: 'callback_url_not_registered' });
      }
    }
    const missing = await post('/api/proxy/email/signup', { email: 'cb@example.com', password: PASSWORD });
    expect(missing.status).toBe(400);
    expect(smtp.to('cb@example.com')).toHaveLength(0);
  });

  it('toggles the email provider and the magic-link provider independently', async () => {
    const p = await t.createProject({ name: 'Toggles' });
    const disabled = { error: 'Provider not enabled for this project', code: 'provider_not_enabled' };
    await t.inContext(() => t.tollgate.admin.updateProject(p.id, { disable: ['email'], enable: ['magic-link'] }));
    const calls = [
      () => signup(p, { email: 'toggle@example.com' }),
      () => signin(p, { email: 'toggle@example.com' }),
      () => p.client.email.verify({ body: { email: 'toggle@example.com', code: '123456' } }),
      () => p.client.email.resendVerification({ body: { email: 'toggle@example.com', callback_url: p.callbackUrl } }),
      () => p.client.email.resetPassword({ body: { email: 'toggle@example.com', callback_url: p.callbackUrl } }),
      () => p.client.email.confirmPasswordReset({ body: { token: 'x', password: PASSWORD } }),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status).toBe(403);
      expect(res.body).toEqual(disabled);
    }
    const magic = await p.client.email.sendMagicLink({ body: { email: 'toggle@example.com', callback_url: p.callbackUrl } });
    expect(magic.status).toBe(200);
    await smtp.waitFor('toggle@example.com');

    await t.inContext(() => t.tollgate.admin.updateProject(p.id, { enable: ['email'], disable: ['magic-link'] }));
    const off = await p.client.email.sendMagicLink({ body: { email: 'toggle@example.com', callback_url: p.callbackUrl } });
    expect(off.status).toBe(403);
    expect(off.body).toEqual(disabled);
    expect((await signup(p, { email: 'toggle2@example.com' })).status).toBe(200);
  });

  it('refuses an unsupported locale with 400 before doing anything', async () => {
    const res = await signup(project, { email: 'locale@example.com', locale: 'xx' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Unsupported locale', code: 'unsupported_locale' });
    expect(await userRow('locale@example.com')).toBeUndefined();
  });

  it('rate-limits sign-in per email with 429 and Retry-After, across server processes', async () => {
    // A second server on the same database, as another process would be.
    const second = await createTollgate({
      config: t.config,
      databaseUrl: t.database.url,
      secretKey: randomBytes(32),
      logger: createLogger('silent', false),
      clock: t.clock,
      runWorker: false,
      migrate: false,
    });
    const server = createServer(second.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const secondUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 11; i++) {
        const base = i % 2 === 0 ? t.baseUrl : secondUrl;
        last = await fetch(`${base}/api/proxy/email/signin`, {
          method: 'POST',
          headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'brute@example.com', password: `guess number ${i}`, callback_url: project.callbackUrl }),
        });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses[10]).toBe(429);
      expect(await last!.json()).toEqual({ error: 'Too many requests', code: 'rate_limited' });
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await post('/api/proxy/email/signin', { email: 'brute@example.com', password: PASSWORD, callback_url: project.callbackUrl })).status).toBe(429);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await second.close();
    }
    // Another address from the same client is not affected; the window ends on the injected clock.
    expect((await signin(project, { email: 'other-brute@example.com' })).status).toBe(401);
    t.clock.advanceSeconds(15 * 60);
    expect((await signin(project, { email: 'brute@example.com' })).status).toBe(401);
  });

  it('rate-limits sign-up per email and per IP', async () => {
    const attempt = (email: string) => post('/api/proxy/email/signup', { email, password: 'weak', callback_url: project.callbackUrl });
    const perEmail: number[] = [];
    for (let i = 0; i < 6; i++) perEmail.push((await attempt('flood@example.com')).status);
    expect(perEmail).toEqual([400, 400, 400, 400, 400, 429]);

    let refused: Response | undefined;
    for (let i = 0; i < 31 && !refused; i++) {
      const res = await attempt(`flood${i}@example.com`);
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(400);
    }
    expect(refused).toBeDefined();
    expect(await refused!.json()).toEqual({ error: 'Too many requests', code: 'rate_limited' });
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advanceSeconds(60 * 60);
    expect((await attempt('after-the-hour@example.com')).status).toBe(400);
  });
});
