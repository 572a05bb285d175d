import type {
  ActiveUsersDay,
  ActivityDays,
  DayCount,
  MfaAdoption,
  OverviewReader,
  OverviewWindow,
  PlanDay,
  PlanName,
  RevenueDay,
  SignInsDay,
  WebhookDay,
} from '../../application/overview/overview.store';
import type { Database } from './database';

const DAY_MS = 86_400_000;
const dayStart = (day: string) => new Date(`${day}T00:00:00Z`);
const shiftDay = (day: string, days: number) => new Date(dayStart(day).getTime() + days * DAY_MS).toISOString().slice(0, 10);

/** Turns `:name` placeholders into the database's `?` and their values (a `::cast` is left alone). */
function named(sql: string, values: Record<string, unknown>): [string, unknown[]] {
  const params: unknown[] = [];
  const text = sql.replace(/(?<!:):([a-z][a-z0-9_]*)/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for :${name}`);
    params.push(values[name]);
    return '?';
  });
  return [text, params];
}

/** The window's bounds as the statements take them: its days and the instants around them (UTC). */
function bounds(w: OverviewWindow) {
  return {
    p: w.projectId,
    d0: w.firstDay,
    d1: w.lastDay,
    from: dayStart(w.firstDay),
    to: dayStart(shiftDay(w.lastDay, 1)),
  };
}

const DAYS = `select generate_series(:d0::date, :d1::date, interval '1 day')::date as d`;

/**
 * The overview's statements (application/overview/overview.store.ts). Each reads one project over
 * one window from what migration Migration20261221000000Overview added: activity and sign-ins from
 * the daily counts a trigger on audit_log keeps, deliveries by project and time, factors by
 * project. A running count (monthly active users, live subscriptions, MRR) is computed as a sum of
 * +1/-1 steps over the window's days, so its cost grows with the rows, not rows times days.
 */
export class PostgresOverview implements OverviewReader, ActivityDays {
  constructor(private readonly db: Database) {}

  async deleteBefore(day: string, limit: number): Promise<number> {
    const rows = await this.run<{ n: number }>(
      `with gone as (
         delete from user_activity_days
          where ctid in (select ctid from user_activity_days where day < :day::date limit :limit)
         returning 1
       )
       select count(*)::int as n from gone`,
      { day, limit },
    );
    return rows[0]?.n ?? 0;
  }

  private run<T>(sql: string, values: Record<string, unknown>): Promise<T[]> {
    const [text, params] = named(sql, values);
    return this.db.query<T>(text, params);
  }

  signUps(w: OverviewWindow): Promise<DayCount[]> {
    return this.run<DayCount>(
      `select to_char(d, 'YYYY-MM-DD') as day, n::int as count
         from (select (created_at at time zone 'UTC')::date as d, count(*) as n
                 from users where project_id = :p and created_at >= :from and created_at < :to group by 1) x
        order by d`,
      bounds(w),
    );
  }

  /**
   * A user is active on a day when a sign-in (user.sign_in) or a token refresh (token.refresh) of
   * theirs succeeded, as the audit log records them; user_activity_counts holds, per day, how many
   * users became active that day by the first day of the 30 days of coverage each adds. Daily: a
   * day's sum. Monthly (active in the 30 days ending that day): +users from covered_from, -users
   * 30 days after the day, summed over the days.
   */
  activeUsers(w: OverviewWindow): Promise<ActiveUsersDay[]> {
    return this.run<ActiveUsersDay>(
      `with counts as (
         select day, covered_from, users from user_activity_counts
          where project_id = :p and day >= :d0::date - 29 and day <= :d1::date
       ),
       steps as (
         select greatest(covered_from, :d0::date) as d, users as v from counts where day + 29 >= :d0::date and covered_from <= :d1::date
         union all
         select day + 30, -users from counts where day + 30 > :d0::date and day + 30 <= :d1::date
       ),
       days as (${DAYS}),
       monthly as (
         select days.d, sum(coalesce(x.v, 0)) over (order by days.d) as n
           from days left join (select d, sum(v) as v from steps group by d) x on x.d = days.d
       ),
       daily as (select day as d, sum(users) as n from counts where day >= :d0::date group by day)
       select to_char(monthly.d, 'YYYY-MM-DD') as day, coalesce(daily.n, 0)::int as daily, monthly.n::int as monthly
         from monthly left join daily on daily.d = monthly.d
        where monthly.n > 0 or daily.n > 0
        order by 1`,
      bounds(w),
    );
  }

  /** Sign-ins (user.sign_in) and refused sign-ins (user.sign_in.failed) per day and method (the entry's provider), as sign_in_counts keeps them. */
  signIns(w: OverviewWindow): Promise<SignInsDay[]> {
    return this.run<SignInsDay>(
      `select to_char(day, 'YYYY-MM-DD') as day, method, succeeded, failed
         from sign_in_counts
        where project_id = :p and day >= :d0::date and day <= :d1::date
        order by day, method`,
      bounds(w),
    );
  }

  /**
   * Users with a second factor: a confirmed authenticator app, an SMS factor or a passkey. Per day,
   * the users created by its end and those whose first factor (of those they still have) was added
   * by then: a removed factor leaves no trace, so the past is read from what exists now.
   */
  async mfaAdoption(w: OverviewWindow): Promise<MfaAdoption> {
    const rows = await this.run<{
      day: string;
      users: number;
      with_factor: number;
      totp: number;
      sms: number;
      passkey: number;
      users_by_then: number;
      factor_by_then: number;
    }>(
      `with firsts as (
         select user_id, min(at) as at
           from (select user_id, confirmed_at as at from mfa_totp_factors where project_id = :p and confirmed_at is not null
                 union all
                 select user_id, enrolled_at from mfa_sms_factors where project_id = :p
                 union all
                 select user_id, created_at from passkeys where project_id = :p) f
          group by user_id
       ),
       totals as (
         select (select count(*) from users where project_id = :p and created_at < :from) as users_before,
                (select count(*) from users where project_id = :p and created_at >= :to) as users_after,
                (select count(*) from firsts) as with_factor,
                (select count(*) from firsts where at < :from) as factor_before,
                (select count(*) from mfa_totp_factors where project_id = :p and confirmed_at is not null) as totp,
                (select count(*) from mfa_sms_factors where project_id = :p) as sms,
                (select count(distinct user_id) from passkeys where project_id = :p) as passkey
       ),
       enrolled as (select (at at time zone 'UTC')::date as d, count(*) as n from firsts where at >= :from and at < :to group by 1),
       days as (select generate_series(:d0::timestamp, :d1::timestamp, interval '1 day') as d),
       per_day as (
         select days.d::date as d, joined.n as joined, coalesce(enrolled.n, 0) as enrolled
           from days
           cross join lateral (
             select count(*) as n from users
              where project_id = :p and created_at >= (days.d at time zone 'UTC') and created_at < ((days.d + interval '1 day') at time zone 'UTC')
           ) joined
           left join enrolled on enrolled.d = days.d::date
       )
       select to_char(per_day.d, 'YYYY-MM-DD') as day,
              (t.users_before + sum(joined) over () + t.users_after)::int as users, t.with_factor::int as with_factor,
              t.totp::int as totp, t.sms::int as sms, t.passkey::int as passkey,
              (t.users_before + sum(joined) over w)::int as users_by_then,
              (t.factor_before + sum(enrolled) over w)::int as factor_by_then
         from per_day cross join totals t
       window w as (order by per_day.d)
       order by 1`,
      bounds(w),
    );
    const first = rows[0];
    return {
      users: first?.users ?? 0,
      withFactor: first?.with_factor ?? 0,
      byMethod: { totp: first?.totp ?? 0, sms: first?.sms ?? 0, passkey: first?.passkey ?? 0 },
      daily: rows.filter((r) => r.users_by_then > 0).map((r) => ({ day: r.day, users: r.users_by_then, withFactor: r.factor_by_then })),
    };
  }

  /**
   * Subscriptions live at the end of each day, by plan: from the day they were created (trials
   * included) until they ended (canceled) or were paused; incomplete ones never count.
   */
  async subscriptionsByPlan(w: OverviewWindow): Promise<{ plans: PlanName[]; daily: PlanDay[] }> {
    const rows = await this.run<{ day: string; plan_id: string; plan_name: string; position: number; active: number }>(
      `with live as (
         select plan_id, created_at, coalesce(ended_at, case when status = 'paused' then paused_at end) as end_at
           from billing_subscriptions
          where project_id = :p and status not in ('incomplete', 'incomplete_expired') and created_at < :to
       ),
       seen as (select * from live where end_at is null or end_at >= :from),
       steps as (
         select plan_id, greatest((created_at at time zone 'UTC')::date, :d0::date) as d, 1 as v from seen
         union all
         select plan_id, (end_at at time zone 'UTC')::date, -1 from seen where end_at is not null and end_at < :to
       ),
       per as (select plan_id, d, sum(v) as v from steps group by 1, 2),
       days as (${DAYS}),
       running as (
         select plans.plan_id, days.d, sum(coalesce(per.v, 0)) over (partition by plans.plan_id order by days.d) as n
           from (select distinct plan_id from seen) plans cross join days
           left join per on per.plan_id = plans.plan_id and per.d = days.d
       )
       select to_char(running.d, 'YYYY-MM-DD') as day, running.plan_id::text as plan_id, bp.name as plan_name, bp.position, running.n::int as active
         from running join billing_plans bp on bp.id = running.plan_id
        order by bp.position, bp.name, 1`,
      bounds(w),
    );
    const plans = new Map<string, PlanName>();
    for (const r of rows) plans.set(r.plan_id, { id: r.plan_id, name: r.plan_name });
    return {
      plans: [...plans.values()],
      daily: rows.filter((r) => r.active > 0).map((r) => ({ day: r.day, planId: r.plan_id, active: r.active })),
    };
  }

  /**
   * Monthly recurring revenue at the end of each day, per currency, from the day before the window:
   * the amount of every subscription past its trial and not ended or paused, a yearly one's divided
   * by 12 (rounded once per day and currency). A subscription's amount is already its price for
   * its quantity of seats (seatAmount), so per-seat plans count every seat.
   */
  async revenue(w: OverviewWindow): Promise<RevenueDay[]> {
    const r0 = shiftDay(w.firstDay, -1);
    const rows = await this.run<{ day: string; currency: string; mrr: string }>(
      `with subs as (
         select currency, interval, amount, greatest(created_at, coalesce(trial_end, created_at)) as start_at,
                coalesce(ended_at, case when status = 'paused' then paused_at end) as end_at
           from billing_subscriptions
          where project_id = :p and status not in ('incomplete', 'incomplete_expired') and created_at < :to
       ),
       seen as (select * from subs where start_at < :to and (end_at is null or (end_at >= :rfrom and end_at > start_at))),
       steps as (
         select currency, greatest((start_at at time zone 'UTC')::date, :r0::date) as d,
                case when interval = 'year' then 0 else amount end as m, case when interval = 'year' then amount else 0 end as y
           from seen
         union all
         select currency, (end_at at time zone 'UTC')::date,
                case when interval = 'year' then 0 else -amount end, case when interval = 'year' then -amount else 0 end
           from seen where end_at is not null and end_at < :to
       ),
       per as (select currency, d, sum(m) as m, sum(y) as y from steps group by 1, 2),
       days as (select generate_series(:r0::date, :d1::date, interval '1 day')::date as d),
       running as (
         select c.currency, days.d, sum(coalesce(per.m, 0)) over w as m, sum(coalesce(per.y, 0)) over w as y
           from (select distinct currency from seen) c cross join days
           left join per on per.currency = c.currency and per.d = days.d
         window w as (partition by c.currency order by days.d)
       )
       select to_char(d, 'YYYY-MM-DD') as day, currency, (m + round(y / 12.0))::bigint::text as mrr from running order by 1, 2`,
      { ...bounds(w), r0, rfrom: dayStart(r0) },
    );
    return rows.map((r) => ({ day: r.day, currency: r.currency, mrr: Number(r.mrr) }));
  }

  /** Subscriptions that ended (canceled, at once or at their period's end) per day. */
  churn(w: OverviewWindow): Promise<DayCount[]> {
    return this.run<DayCount>(
      `select to_char((ended_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as count
         from billing_subscriptions
        where project_id = :p and status = 'canceled' and ended_at >= :from and ended_at < :to
        group by (ended_at at time zone 'UTC')::date order by 1`,
      bounds(w),
    );
  }

  /**
   * Deliveries by the day they were created: how many succeeded, failed for good or are still
   * pending, and the lag of those delivered. One index range per day, so each day's lags are sorted
   * apart (a few hundred values) rather than the whole window at once.
   */
  async webhooks(w: OverviewWindow): Promise<WebhookDay[]> {
    const rows = await this.run<{ day: string; succeeded: number; failed: number; pending: number; p50: number | null; p95: number | null }>(
      `select to_char(days.d, 'YYYY-MM-DD') as day, x.succeeded, x.failed, x.pending, x.p50, x.p95
         from generate_series(:d0::timestamp, :d1::timestamp, interval '1 day') as days(d)
         cross join lateral (
           select count(*) filter (where status = 'succeeded')::int as succeeded,
                  count(*) filter (where status = 'failed')::int as failed,
                  count(*) filter (where status = 'pending')::int as pending,
                  round(percentile_cont(0.5) within group (order by extract(epoch from completed_at - created_at) * 1000)
                    filter (where status = 'succeeded' and completed_at is not null))::int as p50,
                  round(percentile_cont(0.95) within group (order by extract(epoch from completed_at - created_at) * 1000)
                    filter (where status = 'succeeded' and completed_at is not null))::int as p95
             from webhook_deliveries
            where project_id = :p and created_at >= (days.d at time zone 'UTC') and created_at < ((days.d + interval '1 day') at time zone 'UTC')
         ) x
        where x.succeeded + x.failed + x.pending > 0
        order by 1`,
      bounds(w),
    );
    return rows.map((r) => ({ day: r.day, succeeded: r.succeeded, failed: r.failed, pending: r.pending, lagP50Ms: r.p50, lagP95Ms: r.p95 }));
  }
}
