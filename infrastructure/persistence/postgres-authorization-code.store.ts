import type { AuthorizationCodeRecord, AuthorizationCodeStore } from '../../application/stores/authorization-code.store';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toRecord = rowMapper<AuthorizationCodeRecord>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  provider: read.text,
  ip: read.textOrNull,
  userAgent: read.textOrNull,
  createdAt: read.date,
  expiresAt: read.date,
});

export class PostgresAuthorizationCodeStore implements AuthorizationCodeStore {
  constructor(private readonly db: Database) {}

  async insert(r: AuthorizationCodeRecord, codeHash: string): Promise<void> {
    await this.db.query(
      `insert into authorization_codes (id, project_id, user_id, provider, code_hash, ip, user_agent, created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.userId, r.provider, codeHash, r.ip, r.userAgent, r.createdAt, r.expiresAt],
    );
  }

  async consume(projectId: string, codeHash: string, at: Date): Promise<AuthorizationCodeRecord | null> {
    const rows = await this.db.query(
      `update authorization_codes set used_at = ?
        where code_hash = ? and project_id = ? and used_at is null and expires_at > ?
        returning ${toRecord.columns}`,
      [at, codeHash, projectId, at],
    );
    return toRecord.first(rows);
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
