import type { PasswordResetRecord, PasswordResetStore } from '../../application/email/password-reset.store';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toRecord = rowMapper<PasswordResetRecord>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  createdAt: read.date,
  expiresAt: read.date,
  usedAt: read.dateOrNull,
});

export class PostgresEmailPasswordResetStore implements PasswordResetStore {
  constructor(private readonly db: Database) {}

  async insert(r: Omit<PasswordResetRecord, 'usedAt'>, tokenHash: string): Promise<void> {
    await this.db.query('insert into email_password_resets (id, project_id, user_id, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?, ?)', [
      r.id,
      r.projectId,
      r.userId,
      tokenHash,
      r.createdAt,
      r.expiresAt,
    ]);
  }

  async exists(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (await this.db.query('select 1 from email_password_resets where id = ?', [id])).length > 0;
  }

  async findByHash(projectId: string, tokenHash: string): Promise<PasswordResetRecord | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(`select ${toRecord.columns} from email_password_resets where project_id = ? and token_hash = ?`, [projectId, tokenHash]);
    return toRecord.first(rows);
  }

  async consume(projectId: string, tokenHash: string, now: Date): Promise<PasswordResetRecord | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(
      `update email_password_resets set used_at = ?
        where project_id = ? and token_hash = ? and used_at is null and expires_at > ?
        returning ${toRecord.columns}`,
      [now, projectId, tokenHash, now],
    );
    return toRecord.first(rows);
  }

  async invalidateAllForUser(projectId: string, userId: string, at: Date): Promise<void> {
    await this.db.query('update email_password_resets set used_at = ? where project_id = ? and user_id = ? and used_at is null', [at, projectId, userId]);
  }
}
