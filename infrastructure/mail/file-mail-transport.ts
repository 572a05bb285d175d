import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../application/ports/logger';
import type { MailTransport, OutgoingMail } from '../../application/mail/email-message';

/**
 * Development delivery without SMTP: each email is written as an .eml file under `dir`. With
 * `revealSecrets` (development only) the code or link is also logged at info level, so a developer
 * can sign in without a mail server; nowhere else does Tollgate log one.
 */
export class FileMailTransport implements MailTransport {
  private readonly composer: Transporter;

  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly messageIdDomain: string,
    private readonly logger: Logger,
    private readonly revealSecrets: boolean,
  ) {
    this.composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = (await this.composer.sendMail({
      from: this.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: `<${mail.messageId}@${this.messageIdDomain}>`,
    })) as { message: Buffer };
    await mkdir(this.dir, { recursive: true });
    const file = path.join(this.dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${mail.messageId}.eml`);
    // Written aside, then renamed: a reader of the folder never sees a half-written .eml.
    await writeFile(`${file}.part`, info.message, { mode: 0o600 });
    await rename(`${file}.part`, file);
    if (this.revealSecrets) {
      this.logger.info({ to: mail.to, file }, `Email "${mail.subject}" written to ${file}; it carries ${mail.secretPreview}`);
    } else {
      this.logger.info({ to: mail.to, file }, 'email written to file');
    }
  }
}
