import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { codeOf, linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';

let t: TestApp;
let smtp: TestSmtp;
let project: TestProject;
const CALLBACK = 'https://app.example.com/auth/done?tenant=7';
const VERIFY_PATH = '/api/proxy/email/magic-link/verify';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  project = await t.createProject({ name: 'Magic Co', callbackUrls: [CALLBACK] });
  await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['magic-link'] }));
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const core = () => t.tollgate.core;
const send = (email: string, p: TestProject = project, extra: Record<string, string> = {}) =>
  p.client.email.sendMagicLink({ body: { email, callback_url: p === project ? CALLBACK : p.callbackUrl, ...extra } });
/** Sends a magic link and returns the link of the n-th email to `email`. */
async function magicLink(email: string, n = 1, p: TestProject = project): Promise<string> {
  expect(await send(email, p)).toMatchObject({ status: 200, body: { success: true } });
  return linkOf(await smtp.waitFor(email, n));
}
const click = (link: string, headers: Record<string, string> = {}) => fetch(link, { redirect: 'manual', headers });
const secretOf = (p: TestProject) => new Uint8Array(Buffer.from(p.signingSecret, 'base64url'));
const usersWithEmail = (email: string) =>
  t.inContext(() =>
    core().db.query<{ id: string; email_verified: boolean; provider: string; login_email: string | null }>(
      'select id, email_verified, provider, login_email from users where project_id = ? and lower(email) = ? order by created_at',
      [project.id, email],
    ),
  );

