import type { Locale } from '../../domain/locale';
import type { RenderedEmail } from '../mail/email-message';
import { defineTopic } from '../ports/outbox';

/** What the outbox records for an invitation to an organization: enough to write and send it later, in its locale. */
export interface OrganizationInvitationMail {
  to: string;
  locale: Locale;
  projectName: string;
  organizationName: string;
  /** The inviter's name or email, or null (the project server, the console). */
  invitedBy: string | null;
  /** The role offered (its display name). */
  roleName: string;
  /** The project's callback URL with `?tollgate_invitation=<token>`. */
  url: string;
  expiresInDays: number;
}

/** Outbox topic of organization invitations; the mail queue's retry policy applies. */
export const ORGANIZATION_INVITATION_TOPIC = defineTopic<OrganizationInvitationMail>({ name: 'email.organization_invitation', queue: 'mail' });

/** Writes an organization invitation in its locale (20 locales), as HTML and plain text, every value escaped in the HTML. */
export interface OrganizationInvitationRenderer {
  render(mail: OrganizationInvitationMail): RenderedEmail;
}
