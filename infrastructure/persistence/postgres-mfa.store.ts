import type {
  BackupCodeStore,
  MfaChallengeRecord,
  MfaChallengeStore,
  SmsCodePurpose,
  SmsCodeRecord,
  SmsStore,
  TotpFactor,
  TotpStore,
} from '../../application/mfa/mfa.store';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toChallenge = rowMapper<MfaChallengeRecord>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  enrollment: read.bool,
  provider: read.text,
  ttlSeconds: read.numberOrNull,
  authCodeId: read.textOrNull,
  ip: read.textOrNull,
  userAgent: read.textOrNull,
  createdAt: read.date,
  expiresAt: read.date,
});

const toTotpFactor = rowMapper<TotpFactor>({
  secretEncrypted: ['secret_enc', read.text],
  confirmedAt: read.dateOrNull,
  lastUsedStep: read.numberOrNull,
});

const toSmsCode = rowMapper<SmsCodeRecord & { codeHash: string }>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  purpose: read.as<SmsCodePurpose>(),
  challengeId: read.textOrNull,
  phone: read.text,
  codeHash: read.text,
  createdAt: read.date,
  expiresAt: read.date,
  failedAttempts: read.number,
});

/** MFA challenges in PostgreSQL; consumption is one conditional update. */
export class PostgresMfaChallengeStore implements MfaChallengeStore {
  constructor(private readonly db: Database) {}

  async insert(r: MfaChallengeRecord, tokenHash: string): Promise<void> {
    await this.db.query(
      `insert into mfa_challenges (id, project_id, user_id, token_hash, enrollment, provider, ttl_seconds, auth_code_id, ip, user_agent, created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.userId, tokenHash, r.enrollment, r.provider, r.ttlSeconds, r.authCodeId, r.ip, r.userAgent, r.createdAt, r.expiresAt],
    );
  }

  async findLive(tokenHash: string, now: Date): Promise<MfaChallengeRecord | null> {
    const rows = await this.db.query(`select ${toChallenge.columns} from mfa_challenges where token_hash = ? and consumed_at is null and expires_at > ?`, [
      tokenHash,
      now,
    ]);
    return toChallenge.first(rows);
  }

  async findLiveById(id: string, now: Date): Promise<MfaChallengeRecord | null> {
    if (!isUuid(id)) return null;
    const rows = await this.db.query(`select ${toChallenge.columns} from mfa_challenges where id = ? and consumed_at is null and expires_at > ?`, [id, now]);
    return toChallenge.first(rows);
  }

  async consume(id: string, now: Date): Promise<boolean> {
    const rows = await this.db.query('update mfa_challenges set consumed_at = ? where id = ? and consumed_at is null and expires_at > ? returning id', [
      now,
      id,
      now,
    ]);
    return rows.length === 1;
  }
}

/** TOTP factors; the seed column holds SecretBox ciphertext only. */
export class PostgresTotpStore implements TotpStore {
  constructor(private readonly db: Database) {}

  async find(projectId: string, userId: string): Promise<TotpFactor | null> {
    if (!isUuid(userId)) return null;
    const rows = await this.db.query(`select ${toTotpFactor.columns} from mfa_totp_factors where user_id = ? and project_id = ?`, [userId, projectId]);
    return toTotpFactor.first(rows);
  }

  async savePending(projectId: string, userId: string, secretEncrypted: string, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at) values (?, ?, ?, ?)
       on conflict (user_id) do update set secret_enc = excluded.secret_enc, created_at = excluded.created_at, last_used_step = null
         where mfa_totp_factors.confirmed_at is null
       returning user_id`,
      [userId, projectId, secretEncrypted, now],
    );
    return rows.length === 1;
  }

