import { createInstance, type i18n, type Resource } from 'i18next';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EmailMessage, EmailRenderer, RenderedEmail } from '../../application/mail/email-message';
import type { SecurityNoticeMail, SecurityNoticeRenderer } from '../../application/notifications/security-notice';
import { isOrganizationNoticeKind, type SecurityNoticeKind } from '../../domain/security-notice';
import { isRtlLocale, SUPPORTED_LOCALES, type Locale } from '../../domain/locale';

const LOCALES_DIR = fileURLToPath(new URL('./locales/', import.meta.url));

/** The strings of the emails, by locale, then section, then key. */
export type EmailLocales = Record<Locale, Record<string, Record<string, string>>>;

/** Reads `locales/<lng>.json` of every supported locale. */
export function loadEmailLocales(dir: string = LOCALES_DIR): EmailLocales {
  return Object.fromEntries(
    SUPPORTED_LOCALES.map((lng) => [lng, JSON.parse(readFileSync(`${dir}/${lng}.json`, 'utf8')) as Record<string, Record<string, string>>]),
  ) as EmailLocales;
}

/**
 * An i18next instance over the email strings, ready at once: no fallback language (every locale
 * has every key, test/unit/email-locales.test.ts), values interpolated as they are (the HTML
 * escapes them where it writes them).
 */
export function createEmailI18n(resources: EmailLocales): i18n {
  const resource: Resource = {};
  for (const lng of SUPPORTED_LOCALES) resource[lng] = { translation: resources[lng] };
  const instance = createInstance();
  void instance.init({
    resources: resource,
    lng: 'en',
    fallbackLng: false,
    supportedLngs: [...SUPPORTED_LOCALES],
    initAsync: false,
    interpolation: { escapeValue: false },
    returnNull: false,
    showSupportNotice: false,
  });
  return instance;
}

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

/** One number format per locale and unit, made on first use (making one costs far more than using it). */
const unitFormats = new Map<string, Intl.NumberFormat>();
const unitFormat = (locale: Locale, unit: 'minute' | 'hour' | 'day'): Intl.NumberFormat => {
  const key = `${locale} ${unit}`;
  let format = unitFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' });
    unitFormats.set(key, format);
  }
  return format;
};

/** "5 minutes", "1 Stunde", "15 分": a duration in the locale's own words. */
export function formatDuration(minutes: number, locale: Locale): string {
  return minutes % 60 === 0 ? unitFormat(locale, 'hour').format(minutes / 60) : unitFormat(locale, 'minute').format(minutes);
}

/** "7 days", "1 Tag", "7 日": a number of days in the locale's own words. */
export function formatDays(days: number, locale: Locale): string {
  return unitFormat(locale, 'day').format(days);
}

const SECTIONS = { verification_code: 'verification', password_reset: 'passwordReset', magic_link: 'magicLink' } as const;

const NOTICE_SECTIONS: Record<SecurityNoticeKind, string> = {
  password_changed: 'passwordChanged',
  mfa_factor_added: 'mfaFactorAdded',
  mfa_factor_removed: 'mfaFactorRemoved',
  backup_codes_regenerated: 'backupCodesRegenerated',
  totp_replayed: 'totpReplayed',
  new_device: 'newDevice',
  organization_role_changed: 'organizationRoleChanged',
  organization_removed: 'organizationRemoved',
  passkey_added: 'passkeyAdded',
  passkey_removed: 'passkeyRemoved',
};

/** "27 November 2026 at 14:05:09 UTC", in the locale's words and calendar; the user's time zone is not known, so UTC, named. */
export function formatNoticeTime(at: Date, locale: Locale): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'long', timeZone: 'UTC' }).format(at);
}

export type LinkPageKind = 'link_expired' | 'link_used' | 'link_invalid' | 'link_unavailable';

export const MUTED = 'color:#5f6368;font-size:13px;line-height:1.5;margin:16px 0 0';

/** The footer line under a rule that ends every email. */
export const footerHtml = (footer: string): string =>
  `<hr style="border:none;border-top:1px solid #e0e0e0;margin:24px 0 12px"><p style="margin:0;color:#80868b;font-size:12px">${escapeHtml(footer)}</p>`;

/** A button to a link, then the link itself for a client that shows no button. */
export const linkButtonHtml = (url: string, action: string, fallback: string, between = ''): string =>
  `<p style="margin:0"><a href="${escapeHtml(url)}" style="display:inline-block;padding:12px ` +
  `22px;background:#1a73e8;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600">${escapeHtml(action)}</a></p>` +
  between +
  `<p style="${MUTED}">${escapeHtml(fallback)}<br><a dir="ltr" href="${escapeHtml(url)}" style="color:#1a73e8;word-break:break-all">${escapeHtml(url)}</a></p>`;

