import { Migration } from '@mikro-orm/migrations';

/** The audit actions that make a user active on a day, and the sign-in actions counted per method. */
const ACTIVE = `action in ('user.sign_in', 'token.refresh') and outcome = 'success' and user_id is not null`;
const SIGN_IN = `action in ('user.sign_in', 'user.sign_in.failed')`;

/**
 * What the console's project overview reads (docs/dashboard.md, "Overview"; the statements in
 * infrastructure/persistence/postgres-overview.ts), so that each chart answers in milliseconds on a
 * project with a million audit rows instead of reading the window's rows of audit_log:
 * - user_activity_days: each day a user signed in or refreshed a token (one row per user and UTC
 *   day) with the user's active day before it (`previous_day`, as known when the day was recorded);
 * - user_activity_counts: per project and day, how many users became active that day, by the first
 *   day of the 30-day coverage that day adds (`covered_from`: the day itself, or 30 days after the
 *   previous active day when that is later). Daily active users are the sum of a day's rows;
 *   monthly active users (active in the 30 days ending a day) are the running sum of +users from
 *   covered_from and -users 30 days after the day, so a chart reads at most 30 rows a day;
 * - sign_in_counts: sign-ins and refused sign-ins per project, UTC day and method (`details.provider`).
 * One statement-level trigger on audit_log keeps the three current: the audit log is written in
 * batches (one multi-row INSERT every 100 ms, outside requests), so it runs once per batch. The
 * existing log is counted once here. A user's rows stay after the user is deleted (as audit rows do).
 * - webhook_deliveries_project_time_idx: a project's deliveries by creation time with their status
 *   and completion (success rate and lag, an index-only read);
 * - the MFA factor tables by project (adoption).
 */
export class Migration20261221000000Overview extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table user_activity_days (
        project_id uuid not null,
        user_id uuid not null,
        day date not null,
        previous_day date null,
        primary key (project_id, user_id, day)
      );`);
    this.addSql(`
      create table user_activity_counts (
        project_id uuid not null,
        day date not null,
        covered_from date not null,
        users integer not null,
        primary key (project_id, day, covered_from)
      );`);
    this.addSql(`
      create table sign_in_counts (
        project_id uuid not null,
        day date not null,
        method text not null,
        succeeded integer not null,
        failed integer not null,
        primary key (project_id, day, method)
      );`);

    this.addSql(`
      create function tollgate_count_overview() returns trigger language plpgsql as $$
      begin
        with seen as (
          select distinct project_id, user_id, (at at time zone 'UTC')::date as day from new_rows where ${ACTIVE}
        ),
        fresh as (
          select s.project_id, s.user_id, s.day,
                 coalesce(lag(s.day) over (partition by s.project_id, s.user_id order by s.day),
                          (select max(a.day) from user_activity_days a where a.project_id = s.project_id and a.user_id = s.user_id and a.day < s.day))
                   as previous_day
            from seen s
        ),
        recorded as (
          insert into user_activity_days (project_id, user_id, day, previous_day)
          select project_id, user_id, day, previous_day from fresh
          on conflict do nothing
          returning project_id, day, previous_day
        )
        insert into user_activity_counts (project_id, day, covered_from, users)
        select project_id, day, greatest(day, previous_day + 30), count(*) from recorded group by 1, 2, 3
        on conflict (project_id, day, covered_from) do update set users = user_activity_counts.users + excluded.users;

        insert into sign_in_counts (project_id, day, method, succeeded, failed)
        select project_id, (at at time zone 'UTC')::date, coalesce(details->>'provider', 'unknown'),
               count(*) filter (where action = 'user.sign_in'), count(*) filter (where action = 'user.sign_in.failed')
          from new_rows where ${SIGN_IN}
         group by 1, 2, 3
        on conflict (project_id, day, method) do update
          set succeeded = sign_in_counts.succeeded + excluded.succeeded, failed = sign_in_counts.failed + excluded.failed;
        return null;
      end $$;`);
    this.addSql(`
      create trigger audit_log_overview_counts after insert on audit_log
        referencing new table as new_rows for each statement execute function tollgate_count_overview();`);

    // The log so far, counted once.
    this.addSql(`
      insert into user_activity_days (project_id, user_id, day, previous_day)
      select project_id, user_id, day, lag(day) over (partition by project_id, user_id order by day)
        from (select distinct project_id, user_id, (at at time zone 'UTC')::date as day from audit_log where ${ACTIVE}) d;`);
    this.addSql(`
      insert into user_activity_counts (project_id, day, covered_from, users)
      select project_id, day, greatest(day, previous_day + 30), count(*) from user_activity_days group by 1, 2, 3;`);
    this.addSql(`
      insert into sign_in_counts (project_id, day, method, succeeded, failed)
      select project_id, (at at time zone 'UTC')::date, coalesce(details->>'provider', 'unknown'),
             count(*) filter (where action = 'user.sign_in'), count(*) filter (where action = 'user.sign_in.failed')
        from audit_log where ${SIGN_IN} group by 1, 2, 3;`);

    this.addSql('create index webhook_deliveries_project_time_idx on webhook_deliveries (project_id, created_at) include (status, completed_at);');
    this.addSql('create index mfa_totp_factors_project_idx on mfa_totp_factors (project_id) include (user_id, confirmed_at) where confirmed_at is not null;');
    this.addSql('create index mfa_sms_factors_project_idx on mfa_sms_factors (project_id) include (user_id, enrolled_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger audit_log_overview_counts on audit_log;');
    this.addSql('drop function tollgate_count_overview();');
    this.addSql('drop table user_activity_days, user_activity_counts, sign_in_counts;');
    this.addSql('drop index webhook_deliveries_project_time_idx, mfa_totp_factors_project_idx, mfa_sms_factors_project_idx;');
  }
}
