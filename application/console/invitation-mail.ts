import { defineTopic } from '../ports/outbox';
import type { RenderedEmail } from '../mail/email-message';

/** What the outbox records for an invitation to a project's console: enough to write and send it later. */
export interface ConsoleInvitationMail {
  to: string;
  projectName: string;
  /** The inviter's email, or null when unknown. */
  invitedBy: string | null;
  /** The console page that accepts the invitation, its one-time token in the fragment. */
  url: string;
  expiresInDays: number;
}

/** Outbox topic of console invitations; the mail queue's retry policy applies. */
export const CONSOLE_INVITATION_TOPIC = defineTopic<ConsoleInvitationMail>({ name: 'email.console_invitation', queue: 'mail' });

/** Writes a console invitation as HTML and plain text (English, every value escaped). */
export interface ConsoleInvitationRenderer {
  render(mail: ConsoleInvitationMail): RenderedEmail;
}
