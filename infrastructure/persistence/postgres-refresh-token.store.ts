import type { SessionOrigin } from '../../application/stores/session.store';
import type { RefreshTokenRecord, RefreshTokenStore, RotateRefreshTokenInput, StoredRefreshToken } from '../../application/stores/refresh-token.store';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toStored = rowMapper<Omit<StoredRefreshToken, 'activeOrganizationId'>>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  familyId: read.text,
  parentId: read.textOrNull,
  provider: read.text,
  authCodeId: read.textOrNull,
  createdAt: read.date,
  expiresAt: read.date,
  idleExpiresAt: read.date,
  lastUsedAt: read.dateOrNull,
  rotatedAt: read.dateOrNull,
  revokedAt: read.dateOrNull,
  replacedBy: read.textOrNull,
  successorEncrypted: ['successor_enc', read.textOrNull],
});

/**
 * The two statements of a refresh rotation (`?` placeholders), named so each connection parses
 * and plans them once: the look-up by hash, then the rotation itself (see `rotate`). Workload 4 of
 * the benchmark runs the same two behind bare Express as its baseline.
 */
export const REFRESH_TOKEN_SQL = {
  findByHash: `select ${toStored.columns}, (select s.active_organization_id from sessions s where s.id = family_id) as active_organization_id
         from refresh_tokens where token_hash = ? and project_id = ?`,
  rotate: `with rotated as (
     update refresh_tokens
        set rotated_at = ?, last_used_at = ?, replaced_by = ?, successor_enc = ?
      where token_hash = ? and project_id = ?
        and rotated_at is null and revoked_at is null and expires_at > ? and idle_expires_at > ?
      returning ${toStored.columns}
   ), child as (
     insert into refresh_tokens (id, project_id, user_id, family_id, parent_id, token_hash, provider, auth_code_id,
       created_at, expires_at, idle_expires_at)
     select ?, project_id, user_id, family_id, id, ?, provider, auth_code_id, ?, expires_at, least(?::timestamptz, expires_at)
       from rotated
   ), grace_ended as (
     update refresh_tokens set successor_enc = null
      where id = (select parent_id from rotated) and successor_enc is not null
   ), session_used as (
     update sessions set last_used_at = ?, idle_expires_at = least(?::timestamptz, expires_at)
      where id = (select family_id from rotated)
   )
   select ${toStored.columns} from rotated`,
};

/** The parameters of `REFRESH_TOKEN_SQL.rotate`, in order. */
export const rotationParams = (input: RotateRefreshTokenInput): unknown[] => [
  input.at,
  input.at,
  input.childId,
  input.successorEncrypted,
  input.tokenHash,
  input.projectId,
  input.at,
  input.at,
  input.childId,
  input.childTokenHash,
  input.at,
  input.childIdleExpiresAt,
  input.at,
  input.childIdleExpiresAt,
];

export class PostgresRefreshTokenStore implements RefreshTokenStore {
  /**
   * `sessionsEnded` runs after a statement that ended sessions (the composition root passes a wait
   * for this process's own cache listener, after commit, so that this process refuses the ended
   * sessions' access tokens as soon as the call returns).
   */
  constructor(
    private readonly db: Database,
    private readonly sessionsEnded: () => Promise<void> | void = () => undefined,
  ) {}

  /** The session and its first token in one statement (the token's foreign key is checked at its end). */
  async insert(r: RefreshTokenRecord, tokenHash: string, origin: SessionOrigin): Promise<void> {
    await this.db.query(
      `with session as (
         insert into sessions (id, project_id, user_id, provider, created_at, last_used_at, expires_at, idle_expires_at, ip, user_agent)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       )
       insert into refresh_tokens (id, project_id, user_id, family_id, parent_id, token_hash, provider, auth_code_id,
         created_at, expires_at, idle_expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.familyId,
        r.projectId,
        r.userId,
        r.provider,
        r.createdAt,
        r.createdAt,
        r.expiresAt,
        r.idleExpiresAt,
        origin.ip,
        origin.userAgent,
        r.id,
        r.projectId,
        r.userId,
        r.familyId,
        r.parentId,
        tokenHash,
        r.provider,
        r.authCodeId,
        r.createdAt,
        r.expiresAt,
        r.idleExpiresAt,
      ],
    );
  }

  /**
   * Ends the user's sessions (each announced to every process by the sessions trigger) and
   * revokes their tokens. Tokens are locked before sessions, as rotation does, so the two cannot
   * deadlock: the sessions update waits for the tokens one (its `(select count(*) from tokens)`).
   */
  async revokeAllForUser(projectId: string, userId: string, at: Date): Promise<number> {
    const rows = await this.db.query<{ ended: string }>(
      `with tokens as (
         update refresh_tokens set revoked_at = ?, successor_enc = null
          where project_id = ? and user_id = ? and revoked_at is null
          returning 1
       ), ended as (
         update sessions set revoked_at = ?
          where project_id = ? and user_id = ? and revoked_at is null and (select count(*) from tokens) >= 0
          returning expires_at, idle_expires_at
       )
       select count(*)::text as ended from ended where expires_at > ? and idle_expires_at > ?`,
      [at, projectId, userId, at, projectId, userId, at, at],
    );
    await this.sessionsEnded();
    return Number(rows[0]?.ended ?? 0);
  }

  async findByHash(projectId: string, tokenHash: string): Promise<StoredRefreshToken | null> {
    const rows = await this.db.query(REFRESH_TOKEN_SQL.findByHash, [tokenHash, projectId], { prepare: 'refresh_token_by_hash' });
    const row = toStored.first(rows);
    return row && { ...row, activeOrganizationId: (rows[0] as { active_organization_id: string | null }).active_organization_id ?? null };
  }

  async findById(id: string): Promise<StoredRefreshToken | null> {
    if (!isUuid(id)) return null;
    const rows = await this.db.query(`select ${toStored.columns} from refresh_tokens where id = ?`, [id]);
    return toStored.first(rows);
  }

  /**
   * One statement, so one round trip and atomic without BEGIN/COMMIT: the conditional UPDATE takes
   * the row lock (a parallel rotation of the same token waits, then matches nothing), and the
   * child insert and the parent's clean-up read only what that UPDATE returned.
   */
  async rotate(input: RotateRefreshTokenInput): Promise<StoredRefreshToken | null> {
    const rows = await this.db.query(REFRESH_TOKEN_SQL.rotate, rotationParams(input), { prepare: 'refresh_token_rotate' });
    return toStored.first(rows);
  }

  async revokeFamily(familyId: string, at: Date): Promise<number> {
    if (!isUuid(familyId)) return 0;
    const rows = await this.db.query(
      `with ended as (
         update sessions set revoked_at = ? where id = ? and revoked_at is null
       )
       update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null
        where family_id = ? and (revoked_at is null or successor_enc is not null) returning id`,
      [at, familyId, at, familyId],
    );
    if (rows.length > 0) await this.sessionsEnded();
    return rows.length;
  }

  async revokeByAuthCode(authCodeId: string, at: Date): Promise<number> {
    const rows = await this.db.query(
      `with families as (
         select distinct family_id from refresh_tokens where auth_code_id = ?
       ), ended as (
         update sessions set revoked_at = ? where id in (select family_id from families) and revoked_at is null
       )
       update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null
        where family_id in (select family_id from families) and revoked_at is null
        returning id`,
      [authCodeId, at, at],
    );
    if (rows.length > 0) await this.sessionsEnded();
    return rows.length;
  }
}
