import { isSupportedLocale, type Locale } from '../../domain/locale';
import { defineTopic } from '../ports/outbox';

/** Outbox topic of every email Tollgate sends; the mail queue's retry policy applies. */
export const EMAIL_OUTBOX_TOPIC = defineTopic<EmailMessage>({ name: 'email.send', queue: 'mail' });

export const EMAIL_KINDS = ['verification_code', 'password_reset', 'magic_link'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

/** What is recorded in the outbox: enough to render and send the email later, in its locale. */
export interface EmailMessage {
  kind: EmailKind;
  to: string;
  locale: Locale;
  projectName: string;
  /** The 6-digit code (verification_code). */
  code?: string;
  /** The link to follow (password_reset, magic_link). */
  url?: string;
  /** Minutes until the code or link expires. */
  expiresInMinutes: number;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

/** Writes an email in its locale, as HTML and plain text. */
export interface EmailRenderer {
  render(message: EmailMessage): RenderedEmail;
}

export interface OutgoingMail extends RenderedEmail {
  /** Stable across retries of one outbox message, so receivers can drop duplicates. */
  messageId: string;
  to: string;
  /** The code or link the email carries; only a development transport may show it. */
  secretPreview: string;
}

/** Hands a rendered email to the delivery channel (SMTP, or files in development). */
export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>;
  /** Closes connections kept open between messages, if any. */
  close?(): void;
}

/**
 * The outbox handler of a mail the outbox holds as data (an invitation, a notice): writes it with
 * its renderer and hands it to the transport, which throws to retry. `preview`: the link it carries.
 */
export function makeDeliverMail<M extends { to: string }>(
  deps: { renderer: { render(mail: M): RenderedEmail }; transport: MailTransport },
  preview: (mail: M) => string,
) {
  return async (mail: M, messageId: string): Promise<void> => {
    await deps.transport.send({ ...deps.renderer.render(mail), messageId, to: mail.to, secretPreview: preview(mail) });
  };
}

/** Checks an outbox payload read back from the database. */
export function parseEmailMessage(payload: Record<string, unknown>): EmailMessage | null {
  const { kind, to, locale, projectName, code, url, expiresInMinutes } = payload;
  if (typeof kind !== 'string' || !(EMAIL_KINDS as readonly string[]).includes(kind)) return null;
  if (typeof to !== 'string' || typeof locale !== 'string' || !isSupportedLocale(locale)) return null;
  if (typeof projectName !== 'string' || typeof expiresInMinutes !== 'number') return null;
  if (kind === 'verification_code' && typeof code !== 'string') return null;
  if (kind !== 'verification_code' && typeof url !== 'string') return null;
  return {
    kind: kind as EmailKind,
    to,
    locale,
    projectName,
    expiresInMinutes,
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof url === 'string' ? { url } : {}),
  };
}
