import { Migration } from '@mikro-orm/migrations';

/**
 * Invitations to a project's console (docs/dashboard.md, "Members and Accounts"):
 * - console_invitations: the invited address (canonical, and `email_key` lower-cased), the project,
 *   the account that invited (null once it is gone), the one-time token stored only as its SHA-256,
 *   7 days of validity, and when it was accepted or revoked. At most one pending invitation per
 *   project and address: inviting again revokes the pending one first.
 */
export class Migration20261130000000ConsoleInvitations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table console_invitations (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        email text not null,
        email_key text not null,
        invited_by uuid null references console_accounts(id) on delete set null,
        token_hash text not null unique,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        accepted_at timestamptz null,
        revoked_at timestamptz null
      );`);
    this.addSql(`
      create unique index console_invitations_pending_idx on console_invitations(project_id, email_key)
        where accepted_at is null and revoked_at is null;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists console_invitations;');
  }
}
