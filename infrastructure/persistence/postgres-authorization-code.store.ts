import type { AuthorizationCodeRecord, AuthorizationCodeStore } from '../../application/oauth/authorization-code.store';
import type { Database } from './database';
import { AuthorizationCodeEntity } from './entities/oauth.entity';

interface CodeRow {
  id: string;
  project_id: string;
  user_id: string;
  provider: string;
  created_at: Date | string;
  expires_at: Date | string;
}

export class PostgresAuthorizationCodeStore implements AuthorizationCodeStore {
  constructor(private readonly db: Database) {}

  async insert(r: AuthorizationCodeRecord, codeHash: string): Promise<void> {
    await this.db.em.insert(AuthorizationCodeEntity, { ...r, codeHash, usedAt: null, replayedAt: null });
  }

  async consume(projectId: string, codeHash: string, at: Date): Promise<AuthorizationCodeRecord | null> {
    const rows = await this.db.query<CodeRow>(
      `update authorization_codes set used_at = ?
        where code_hash = ? and project_id = ? and used_at is null and expires_at > ?
        returning id, project_id, user_id, provider, created_at, expires_at`,
      [at, codeHash, projectId, at],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      projectId: r.project_id,
      userId: r.user_id,
      provider: r.provider,
      createdAt: new Date(r.created_at),
      expiresAt: new Date(r.expires_at),
    };
  }

  async markReplayed(projectId: string, codeHash: string, at: Date): Promise<string | null> {
    const rows = await this.db.query<{ id: string }>(
      `update authorization_codes set replayed_at = coalesce(replayed_at, ?)
        where code_hash = ? and project_id = ? and used_at is not null
        returning id`,
      [at, codeHash, projectId],
    );
    return rows[0]?.id ?? null;
  }

  async wasReplayed(codeId: string): Promise<boolean> {
    const rows = await this.db.query('select 1 from authorization_codes where id = ? and replayed_at is not null', [codeId]);
    return rows.length > 0;
  }

  /** Drops codes expired before `before` (kept a while after use for replay detection). */
  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from authorization_codes where expires_at < ? returning id', [before]);
    return rows.length;
  }
}