  async confirm(projectId: string, userId: string, step: number, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update mfa_totp_factors set confirmed_at = ?, last_used_step = ?
        where user_id = ? and project_id = ? and confirmed_at is null returning user_id`,
      [now, step, userId, projectId],
    );
    return rows.length === 1;
  }

  async useStep(projectId: string, userId: string, step: number): Promise<boolean> {
    const rows = await this.db.query(
      `update mfa_totp_factors set last_used_step = ?
        where user_id = ? and project_id = ? and confirmed_at is not null
          and (last_used_step is null or last_used_step < ?) returning user_id`,
      [step, userId, projectId, step],
    );
    return rows.length === 1;
  }

  async remove(projectId: string, userId: string): Promise<void> {
    await this.db.query('delete from mfa_totp_factors where user_id = ? and project_id = ?', [userId, projectId]);
  }
}

/** Backup codes, hashed; a code is spent by one conditional update. */
export class PostgresBackupCodeStore implements BackupCodeStore {
  constructor(private readonly db: Database) {}

  async replace(projectId: string, userId: string, codes: { id: string; hash: string }[], now: Date): Promise<void> {
    await this.invalidateAll(projectId, userId, now);
    for (const c of codes) {
      await this.db.query('insert into mfa_backup_codes (id, project_id, user_id, code_hash, created_at) values (?, ?, ?, ?, ?)', [
        c.id,
        projectId,
        userId,
        c.hash,
        now,
      ]);
    }
  }

  async consume(projectId: string, userId: string, codeHash: string, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update mfa_backup_codes set used_at = ?
        where id = (select id from mfa_backup_codes
                     where user_id = ? and project_id = ? and code_hash = ? and used_at is null and invalidated_at is null
                     limit 1)
          and used_at is null and invalidated_at is null
        returning id`,
      [now, userId, projectId, codeHash],
    );
    return rows.length === 1;
  }

  async countUsable(projectId: string, userId: string): Promise<number> {
    const rows = await this.db.query<{ n: string | number }>(
      'select count(*) as n from mfa_backup_codes where user_id = ? and project_id = ? and used_at is null and invalidated_at is null',
      [userId, projectId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async invalidateAll(projectId: string, userId: string, now: Date): Promise<void> {
    await this.db.query('update mfa_backup_codes set invalidated_at = ? where user_id = ? and project_id = ? and used_at is null and invalidated_at is null', [
      now,
      userId,
      projectId,
    ]);
  }
}

/** Phone numbers (on the users table), SMS enrollment and texted codes (hashed). */
export class PostgresSmsStore implements SmsStore {
  constructor(private readonly db: Database) {}

  async phoneOf(projectId: string, userId: string): Promise<{ phone: string | null; verified: boolean }> {
    if (!isUuid(userId)) return { phone: null, verified: false };
    const rows = await this.db.query<{ phone: string | null; phone_verified: boolean }>(
      'select phone, phone_verified from users where id = ? and project_id = ?',
      [userId, projectId],
    );
    return { phone: rows[0]?.phone ?? null, verified: rows[0]?.phone_verified ?? false };
  }

  async setVerifiedPhone(projectId: string, userId: string, phone: string, now: Date): Promise<void> {
    await this.db.query('update users set phone = ?, phone_verified = true, updated_at = ? where id = ? and project_id = ?', [phone, now, userId, projectId]);
  }

  async isEnrolled(projectId: string, userId: string): Promise<boolean> {
    if (!isUuid(userId)) return false;
    const rows = await this.db.query('select 1 from mfa_sms_factors where user_id = ? and project_id = ?', [userId, projectId]);
    return rows.length > 0;
  }

  async enroll(projectId: string, userId: string, now: Date): Promise<void> {
    await this.db.query('insert into mfa_sms_factors (user_id, project_id, enrolled_at) values (?, ?, ?) on conflict (user_id) do nothing', [
      userId,
      projectId,
      now,
    ]);
  }

  async unenroll(projectId: string, userId: string): Promise<void> {
    await this.db.query('delete from mfa_sms_factors where user_id = ? and project_id = ?', [userId, projectId]);
  }

  async insertCode(r: SmsCodeRecord, codeHash: string, now: Date): Promise<void> {
    await this.db.query(
      `update mfa_sms_codes set consumed_at = ?
        where user_id = ? and project_id = ? and purpose = ? and challenge_id is not distinct from ? and consumed_at is null`,
      [now, r.userId, r.projectId, r.purpose, r.challengeId],
    );
    await this.db.query(
      `insert into mfa_sms_codes (id, project_id, user_id, purpose, challenge_id, phone, code_hash, created_at, expires_at, failed_attempts)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.userId, r.purpose, r.challengeId, r.phone, codeHash, r.createdAt, r.expiresAt, r.failedAttempts],
    );
  }

  async findLatestCode(projectId: string, userId: string, purpose: SmsCodePurpose, challengeId: string | null) {
    const rows = await this.db.query(
      `select ${toSmsCode.columns}
         from mfa_sms_codes
        where user_id = ? and project_id = ? and purpose = ? and challenge_id is not distinct from ? and consumed_at is null
        order by created_at desc limit 1`,
      [userId, projectId, purpose, challengeId],
    );
    return toSmsCode.first(rows);
  }

  async consumeCode(id: string, now: Date, maxFailedAttempts: number): Promise<boolean> {
    const rows = await this.db.query(
      `update mfa_sms_codes set consumed_at = ?
        where id = ? and consumed_at is null and expires_at > ? and failed_attempts < ? returning id`,
      [now, id, now, maxFailedAttempts],
    );
    return rows.length === 1;
  }

  async recordFailure(id: string): Promise<number> {
    const rows = await this.db.query<{ failed_attempts: number }>(
      'update mfa_sms_codes set failed_attempts = failed_attempts + 1 where id = ? returning failed_attempts',
      [id],
    );
    return rows[0]?.failed_attempts ?? 0;
  }
}
