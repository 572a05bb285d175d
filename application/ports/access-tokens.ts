import type { AccessTokenClaims } from '../../domain/access-token';

export interface SignAccessTokenInput {
  secret: Uint8Array;
  projectId: string;
  claims: AccessTokenClaims & Record<string, unknown>;
  ttlSeconds: number;
  now: Date;
}

export type VerifiedAccessToken = {
  claims: AccessTokenClaims & { sid?: string; jti?: string; iat: number; exp: number };
  expiresAt: Date;
};

/** HS256 JWTs signed with a project's secret; the algorithm is pinned. */
export interface AccessTokenCodec {
  sign(input: SignAccessTokenInput): Promise<string>;
  verify(token: string, secret: Uint8Array, projectId: string, now: Date): Promise<VerifiedAccessToken | null>;
  /** Reads the audience (project id) without verifying, to pick the key. */
  peekAudience(token: string): string | null;
}
