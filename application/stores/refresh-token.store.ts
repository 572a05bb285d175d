import type { SessionOrigin } from './session.store';

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
  /** The session's active organization (read by `findByHash`), null when none. */
  activeOrganizationId?: string | null;
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
  /**
   * Starts a session: its row (created, last used, expiry, where the user was) and its first
   * refresh token `record` (whose family id is the session id), in one statement.
   */
  insert(record: RefreshTokenRecord, tokenHash: string, origin: SessionOrigin): Promise<void>;
  /**
   * Ends every session of a user and revokes their refresh tokens (password reset, user disabled,
   * sign out everywhere). Answers how many live sessions ended.
   */
  revokeAllForUser(projectId: string, userId: string, at: Date): Promise<number>;
  findByHash(projectId: string, tokenHash: string): Promise<StoredRefreshToken | null>;
  findById(id: string): Promise<StoredRefreshToken | null>;
  /**
   * Rotates a live token atomically (only if not rotated, not revoked, not expired at `at`): marks
   * it rotated with its successor pair, inserts the child token (same session, same absolute
   * expiry), records the refresh as the session's last use, and forgets the successor pair its
   * own parent kept for the grace window. Returns the rotated token when this call won the race,
   * null otherwise.
   */
  rotate(input: RotateRefreshTokenInput): Promise<StoredRefreshToken | null>;
  /** Ends a session and revokes every token of it (family). */
  revokeFamily(familyId: string, at: Date): Promise<number>;
  /** Ends the sessions minted from an authorization code and revokes their tokens. */
  revokeByAuthCode(authCodeId: string, at: Date): Promise<number>;
}
