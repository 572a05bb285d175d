import { Migration } from '@mikro-orm/migrations';

/**
 * Two-step sign-in for console accounts: an authenticator app (TOTP). Its secret is stored
 * encrypted (the deployment's secret box); `totp_confirmed_at` is set once a first code proved the
 * app has it, and `totp_last_step` is the last time step accepted, so no code works twice.
 * `totp_enabled` is derived, for the account's views.
 */
export class Migration20261203000000ConsoleTotp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table console_accounts
        add column totp_secret_encrypted text null,
        add column totp_confirmed_at timestamptz null,
        add column totp_last_step bigint null,
        add column totp_enabled boolean generated always as (totp_confirmed_at is not null) stored;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      alter table console_accounts
        drop column if exists totp_enabled,
        drop column if exists totp_last_step,
        drop column if exists totp_confirmed_at,
        drop column if exists totp_secret_encrypted;`);
  }
}