/**
 * An email's HTML document in its locale: `lang`, and `dir` right to left for Arabic and Hebrew
 * (the page and its card). `title` is escaped; `content` is HTML already escaped.
 */
export function emailDocument(lng: Locale, title: string, content: string): string {
  const dir = isRtlLocale(lng) ? 'rtl' : 'ltr';
  return (
    `<!DOCTYPE html>\n<html lang="${lng}" dir="${dir}">\n<head>\n<meta charset="utf-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(title)}</title>\n</head>\n` +
    `<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Roboto,'Noto Sans',Arial,sans-serif;color:#202124">\n` +
    `<div dir="${dir}" style="max-width:480px;margin:0 ` +
    `auto;background:#ffffff;border-radius:8px;padding:32px;text-align:${dir === 'rtl' ? 'right' : 'left'}">` +
    `${content}</div>\n</body>\n</html>\n`
  );
}

/**
 * Renders emails (verification code, password reset, magic link) and the magic-link pages with
 * i18next from one resource file per locale: HTML (with `lang` and `dir`, right to left for Arabic
 * and Hebrew) and plain text. Every interpolated value is escaped in HTML.
 */
export class I18nextEmailRenderer implements EmailRenderer, SecurityNoticeRenderer {
  private readonly i18n: i18n;

  constructor(resources: EmailLocales = loadEmailLocales()) {
    this.i18n = createEmailI18n(resources);
  }

