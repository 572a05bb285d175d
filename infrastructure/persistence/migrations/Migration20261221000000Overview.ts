import { Migration } from '@mikro-orm/migrations';

/**
 * The indexes of the console's project overview (docs/dashboard.md, "Overview"; the queries in
 * infrastructure/persistence/postgres-overview.ts), each answering one chart from the index alone
 * (an index-only scan), so that a project with a million audit rows is read in well under 100 ms:
 * - audit_log_activity_idx: the successful sign-ins and token refreshes (a user is active on a day
 *   when either happened), by project and time, with the user;
 * - audit_log_sign_in_idx: sign-ins and refused sign-ins by project and time, with the action and
 *   the details (the method is `details.provider`);
 * - webhook_deliveries_project_time_idx: a project's deliveries by creation time, with their
 *   status and completion (success rate and lag);
 * - mfa_totp_factors / mfa_sms_factors by project (MFA adoption).
 * They are partial where they can be, so the hot paths that write audit rows pay little for them.
 */
export class Migration20261221000000Overview extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index audit_log_activity_idx on audit_log (project_id, at) include (user_id)
       where action in ('user.sign_in', 'token.refresh') and outcome = 'success' and user_id is not null;`);
    this.addSql(`
      create index audit_log_sign_in_idx on audit_log (project_id, at) include (action, details)
       where action in ('user.sign_in', 'user.sign_in.failed');`);
    this.addSql('create index webhook_deliveries_project_time_idx on webhook_deliveries (project_id, created_at) include (status, completed_at);');
    this.addSql('create index mfa_totp_factors_project_idx on mfa_totp_factors (project_id) include (user_id, confirmed_at) where confirmed_at is not null;');
    this.addSql('create index mfa_sms_factors_project_idx on mfa_sms_factors (project_id) include (user_id, enrolled_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index audit_log_activity_idx;');
    this.addSql('drop index audit_log_sign_in_idx;');
    this.addSql('drop index webhook_deliveries_project_time_idx;');
    this.addSql('drop index mfa_totp_factors_project_idx;');
    this.addSql('drop index mfa_sms_factors_project_idx;');
  }
}
