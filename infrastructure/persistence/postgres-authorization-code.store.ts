import type { AuthorizationCodeRecord, AuthorizationCodeStore } from '../../application/oauth/authorization-code.store';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toRecord = rowMapper<Omit<AuthorizationCodeRecord, 'origin'> & { originIp: string | null; originUserAgent: string | null }>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  provider: read.text,
  createdAt: read.date,
  expiresAt: read.date,
  originIp: read.textOrNull,
  originUserAgent: read.textOrNull,
});

const withOrigin = (row: ReturnType<typeof toRecord> | null): AuthorizationCodeRecord | null => {
  if (!row) return null;
  const { originIp, originUserAgent, ...record } = row;
  return { ...record, origin: originIp === null ? null : { ip: originIp, userAgent: originUserAgent } };
};

export class PostgresAuthorizationCodeStore implements AuthorizationCodeStore {
  constructor(private readonly db: Database) {}

  async insert(r: AuthorizationCodeRecord, codeHash: string): Promise<void> {
    await this.db.query(
      `insert into authorization_codes (id, project_id, user_id, provider, code_hash, created_at, expires_at, origin_ip, origin_user_agent)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.userId, r.provider, codeHash, r.createdAt, r.expiresAt, r.origin?.ip ?? null, r.origin?.userAgent ?? null],
    );
  }

  async consume(projectId: string, codeHash: string, at: Date): Promise<AuthorizationCodeRecord | null> {
    const rows = await this.db.query(
      `update authorization_codes set used_at = ?
        where code_hash = ? and project_id = ? and used_at is null and expires_at > ?
        returning ${toRecord.columns}`,
      [at, codeHash, projectId, at],
    );
    return withOrigin(toRecord.first(rows));
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
