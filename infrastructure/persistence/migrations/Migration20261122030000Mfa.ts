import { Migration } from '@mikro-orm/migrations';

/**
 * Multi-factor authentication: sign-in challenges, TOTP factors, backup codes, SMS factors and SMS
 * codes. Challenges and codes are stored as SHA-256 hashes only; TOTP seeds are encrypted.
 */
export class Migration20261122030000Mfa extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table mfa_challenges (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        token_hash text not null unique,
        enrollment boolean not null,
        provider text not null,
        ttl_seconds integer null,
        auth_code_id text null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        consumed_at timestamptz null
      );`);
    this.addSql(`create index mfa_challenges_user_idx on mfa_challenges(project_id, user_id);`);
    this.addSql(`create index mfa_challenges_expires_idx on mfa_challenges(expires_at);`);
    this.addSql(`
      create table mfa_totp_factors (
        user_id uuid primary key references users(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        secret_enc text not null,
        created_at timestamptz not null,
        confirmed_at timestamptz null,
        last_used_step bigint null
      );`);
    this.addSql(`
      create table mfa_backup_codes (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        code_hash text not null,
        created_at timestamptz not null,
        used_at timestamptz null,
        invalidated_at timestamptz null
      );`);
    this.addSql(`create index mfa_backup_codes_user_idx on mfa_backup_codes(user_id, code_hash) where used_at is null and invalidated_at is null;`);
    this.addSql(`
      create table mfa_sms_factors (
        user_id uuid primary key references users(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        enrolled_at timestamptz not null
      );`);
    this.addSql(`
      create table mfa_sms_codes (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        purpose text not null check (purpose in ('sign_in', 'phone', 'disable')),
        challenge_id uuid null references mfa_challenges(id) on delete cascade,
        phone text not null,
        code_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        failed_attempts integer not null default 0,
        consumed_at timestamptz null
      );`);
    this.addSql(`create index mfa_sms_codes_user_idx on mfa_sms_codes(user_id, purpose, created_at);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists mfa_sms_codes, mfa_sms_factors, mfa_backup_codes, mfa_totp_factors, mfa_challenges;');
  }
}
