import type { SessionRecord, SessionStore } from '../../application/stores/session.store';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toSession = rowMapper<SessionRecord>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  provider: read.text,
  createdAt: read.date,
  lastUsedAt: read.date,
  expiresAt: read.date,
  idleExpiresAt: read.date,
  ip: read.textOrNull,
  userAgent: read.textOrNull,
  revokedAt: read.dateOrNull,
});

/**
 * Sessions (one row per sign-in; `refresh_tokens.family_id` points to it). Ending one revokes its
 * refresh tokens in the same statement; tokens are locked before the session, as rotation does
 * (the sessions update waits for the tokens one through `(select count(*) from tokens)`), so the
 * two cannot deadlock. The sessions trigger announces every ended session to every process.
 */
export class PostgresSessionStore implements SessionStore {
  /** `sessionsEnded` runs after a statement that ended sessions (see PostgresRefreshTokenStore). */
  constructor(
    private readonly db: Database,
    private readonly sessionsEnded: () => Promise<void> | void = () => undefined,
  ) {}

  async listLive(projectId: string, userId: string, now: Date, limit: number): Promise<SessionRecord[]> {
    if (!isUuid(projectId) || !isUuid(userId)) return [];
    const rows = await this.db.query(
      `select ${toSession.columns} from sessions
        where project_id = ? and user_id = ? and revoked_at is null and expires_at > ? and idle_expires_at > ?
        order by last_used_at desc, created_at desc limit ?`,
      [projectId, userId, now, now, limit],
    );
    return rows.map((row) => toSession(row));
  }

  async revoke(projectId: string, userId: string, sessionId: string, at: Date): Promise<boolean> {
    if (!isUuid(sessionId) || !isUuid(projectId) || !isUuid(userId)) return false;
    const rows = await this.db.query(
      `with target as (
         select id from sessions where id = ? and project_id = ? and user_id = ?
       ), tokens as (
         update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null
          where family_id in (select id from target) and (revoked_at is null or successor_enc is not null)
          returning 1
       ), ended as (
         update sessions set revoked_at = ?
          where id in (select id from target) and revoked_at is null and (select count(*) from tokens) >= 0
       )
       select id from target`,
      [sessionId, projectId, userId, at, at],
    );
    if (rows.length > 0) await this.sessionsEnded();
    return rows.length > 0;
  }

  async revokeAllBut(projectId: string, userId: string, keepSessionId: string | null, at: Date): Promise<number> {
    if (!isUuid(projectId) || !isUuid(userId)) return 0;
    const keep = keepSessionId !== null && isUuid(keepSessionId) ? keepSessionId : null;
    const rows = await this.db.query<{ ended: string }>(
      `with tokens as (
         update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null
          where project_id = ? and user_id = ? and family_id is distinct from ?::uuid
            and (revoked_at is null or successor_enc is not null)
          returning 1
       ), ended as (
         update sessions set revoked_at = ?
          where project_id = ? and user_id = ? and id is distinct from ?::uuid and revoked_at is null
            and (select count(*) from tokens) >= 0
          returning expires_at, idle_expires_at
       )
       select count(*)::text as ended from ended where expires_at > ? and idle_expires_at > ?`,
      [at, projectId, userId, keep, at, projectId, userId, keep, at, at],
    );
    await this.sessionsEnded();
    return Number(rows[0]?.ended ?? 0);
  }

  /** Sessions ended since `since` (the revoked-session set loads them when it starts or reconnects). */
  async revokedSince(since: Date): Promise<Array<{ id: string; revokedAt: Date }>> {
    const rows = await this.db.query<{ id: string; revoked_at: Date | string }>(
      'select id::text as id, revoked_at from sessions where revoked_at is not null and revoked_at > ? order by revoked_at',
      [since],
    );
    return rows.map((r) => ({ id: r.id, revokedAt: new Date(r.revoked_at) }));
  }

  /** Whether one session was ended (the revoked-session set asks while it is not current). */
  async isRevoked(sessionId: string): Promise<boolean> {
    if (!isUuid(sessionId)) return false;
    const rows = await this.db.query('select 1 from sessions where id = ? and revoked_at is not null', [sessionId], { prepare: 'session_revoked' });
    return rows.length > 0;
  }
}
