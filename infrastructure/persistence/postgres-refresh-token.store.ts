import type { RefreshTokenRecord, RefreshTokenStore, RotateRefreshTokenInput, StoredRefreshToken } from '../../application/tokens/refresh-token.store';
import type { Database } from './database';
import { isUuid } from './postgres-project.store';

interface Row {
  id: string;
  project_id: string;
  user_id: string;
  family_id: string;
  parent_id: string | null;
  provider: string;
  auth_code_id: string | null;
  created_at: Date | string;
  expires_at: Date | string;
  idle_expires_at: Date | string;
  last_used_at: Date | string | null;
  rotated_at: Date | string | null;
  revoked_at: Date | string | null;
  replaced_by: string | null;
  successor_enc: string | null;
}

const COLUMNS = `id, project_id, user_id, family_id, parent_id, provider, auth_code_id, created_at, expires_at,
  idle_expires_at, last_used_at, rotated_at, revoked_at, replaced_by, successor_enc`;

const date = (v: Date | string | null) => (v === null ? null : new Date(v));

const toStored = (r: Row): StoredRefreshToken => ({
  id: r.id,
  projectId: r.project_id,
  userId: r.user_id,
  familyId: r.family_id,
  parentId: r.parent_id,
  provider: r.provider,
  authCodeId: r.auth_code_id,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  idleExpiresAt: new Date(r.idle_expires_at),
  lastUsedAt: date(r.last_used_at),
  rotatedAt: date(r.rotated_at),
  revokedAt: date(r.revoked_at),
  replacedBy: r.replaced_by,
  successorEncrypted: r.successor_enc,
});

export class PostgresRefreshTokenStore implements RefreshTokenStore {
  constructor(private readonly db: Database) {}

  async insert(r: RefreshTokenRecord, tokenHash: string): Promise<void> {
    await this.db.query(
      `insert into refresh_tokens (id, project_id, user_id, family_id, parent_id, token_hash, provider, auth_code_id,
         created_at, expires_at, idle_expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.userId, r.familyId, r.parentId, tokenHash, r.provider, r.authCodeId, r.createdAt, r.expiresAt, r.idleExpiresAt],
    );
  }

  async revokeAllForUser(projectId: string, userId: string, at: Date): Promise<number> {
    const rows = await this.db.query(
      'update refresh_tokens set revoked_at = ?, successor_enc = null where project_id = ? and user_id = ? and revoked_at is null returning id',
      [at, projectId, userId],
    );
    return rows.length;
  }

  async findByHash(projectId: string, tokenHash: string): Promise<StoredRefreshToken | null> {
    const rows = await this.db.query<Row>(`select ${COLUMNS} from refresh_tokens where token_hash = ? and project_id = ?`, [tokenHash, projectId]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  async findById(id: string): Promise<StoredRefreshToken | null> {
    if (!isUuid(id)) return null;
    const rows = await this.db.query<Row>(`select ${COLUMNS} from refresh_tokens where id = ?`, [id]);
    return rows[0] ? toStored(rows[0]) : null;
  }

  /**
   * One statement, so one round trip and atomic without BEGIN/COMMIT: the conditional UPDATE takes
   * the row lock (a parallel rotation of the same token waits, then matches nothing), and the
   * child insert and the parent's clean-up read only what that UPDATE returned.
   */
  async rotate(input: RotateRefreshTokenInput): Promise<StoredRefreshToken | null> {
    const rows = await this.db.query<Row>(
      `with rotated as (
         update refresh_tokens
            set rotated_at = ?, last_used_at = ?, replaced_by = ?, successor_enc = ?
          where token_hash = ? and project_id = ?
            and rotated_at is null and revoked_at is null and expires_at > ? and idle_expires_at > ?
          returning ${COLUMNS}
       ), child as (
         insert into refresh_tokens (id, project_id, user_id, family_id, parent_id, token_hash, provider, auth_code_id,
           created_at, expires_at, idle_expires_at)
         select ?, project_id, user_id, family_id, id, ?, provider, auth_code_id, ?, expires_at, least(?::timestamptz, expires_at)
           from rotated
       ), grace_ended as (
         update refresh_tokens set successor_enc = null
          where id = (select parent_id from rotated) and successor_enc is not null
       )
       select ${COLUMNS} from rotated`,
      [
        input.at, input.at, input.childId, input.successorEncrypted, input.tokenHash, input.projectId, input.at, input.at,
        input.childId, input.childTokenHash, input.at, input.childIdleExpiresAt,
      ],
    );
    return rows[0] ? toStored(rows[0]) : null;
  }

  async revokeFamily(familyId: string, at: Date): Promise<number> {
    const rows = await this.db.query(
      'update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null where family_id = ? and (revoked_at is null or successor_enc is not null) returning id',
      [at, familyId],
    );
    return rows.length;
  }

  async revokeByAuthCode(authCodeId: string, at: Date): Promise<number> {
    const rows = await this.db.query(
      `update refresh_tokens set revoked_at = coalesce(revoked_at, ?), successor_enc = null
        where family_id in (select family_id from refresh_tokens where auth_code_id = ?) and revoked_at is null
        returning id`,
      [at, authCodeId],
    );
    return rows.length;
  }
}
