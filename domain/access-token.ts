/** Claims of an access token issued by Tollgate (HS256 with the project's signing secret). */
export interface AccessTokenClaims {
  sub: string;
  email: string | null;
  name: string | null;
  picture: string | null;
  provider: string;
  email_verified?: boolean;
}

export const ACCESS_TOKEN_TTL_SECONDS = 5 * 60;
export const MAGIC_LINK_TOKEN_TTL_SECONDS = 15 * 60;
