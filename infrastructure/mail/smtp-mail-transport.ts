import nodemailer, { type Transporter } from 'nodemailer';
import type { MailTransport, OutgoingMail } from '../../application/email/email-message';

/**
 * Sends through an SMTP server (SMTP_URL, e.g. smtps://user:pass@smtp.example.com:465). A failed
 * send throws; the outbox job retries it later. The Message-ID is derived from the outbox message
 * id, so a retry after an unconfirmed send carries the same id.
 */
export class SmtpMailTransport implements MailTransport {
  private readonly transporter: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly messageIdDomain: string,
  ) {
    // Settings in the URL's query (e.g. ?connectionTimeout=5000) override these.
    this.transporter = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as never);
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
