import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020000OAuth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table user_identities (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        provider text not null,
        provider_user_id text not null,
        email text null,
        email_verified boolean not null default false,
        name text null,
        picture text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        constraint user_identities_provider_uq unique (project_id, provider, provider_user_id)
      );`);
    this.addSql(`create index user_identities_user_idx on user_identities(user_id);`);
    this.addSql(`create index users_project_email_lower_idx on users(project_id, lower(email));`);
    this.addSql(`
      create table oauth_states (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        provider text not null,
        state_hash text not null unique,
        callback_url text not null,
        client_state text null,
        locale text null,
        link_user_id uuid null,
        secrets_enc text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null
      );`);
    this.addSql(`create index oauth_states_expires_idx on oauth_states(expires_at);`);
    this.addSql(`
      create table authorization_codes (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        provider text not null,
        code_hash text not null unique,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        replayed_at timestamptz null
      );`);
    this.addSql(`create index authorization_codes_expires_idx on authorization_codes(expires_at);`);
    // The pair a rotation minted, encrypted, returned again within the reuse grace window.
    this.addSql(`alter table refresh_tokens add column successor_enc text null;`);
  }
}
