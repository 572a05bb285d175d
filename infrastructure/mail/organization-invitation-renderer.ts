import type { i18n } from 'i18next';
import type { RenderedEmail } from '../../application/mail/email-message';
import type { OrganizationInvitationMail, OrganizationInvitationRenderer } from '../../application/organizations/invitation-mail';
import {
  createEmailI18n,
  type EmailLocales,
  emailDocument,
  escapeHtml,
  footerHtml,
  formatDays,
  linkButtonHtml,
  loadEmailLocales,
  MUTED,
} from './i18next-email-renderer';

/**
 * The invitation to join an organization, in the mail's locale (the `organizationInvitation`
 * strings of locales/*.json): who invited (a sentence without them when unknown), to which
 * organization of which project, with which role, a button to the invitation's link, how long it
 * stays valid, and what to do if it was not expected. HTML (with `lang` and `dir`, right to left
 * for Arabic and Hebrew) and plain text, like the sign-in emails; every interpolated value is
 * escaped in the HTML, the plain text carries them as they are.
 */
export class OrganizationInvitationMailRenderer implements OrganizationInvitationRenderer {
  private readonly i18n: i18n;

  constructor(resources: EmailLocales = loadEmailLocales()) {
    this.i18n = createEmailI18n(resources);
  }

  render(mail: OrganizationInvitationMail): RenderedEmail {
    const lng = mail.locale;
    const t = (key: string): string =>
      this.i18n.t(key, {
        lng,
        project: mail.projectName,
        organization: mail.organizationName,
        role: mail.roleName,
        invitedBy: mail.invitedBy ?? '',
        days: formatDays(mail.expiresInDays, lng),
      });
    const byWhom = mail.invitedBy === null ? 'NoInviter' : '';
    const subject = t(`organizationInvitation.subject${byWhom}`);
    const heading = t('organizationInvitation.heading');
    const intro = t(`organizationInvitation.intro${byWhom}`);
    const action = t('organizationInvitation.action');
    const expiry = t('organizationInvitation.expiry');
    const ignore = t('organizationInvitation.ignore');
    const fallback = t('common.linkFallback');
    const footer = t('common.footer');
    const e = escapeHtml;

    const text = `${heading}\n\n${intro}\n\n${action}:\n${mail.url}\n\n${expiry}\n\n${ignore}\n\n-- \n${footer}\n`;
    const html = emailDocument(
      lng,
      subject,
      `<h1 style="margin:0 0 16px;font-size:20px">${e(heading)}</h1>` +
        `<p style="margin:0 0 24px;line-height:1.5">${e(intro)}</p>` +
        linkButtonHtml(mail.url, action, fallback, `<p style="${MUTED}">${e(expiry)}</p>`) +
        `<p style="${MUTED}">${e(ignore)}</p>${footerHtml(footer)}`,
    );
    return { subject, html, text };
  }
}