describe('magic links', () => {
  it('creates the user on first click and redirects to callback_url?token=<JWT> with provider magic-link', async () => {
    const link = await magicLink('newbie@example.com');
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.baseUrl}${VERIFY_PATH}`);
    expect(await usersWithEmail('newbie@example.com')).toHaveLength(0);
    const mail = smtp.to('newbie@example.com')[0]!;
    expect(mail.subject).toBe('Your sign-in link for Magic Co');
    expect(mail.html).toContain(`href="${link.replace(/&/g, '&amp;')}"`);

    const res = await click(link);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/auth/done');
    expect(location.searchParams.get('tenant')).toBe('7');
    const token = location.searchParams.get('token')!;
    const { payload } = await jwtVerify(token, secretOf(project), { issuer: t.config.publicUrl, audience: project.id, currentDate: t.clock.now() });
    const [user] = await usersWithEmail('newbie@example.com');
    expect(payload).toMatchObject({ sub: user!.id, email: 'newbie@example.com', name: null, picture: null, provider: 'magic-link', email_verified: true });
    expect(payload.exp! - payload.iat!).toBe(15 * 60);
    expect(payload.jti).toEqual(expect.any(String));
    expect(user).toMatchObject({ email_verified: true, provider: 'magic-link', login_email: 'newbie@example.com' });

    const verified = await project.client.token.verify({ body: { token } });
    expect(verified.body).toMatchObject({ valid: true, user: { id: user!.id, provider: 'magic-link', email_verified: true } });
    t.clock.advanceSeconds(15 * 60 + 1);
    expect((await project.client.token.verify({ body: { token } })).body).toMatchObject({ valid: false });

    // The same link again: a page, not a redirect.
    const reused = await click(link);
    expect(reused.status).toBe(410);
    expect(reused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await reused.text()).toContain('This sign-in link has already been used.');
  });

  it('signs an existing email + password user in, marking the email verified, without creating another user', async () => {
    const signup = await project.client.email.signup({ body: { email: 'existing@example.com', password: 'correct horse 1', callback_url: CALLBACK } });
    if (signup.status !== 200 || !('user' in signup.body)) throw new Error('signup failed');
    expect(signup.body.user.email_verified).toBe(false);
    await smtp.waitFor('existing@example.com'); // the verification code

    const link = await magicLink('Existing@Example.com', 2);
    const res = await click(link);
    expect(res.status).toBe(302);
    const token = new URL(res.headers.get('location')!).searchParams.get('token')!;
    const { payload } = await jwtVerify(token, secretOf(project), { currentDate: t.clock.now() });
    expect(payload).toMatchObject({ sub: signup.body.user.id, provider: 'magic-link', email_verified: true });
    expect(await usersWithEmail('existing@example.com')).toHaveLength(1);

    const signin = await project.client.email.signin({ body: { email: 'existing@example.com', password: 'correct horse 1', callback_url: CALLBACK } });
    expect(signin.body).toMatchObject({ user: { id: signup.body.user.id, email_verified: true } });
  });

  it('does not consume the link on HEAD or on a prefetch or link preview', async () => {
    const link = await magicLink('prefetch@example.com');
    const head = await fetch(link, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(200);
    for (const headers of <Record<string, string>[]>[
      { purpose: 'prefetch' },
      { 'sec-purpose': 'prefetch;prerender' },
      { 'x-moz': 'prefetch' },
      { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
    ]) {
      const res = await click(link, headers);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain('Finish signing in');
      expect(html).toContain(`href="${VERIFY_PATH}?token=`);
    }
    expect(await usersWithEmail('prefetch@example.com')).toHaveLength(0);
    const res = await click(link);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).searchParams.get('token')).toBeTruthy();
  });

  it("answers an expired link (15:01) with a page in the email's language, and an unknown one with a page too", async () => {
    expect(await send('late@example.com', project, { locale: 'es' })).toMatchObject({ status: 200 });
    const link = linkOf(await smtp.waitFor('late@example.com'));
    t.clock.advanceSeconds(15 * 60 + 1);
    const res = await click(link);
    expect(res.status).toBe(410);
    const html = await res.text();
    expect(html).toContain('<html lang="es" dir="ltr">');
    expect(html).toContain('Este enlace de inicio de sesión ha caducado.');
    expect(await usersWithEmail('late@example.com')).toHaveLength(0);

    const bogus = await click(`${t.baseUrl}${VERIFY_PATH}?token=nope`, { 'accept-language': 'he-IL,he;q=0.9' });
    expect(bogus.status).toBe(400);
    const page = await bogus.text();
    expect(page).toContain('dir="rtl"');
    expect(page).toContain('קישור הכניסה הזה אינו תקין.');
    expect((await click(`${t.baseUrl}${VERIFY_PATH}`)).status).toBe(400);
  });

  it('gives exactly one redirect with a token to 20 parallel clicks', async () => {
    const link = await magicLink('race@example.com');
    const results = await Promise.all(Array.from({ length: 20 }, () => click(link)));
    expect(results.filter((r) => r.status === 302)).toHaveLength(1);
    expect(results.filter((r) => r.status === 410)).toHaveLength(19);
    expect(await usersWithEmail('race@example.com')).toHaveLength(1);
  });

  it('redirects with mfa_required and the challenge when the sign-in gate asks for MFA', async () => {
    const link = await magicLink('mfa@example.com');
    await t.inContext(() => t.tollgate.admin.updateProject(project.id, { mfaPolicy: 'required' }));
    try {
      const res = await click(link);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(location.searchParams.get('mfa_required')).toBe('true');
      expect(location.searchParams.get('challenge')).toMatch(/^mfa_/);
      // A new user under the required policy has nothing enrolled yet.
      expect(location.searchParams.get('enrollment_required')).toBe('true');
      expect(location.searchParams.get('token')).toBeNull();
      expect(location.searchParams.get('tenant')).toBe('7');
    } finally {
      await t.inContext(() => t.tollgate.admin.updateProject(project.id, { mfaPolicy: 'off' }));
    }
  });

  it('links to an existing user of another provider only when account linking is on', async () => {
    const insertOAuthUser = (email: string) =>
      t.inContext(async () => {
        const now = t.clock.now();
        const id = core().crypto.uuid();
        await core().stores.users.insert({
          id,
          projectId: project.id,
          email,
          name: 'Octo',
          picture: null,
          provider: 'github',
          emailVerified: true,
          locale: null,
          disabled: false,
          createdAt: now,
          updatedAt: now,
        });
        return id;
      });
    const redirectSub = async (email: string, n: number) => {
      const res = await click(await magicLink(email, n));
      expect(res.status).toBe(302);
      const token = new URL(res.headers.get('location')!).searchParams.get('token')!;
      return (await jwtVerify(token, secretOf(project), { currentDate: t.clock.now() })).payload.sub;
    };

    const separate = await insertOAuthUser('octo@example.com');
    const sub = await redirectSub('octo@example.com', 1);
    expect(sub).not.toBe(separate);
    expect(await usersWithEmail('octo@example.com')).toHaveLength(2);

    await t.inContext(() => t.tollgate.admin.updateProject(project.id, { allowAccountLinking: true }));
    try {
      const linked = await insertOAuthUser('cat@example.com');
      expect(await redirectSub('cat@example.com', 1)).toBe(linked);
      expect(await usersWithEmail('cat@example.com')).toHaveLength(1);
      // The account now answers to the email for good.
      expect(await redirectSub('cat@example.com', 2)).toBe(linked);
    } finally {
      await t.inContext(() => t.tollgate.admin.updateProject(project.id, { allowAccountLinking: false }));
    }
  });

  it('sends nothing to a disabled account and refuses its link', async () => {
    const signup = await project.client.email.signup({ body: { email: 'off@example.com', password: 'correct horse 1', callback_url: CALLBACK } });
    expect(signup.status).toBe(200);
    codeOf(await smtp.waitFor('off@example.com'));
    const link = await magicLink('off@example.com', 2);
    await t.inContext(() => core().db.query("update users set disabled = true where login_email = 'off@example.com'"));
    const res = await click(link);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('This sign-in link can no longer be used.');
    expect(await send('off@example.com')).toMatchObject({ status: 200, body: { success: true } });
    expect(await smtp.settle('off@example.com', 700)).toHaveLength(2);
  });
});
