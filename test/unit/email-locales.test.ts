import { describe, expect, it } from 'vitest';
import type { EmailMessage } from '../../application/mail/email-message';
import type { SecurityNoticeMail } from '../../application/notifications/security-notice';
import { SUPPORTED_LOCALES } from '../../domain/locale';
import { SECURITY_NOTICE_KINDS } from '../../domain/security-notice';
import { formatDuration, formatNoticeTime, I18nextEmailRenderer, loadEmailLocales } from '../../infrastructure/mail/i18next-email-renderer';

const locales = loadEmailLocales();
const flatten = (o: Record<string, Record<string, string>>) =>
  Object.fromEntries(Object.entries(o).flatMap(([section, keys]) => Object.entries(keys).map(([k, v]) => [`${section}.${k}`, v])));
const english = flatten(locales.en);
const placeholders = (s: string) => [...s.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

describe('email locale files', () => {
  it.each(SUPPORTED_LOCALES.filter((l) => l !== 'en'))('%s has every English key, no extra key, and the same placeholders', (lng) => {
    const t = flatten(locales[lng]);
    expect(Object.keys(t).sort()).toEqual(Object.keys(english).sort());
    for (const [key, value] of Object.entries(t)) {
      expect(value.trim(), `${lng} ${key}`).not.toBe('');
      expect(placeholders(value), `${lng} ${key}`).toEqual(placeholders(english[key]!));
    }
  });

  it('English has the strings of organization invitations and notices, and of passkey notices (so every locale has them, above)', () => {
    for (const key of [
      'organizationInvitation.subject',
      'organizationInvitation.subjectNoInviter',
      'organizationInvitation.heading',
      'organizationInvitation.intro',
      'organizationInvitation.introNoInviter',
      'organizationInvitation.action',
      'organizationInvitation.expiry',
      'organizationInvitation.ignore',
      'organizationRoleChanged.subject',
      'organizationRoleChanged.heading',
      'organizationRoleChanged.intro',
      'organizationRemoved.subject',
      'organizationRemoved.heading',
      'organizationRemoved.intro',
      'notice.organizationExpected',
      'notice.organizationUnexpected',
      'passkeyAdded.subject',
      'passkeyAdded.heading',
      'passkeyAdded.intro',
      'passkeyAdded.introNoName',
      'passkeyRemoved.subject',
      'passkeyRemoved.heading',
      'passkeyRemoved.intro',
      'passkeyRemoved.introNoName',
      'notice.passkeyNotYou',
      'notice.passkeyRemovedNotYou',
    ]) {
      expect(english[key], key).toBeTypeOf('string');
    }
  });

  it.each(SUPPORTED_LOCALES.filter((l) => l !== 'en'))('%s translates every subject and action', (lng) => {
    const t = flatten(locales[lng]);
    for (const key of Object.keys(english).filter((k) => /subject|action|heading|intro/.test(k))) {
      expect(t[key], `${lng} ${key}`).not.toBe(english[key]);
    }
  });
});

describe('I18nextEmailRenderer', () => {
  const renderer = new I18nextEmailRenderer(locales);
  const message = (over: Partial<EmailMessage>): EmailMessage => ({
    kind: 'verification_code',
    to: 'a@example.com',
    locale: 'en',
    projectName: 'Acme <b>&',
    code: '012345',
    expiresInMinutes: 5,
    ...over,
  });

  it.each(SUPPORTED_LOCALES)('renders all three emails in %s, with the project name, HTML and text', (lng) => {
    const subjects = new Set<string>();
    for (const kind of ['verification_code', 'password_reset', 'magic_link'] as const) {
      const r = renderer.render(
        message({ kind, locale: lng, url: 'https://app.example.com/cb?token=abc&x=1', expiresInMinutes: kind === 'password_reset' ? 60 : 5 }),
      );
      expect(r.subject).toContain('Acme <b>&');
      expect(r.html).toContain('Acme &lt;b&gt;&amp;');
      expect(r.html).not.toContain('Acme <b>');
      expect(r.html).toContain(`<html lang="${lng}" dir="${lng === 'ar' || lng === 'he' ? 'rtl' : 'ltr'}">`);
      expect(r.text).toContain('Acme <b>&');
      expect(r.text).not.toMatch(/\{\{|\}\}/);
      expect(r.html).not.toMatch(/\{\{|\}\}/);
      if (kind === 'verification_code') {
        expect(r.text).toContain('012345');
        expect(r.html).toContain('012345');
      } else {
        expect(r.text).toContain('https://app.example.com/cb?token=abc&x=1');
        expect(r.html).toContain('href="https://app.example.com/cb?token=abc&amp;x=1"');
      }
      subjects.add(r.subject);
      if (lng !== 'en') expect(r.subject).not.toBe(renderer.render(message({ kind, locale: 'en', url: 'https://x.example' })).subject);
    }
    expect(subjects.size).toBe(3);
  });

  it("writes durations in the locale's words", () => {
    expect(formatDuration(5, 'en')).toBe('5 minutes');
    expect(formatDuration(60, 'en')).toBe('1 hour');
    expect(formatDuration(15, 'de')).toBe('15 Minuten');
    expect(formatDuration(60, 'ja')).toContain('時間');
  });

  it.each(SUPPORTED_LOCALES)('renders every security notification in %s: what happened, when, from where, what to do; every shown value escaped', (lng) => {
    const notice = (over: Partial<SecurityNoticeMail>): SecurityNoticeMail => ({
      kind: 'password_changed',
      locale: lng,
      projectName: 'Acme <b>&',
      occurredAt: new Date('2030-03-04T05:06:07.000Z'),
      ip: '<img src=x>',
      device: 'Firefox, <Windows>',
      method: null,
      organizationName: null,
      role: null,
      ...over,
    });
    const subjects = new Set<string>();
    for (const kind of SECURITY_NOTICE_KINDS) {
      const method = kind === 'mfa_factor_added' || kind === 'mfa_factor_removed' ? 'sms' : null;
      const organization = kind === 'organization_role_changed' || kind === 'organization_removed';
      const passkey = kind === 'passkey_added' || kind === 'passkey_removed';
      const r = renderer.renderSecurityNotice(
        notice({
          kind,
          method,
          organizationName: organization ? 'Team <script>' : null,
          role: kind === 'organization_role_changed' ? 'Lead & <i>' : null,
          passkeyName: passkey ? 'Phone <u>' : null,
        }),
      );
      expect(r.subject).toContain('Acme <b>&');
      expect(r.html).toContain(`<html lang="${lng}" dir="${lng === 'ar' || lng === 'he' ? 'rtl' : 'ltr'}">`);
      expect(r.html).not.toMatch(/<b>|<img|<Windows>/);
      expect(r.html).toContain('&lt;img src=x&gt;');
      expect(r.html).toContain('Firefox, &lt;Windows&gt;');
      expect(r.html).toContain('Acme &lt;b&gt;&amp;');
      expect(r.text).toContain('<img src=x>');
      expect(r.text).toContain(formatNoticeTime(new Date('2030-03-04T05:06:07.000Z'), lng));
      expect(r.text + r.html).not.toMatch(/\{\{|\}\}/);
      const t = flatten(locales[lng]);
      if (organization) {
        expect(r.subject).toContain('Team <script>');
        expect(r.text).toContain('Team <script>');
        expect(r.html).toContain('Team &lt;script&gt;');
        expect(r.html).not.toContain('<script>');
        expect(r.text).toContain(t['notice.organizationExpected']!);
        expect(r.text).toContain(t['notice.organizationUnexpected']!.replace('{{organization}}', 'Team <script>'));
        expect(r.text).not.toContain(t['notice.notYou']!.replace('{{project}}', 'Acme <b>&'));
      } else if (kind === 'passkey_added') {
        // Someone else's passkey still signs in after a password reset: the advice is to remove it first.
        expect(r.text).toContain(t['notice.passkeyNotYou']!.replace('{{project}}', 'Acme <b>&'));
        expect(r.text).not.toContain(t['notice.notYou']!.replace('{{project}}', 'Acme <b>&'));
        expect(r.text).not.toContain(t['notice.passkeyRemovedNotYou']!.replace('{{project}}', 'Acme <b>&'));
      } else if (kind === 'passkey_removed') {
        // Someone else removed it while signed in, and many passkey users have no password: no password-reset advice.
        expect(r.text).toContain(t['notice.passkeyRemovedNotYou']!.replace('{{project}}', 'Acme <b>&'));
        expect(r.text).not.toContain(t['notice.notYou']!.replace('{{project}}', 'Acme <b>&'));
        expect(r.text).not.toContain(t['notice.passkeyNotYou']!.replace('{{project}}', 'Acme <b>&'));
      } else {
        expect(r.text).toContain(t['notice.notYou']!.replace('{{project}}', 'Acme <b>&'));
      }
      if (passkey) {
        expect(r.text).toContain(
          t[`${kind === 'passkey_added' ? 'passkeyAdded' : 'passkeyRemoved'}.intro`]!.replace('{{project}}', 'Acme <b>&').replace('{{passkey}}', 'Phone <u>'),
        );
        expect(r.html).toContain('Phone &lt;u&gt;');
        expect(r.html).not.toContain('<u>');
      }
      if (kind === 'organization_role_changed') {
        expect(r.text).toContain('Lead & <i>');
        expect(r.html).toContain('Lead &amp; &lt;i&gt;');
        expect(r.html).not.toContain('<i>');
      }
      if (method) expect(r.text).toContain(t['notice.methodSms']!);
      subjects.add(r.subject);
    }
    expect(subjects.size).toBe(SECURITY_NOTICE_KINDS.length);
    // Without an address or a device, the notice says so.
    const unknown = renderer.renderSecurityNotice(notice({ ip: null, device: null }));
    expect(unknown.text.split(flatten(locales[lng])['notice.unknown']!).length).toBe(3);
  });

  it('a passkey notice names the passkey when it has a name, else says "a passkey"; the name is shown as given', () => {
    const notice = (over: Partial<SecurityNoticeMail>): SecurityNoticeMail => ({
      kind: 'passkey_added',
      locale: 'en',
      projectName: 'Acme',
      occurredAt: new Date('2030-03-04T05:06:07.000Z'),
      ip: '203.0.113.4',
      device: 'Safari, macOS',
      method: null,
      organizationName: null,
      role: null,
      ...over,
    });
    const added = renderer.renderSecurityNotice(notice({ passkeyName: 'iCloud Keychain' }));
    expect(added.subject).toBe('A passkey was added to your Acme account');
    expect(added.text).toContain('A passkey named “iCloud Keychain” was added to your Acme account. It can now be used to sign in.');
    expect(added.text).toContain('IP address: 203.0.113.4\nDevice: Safari, macOS');
    expect(added.text).toContain(
      'If this was you, there is nothing to do.\nIf this was not you, remove this passkey from your Acme account right away, then reset your password',
    );
    // Without a name (none given, or an empty one), it says "a passkey".
    for (const passkeyName of [undefined, null, '']) {
      expect(renderer.renderSecurityNotice(notice({ passkeyName })).text).toContain('A passkey was added to your Acme account. It can now be used to sign in.');
    }
    const removed = renderer.renderSecurityNotice(notice({ kind: 'passkey_removed', passkeyName: 'YubiKey 5', locale: 'de' }));
    expect(removed.subject).toBe('Aus Ihrem Acme-Konto wurde ein Passkey entfernt');
    expect(removed.text).toContain('Der Passkey „YubiKey 5“ wurde aus Ihrem Acme-Konto entfernt und kann nicht mehr zur Anmeldung verwendet werden.');
    expect(removed.text).toContain('Wenn Sie das nicht waren, hat möglicherweise jemand anderes Zugriff auf Ihr Konto: Melden Sie sich sofort bei Acme an');
    expect(removed.text).not.toContain('Passwort');
    const removedEn = renderer.renderSecurityNotice(notice({ kind: 'passkey_removed', passkeyName: 'YubiKey 5' }));
    expect(removedEn.text).toContain(
      'If this was you, there is nothing to do.\nIf this was not you, someone else may have access to your account: sign in to Acme right away, ' +
        'review your passkeys and other sign-in methods, and sign out of your other sessions.',
    );
    expect(removedEn.text).not.toMatch(/password/i);
    expect(removedEn.html).not.toMatch(/password/i);
    expect(renderer.renderSecurityNotice(notice({ kind: 'passkey_removed', locale: 'ja' })).text).toContain('Acme アカウントからパスキーが削除されました。');
    // The name is the user's own text: shown as given, never read as a placeholder or a nested key.
    const odd = renderer.renderSecurityNotice(notice({ passkeyName: '{{project}} $t(notice.when)' }));
    expect(odd.text).toContain('A passkey named “{{project}} $t(notice.when)” was added');
    // Another kind ignores a name given by mistake.
    expect(renderer.renderSecurityNotice(notice({ kind: 'password_changed', passkeyName: 'Phone' })).text).not.toContain('Phone');
  });

  it('writes the time of a notice in the locale, in UTC, named', () => {
    const at = new Date('2030-03-04T05:06:07.000Z');
    // ICU versions differ in the space before AM (narrow no-break or plain).
    expect(formatNoticeTime(at, 'en').replace(/\s/g, ' ')).toBe('March 4, 2030 at 5:06:07 AM UTC');
    expect(formatNoticeTime(at, 'de').replace(/\s/g, ' ')).toBe('4. März 2030 um 05:06:07 UTC');
  });

  it('renders the magic-link pages localized and escaped', () => {
    expect(renderer.linkPage('link_expired', 'fr')).toContain('Ce lien de connexion a expiré.');
    expect(renderer.linkPage('link_used', 'ar')).toContain('dir="rtl"');
    const page = renderer.continuePage('/verify?token=a"b&c', 'de');
    expect(page).toContain('href="/verify?token=a&quot;b&amp;c"');
    expect(page).toContain('Anmeldung abschließen');
  });
});
