/**
 * An invitation to join an organization: sent by email with a role, accepted once by a signed-in
 * user whose verified email is the invited one. Its token is stored only as a hash.
 */
export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'revoked' | 'expired';

export interface Invitation {
  id: string;
  organizationId: string;
  projectId: string;
  /** Canonical form of the invited address (mail goes there). */
  email: string;
  /** Lower-cased: what a user's email is compared with. */
  emailKey: string;
  role: string;
  /** The member who invited (null: the project server or the console). */
  inviterUserId: string | null;
  status: Exclude<InvitationStatus, 'expired'>;
  createdAt: Date;
  expiresAt: Date;
  /** When it was accepted, declined or revoked. */
  endedAt: Date | null;
  acceptedBy: string | null;
}

export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
export const INVITATION_TTL_MIN_SECONDS = 3600;
export const INVITATION_TTL_MAX_SECONDS = 30 * 24 * 3600;
/** The query parameter of the link in the invitation email that carries its token. */
export const INVITATION_TOKEN_PARAM = 'tollgate_invitation';
export const INVITATION_TOKEN_PREFIX = 'inv_';

/** Its status as a reader sees it: a pending invitation past its expiry is `expired`. */
export const invitationStatus = (inv: Pick<Invitation, 'status' | 'expiresAt'>, now: Date): InvitationStatus =>
  inv.status === 'pending' && inv.expiresAt.getTime() <= now.getTime() ? 'expired' : inv.status;
