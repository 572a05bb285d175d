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

export interface RefreshTokenStore {
  insert(record: RefreshTokenRecord, tokenHash: string): Promise<void>;
  /** Revokes every live refresh token of a user (password reset, sign out everywhere). */
  revokeAllForUser(projectId: string, userId: string, at: Date): Promise<number>;
}
