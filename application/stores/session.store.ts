/**
 * Where the end user was when a session started: the IP and user agent of the request that signed
 * them in (a `RequestOrigin` read at the edge), null where unknown.
 */
export interface SessionOrigin {
  ip: string | null;
  userAgent: string | null;
}

/**
 * A session: what one sign-in started. Its id is the `sid` claim of every access token it minted
 * and the family of every refresh token rotated from it.
 */
export interface SessionRecord {
  id: string;
  projectId: string;
  userId: string;
  /** Provider of the sign-in (google, ..., email, magic-link). */
  provider: string;
  createdAt: Date;
  /** The sign-in, then each refresh (access-token verification does not count: it writes nothing). */
  lastUsedAt: Date;
  /** Absolute end (refresh rotation does not extend it). */
  expiresAt: Date;
  /** The session ends unless refreshed before then. */
  idleExpiresAt: Date;
  /** Null for sessions started before Tollgate remembered it. */
  ip: string | null;
  userAgent: string | null;
  revokedAt: Date | null;
}

export interface SessionStore {
  /** The user's sessions live at `now` (not ended, not expired), most recently used first, at most `limit`. */
  listLive(projectId: string, userId: string, now: Date, limit: number): Promise<SessionRecord[]>;
  /**
   * Ends one session of the user and its refresh tokens, in one statement. True when the user has
   * that session (ended now or before), false when it is unknown or someone else's.
   */
  revoke(projectId: string, userId: string, sessionId: string, at: Date): Promise<boolean>;
  /** Ends every session of the user but `keepSessionId` (and their refresh tokens); answers how many live ones ended. */
  revokeAllBut(projectId: string, userId: string, keepSessionId: string | null, at: Date): Promise<number>;
}

/**
 * Asked on every access-token verification: was this session ended? Answers synchronously when it
 * can (an in-process set kept current across processes), so the hot path awaits nothing extra.
 */
export interface RevokedSessions {
  isRevoked(sessionId: string): boolean | Promise<boolean>;
}
