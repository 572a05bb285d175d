export interface RefreshTokenRecord {
  id: string;
  projectId: string;
  userId: string;
  /** Every token minted by rotation from one sign-in shares the family id (the session id). */
  familyId: string;
  parentId: string | null;
  provider: string;
  /** Authorization code this session was minted from, if any (reuse of the code revokes it). */
  authCodeId: string | null;
  createdAt: Date;
  /** Absolute end of the session (inherited by rotated tokens). */
  expiresAt: Date;
  /** The token stops working when unused until then. */
  idleExpiresAt: Date;
}

/** A stored refresh token with its lifecycle columns. */
export interface StoredRefreshToken extends RefreshTokenRecord {
  lastUsedAt: Date | null;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  /** The token minted when this one was rotated. */
  replacedBy: string | null;
  /** The pair minted at rotation, encrypted, kept only for the reuse grace window. */
  successorEncrypted: string | null;
}

export interface RotateRefreshTokenInput {
  projectId: string;
  tokenHash: string;
  at: Date;
  childId: string;
  childTokenHash: string;
  /** Idle expiry of the child; never later than the session's absolute expiry. */
  childIdleExpiresAt: Date;
  successorEncrypted: string;
}

export interface RefreshTokenStore {
  insert(record: RefreshTokenRecord, tokenHash: string): Promise<void>;
  /** Revokes every live refresh token of a user (password reset, sign out everywhere). */
  revokeAllForUser(projectId: string, userId: string, at: Date): Promise<number>;
  findByHash(projectId: string, tokenHash: string): Promise<StoredRefreshToken | null>;
  findById(id: string): Promise<StoredRefreshToken | null>;
  /**
   * Rotates a live token atomically (only if not rotated, not revoked, not expired at `at`): marks
   * it rotated with its successor pair, inserts the child token (same session, same absolute
   * expiry), and forgets the successor pair its own parent kept for the grace window. Returns the
   * rotated token when this call won the race, null otherwise.
   */
  rotate(input: RotateRefreshTokenInput): Promise<StoredRefreshToken | null>;
  /** Revokes every token of a session (family). */
  revokeFamily(familyId: string, at: Date): Promise<number>;
  /** Revokes the sessions minted from an authorization code. */
  revokeByAuthCode(authCodeId: string, at: Date): Promise<number>;
}
