import type { RenderedEmail } from '../../application/mail/email-message';
import type { EndpointDisabledMail, EndpointDisabledRenderer } from '../../application/webhooks/endpoint-disabled-mail';
import { escapeHtml } from './i18next-email-renderer';

/**
 * The notice that a webhook endpoint was disabled, in English (the console speaks English): the
 * project, the endpoint, why and when, and where to enable it again. Every interpolated value is
 * escaped in the HTML; the plain text carries them as they are.
 */
export class EndpointDisabledMailRenderer implements EndpointDisabledRenderer {
  render(mail: EndpointDisabledMail): RenderedEmail {
    const e = escapeHtml;
    const subject = `A webhook endpoint of ${mail.projectName} was disabled`;
    const text = [
      `Tollgate disabled a webhook endpoint of the project "${mail.projectName}" on ${mail.disabledAt}:`,
      '',
      mail.endpointUrl,
      `Why: ${mail.reason}.`,
      '',
      'Events are no longer sent to it. Once it answers again, enable it on the Webhooks page of the console,',
      'then resend the deliveries that failed meanwhile (or all at once: tollgate webhook replay):',
      mail.consoleUrl,
    ].join('\n');
    const html = [
      '<!doctype html>',
      `<html lang="en" dir="ltr"><head><meta charset="utf-8"><title>${e(subject)}</title></head>`,
      '<body style="font-family:system-ui,sans-serif;line-height:1.5">',
      `<p>Tollgate disabled a webhook endpoint of the project <strong>${e(mail.projectName)}</strong> on ${e(mail.disabledAt)}:</p>`,
      `<p><code>${e(mail.endpointUrl)}</code><br>Why: ${e(mail.reason)}.</p>`,
      '<p>Events are no longer sent to it. Once it answers again, enable it on the Webhooks page of the console, then resend the deliveries that ' +
        'failed meanwhile (or all at once: <code>tollgate webhook replay</code>).</p>',
      `<p><a href="${e(mail.consoleUrl)}">Open the Webhooks page</a></p>`,
      '</body></html>',
    ].join('\n');
    return { subject, html, text };
  }
}
