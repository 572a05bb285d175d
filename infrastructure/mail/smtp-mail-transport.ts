import nodemailer, { type Transporter } from 'nodemailer';
import type { MailTransport, OutgoingMail } from '../../application/mail/email-message';

/** What Tollgate sets unless SMTP_URL's query says otherwise. */
const DEFAULTS = {
  /** Connections are kept open and reused (up to maxConnections): no TCP/TLS handshake and login per message. */
  pool: true,
  maxConnections: 5,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000,
};

/**
 * nodemailer's transport options from SMTP_URL (`smtp://` or `smtps://`, credentials
 * percent-encoded, any nodemailer option in the query, e.g. `?pool=false&greetingTimeout=5000`).
 * nodemailer itself, given a URL, drops every other option; here the defaults above apply first.
 */
export function smtpOptions(smtpUrl: string): Record<string, unknown> {
  const url = new URL(smtpUrl);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error('SMTP_URL must be an smtp:// or smtps:// URL');
  const options: Record<string, unknown> = {
    ...DEFAULTS,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    secure: url.protocol === 'smtps:',
  };
  if (url.port) options.port = Number(url.port);
  if (url.username) options.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  for (const [key, value] of url.searchParams) {
    options[key] = /^\d+$/.test(value) ? Number(value) : value === 'true' ? true : value === 'false' ? false : value;
  }
  return options;
}

/**
 * Sends through an SMTP server (SMTP_URL, e.g. smtps://user:pass@smtp.example.com:465) over
 * pooled connections. A failed send throws; the outbox job retries it later. The Message-ID is
 * derived from the outbox message id, so a retry after an unconfirmed send carries the same id.
 */
export class SmtpMailTransport implements MailTransport {
  private readonly transporter: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly messageIdDomain: string,
  ) {
    this.transporter = nodemailer.createTransport(smtpOptions(smtpUrl) as never);
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transporter.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: `<${mail.messageId}@${this.messageIdDomain}>`,
    });
  }

  close(): void {
    this.transporter.close();
  }
}
