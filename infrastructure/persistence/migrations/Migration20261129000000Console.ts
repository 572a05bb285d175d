import { Migration } from '@mikro-orm/migrations';

/**
 * The web console's accounts, separate from every project's end users:
 * - console_accounts: email (canonical form, and `email_key` lower-cased for lookups), argon2id
 *   password hash (null until the account sets one: accounts made by `tollgate admin create` sign in
 *   with a one-time link first), role (operator: the whole deployment; member: its projects).
 * - console_sessions: one per sign-in, behind an HttpOnly cookie whose random token is stored only
 *   as its SHA-256; last-seen (idle expiry) and absolute expiry; revoked on sign-out.
 * - console_sign_in_links: one-time sign-in links, stored hashed, short-lived, used once.
 * - console_memberships: which projects a member account belongs to.
 */
export class Migration20261129000000Console extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table console_accounts (
        id uuid primary key,
        email text not null,
        email_key text not null unique,
        password_hash text null,
        role text not null check (role in ('operator', 'member')),
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table console_sessions (
        id uuid primary key,
        account_id uuid not null references console_accounts(id) on delete cascade,
        token_hash text not null unique,
        created_at timestamptz not null,
        last_seen_at timestamptz not null,
        expires_at timestamptz not null,
        revoked_at timestamptz null
      );`);
    this.addSql(`create index console_sessions_account_idx on console_sessions(account_id);`);
    this.addSql(`
      create table console_sign_in_links (
        id uuid primary key,
        account_id uuid not null references console_accounts(id) on delete cascade,
        token_hash text not null unique,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null
      );`);
    this.addSql(`
      create table console_memberships (
        account_id uuid not null references console_accounts(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        created_at timestamptz not null,
        primary key (account_id, project_id)
      );`);
    this.addSql(`create index console_memberships_project_idx on console_memberships(project_id);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists console_memberships;');
    this.addSql('drop table if exists console_sign_in_links;');
    this.addSql('drop table if exists console_sessions;');
    this.addSql('drop table if exists console_accounts;');
  }
}
