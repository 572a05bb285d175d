import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestProject } from '../support/app';
import { startTestSmtp, type TestSmtp } from '../support/smtp';

let t: TestApp;
let smtp: TestSmtp;
/** Default locale en. */
let en: TestProject;
/** Default locale it. */
let it_: TestProject;
const PASSWORD = 'correct horse 1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  en = await t.createProject({ name: 'Lingo' });
  it_ = await t.createProject({ name: 'Lingo' });
  await t.inContext(async () => {
    await t.tollgate.admin.updateProject(en.id, { enable: ['magic-link'] });
    await t.tollgate.admin.updateProject(it_.id, { enable: ['magic-link'], defaultLocale: 'it' });
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const post = (p: TestProject, path: string, body: Record<string, unknown>, acceptLanguage?: string) =>
  fetch(`${t.baseUrl}/api/proxy/email/${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${p.apiKey}`,
      'content-type': 'application/json',
      ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}),
    },
    body: JSON.stringify({ callback_url: p.callbackUrl, ...body }),
  });
const storedLocale = async (email: string) =>
  (await t.inContext(() => t.tollgate.core.db.query<{ locale: string | null }>('select locale from users where login_email = ?', [email])))[0]?.locale;

/** English subjects, to tell which language an email came in. */
const SUBJECTS: Record<string, (project: string) => string> = {
  en_code: (p) => `Your ${p} verification code`,
  de_code: (p) => `Ihr Bestätigungscode für ${p}`,
  fr_code: (p) => `Votre code de vérification ${p}`,
  ja_code: (p) => `${p} の確認コード`,
  en_link: (p) => `Your sign-in link for ${p}`,
  it_link: (p) => `Il tuo link di accesso a ${p}`,
  pt_link: (p) => `Seu link de acesso a ${p}`,
  ja_link: (p) => `${p} へのサインインリンク`,
};

describe('locale resolution', () => {
  it('(1) the body locale wins over the stored preference and Accept-Language, and becomes the preference', async () => {
    expect((await post(en, 'signup', { email: 'pref@example.com', password: PASSWORD, locale: 'de' }, 'es')).status).toBe(200);
    const first = await smtp.waitFor('pref@example.com');
    expect(first.subject).toBe(SUBJECTS.de_code!('Lingo'));
    expect(first.lang).toBe('de');
    expect(await storedLocale('pref@example.com')).toBe('de');

    expect((await post(en, 'verify/resend', { email: 'pref@example.com', locale: 'fr' }, 'es')).status).toBe(200);
    expect((await smtp.waitFor('pref@example.com', 2)).subject).toBe(SUBJECTS.fr_code!('Lingo'));
    expect(await storedLocale('pref@example.com')).toBe('fr');
  });

  it('(2) the stored preference wins over Accept-Language and the project default', async () => {
    expect((await post(en, 'verify/resend', { email: 'pref@example.com' }, 'es-ES,es;q=0.9')).status).toBe(200);
    const mail = await smtp.waitFor('pref@example.com', 3);
    expect(mail.subject).toBe(SUBJECTS.fr_code!('Lingo'));
    expect(mail.lang).toBe('fr');
  });

  it('(3) Accept-Language counts, by q-value and with region fallback, when nothing is stored', async () => {
    const header = 'xx;q=1, en;q=0.2, pt-BR;q=0.9, de;q=0';
    expect((await post(it_, 'magic-link/send', { email: 'accept@example.com' }, header)).status).toBe(200);
    const mail = await smtp.waitFor('accept@example.com');
    expect(mail.subject).toBe(SUBJECTS.pt_link!('Lingo'));
    expect(mail.lang).toBe('pt');

    // A sign-up keeps what Accept-Language chose as the user's preference.
    expect((await post(it_, 'signup', { email: 'tokyo@example.com', password: PASSWORD }, 'ja-JP,ja;q=0.9,en-US;q=0.8')).status).toBe(200);
    expect((await smtp.waitFor('tokyo@example.com')).subject).toBe(SUBJECTS.ja_code!('Lingo'));
    expect(await storedLocale('tokyo@example.com')).toBe('ja');
  });

  it('(4) the project default locale applies when neither the request nor the user says anything', async () => {
    expect((await post(it_, 'magic-link/send', { email: 'plain@example.com' })).status).toBe(200);
    expect((await smtp.waitFor('plain@example.com')).subject).toBe(SUBJECTS.it_link!('Lingo'));
    expect((await post(it_, 'magic-link/send', { email: 'unsupported@example.com' }, 'xx-YY, *;q=0.5')).status).toBe(200);
    expect((await smtp.waitFor('unsupported@example.com')).subject).toBe(SUBJECTS.it_link!('Lingo'));
  });

  it('(5) English is the last resort', async () => {
    expect((await post(en, 'magic-link/send', { email: 'fallback@example.com' })).status).toBe(200);
    const mail = await smtp.waitFor('fallback@example.com');
    expect(mail.subject).toBe(SUBJECTS.en_link!('Lingo'));
    expect(mail.lang).toBe('en');
  });

  it('writes Arabic and Hebrew emails right to left', async () => {
    for (const [email, locale] of [
      ['arabic@example.com', 'ar'],
      ['hebrew@example.com', 'he'],
    ] as const) {
      expect((await post(en, 'magic-link/send', { email, locale })).status).toBe(200);
      const mail = await smtp.waitFor(email);
      expect(mail.lang).toBe(locale);
      expect(mail.dir).toBe('rtl');
      expect(mail.subject).not.toBe(SUBJECTS.en_link!('Lingo'));
      expect(mail.subject).toContain('Lingo');
    }
  });

  it('accepts a regional body locale as its language and refuses an unsupported one with 400', async () => {
    expect((await post(en, 'magic-link/send', { email: 'region@example.com', locale: 'ja-JP' })).status).toBe(200);
    expect((await smtp.waitFor('region@example.com')).subject).toBe(SUBJECTS.ja_link!('Lingo'));
    for (const [path, body] of [
      ['signup', { email: 'bad-locale@example.com', password: PASSWORD }],
      ['signin', { email: 'pref@example.com', password: PASSWORD }],
      ['verify', { email: 'pref@example.com', code: '123456' }],
      ['verify/resend', { email: 'pref@example.com' }],
      ['reset-password', { email: 'pref@example.com' }],
      ['reset-password/confirm', { token: 'x', password: PASSWORD }],
      ['magic-link/send', { email: 'pref@example.com' }],
    ] as const) {
      const res = await post(en, path, { ...body, locale: 'klingon' });
      expect(res.status, path).toBe(400);
      expect(await res.json()).toEqual({ error: 'Unsupported locale', code: 'unsupported_locale' });
    }
    expect(await storedLocale('pref@example.com')).toBe('fr');
  });
});
