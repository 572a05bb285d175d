import type { Project } from '../../domain/project';
import type { AccessTokenCodec } from '../ports/access-tokens';
import type { Clock } from '../ports/clock';
import type { ProjectSecrets } from '../stores/project.store';
import type { RevokedSessions } from '../stores/session.store';
import type { UserStore } from '../stores/user.store';
import { type ActiveOrganization, readClaim } from '../../domain/organizations/claims';
import { activeOrganizationOf, type MembershipLookup } from '../stores/organization-membership';

export interface VerifiedUser {
  id: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  provider: string;
  emailVerified: boolean;
}

export type TokenVerification =
  | { valid: true; user: VerifiedUser; expiresAt: Date; claims: Record<string, unknown>; organization: ActiveOrganization | null }
  | { valid: false };

export interface VerifyAccessTokenDeps {
  secrets: Pick<ProjectSecrets, 'signingKey'>;
  tokens: Pick<AccessTokenCodec, 'verify'>;
  users: Pick<UserStore, 'findById'>;
  /** Ended sessions (sign-out, code replay, refresh reuse, password reset, ...), known to every process. */
  sessions: RevokedSessions;
  clock: Clock;
  /** The active organization's membership as it is now (removals, role changes, deletions show at once). */
  memberships: MembershipLookup;
}

/**
 * Verifies an access token for a project: signature (HS256 only), issuer, audience, expiry, that
 * its session (`sid`) has not been ended, and that its user still exists and is not disabled.
 * Every failure is `valid: false`.
 */
export function makeVerifyAccessToken(deps: VerifyAccessTokenDeps) {
  return async (project: Project, token: string): Promise<TokenVerification> => {
    const secret = await deps.secrets.signingKey(project.id);
    if (!secret) return { valid: false };
    const verified = await deps.tokens.verify(token, secret, project.id, deps.clock.now());
    if (!verified) return { valid: false };
    const sid = verified.claims.sid;
    if (typeof sid === 'string') {
      // Synchronous while the revoked-session set is current (no await on the hot path).
      const revoked = deps.sessions.isRevoked(sid);
      if (revoked === true || (revoked !== false && (await revoked))) return { valid: false };
    }
    const user = await deps.users.findById(project.id, verified.claims.sub);
    if (!user || user.disabled) return { valid: false };
    let organization: ActiveOrganization | null = null;
    const claim = verified.claims.org === undefined ? null : readClaim(verified.claims.org);
    if (claim) {
      // Synchronous on a cache hit, like the revoked-session check.
      const found = deps.memberships.current(project.id, claim.id, user.id);
      const current = found instanceof Promise ? await found : found;
      if (current) organization = activeOrganizationOf(current);
    }
    return {
      organization,
      valid: true,
      expiresAt: verified.expiresAt,
      claims: { ...verified.claims },
      user: {
        id: user.id,
        email: user.email,
        name: user.name,
        picture: user.picture,
        provider: verified.claims.provider,
        emailVerified: user.emailVerified,
      },
    };
  };
}
