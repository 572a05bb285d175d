import type { OverviewWindow } from '../../application/overview/overview.store';
import { OVERVIEW_RANGES, overviewDays, type OverviewRange } from '../../application/overview/read-overview';
import type { Database } from '../../infrastructure/persistence/database';
import { PostgresOverview } from '../../infrastructure/persistence/postgres-overview';

/**
 * The console's overview at scale (bench workload 13): a project seeded with generate_series
 * statements (users, a year of audit rows, factors, subscriptions, webhook deliveries), each of
 * the overview's statements timed per range, and the plan PostgreSQL picks for each.
 */

const DAY_MS = 86_400_000;

export interface OverviewSeed {
  /** Audit rows of the project (over the last 365 days), and of a second project interleaved with them. */
  auditRows: number;
  otherAuditRows: number;
  users: number;
  subscriptions: number;
  deliveries: number;
}

export const FULL_SEED: OverviewSeed = { auditRows: 1_000_000, otherAuditRows: 200_000, users: 50_000, subscriptions: 5_000, deliveries: 200_000 };

const q = (db: Database, sql: string, params: unknown[] = []) => db.withContext(() => db.query(sql, params));

/** Fills the project as a year of a busy service would: everything ends at `now`. */
export async function seedOverview(db: Database, projectId: string, otherProjectId: string, seed: OverviewSeed, now: Date): Promise<void> {
  const yearAgo = new Date(now.getTime() - 365 * DAY_MS);
  const userStart = new Date(now.getTime() - 400 * DAY_MS);
  await q(
    db,
    `insert into users (id, project_id, email, provider, email_verified, created_at, updated_at)
     select gen_random_uuid(), ?, 'overview-' || n || '@example.com', 'email', true, t, t
       from (select n, ?::timestamptz + (n::float8 / ?) * (?::timestamptz - ?::timestamptz) as t from generate_series(1, ?) as n) s`,
    [projectId, userStart, seed.users, now, userStart, seed.users],
  );
  // The users in order of creation, numbered from 0: the rows below pick theirs by number.
  // A table of its own (not a temporary one: the pool's connections each see theirs), dropped at the end.
  await q(db, 'drop table if exists overview_seed_users');
  await q(db, 'create unlogged table overview_seed_users (k int primary key, id uuid not null, created_at timestamptz not null)');
  await q(db, `insert into overview_seed_users select (row_number() over (order by created_at, id) - 1)::int, id, created_at from users where project_id = ?`, [
    projectId,
  ]);
  const audit = (project: string, rows: number, offset: number) =>
    q(
      db,
      `insert into audit_log (at, project_id, user_id, actor_kind, actor_id, action, outcome, reason, details)
       select ?::timestamptz + ((n * 2 + ?)::float8 / (? * 2)) * (?::timestamptz - ?::timestamptz), ?, u.id, 'user', u.id::text,
              case when n % 20 < 6 then 'user.sign_in' when n % 20 < 14 then 'token.refresh' when n % 20 = 14 then 'user.sign_in.failed'
                   when n % 20 < 17 then 'mfa.challenge.issued' else 'session.revoked' end,
              case when n % 20 = 14 then 'failure' else 'success' end,
              case when n % 20 = 14 then 'invalid_credentials' end,
              case when n % 20 < 6 or n % 20 = 14
                   then jsonb_build_object('provider', (array['email', 'google', 'passkey', 'magic_link'])[1 + (n / 20) % 4], 'mfa', 'none')
                   else '{}'::jsonb end
         from generate_series(0, ? - 1) as n
         join overview_seed_users u on u.k = (n::bigint * 7919) % ?`,
      [yearAgo, offset, rows, now, yearAgo, project, rows, seed.users],
    );
  // Two projects' rows interleaved in time, as one log receives them.
  await audit(projectId, seed.auditRows, 0);
  await audit(otherProjectId, seed.otherAuditRows, 1);

  await q(
    db,
    `insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at, confirmed_at)
     select id, ?, 'seed', created_at, created_at + interval '1 hour' from overview_seed_users where k % 10 = 0`,
    [projectId],
  );
  await q(
    db,
    `insert into mfa_sms_factors (user_id, project_id, enrolled_at) select id, ?, created_at + interval '1 day' from overview_seed_users where k % 20 = 1`,
    [projectId],
  );
  await q(
    db,
    `insert into passkeys (id, project_id, user_id, credential_id, public_key, aaguid, device_type, backed_up, name, created_at)
     select gen_random_uuid(), ?, id, 'cred-' || k, '\\x00'::bytea, '00000000-0000-0000-0000-000000000000', 'multiDevice', true, 'Key', created_at
       from overview_seed_users where k % 33 = 2`,
    [projectId],
  );

  // Three plans, six prices (monthly and yearly; one plan in euros), subscriptions over the year, one in seven canceled.
  await q(
    db,
    `insert into billing_plans (id, project_id, name, position, created_at, updated_at)
     select gen_random_uuid(), ?, name, position, ?, ? from (values ('Basic', 0), ('Pro', 1), ('Team', 2)) as p(name, position)`,
    [projectId, yearAgo, yearAgo],
  );
  await q(
    db,
    `insert into billing_prices (id, project_id, plan_id, name, amount, currency, interval, created_at, updated_at)
     select gen_random_uuid(), ?, p.id, x.interval, x.amount * (p.position + 1), case when p.name = 'Team' then 'eur' else 'usd' end, x.interval, ?, ?
       from billing_plans p cross join (values ('month', 900), ('year', 9000)) as x(interval, amount) where p.project_id = ?`,
    [projectId, yearAgo, yearAgo, projectId],
  );
  await q(
    db,
    `with prices as (select id, plan_id, amount, currency, interval, (row_number() over (order by id) - 1)::int as j from billing_prices where project_id = ?),
          subs as (
            select u.k, u.id as user_id, ?::timestamptz + ((n::float8 / ?) * 360) * interval '1 day' as created_at, n
              from generate_series(0, ? - 1) as n join overview_seed_users u on u.k = n * 10 + 3
          )
     insert into billing_subscriptions (id, project_id, user_id, processor, processor_subscription_id, customer_id, plan_id, price_id, amount, currency,
                                        interval, status, current_period_start, current_period_end, billing_cycle_anchor, created_at, updated_at,
                                        canceled_at, ended_at)
     select gen_random_uuid(), ?, s.user_id, 'sandbox', 'sub_seed_' || s.k, 'cus_seed_' || s.k, p.plan_id, p.id, p.amount, p.currency, p.interval,
            case when s.n % 7 = 0 then 'canceled' else 'active' end, s.created_at, s.created_at + interval '1 month', s.created_at, s.created_at,
            s.created_at,
            case when s.n % 7 = 0 then least(s.created_at + interval '20 days', ?::timestamptz) end,
            case when s.n % 7 = 0 then least(s.created_at + interval '20 days', ?::timestamptz) end
       from subs s join prices p on p.j = s.n % 6`,
    [projectId, yearAgo, seed.subscriptions, seed.subscriptions, projectId, now, now],
  );

  const endpoint = crypto.randomUUID();
  await q(
    db,
    `insert into webhook_endpoints (id, project_id, url, secret_enc, secret_prefix, created_at, updated_at)
     values (?, ?, 'https://hooks.example.com/in', 'seed', 'whsec_seed', ?, ?)`,
    [endpoint, projectId, yearAgo, yearAgo],
  );
  await q(
    db,
    `insert into webhook_deliveries (id, project_id, endpoint_id, event_type, payload, status, attempt_count, created_at, completed_at)
     select gen_random_uuid(), ?, ?, 'user.created', '{}'::jsonb, st, 1, t,
            case st when 'succeeded' then t + (n % 5000) * interval '1 millisecond' when 'failed' then t + interval '1 hour' end
       from (select n, ?::timestamptz + (n::float8 / ?) * (?::timestamptz - ?::timestamptz) as t,
                    case when n % 100 < 95 then 'succeeded' when n % 100 < 99 then 'failed' else 'pending' end as st
               from generate_series(0, ? - 1) as n) d`,
    [projectId, endpoint, yearAgo, seed.deliveries, now, yearAgo, seed.deliveries],
  );
  await q(db, 'drop table overview_seed_users');
  for (const table of ['users', 'audit_log', 'mfa_totp_factors', 'mfa_sms_factors', 'passkeys', 'billing_subscriptions', 'webhook_deliveries'])
    await q(db, `vacuum analyze ${table}`);
}

