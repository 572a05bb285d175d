import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000Foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table projects (
        id uuid primary key,
        name text not null,
        active boolean not null default true,
        signing_secret_enc text not null,
        settings jsonb not null,
        provider_credentials jsonb not null default '{}'::jsonb,
        billing jsonb null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table api_keys (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        prefix text not null,
        key_hash text not null unique,
        label text null,
        created_at timestamptz not null,
        last_used_at timestamptz null,
        revoked_at timestamptz null
      );`);
    this.addSql(`create index api_keys_project_idx on api_keys(project_id);`);
    this.addSql(`
      create table users (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        email text null,
        name text null,
        picture text null,
        provider text not null,
        email_verified boolean not null default false,
        locale text null,
        password_hash text null,
        phone text null,
        phone_verified boolean not null default false,
        disabled boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index users_project_email_idx on users(project_id, email);`);
    this.addSql(`
      create table refresh_tokens (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        family_id uuid not null,
        parent_id uuid null,
        token_hash text not null unique,
        provider text not null,
        auth_code_id uuid null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        idle_expires_at timestamptz not null,
        last_used_at timestamptz null,
        rotated_at timestamptz null,
        revoked_at timestamptz null,
        replaced_by uuid null
      );`);
    this.addSql(`create index refresh_tokens_family_idx on refresh_tokens(family_id);`);
    this.addSql(`create index refresh_tokens_user_idx on refresh_tokens(project_id, user_id);`);
    this.addSql(`create index refresh_tokens_auth_code_idx on refresh_tokens(auth_code_id) where auth_code_id is not null;`);
    this.addSql(`
      create table outbox_messages (
        id uuid primary key,
        topic text not null,
        payload_enc text null,
        created_at timestamptz not null default now(),
        dispatched_at timestamptz null,
        delivered_at timestamptz null,
        attempts integer not null default 0,
        last_error text null
      );`);
    this.addSql(`create index outbox_pending_idx on outbox_messages(created_at) where delivered_at is null;`);
    this.addSql(`
      create table rate_limits (
        key text primary key,
        points integer not null,
        expires_at timestamptz not null
      );`);
    this.addSql(`create index rate_limits_expires_idx on rate_limits(expires_at);`);
  }
}
