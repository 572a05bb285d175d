import type { VerificationCodeRecord, VerificationCodeStore } from '../../application/email/verification-code.store';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toRecord = rowMapper<VerificationCodeRecord>({
  projectId: read.text,
  userId: read.text,
  codeHash: read.text,
  createdAt: read.date,
  expiresAt: read.date,
  failedAttempts: read.number,
  consumedAt: read.dateOrNull,
});

/** One row per user; a new code overwrites the previous one. */
export class PostgresEmailVerificationCodeStore implements VerificationCodeStore {
  constructor(private readonly db: Database) {}

  async replace(r: Omit<VerificationCodeRecord, 'failedAttempts' | 'consumedAt'>): Promise<void> {
    await this.db.query(
      `insert into email_verification_codes (user_id, project_id, code_hash, created_at, expires_at, failed_attempts, consumed_at)
       values (?, ?, ?, ?, ?, 0, null)
       on conflict (user_id) do update set project_id = excluded.project_id, code_hash = excluded.code_hash,
         created_at = excluded.created_at, expires_at = excluded.expires_at, failed_attempts = 0, consumed_at = null`,
      [r.userId, r.projectId, r.codeHash, r.createdAt, r.expiresAt],
    );
  }

  async find(projectId: string, userId: string): Promise<VerificationCodeRecord | null> {
    const rows = await this.db.query(`select ${toRecord.columns} from email_verification_codes where project_id = ? and user_id = ?`, [projectId, userId]);
    return toRecord.first(rows);
  }

  async consume(projectId: string, userId: string, codeHash: string, now: Date, maxFailures: number): Promise<boolean> {
    const rows = await this.db.query(
      `update email_verification_codes set consumed_at = ?
        where project_id = ? and user_id = ? and code_hash = ? and consumed_at is null and failed_attempts < ? and expires_at > ?
        returning user_id`,
      [now, projectId, userId, codeHash, maxFailures, now],
    );
    return rows.length === 1;
  }

  async recordFailure(projectId: string, userId: string, codeHash: string, maxFailures: number): Promise<number | null> {
    const rows = await this.db.query<{ failed_attempts: number }>(
      `update email_verification_codes set failed_attempts = failed_attempts + 1
        where project_id = ? and user_id = ? and code_hash = ? and consumed_at is null and failed_attempts < ?
        returning failed_attempts`,
      [projectId, userId, codeHash, maxFailures],
    );
    return rows[0] ? Number(rows[0].failed_attempts) : null;
  }
}
