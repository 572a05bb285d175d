import type { OrganizationClaim } from './organizations/claims';

/** Claims of an access token issued by Tollgate (HS256 with the project's signing secret). */
export interface AccessTokenClaims {
  sub: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  provider: string;
  email_verified?: boolean;
  /** The session's active organization (docs/organizations.md), absent when none. */
  org?: OrganizationClaim;
}

export const ACCESS_TOKEN_TTL_SECONDS = 5 * 60;
export const MAGIC_LINK_TOKEN_TTL_SECONDS = 15 * 60;
/** No access token lives longer: a session ended longer ago than this has no unexpired token left. */
export const LONGEST_ACCESS_TOKEN_TTL_SECONDS = Math.max(ACCESS_TOKEN_TTL_SECONDS, MAGIC_LINK_TOKEN_TTL_SECONDS);