export const OVERVIEW_PARTS = ['signUps', 'activeUsers', 'signIns', 'mfaAdoption', 'subscriptionsByPlan', 'revenue', 'churn', 'webhooks'] as const;
export type OverviewPart = (typeof OVERVIEW_PARTS)[number];

const windowOf = (projectId: string, now: Date, range: OverviewRange): OverviewWindow => {
  const days = overviewDays(now, range);
  return { projectId, firstDay: days[0]!, lastDay: days[days.length - 1]! };
};

/** The median time of each statement over `runs` runs (after one to warm the cache), per range, in ms. */
export async function timeOverview(db: Database, projectId: string, now: Date, runs: number): Promise<Record<OverviewRange, Record<OverviewPart, number>>> {
  const reader = new PostgresOverview(db);
  const out = {} as Record<OverviewRange, Record<OverviewPart, number>>;
  for (const range of OVERVIEW_RANGES) {
    const w = windowOf(projectId, now, range);
    out[range] = {} as Record<OverviewPart, number>;
    for (const part of OVERVIEW_PARTS) {
      const ms: number[] = [];
      for (let i = 0; i <= runs; i++) {
        const started = process.hrtime.bigint();
        await db.withContext(() => (reader[part] as (w: OverviewWindow) => Promise<unknown>)(w));
        if (i > 0) ms.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      ms.sort((a, b) => a - b);
      out[range][part] = ms[Math.floor(ms.length / 2)]!;
    }
  }
  return out;
}

type PlanNode = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; Plans?: PlanNode[] };

/** Each statement's plan over the 90-day range: the indexes it reads and the tables it scans whole. */
export async function overviewPlans(db: Database, projectId: string, now: Date): Promise<Record<OverviewPart, { indexes: string[]; seqScans: string[] }>> {
  const w = windowOf(projectId, now, 90);
  const out = {} as Record<OverviewPart, { indexes: string[]; seqScans: string[] }>;
  for (const part of OVERVIEW_PARTS) {
    let statement: { sql: string; params: unknown[] } | null = null;
    const recording = {
      query: async (sql: string, params: unknown[] = []) => {
        statement = { sql, params };
        return [];
      },
    } as unknown as Database;
    await (new PostgresOverview(recording)[part] as (w: OverviewWindow) => Promise<unknown>)(w);
    if (statement === null) throw new Error(`${part} sent no statement`);
    const { sql, params } = statement;
    const [json] = await db.withContext(() => db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${sql}`, params));
    const indexes = new Set<string>();
    const seqScans = new Set<string>();
    const walk = (node: PlanNode) => {
      if (node['Index Name']) indexes.add(`${node['Index Name']} (${node['Node Type']})`);
      if (node['Node Type'] === 'Seq Scan' && node['Relation Name']) seqScans.add(node['Relation Name']);
      node.Plans?.forEach(walk);
    };
    walk(json!['QUERY PLAN'][0]!.Plan);
    out[part] = { indexes: [...indexes], seqScans: [...seqScans] };
  }
  return out;
}