  /**
   * A string in its locale with its placeholders filled in one pass: a value (a passkey's or an
   * organization's name, chosen by a user) is written as it is, never read for placeholders.
   */
  private t(locale: Locale, key: string, vars: Record<string, string> = {}): string {
    const template = this.i18n.t(key, { lng: locale, skipInterpolation: true });
    return template.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => vars[name] ?? placeholder);
  }

  render(message: EmailMessage): RenderedEmail {
    const lng = message.locale;
    const section = SECTIONS[message.kind];
    const vars = { project: message.projectName, duration: formatDuration(message.expiresInMinutes, lng) };
    const subject = this.t(lng, `${section}.subject`, vars);
    const heading = this.t(lng, `${section}.heading`, vars);
    const intro = this.t(lng, `${section}.intro`, vars);
    const expiry = this.t(lng, `${section}.expiry`, vars);
    const ignore = this.t(lng, 'common.ignore', vars);
    const footer = this.t(lng, 'common.footer', vars);
    const e = escapeHtml;

    let textBody: string;
    let htmlBody: string;
    if (message.kind === 'verification_code') {
      const code = message.code!;
      textBody = `${intro}\n\n    ${code}\n\n${expiry}`;
      htmlBody =
        `<p style="margin:0 0 16px;line-height:1.5">${e(intro)}</p>` +
        `<p dir="ltr" style="margin:0;font-family:Menlo,Consolas,monospace;font-size:32px;font-weight:700;letter-spacing:8px">${e(code)}</p>` +
        `<p style="${MUTED}">${e(expiry)}</p>`;
    } else {
      const url = message.url!;
      const action = this.t(lng, `${section}.action`, vars);
      const fallback = this.t(lng, 'common.linkFallback', vars);
      textBody = `${intro}\n\n${action}:\n${url}\n\n${expiry}`;
      htmlBody = `<p style="margin:0 0 24px;line-height:1.5">${e(intro)}</p>${linkButtonHtml(url, action, fallback, `<p style="${MUTED}">${e(expiry)}</p>`)}`;
    }
    const text = `${heading}\n\n${textBody}\n\n${ignore}\n\n-- \n${footer}\n`;
    const html = this.document(
      lng,
      subject,
      `<h1 style="margin:0 0 16px;font-size:20px">${e(heading)}</h1>${htmlBody}` + `<p style="${MUTED}">${e(ignore)}</p>${footerHtml(footer)}`,
    );
    return { subject, html, text };
  }

  /**
   * A security notification: what happened, when (in the locale, UTC), from where (IP address and
   * device families), and what to do if it was not the user. Every shown value is escaped in HTML.
   */
  renderSecurityNotice(mail: SecurityNoticeMail): RenderedEmail {
    const lng = mail.locale;
    const section = NOTICE_SECTIONS[mail.kind];
    const method = mail.method === null ? '' : this.t(lng, mail.method === 'totp' ? 'notice.methodTotp' : 'notice.methodSms');
    const passkey = mail.passkeyName ?? '';
    const vars = { project: mail.projectName, method, organization: mail.organizationName ?? '', role: mail.role ?? '', passkey };
    // An organization notice tells of a change someone else made: what to do is ask the organization, not reset a password.
    const aboutOrganization = isOrganizationNoticeKind(mail.kind);
    const aboutPasskey = mail.kind === 'passkey_added' || mail.kind === 'passkey_removed';
    const subject = this.t(lng, `${section}.subject`, vars);
    const heading = this.t(lng, `${section}.heading`, vars);
    // A passkey notice names the passkey when it has a name, else says "a passkey".
    const intro = this.t(lng, `${section}.${aboutPasskey && passkey === '' ? 'introNoName' : 'intro'}`, vars);
    const unknown = this.t(lng, 'notice.unknown');
    const facts: [string, string, boolean][] = [
      [this.t(lng, 'notice.when'), formatNoticeTime(mail.occurredAt, lng), false],
      [this.t(lng, 'notice.where'), mail.ip ?? unknown, mail.ip !== null],
      [this.t(lng, 'notice.device'), mail.device ?? unknown, mail.device !== null],
    ];
    const wasYou = this.t(lng, aboutOrganization ? 'notice.organizationExpected' : 'notice.wasYou', vars);
    // A passkey someone else added is a way into the account of its own: the advice is to remove it first.
    // A passkey someone else removed means they were signed in; many passkey users have no password to reset,
    // so the advice is to sign in, review the passkeys and other sign-in methods, and sign out the other sessions.
    const notYouKey = aboutOrganization
      ? 'notice.organizationUnexpected'
      : mail.kind === 'passkey_added'
        ? 'notice.passkeyNotYou'
        : mail.kind === 'passkey_removed'
          ? 'notice.passkeyRemovedNotYou'
          : 'notice.notYou';
    const notYou = this.t(lng, notYouKey, vars);
    const footer = this.t(lng, 'common.footer', vars);
    const e = escapeHtml;

    const text = `${heading}\n\n${intro}\n\n${facts.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${wasYou}\n${notYou}\n\n-- \n${footer}\n`;
    const rows = facts
      .map(
        ([k, v, ltr]) =>
          `<tr><td style="padding:4px 12px 4px 0;color:#5f6368;white-space:nowrap;vertical-align:top">${e(k)}</td><td${ltr ? ' dir="ltr"' : ''} ` +
          `style="padding:4px 0;word-break:break-all">${e(v)}</td></tr>`,
      )
      .join('');
    const html = this.document(
      lng,
      subject,
      `<h1 style="margin:0 0 16px;font-size:20px">${e(heading)}</h1>` +
        `<p style="margin:0 0 16px;line-height:1.5">${e(intro)}</p>` +
        `<table role="presentation" style="border-collapse:collapse;font-size:14px;margin:0 0 16px">${rows}</table>` +
        `<p style="margin:0 0 8px;line-height:1.5">${e(wasYou)}</p>` +
        `<p style="margin:0;line-height:1.5;font-weight:600">${e(notYou)}</p>${footerHtml(footer)}`,
    );
    return { subject, html, text };
  }

  /** The page a magic-link click answers when the link cannot sign the user in. */
  linkPage(kind: LinkPageKind, locale: Locale): string {
    return this.document(
      locale,
      this.t(locale, 'page.title'),
      `<h1 style="margin:0 0 12px;font-size:20px">${escapeHtml(this.t(locale, `page.${kind}`))}</h1>` +
        `<p style="margin:0;line-height:1.5">${escapeHtml(this.t(locale, 'page.retry'))}</p>`,
    );
  }

  /** The page a link preview or prefetch gets instead of a sign-in: one button that follows the link. */
  continuePage(url: string, locale: Locale): string {
    return this.document(
      locale,
      this.t(locale, 'page.title'),
      `<h1 style="margin:0 0 12px;font-size:20px">${escapeHtml(this.t(locale, 'page.continueTitle'))}</h1>` +
        `<p style="margin:0 0 24px;line-height:1.5">${escapeHtml(this.t(locale, 'page.continueText'))}</p>` +
        `<p style="margin:0"><a href="${escapeHtml(url)}" rel="nofollow noreferrer" style="display:inline-block;padding:12px ` +
        '22px;background:#1a73e8;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600">' +
        `${escapeHtml(this.t(locale, 'page.continueAction'))}</a></p>`,
    );
  }

  private document(lng: Locale, title: string, content: string): string {
    return emailDocument(lng, title, content);
  }
}
