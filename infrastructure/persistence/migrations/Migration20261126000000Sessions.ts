import { Migration } from '@mikro-orm/migrations';

/**
 * Sessions as the end user sees them. A session is what one sign-in started: every refresh token
 * rotated from it shares its id (`refresh_tokens.family_id`), and so does every access token it
 * minted (claim `sid`). The row remembers when it started, when it was last refreshed, and where
 * the end user was when it started (IP, user agent), so the user can list and end sessions.
 *
 * Ending a session sets `revoked_at`; a trigger announces it on the `tollgate_cache` channel as
 * `session:<id>`, so every process refuses the session's access tokens at once (token verify).
 * Authorization codes and MFA challenges carry the origin of the request that made them (the
 * browser's, at the OAuth callback or the primary sign-in) to the session they end in.
 */
export class Migration20261126000000Sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table sessions (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade,
        user_id uuid not null references users(id) on delete cascade,
        provider text not null,
        created_at timestamptz not null,
        last_used_at timestamptz not null,
        expires_at timestamptz not null,
        idle_expires_at timestamptz not null,
        ip text null,
        user_agent text null,
        revoked_at timestamptz null
      );`);
    this.addSql(`create index sessions_user_idx on sessions(project_id, user_id);`);
    this.addSql(`create index sessions_revoked_idx on sessions(revoked_at) where revoked_at is not null;`);
    // The sessions of the refresh tokens issued so far (where the user was is not known for them).
    this.addSql(`
      insert into sessions (id, project_id, user_id, provider, created_at, last_used_at, expires_at, idle_expires_at, revoked_at)
      select family_id, (array_agg(project_id))[1], (array_agg(user_id))[1], min(provider), min(created_at),
             max(coalesce(last_used_at, created_at)), max(expires_at), max(idle_expires_at),
             case when bool_and(revoked_at is not null) then max(revoked_at) end
        from refresh_tokens
       group by family_id;`);
    this.addSql(`
      alter table refresh_tokens add constraint refresh_tokens_session_fk
        foreign key (family_id) references sessions(id) on delete cascade;`);
    this.addSql(`
      create trigger sessions_cache_invalidation after update of revoked_at on sessions
        for each row when (old.revoked_at is null and new.revoked_at is not null)
        execute function tollgate_notify_cache('session');`);
    // `if not exists`: the Audit migration adds the same authorization-code columns, and a database
    // that ran it before this one (it was released first) already has them.
    this.addSql(`alter table authorization_codes add column if not exists ip text null, add column if not exists user_agent text null;`);
    this.addSql(`alter table mfa_challenges add column if not exists ip text null, add column if not exists user_agent text null;`);
  }
}
