import type { ConsoleAccountNotice, ConsoleAccountNoticeKind, ConsoleAccountNoticeRenderer } from '../../application/console/account-notice';
import type { RenderedEmail } from '../../application/mail/email-message';
import { escapeHtml } from './i18next-email-renderer';

const WORDING: Record<ConsoleAccountNoticeKind, { subject: string; what: string; advice: string }> = {
  totp_enabled: {
    subject: 'Two-step sign-in is on for your Tollgate console account',
    what: 'An authenticator app was set up for your Tollgate console account: every sign-in now asks for its code.',
    advice: 'If you did not do this, someone else is signed in as you: change your password and ask an operator to remove the app.',
  },
  totp_disabled: {
    subject: 'Two-step sign-in is off for your Tollgate console account',
    what: 'The authenticator app of your Tollgate console account was turned off: your password alone now signs in.',
    advice: 'If you did not do this, change your password and set up an authenticator app again on your Account page.',
  },
  totp_removed: {
    subject: 'The authenticator app of your Tollgate console account was removed',
    what:
      'An administrator removed the authenticator app of your Tollgate console account from the deployment (tollgate admin totp-remove) and ended ' +
      'its console sessions: your password alone now signs in.',
    advice: 'Set up an authenticator app again on your Account page. If you did not ask for this, tell your operators.',
  },
};

/** The notice of a change to a console account's second sign-in step, in English (every value escaped in the HTML). */
export class ConsoleAccountNoticeMailRenderer implements ConsoleAccountNoticeRenderer {
  render(notice: ConsoleAccountNotice): RenderedEmail {
    const e = escapeHtml;
    const w = WORDING[notice.kind];
    const text = [w.what, `When: ${notice.at}.`, '', w.advice, notice.accountUrl].join('\n');
    const html = [
      '<!doctype html>',
      `<html lang="en" dir="ltr"><head><meta charset="utf-8"><title>${e(w.subject)}</title></head>`,
      '<body style="font-family:system-ui,sans-serif;line-height:1.5">',
      `<p>${e(w.what)}</p>`,
      `<p>When: ${e(notice.at)}.</p>`,
      `<p>${e(w.advice)}</p>`,
      `<p><a href="${e(notice.accountUrl)}">Open your Account page</a></p>`,
      '</body></html>',
    ].join('\n');
    return { subject: w.subject, html, text };
  }
}
