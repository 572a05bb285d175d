import type {
  ActiveUsersDay,
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

const DAY = (column: string) => `to_char((${column} at time zone 'UTC')::date, 'YYYY-MM-DD')`;
const DAYS = `select generate_series(:d0::date, :d1::date, interval '1 day')::date as d`;

/**
 * The overview's statements (application/overview/overview.store.ts). Each reads one project over
 * one window and is answered from an index of its own (migration Migration20261221000000Overview):
 * activity and sign-ins from partial indexes of audit_log, deliveries by project and time, factors
 * by project. A running count (monthly active users, live subscriptions, MRR) is computed as a sum
 * of +1/-1 steps over the window's days, so its cost grows with the rows, not rows times days.
 */
export class PostgresOverview implements OverviewReader {
  constructor(private readonly db: Database) {}

  private run<T>(sql: string, values: Record<string, unknown>): Promise<T[]> {
    const [text, params] = named(sql, values);
    return this.db.query<T>(text, params);
  }

  signUps(w: OverviewWindow): Promise<DayCount[]> {
    return this.run<DayCount>(
      `select ${DAY('created_at')} as day, count(*)::int as count
         from users
        where project_id = :p and created_at >= :from and created_at < :to
        group by 1 order by 1`,
      bounds(w),
    );
  }

  /**
   * A user is active on a day when a sign-in (user.sign_in) or a token refresh (token.refresh)
   * of theirs succeeded: the audit log records both. Monthly: active in the 30 days ending that
   * day; each user's active days are merged into spans that cover 30 days after each of them.
   */
  activeUsers(w: OverviewWindow): Promise<ActiveUsersDay[]> {
    return this.run<ActiveUsersDay>(
      `with ud as (
         select distinct user_id, (at at time zone 'UTC')::date as d
           from audit_log
          where project_id = :p and action in ('user.sign_in', 'token.refresh') and outcome = 'success' and user_id is not null
            and at >= :mfrom and at < :to
       ),
       marked as (select user_id, d, case when d - lag(d) over (partition by user_id order by d) <= 30 then 0 else 1 end as brk from ud),
       islands as (select user_id, d, sum(brk) over (partition by user_id order by d) as g from marked),
       spans as (select min(d) as s, max(d) + 29 as e from islands group by user_id, g),
       steps as (
         select greatest(s, :d0::date) as d, 1 as v from spans where e >= :d0::date
         union all
         select e + 1, -1 from spans where e >= :d0::date and e + 1 <= :d1::date
       ),
       days as (${DAYS}),
       monthly as (
         select days.d, sum(coalesce(x.v, 0)) over (order by days.d) as n
           from days left join (select d, sum(v) as v from steps group by d) x on x.d = days.d
       ),
       daily as (select d, count(*) as n from ud where d >= :d0::date group by d)
       select to_char(monthly.d, 'YYYY-MM-DD') as day, coalesce(daily.n, 0)::int as daily, monthly.n::int as monthly
         from monthly left join daily on daily.d = monthly.d
        where monthly.n > 0 or daily.n > 0
        order by 1`,
      { ...bounds(w), mfrom: dayStart(shiftDay(w.firstDay, -29)) },
    );
  }

  /** Sign-ins (user.sign_in) and refused sign-ins (user.sign_in.failed) per day and method (the entry's provider). */
  signIns(w: OverviewWindow): Promise<SignInsDay[]> {
    return this.run<SignInsDay>(
      `select ${DAY('at')} as day, coalesce(details->>'provider', 'unknown') as method,
              count(*) filter (where action = 'user.sign_in')::int as succeeded,
              count(*) filter (where action = 'user.sign_in.failed')::int as failed
         from audit_log
        where project_id = :p and action in ('user.sign_in', 'user.sign_in.failed') and at >= :from and at < :to
        group by 1, 2 order by 1, 2`,
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
      `with factors as (
         select user_id, confirmed_at as at, 'totp' as m from mfa_totp_factors where project_id = :p and confirmed_at is not null
         union all
         select user_id, enrolled_at, 'sms' from mfa_sms_factors where project_id = :p
         union all
         select user_id, min(created_at), 'passkey' from passkeys where project_id = :p group by user_id
       ),
       firsts as (select user_id, min(at) as at from factors group by user_id),
       totals as (
         select (select count(*) from users where project_id = :p)::int as users,
                (select count(*) from firsts)::int as with_factor,
                (select count(*) from factors where m = 'totp')::int as totp,
                (select count(*) from factors where m = 'sms')::int as sms,
                (select count(*) from factors where m = 'passkey')::int as passkey,
                (select count(*) from users where project_id = :p and created_at < :from) as users_before,
                (select count(*) from firsts where at < :from) as factor_before
       ),
       joined as (select (created_at at time zone 'UTC')::date as d, count(*) as n from users where project_id = :p and created_at >= :from and created_at < :to group by 1),
       enrolled as (select (at at time zone 'UTC')::date as d, count(*) as n from firsts where at >= :from and at < :to group by 1),
       days as (${DAYS})
       select to_char(days.d, 'YYYY-MM-DD') as day, t.users, t.with_factor, t.totp, t.sms, t.passkey,
              (t.users_before + sum(coalesce(joined.n, 0)) over w)::int as users_by_then,
              (t.factor_before + sum(coalesce(enrolled.n, 0)) over w)::int as factor_by_then
         from days cross join totals t
         left join joined on joined.d = days.d
         left join enrolled on enrolled.d = days.d
       window w as (order by days.d)
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
      `select ${DAY('ended_at')} as day, count(*)::int as count
         from billing_subscriptions
        where project_id = :p and status = 'canceled' and ended_at >= :from and ended_at < :to
        group by 1 order by 1`,
      bounds(w),
    );
  }

  /** Deliveries by the day they were created: how many succeeded, failed for good or are still pending, and the lag of those delivered. */
  async webhooks(w: OverviewWindow): Promise<WebhookDay[]> {
    const rows = await this.run<{ day: string; succeeded: number; failed: number; pending: number; p50: number | null; p95: number | null }>(
      `select ${DAY('created_at')} as day,
              count(*) filter (where status = 'succeeded')::int as succeeded,
              count(*) filter (where status = 'failed')::int as failed,
              count(*) filter (where status = 'pending')::int as pending,
              round(percentile_cont(0.5) within group (order by extract(epoch from completed_at - created_at) * 1000)
                filter (where status = 'succeeded' and completed_at is not null))::int as p50,
              round(percentile_cont(0.95) within group (order by extract(epoch from completed_at - created_at) * 1000)
                filter (where status = 'succeeded' and completed_at is not null))::int as p95
         from webhook_deliveries
        where project_id = :p and created_at >= :from and created_at < :to
        group by 1 order by 1`,
      bounds(w),
    );
    return rows.map((r) => ({ day: r.day, succeeded: r.succeeded, failed: r.failed, pending: r.pending, lagP50Ms: r.p50, lagP95Ms: r.p95 }));
  }
}
