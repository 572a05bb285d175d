import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log and what the security notifications need:
 * - audit_log: one row per security-relevant action (docs/audit.md): time, project, actor (kind and
 *   id), action, target (kind and id), the end user concerned (`user_id`: the actor or the target),
 *   IP, user agent, request id, outcome and reason code, and a small JSON of non-secret details.
 *   `id` (an identity) orders entries of the same instant; `action` compares bytewise (collation
 *   "C"), so a dotted prefix is an index range. No foreign keys: entries outlive what
 *   they name, and writing them checks nothing. Indexed for the queries it answers: a project's
 *   entries by time, a user's, an action's (prefix), and the retention job's delete by time.
 * - known_devices: the devices (hashed fingerprint: user-agent family and network) each end user
 *   signed in from, for the new-device notice; written only for projects that turned it on.
 * - authorization_codes.ip / user_agent: the browser that came back from the OAuth provider, so that
 *   the sign-in completed by the code exchange is recorded from where it happened (`if not exists`:
 *   the Sessions migration adds the same columns for the sessions it records).
 * - projects.settings gains `securityNotifications` (every kind on except `new_device`).
 */
export class Migration20261127000000Audit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table audit_log (
        id bigint generated always as identity primary key,
        at timestamptz not null,
        project_id uuid not null,
        user_id uuid null,
        actor_kind text not null check (actor_kind in ('user', 'admin', 'system')),
        actor_id text null,
        action text collate "C" not null,
        target_kind text null,
        target_id text null,
        ip text null,
        user_agent text null,
        request_id text null,
        outcome text not null check (outcome in ('success', 'failure')),
        reason text null,
        details jsonb not null default '{}'::jsonb
      );`);
    this.addSql(`create index audit_log_project_time_idx on audit_log (project_id, at desc, id desc);`);
    this.addSql(`create index audit_log_project_user_time_idx on audit_log (project_id, user_id, at desc, id desc) where user_id is not null;`);
    this.addSql(`create index audit_log_project_action_time_idx on audit_log (project_id, action, at desc, id desc);`);
    this.addSql(`create index audit_log_time_idx on audit_log (at);`);

    this.addSql(`
      create table known_devices (
        project_id uuid not null,
        user_id uuid not null references users(id) on delete cascade,
        fingerprint text not null,
        first_seen_at timestamptz not null,
        last_seen_at timestamptz not null,
        primary key (project_id, user_id, fingerprint)
      );`);

    this.addSql(`alter table authorization_codes add column if not exists ip text null, add column if not exists user_agent text null;`);

    this.addSql(`
      update projects
         set settings = settings || jsonb_build_object('securityNotifications', jsonb_build_object(
           'password_changed', true, 'mfa_factor_added', true, 'mfa_factor_removed', true,
           'backup_codes_regenerated', true, 'totp_replayed', true, 'new_device', false))
       where not (settings ? 'securityNotifications');`);
  }
}
