import type { RefreshTokenRecord, RefreshTokenStore } from '../../application/tokens/refresh-token.store';
import type { Database } from './database';

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
      'update refresh_tokens set revoked_at = ? where project_id = ? and user_id = ? and revoked_at is null returning id',
      [at, projectId, userId],
    );
    return rows.length;
  }
}
