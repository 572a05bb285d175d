import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010000Email extends Migration {
  override async up(): Promise<void> {
    // The address a user signs in with by password or magic link (lower-cased canonical form).
    // Unique per project; OAuth users leave it null, so their emails never clash with it.
    this.addSql(`alter table users add column login_email text null;`);
    this.addSql(`create unique index users_login_email_uq on users(project_id, login_email) where login_email is not null;`);
    this.addSql(`
      create table email_verification_codes (
        user_id uuid primary key references users(id) on delete cascade,
        project_id uuid not null references projects(id) on delete cascade,
        code_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        failed_attempts integer not null default 0,
        consumed_at timestamptz null
      );`);
    this.addSql(`
      create table email_password_resets (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        token_hash text not null unique,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null
      );`);
    this.addSql(`create index email_password_resets_user_idx on email_password_resets(project_id, user_id) where used_at is null;`);
    this.addSql(`
      create table email_magic_links (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        email text not null,
        email_key text not null,
        user_id uuid null references users(id) on delete cascade,
        token_hash text not null unique,
        callback_url text not null,
        locale text null,
        mail_locale text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null
      );`);
    this.addSql(`create index email_magic_links_expires_idx on email_magic_links(expires_at);`);
  }
}
