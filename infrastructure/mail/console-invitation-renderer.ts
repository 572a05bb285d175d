import type { RenderedEmail } from '../../application/mail/email-message';
import type { ConsoleInvitationMail, ConsoleInvitationRenderer } from '../../application/console/invitation-mail';
import { escapeHtml } from './i18next-email-renderer';

/**
 * The console invitation mail, in English (the console speaks English): the project, who invited,
 * the link and how long it works. Every interpolated value is escaped in the HTML; the plain text
 * carries them as they are.
 */
export class ConsoleInvitationMailRenderer implements ConsoleInvitationRenderer {
  render(mail: ConsoleInvitationMail): RenderedEmail {
    const e = escapeHtml;
    const who = mail.invitedBy ?? 'An administrator';
    const days = `${mail.expiresInDays} day${mail.expiresInDays === 1 ? '' : 's'}`;
    const subject = `You are invited to ${mail.projectName} on Tollgate`;
    const text = [
      `${who} invited you to the Tollgate console of the project "${mail.projectName}".`,
      '',
      `Open this link to accept (it works once, within ${days}):`,
      mail.url,
      '',
      'If you did not expect this invitation, ignore this email.',
    ].join('\n');
    const html = [
      '<!doctype html>',
      `<html lang="en" dir="ltr"><head><meta charset="utf-8"><title>${e(subject)}</title></head>`,
      '<body style="font-family:system-ui,sans-serif;line-height:1.5">',
      `<p>${e(who)} invited you to the Tollgate console of the project <strong>${e(mail.projectName)}</strong>.</p>`,
      `<p><a href="${e(mail.url)}">Accept the invitation</a></p>`,
      `<p>This link works once, within ${e(days)}. If the button does not work, copy this address into your browser:<br>${e(mail.url)}</p>`,
      '<p>If you did not expect this invitation, ignore this email.</p>',
      '</body></html>',
    ].join('\n');
    return { subject, html, text };
  }
}
