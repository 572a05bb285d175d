import type { PasswordResetRecord, PasswordResetStore } from '../../application/email/password-reset.store';
import type { Database } from './database';
import { isUuid } from './postgres-project.store';

interface Row {
  id: string;
  project_id: string;
  user_id: string;
  created_at: Date | string;
  expires_at: Date | string;
  used_at: Date | string | null;
}

const toRecord = (r: Row): PasswordResetRecord => ({
  id: r.id,
  projectId: r.project_id,
  userId: r.user_id,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  usedAt: r.used_at ? new Date(r.used_at) : null,
});

const COLUMNS = 'id, project_id, user_id, created_at, expires_at, used_at';

export class PostgresEmailPasswordResetStore implements PasswordResetStore {
  constructor(private readonly db: Database) {}

  async insert(r: Omit<PasswordResetRecord, 'usedAt'>, tokenHash: string): Promise<void> {
    await this.db.query(
      'insert into email_password_resets (id, project_id, user_id, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?, ?)',
      [r.id, r.projectId, r.userId, tokenHash, r.createdAt, r.expiresAt],
    );
  }

  async exists(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (await this.db.query('select 1 from email_password_resets where id = ?', [id])).length > 0;
  }

  async findByHash(projectId: string, tokenHash: string): Promise<PasswordResetRecord | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query<Row>(`select ${COLUMNS} from email_password_resets where project_id = ? and token_hash = ?`, [projectId, tokenHash]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async consume(projectId: string, tokenHash: string, now: Date): Promise<PasswordResetRecord | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query<Row>(
      `update email_password_resets set used_at = ?
        where project_id = ? and token_hash = ? and used_at is null and expires_at > ?
        returning ${COLUMNS}`,
      [now, projectId, tokenHash, now],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async invalidateAllForUser(projectId: string, userId: string, at: Date): Promise<void> {
    await this.db.query('update email_password_resets set used_at = ? where project_id = ? and user_id = ? and used_at is null', [at, projectId, userId]);
  }
}
