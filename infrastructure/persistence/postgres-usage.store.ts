import type { CreditPackStore, MeteredUsage, PurchasedCredits, UnreportedOverage } from '../../application/billing/billing.store';
import type { CreditPack } from '../../domain/usage/credit-pack';
import type {
  ConsumptionState,
  CounterState,
  CounterWrite,
  CreditStore,
  MeterStore,
  QuietConsumption,
  SubjectPlanRead,
  TrackedGroup,
  UsageEventRecord,
  UsageLedger,
  UsageSubjects,
} from '../../application/usage/usage.store';
import { counterKey, pairKey } from '../../application/usage/usage.store';
import type { BillingSubject } from '../../domain/billing/subject';
import { LIVE_STATUSES, type SubscriptionStatus } from '../../domain/billing/subscription';
import { type Allocation, type GrantBalance, thresholdBit, USAGE_THRESHOLDS } from '../../domain/usage/balance';
import type { CreditGrant, CreditSource } from '../../domain/usage/credits';
import { readUsageLimits } from '../../domain/usage/limits';
import type { Meter, MeterAggregation } from '../../domain/usage/meter';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';
import { isUniqueViolation, writeUnlessTaken } from './unique-violation';

const METER_KEY_INDEX = 'usage_meters_project_id_key_key';
const EVENT_KEY = 'usage_events_pkey';
const GRANT_EXTERNAL_ID = 'usage_credit_grants_project_id_external_id_key';
const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

const toMeter = rowMapper<Meter>({
  id: read.text,
  projectId: read.text,
  key: read.text,
  name: read.text,
  unit: read.text,
  aggregation: read.as<MeterAggregation>(),
  createdAt: read.date,
});

/** How long a project's meters serve the write paths from memory (their names and units may change meanwhile). */
const METER_CACHE_MS = 30_000;
const METER_CACHE_PROJECTS = 1000;

export class PostgresMeterStore implements MeterStore {
  private readonly cached = new Map<string, { at: number; meters: Map<string, Meter> }>();

  constructor(private readonly db: Database) {}

  async byKey(projectId: string, keys: readonly string[]): Promise<Map<string, Meter>> {
    const hit = this.cached.get(projectId);
    if (hit !== undefined && Date.now() - hit.at < METER_CACHE_MS && keys.every((k) => hit.meters.has(k))) return hit.meters;
    const meters = new Map((await this.list(projectId)).map((m) => [m.key, m]));
    if (this.cached.size >= METER_CACHE_PROJECTS) this.cached.delete(this.cached.keys().next().value!);
    this.cached.delete(projectId);
    this.cached.set(projectId, { at: Date.now(), meters });
    return meters;
  }

  async list(projectId: string): Promise<Meter[]> {
    if (!isUuid(projectId)) return [];
    return (
      await this.db.query(`select ${toMeter.columns} from usage_meters where project_id = ? order by key`, [projectId], { prepare: 'usage_meters_list' })
    ).map(toMeter);
  }

  async findByKey(projectId: string, key: string): Promise<Meter | null> {
    if (!isUuid(projectId)) return null;
    return toMeter.first(
      await this.db.query(`select ${toMeter.columns} from usage_meters where project_id = ? and key = ?`, [projectId, key], { prepare: 'usage_meter_by_key' }),
    );
  }

  insert(m: Meter): Promise<boolean> {
    return writeUnlessTaken(this.db, METER_KEY_INDEX, () =>
      this.db.query('insert into usage_meters (id, project_id, key, name, unit, aggregation, created_at) values (?, ?, ?, ?, ?, ?, ?)', [
        m.id,
        m.projectId,
        m.key,
        m.name,
        m.unit,
        m.aggregation,
        m.createdAt,
      ]),
    );
  }

  async update(m: Meter): Promise<void> {
    this.cached.delete(m.projectId);
    await this.db.query('update usage_meters set name = ?, unit = ? where id = ? and project_id = ?', [m.name, m.unit, m.id, m.projectId]);
  }
}

interface PlanRow {
  subject_id: string;
  id: string | null;
  status: SubscriptionStatus;
  cancel_at_period_end: boolean;
  current_period_start: Date;
  current_period_end: Date;
  past_due_at: Date | null;
  plan_id: string;
  name: string;
  usage_limits: unknown;
}

/**
 * Subjects of the project, each with the subscription that decides its entitlements (the live one,
 * else the most recent, as the entitlements reader picks it) and its plan's usage limits: one round
 * trip for a whole batch.
 */
export class PostgresUsageSubjects implements UsageSubjects {
  constructor(private readonly db: Database) {}

  async plans(projectId: string, subjects: readonly BillingSubject[]): Promise<Map<string, SubjectPlanRead | null>> {
    const found = new Map<string, SubjectPlanRead | null>();
    const valid = subjects.filter((s) => isUuid(s.id));
    if (!isUuid(projectId) || valid.length === 0) return found;
    const rows = await this.db.query<PlanRow>(
      `select x.id::text as subject_id, s.id, s.status, s.cancel_at_period_end, s.current_period_start, s.current_period_end, s.past_due_at,
              s.plan_id, p.name, p.usage_limits
         from jsonb_to_recordset(?::jsonb) as x(id uuid, kind text)
         left join lateral (
           select b.id, b.status, b.cancel_at_period_end, b.current_period_start, b.current_period_end, b.past_due_at, b.plan_id
             from billing_subscriptions b
            where b.project_id = ? and b.subject_id = x.id
            order by b.status in (${LIVE_SQL}) desc, b.created_at desc, b.id desc
            limit 1) s on true
         left join billing_plans p on p.id = s.plan_id
        where (x.kind = 'user' and exists (select 1 from users u where u.id = x.id and u.project_id = ?))
           or (x.kind = 'organization' and exists (select 1 from organizations o where o.id = x.id and o.project_id = ?))`,
      [JSON.stringify(valid.map((s) => ({ id: s.id, kind: s.kind }))), projectId, projectId, projectId],
      { prepare: 'usage_subject_plans' },
    );
    for (const r of rows) {
      found.set(
        r.subject_id,
        r.id === null
          ? null
          : {
              subscription: {
                id: r.id,
                status: r.status,
                cancelAtPeriodEnd: r.cancel_at_period_end,
                currentPeriodStart: read.date(r.current_period_start),
                currentPeriodEnd: read.date(r.current_period_end),
                pastDueAt: read.dateOrNull(r.past_due_at),
                price: { planId: r.plan_id },
              },
              plan: { id: r.plan_id, name: r.name, usageLimits: readUsageLimits(r.usage_limits) },
            },
      );
    }
    return found;
  }

  async labels(projectId: string, subjects: readonly BillingSubject[]): Promise<Map<string, string | null>> {
    const labels = new Map<string, string | null>();
    const valid = subjects.filter((s) => isUuid(s.id));
    if (!isUuid(projectId) || valid.length === 0) return labels;
    const rows = await this.db.query<{ id: string; label: string | null }>(
      `select x.id::text as id, coalesce((select u.email from users u where x.kind = 'user' and u.id = x.id and u.project_id = ?),
                                         (select o.name from organizations o where x.kind = 'organization' and o.id = x.id and o.project_id = ?)) as label
         from jsonb_to_recordset(?::jsonb) as x(id uuid, kind text)`,
      [projectId, projectId, JSON.stringify(valid.map((s) => ({ id: s.id, kind: s.kind })))],
    );
    for (const r of rows) labels.set(r.id, r.label);
    return labels;
  }
}

const toGrantBalance = (g: {
  id: string;
  amount: number | string;
  remaining: number | string;
  expires_at: string | Date | null;
  created_at: string | Date;
}): GrantBalance => ({
  id: g.id,
  amount: Number(g.amount),
  remaining: Number(g.remaining),
  expiresAt: g.expires_at === null ? null : new Date(g.expires_at),
  createdAt: new Date(g.created_at),
});

const toCounter = (c: Partial<Record<'used' | 'overage' | 'notified' | 'version', unknown>> | null | undefined): CounterState =>
  c === null || c === undefined
    ? { used: 0, overage: 0, notified: 0, version: 0 }
    : { used: Number(c.used), overage: Number(c.overage), notified: Number(c.notified), version: Number(c.version) };

const LIVE_GRANT = 'remaining > 0 and expired_at is null and (expires_at is null or expires_at > ?::timestamptz)';

const toEvent = (r: Record<string, unknown>): UsageEventRecord => ({
  eventId: r.event_id as string,
  subject: { kind: r.subject_kind as 'user' | 'organization', id: r.subject_id as string },
  meterId: r.meter_id as string,
  value: Number(r.value),
  occurredAt: read.date(r.occurred_at),
  windowStart: read.date(r.window_start),
  allocation: (r.allocation ?? null) as Allocation | null,
  released: Number(r.released),
});
const EVENT_COLUMNS =
  'event_id, subject_kind, subject_id::text as subject_id, meter_id::text as meter_id, value, occurred_at, window_start, allocation, released';

interface ConsumptionRow {
  meter: { id: string; key: string; name: string; unit: string; aggregation: string; created_at: string } | null;
  subject_exists: boolean;
  subscription: {
    id: string;
    status: string;
    cancel_at_period_end: boolean;
    current_period_start: string;
    current_period_end: string;
    past_due_at: string | null;
    plan_id: string;
  } | null;
  plan: { name: string; usage_limits: unknown } | null;
  terms_version: string;
  counters: Array<{ window_start: string; used: number; overage: number; notified: number; version: number }>;
  grants: Array<Parameters<typeof toGrantBalance>[0]>;
}

/**
 * A check's or a consumption's whole read in one statement: the meter, the subject's existence, its
 * subscription that decides entitlements (as the entitlements reader picks it) and plan, the
 * counters of the candidate windows (the period's start, the UTC day's, the UTC month's) and the
 * live grants.
 */
/** The subscription that decides a subject's terms (`?` project, subject), as the CTE `s`. */
const CHOSEN_SUBSCRIPTION = `s as (
  select b.id::text as id, b.status, b.cancel_at_period_end, b.current_period_start, b.current_period_end, b.past_due_at, b.plan_id::text as plan_id
    from billing_subscriptions b
   where b.project_id = ?::uuid and b.subject_id = ?::uuid
   order by b.status in (${LIVE_SQL}) desc, b.created_at desc, b.id desc
   limit 1)`;

/** A digest of everything the terms are made of (the chosen subscription and its plan's limits): equal digests, equal terms. */
const TERMS_VERSION = `(select md5(row(s.id, s.status, s.cancel_at_period_end, s.current_period_start, s.current_period_end, s.past_due_at, s.plan_id,
                                        pl.usage_limits)::text)
     from (select 1) one left join s on true left join billing_plans pl on pl.id = s.plan_id::uuid)`;

const CONSUMPTION_SQL = `
  with m as (select id::text as id, key, name, unit, aggregation, created_at from usage_meters where project_id = ? and key = ?),
  ${CHOSEN_SUBSCRIPTION}
  select (select row_to_json(m) from m) as meter,
         ${TERMS_VERSION} as terms_version,
         case when ? = 'user' then exists (select 1 from users u where u.id = ? and u.project_id = ?)
              else exists (select 1 from organizations o where o.id = ? and o.project_id = ?) end as subject_exists,
         (select row_to_json(s) from s) as subscription,
         (select row_to_json(p) from (select name, usage_limits from billing_plans where id = (select plan_id::uuid from s)) p) as plan,
         (select coalesce(json_agg(c), '[]'::json) from (
            select window_start, used, overage, notified, version from usage_counters
             where project_id = ? and subject_id = ? and meter_id = (select id::uuid from m)
               and window_start in ((select current_period_start from s), ?::timestamptz, ?::timestamptz)) c) as counters,
         (select coalesce(json_agg(g), '[]'::json) from (
            select id, amount, remaining, expires_at, created_at from usage_credit_grants
             where project_id = ? and subject_id = ? and meter_id = (select id::uuid from m) and ${LIVE_GRANT}) g) as grants`;

/** Counter rows written over the version read (a consumption, a release): the counter, the grants and the event in one statement. */
const WRITE_COUNTER = `
  c as (
    insert into usage_counters (project_id, subject_kind, subject_id, meter_id, window_start, window_end, used, overage, notified, version)
    select ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 where ?::bigint = 0
    on conflict (project_id, subject_id, meter_id, window_start) do nothing
    returning 1
  ), u as (
    update usage_counters set used = ?, overage = ?, notified = ?, version = version + 1
     where project_id = ? and subject_id = ? and meter_id = ? and window_start = ? and version = ?::bigint and ?::bigint > 0
    returning 1
  ), ok as (select 1 from c union all select 1 from u),
  g as (
    update usage_credit_grants g set remaining = g.remaining - d.amount
      from jsonb_to_recordset(?::jsonb) as d(id uuid, amount bigint)
     where g.id = d.id and g.project_id = ? and exists (select 1 from ok)
    returning 1
  )`;

export class PostgresUsageLedger implements UsageLedger {
  constructor(private readonly db: Database) {}

  async balance(projectId: string, subjectId: string, meterId: string, window: { start: Date }, now: Date, options: { lock: boolean }) {
    const rows = await this.db.query<{ counter: Record<string, unknown> | null; grants: unknown[] }>(
      `select (select row_to_json(c) from (select used, overage, notified, version from usage_counters
                where project_id = ? and subject_id = ? and meter_id = ? and window_start = ?${options.lock ? ' for update' : ''}) c) as counter,
              (select coalesce(json_agg(g), '[]'::json) from (select id, amount, remaining, expires_at, created_at from usage_credit_grants
                where project_id = ? and subject_id = ? and meter_id = ? and ${LIVE_GRANT}) g) as grants`,
      [projectId, subjectId, meterId, window.start, projectId, subjectId, meterId, now],
      options.lock ? {} : { prepare: 'usage_balance' },
    );
    const row = rows[0]!;
    return { counter: toCounter(row.counter), grants: (row.grants as Parameters<typeof toGrantBalance>[0][]).map(toGrantBalance) };
  }

  async consumption(projectId: string, subject: BillingSubject, meterKey: string, starts: { day: Date; month: Date }, now: Date): Promise<ConsumptionState> {
    const none: ConsumptionState = { meter: null, subjectExists: false, plan: null, termsVersion: '', counters: new Map(), grants: [] };
    if (!isUuid(projectId) || !isUuid(subject.id)) return none;
    const rows = await this.db.query<ConsumptionRow>(
      CONSUMPTION_SQL,
      [
        projectId,
        meterKey,
        projectId,
        subject.id,
        subject.kind,
        subject.id,
        projectId,
        subject.id,
        projectId,
        projectId,
        subject.id,
        starts.day,
        starts.month,
        projectId,
        subject.id,
        now,
      ],
      {
        prepare: 'usage_consumption_state',
      },
    );
    const row = rows[0];
    if (row === undefined) return none;
    const m = row.meter;
    const meter: Meter | null =
      m === null
        ? null
        : { id: m.id, projectId, key: m.key, name: m.name, unit: m.unit, aggregation: m.aggregation as MeterAggregation, createdAt: new Date(m.created_at) };
    const sub = row.subscription;
    const plan: SubjectPlanRead | null =
      sub === null || row.plan === null
        ? null
        : {
            subscription: {
              id: sub.id,
              status: sub.status as SubscriptionStatus,
              cancelAtPeriodEnd: sub.cancel_at_period_end,
              currentPeriodStart: new Date(sub.current_period_start),
              currentPeriodEnd: new Date(sub.current_period_end),
              pastDueAt: sub.past_due_at === null ? null : new Date(sub.past_due_at),
              price: { planId: sub.plan_id },
            },
            plan: { id: sub.plan_id, name: row.plan.name, usageLimits: readUsageLimits(row.plan.usage_limits) },
          };
    const counters = new Map(row.counters.map((c) => [new Date(c.window_start).toISOString(), toCounter(c)]));
    return { meter, subjectExists: row.subject_exists, plan, termsVersion: row.terms_version, counters, grants: row.grants.map(toGrantBalance) };
  }

  async findEvent(projectId: string, eventId: string): Promise<UsageEventRecord | null> {
    return (await this.findEvents(projectId, [eventId]))[0] ?? null;
  }

  async findEvents(projectId: string, eventIds: readonly string[]): Promise<UsageEventRecord[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.db.query(
      `select ${EVENT_COLUMNS} from usage_events where project_id = ? and event_id in (select value from jsonb_array_elements_text(?::jsonb))`,
      [projectId, JSON.stringify(eventIds)],
    );
    return rows.map(toEvent);
  }

  async write(w: CounterWrite): Promise<boolean> {
    const counterParams = [
      w.projectId,
      w.subject.kind,
      w.subject.id,
      w.meterId,
      w.window.start,
      w.window.end,
      w.used,
      w.overage,
      w.notified,
      w.expectedVersion,
      w.used,
      w.overage,
      w.notified,
      w.projectId,
      w.subject.id,
      w.meterId,
      w.window.start,
      w.expectedVersion,
      w.expectedVersion,
      JSON.stringify(w.draws.map((d) => ({ id: d.grantId, amount: d.amount }))),
      w.projectId,
    ];
    let rows: Array<{ written: string }> = [];
    if (w.event.kind === 'insert') {
      const e = w.event.record;
      const createdAt = w.event.createdAt;
      const written = await writeUnlessTaken(this.db, EVENT_KEY, async () => {
        rows = await this.db.query(
          `with ${WRITE_COUNTER}, e as (
             insert into usage_events (project_id, event_id, subject_kind, subject_id, meter_id, value, occurred_at, window_start, allocation, created_at)
             select ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ? where exists (select 1 from ok)
             returning 1)
           select (select count(*) from ok) as written`,
          [
            ...counterParams,
            w.projectId,
            e.eventId,
            e.subject.kind,
            e.subject.id,
            e.meterId,
            e.value,
            e.occurredAt,
            e.windowStart,
            JSON.stringify(e.allocation),
            createdAt,
          ],
          { prepare: 'usage_write_consumption' },
        );
      });
      if (!written) return false;
    } else {
      rows = await this.db.query(
        `with ${WRITE_COUNTER}, e as (
           update usage_events set released = ?, allocation = ?::jsonb where project_id = ? and event_id = ? and exists (select 1 from ok)
           returning 1)
         select (select count(*) from ok) as written`,
        [...counterParams, w.event.released, JSON.stringify(w.event.allocation), w.projectId, w.event.eventId],
        { prepare: 'usage_write_release' },
      );
    }
    return Number(rows[0]?.written ?? 0) > 0;
  }

  async consumeQuiet(c: QuietConsumption): Promise<{ used: number; overage: number; credits: number } | null> {
    const { projectId, subject, record: e } = c;
    try {
      const rows = await this.db.query<{ used: string | null; overage: string | null; credits: string }>(
        CONSUME_QUIET_SQL,
        [
          projectId,
          subject.id,
          c.termsVersion,
          subject.kind,
          subject.id,
          projectId,
          subject.id,
          projectId,
          projectId,
          subject.kind,
          subject.id,
          c.meterId,
          c.window.start,
          c.window.end,
          e.value,
          ...USAGE_THRESHOLDS.map(() => c.included),
          c.included,
          projectId,
          e.eventId,
          subject.kind,
          subject.id,
          c.meterId,
          e.value,
          e.occurredAt,
          e.windowStart,
          JSON.stringify(e.allocation),
          c.createdAt,
          projectId,
          subject.id,
          c.meterId,
          c.createdAt,
        ],
        { prepare: 'usage_consume_quiet' },
      );
      const row = rows[0];
      if (row === undefined || row.used === null) return null;
      return { used: Number(row.used), overage: Number(row.overage), credits: Number(row.credits) };
    } catch (error) {
      // The id is already recorded: the transactional path answers a replay or a conflict.
      if (isUniqueViolation(error, EVENT_KEY)) return null;
      throw error;
    }
  }

  async recordQuiet(
    projectId: string,
    events: readonly UsageEventRecord[],
    groups: ReadonlyArray<TrackedGroup & { included: number }>,
    createdAt: Date,
  ): Promise<boolean> {
    // In a caller's transaction a refusal would abort it: the transactional path serves then.
    if (events.length === 0 || this.db.em.isInTransaction()) return false;
    try {
      const grouped = groupsJson(groups);
      await this.db.query(RECORD_QUIET_SQL, [projectId, createdAt, eventsJson(events), projectId, grouped, grouped, events.length], {
        prepare: 'usage_record_quiet',
      });
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === NOT_QUIET) return false;
      throw e;
    }
  }

  async insertEvents(projectId: string, events: readonly UsageEventRecord[], createdAt: Date): Promise<Set<string>> {
    if (events.length === 0) return new Set();
    const rows = await this.db.query<{ event_id: string }>(`${INSERT_EVENTS_SQL} returning event_id`, [projectId, createdAt, eventsJson(events)]);
    return new Set(rows.map((r) => r.event_id));
  }

  async addUsage(projectId: string, groups: readonly TrackedGroup[]): Promise<CounterState[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `${ADD_USAGE_SQL} returning c.subject_id::text as subject_id, c.meter_id::text as meter_id, c.window_start, c.used, c.overage, c.notified, c.version`,
      [projectId, groupsJson(groups)],
    );
    const byKey = new Map(rows.map((r) => [`${r.subject_id}/${counterKey(r.meter_id as string, read.date(r.window_start))}`, toCounter(r)]));
    return groups.map((g) => byKey.get(`${g.subject.id}/${counterKey(g.meterId, g.window.start)}`)!);
  }

  async grantsFor(projectId: string, pairs: ReadonlyArray<{ subjectId: string; meterId: string }>, now: Date): Promise<Map<string, GrantBalance[]>> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select g.id, g.subject_id::text as subject_id, g.meter_id::text as meter_id, g.amount, g.remaining, g.expires_at, g.created_at
         from usage_credit_grants g
         join jsonb_to_recordset(?::jsonb) as x(subject_id uuid, meter_id uuid) on x.subject_id = g.subject_id and x.meter_id = g.meter_id
        where g.project_id = ? and g.remaining > 0 and g.expired_at is null and (g.expires_at is null or g.expires_at > ?::timestamptz)
        order by g.id
        for update of g`,
      [JSON.stringify(pairs.map((p) => ({ subject_id: p.subjectId, meter_id: p.meterId }))), projectId, now],
    );
    const grants = new Map<string, GrantBalance[]>();
    for (const r of rows) {
      const key = pairKey(r.subject_id as string, r.meter_id as string);
      grants.set(key, [...(grants.get(key) ?? []), toGrantBalance(r as Parameters<typeof toGrantBalance>[0])]);
    }
    return grants;
  }

  async settle(
    projectId: string,
    counters: ReadonlyArray<{ group: TrackedGroup; overage: number; notified: number }>,
    draws: ReadonlyArray<{ grantId: string; amount: number }>,
  ): Promise<void> {
    if (counters.length > 0) {
      await this.db.query(
        `update usage_counters c set overage = x.overage, notified = x.notified
           from jsonb_to_recordset(?::jsonb) as x(subject_id uuid, meter_id uuid, window_start timestamptz, overage bigint, notified smallint)
          where c.project_id = ? and c.subject_id = x.subject_id and c.meter_id = x.meter_id and c.window_start = x.window_start`,
        [
          JSON.stringify(
            counters.map((c) => ({
              subject_id: c.group.subject.id,
              meter_id: c.group.meterId,
              window_start: c.group.window.start.toISOString(),
              overage: c.overage,
              notified: c.notified,
            })),
          ),
          projectId,
        ],
      );
    }
    if (draws.length > 0) {
      await this.db.query(
        `update usage_credit_grants g set remaining = g.remaining - d.amount
           from (select id, sum(amount) as amount from jsonb_to_recordset(?::jsonb) as x(id uuid, amount bigint) group by id) d
          where g.id = d.id and g.project_id = ?`,
        [JSON.stringify(draws.map((d) => ({ id: d.grantId, amount: d.amount }))), projectId],
      );
    }
  }

  async counters(projectId: string, subjectId: string, keys: ReadonlyArray<{ meterId: string; windowStart: Date }>): Promise<Map<string, CounterState>> {
    const found = new Map<string, CounterState>();
    if (keys.length === 0) return found;
    const rows = await this.db.query<Record<string, unknown>>(
      `select c.meter_id::text as meter_id, c.window_start, c.used, c.overage, c.notified, c.version
         from usage_counters c join jsonb_to_recordset(?::jsonb) as x(meter_id uuid, window_start timestamptz)
           on c.meter_id = x.meter_id and c.window_start = x.window_start
        where c.project_id = ? and c.subject_id = ?`,
      [JSON.stringify(keys.map((k) => ({ meter_id: k.meterId, window_start: k.windowStart.toISOString() }))), projectId, subjectId],
      { prepare: 'usage_counters_of_subject' },
    );
    for (const r of rows) found.set(counterKey(r.meter_id as string, read.date(r.window_start)), toCounter(r));
    return found;
  }

  async daily(projectId: string, subjectId: string, meterId: string, since: Date, until: Date): Promise<Array<{ date: string; used: number }>> {
    const rows = await this.db.query<{ day: string; used: string }>(
      `select to_char(date_trunc('day', occurred_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
              case when m.aggregation = 'count' then count(*) when m.aggregation = 'max' then max(e.value) else sum(e.value - e.released) end as used
         from usage_events e join usage_meters m on m.id = e.meter_id
        where e.project_id = ? and e.subject_id = ? and e.meter_id = ? and e.occurred_at >= ? and e.occurred_at < ?
        group by 1, m.aggregation order by 1`,
      [projectId, subjectId, meterId, since, until],
    );
    return rows.map((r) => ({ date: r.day, used: Number(r.used) }));
  }

  async top(projectId: string, meterId: string, since: Date, limit: number) {
    const rows = await this.db.query<{ subject_kind: 'user' | 'organization'; subject_id: string; used: string; overage: string }>(
      `select subject_kind, subject_id::text as subject_id, sum(used) as used, sum(overage) as overage from usage_counters
        where project_id = ? and meter_id = ? and window_start >= ?
        group by subject_kind, subject_id order by sum(used) desc, subject_id limit ?`,
      [projectId, meterId, since, limit],
    );
    return rows.map((r) => ({ subject: { kind: r.subject_kind, id: r.subject_id } as BillingSubject, used: Number(r.used), overage: Number(r.overage) }));
  }
}

const eventsJson = (events: readonly UsageEventRecord[]) =>
  JSON.stringify(
    events.map((e) => ({
      event_id: e.eventId,
      subject_kind: e.subject.kind,
      subject_id: e.subject.id,
      meter_id: e.meterId,
      value: e.value,
      occurred_at: e.occurredAt.toISOString(),
      window_start: e.windowStart.toISOString(),
    })),
  );

/** Groups in the order given (`n`: concurrent batches lock counters alike), with the included amount when known. */
const groupsJson = (groups: ReadonlyArray<TrackedGroup & { included?: number }>) =>
  JSON.stringify(
    groups.map((g, n) => ({
      subject_kind: g.subject.kind,
      subject_id: g.subject.id,
      meter_id: g.meterId,
      window_start: g.window.start.toISOString(),
      window_end: g.window.end.toISOString(),
      amount: g.amount,
      included: g.included ?? 0,
      n,
    })),
  );

/** New usage events (`?` project, created at, the events as JSON); a recorded id is left as it is. */
const INSERT_EVENTS_SQL = `insert into usage_events (project_id, event_id, subject_kind, subject_id, meter_id, value, occurred_at, window_start, created_at)
  select ?, x.event_id, x.subject_kind, x.subject_id, x.meter_id, x.value, x.occurred_at, x.window_start, ?
    from jsonb_to_recordset(?::jsonb) as x(event_id text, subject_kind text, subject_id uuid, meter_id uuid, value bigint,
                                            occurred_at timestamptz, window_start timestamptz)
  on conflict (project_id, event_id) do nothing`;

/** Groups added to their counters, created when missing (`?` project, the groups as JSON), locking them in the groups' order. */
const ADD_USAGE_SQL = `insert into usage_counters as c (project_id, subject_kind, subject_id, meter_id, window_start, window_end, used, version)
  select ?, x.subject_kind, x.subject_id, x.meter_id, x.window_start, x.window_end, x.amount, 1
    from jsonb_to_recordset(?::jsonb) as x(subject_kind text, subject_id uuid, meter_id uuid, window_start timestamptz,
                                           window_end timestamptz, amount bigint, included bigint, n integer)
   order by x.n
  on conflict (project_id, subject_id, meter_id, window_start) do update
    set used = case when (select m.aggregation from usage_meters m where m.id = excluded.meter_id) = 'max'
                    then greatest(c.used, excluded.used) else c.used + excluded.used end,
        version = c.version + 1`;

/** A counter raised by `excluded.used` stays quiet: within the included amount (`?`), past no threshold its window has not announced (`?` each). */
const QUIET_RAISE = [
  'c.used + excluded.used <= ?::bigint',
  ...USAGE_THRESHOLDS.map((t) => `((c.notified & ${thresholdBit(t)}) <> 0 or (c.used + excluded.used) * 100 < ?::bigint * ${t})`),
].join(' and ');

/**
 * consumeQuiet's one statement: the subject's terms compared with the digest the caller decided on
 * (`t`), the counter raised only when that holds and it stays quiet, the event recorded only with
 * it, and the subject's credits of the meter for the answer. No row in `up`: nothing written.
 */
const CONSUME_QUIET_SQL = `
  with ${CHOSEN_SUBSCRIPTION},
  t as (select ${TERMS_VERSION} = ?::text as same_terms,
               case when ?::text = 'user' then exists (select 1 from users u where u.id = ?::uuid and u.project_id = ?::uuid)
                    else exists (select 1 from organizations o where o.id = ?::uuid and o.project_id = ?::uuid) end as subject_ok),
  up as (
    insert into usage_counters as c (project_id, subject_kind, subject_id, meter_id, window_start, window_end, used, version)
    select ?::uuid, ?::text, ?::uuid, ?::uuid, ?::timestamptz, ?::timestamptz, ?::bigint, 1 from t where t.same_terms and t.subject_ok
    on conflict (project_id, subject_id, meter_id, window_start) do update
      set used = c.used + excluded.used, version = c.version + 1
      where ${QUIET_RAISE}
    returning c.used, c.overage),
  ev as (
    insert into usage_events (project_id, event_id, subject_kind, subject_id, meter_id, value, occurred_at, window_start, allocation, created_at)
    select ?::uuid, ?::text, ?::text, ?::uuid, ?::uuid, ?::bigint, ?::timestamptz, ?::timestamptz, ?::jsonb, ?::timestamptz
     where exists (select 1 from up)
    returning 1)
  select (select used from up) as used, (select overage from up) as overage, (select count(*) from ev) as recorded,
         (select coalesce(sum(remaining), 0) from usage_credit_grants
           where project_id = ?::uuid and subject_id = ?::uuid and meter_id = ?::uuid and ${LIVE_GRANT}) as credits`;

/** The SQLSTATE of usage_not_quiet() (Migration20261214000000UsageHotPath): the statement wrote nothing. */
const NOT_QUIET = 'TGU01';

/** A counter stays quiet: within its included amount and past no usage threshold its window has not announced. */
const QUIET = [
  'g.included > 0 and c.used <= g.included',
  ...USAGE_THRESHOLDS.map((t) => `((c.notified & ${thresholdBit(t)}) <> 0 or c.used * 100 < g.included * ${t})`),
].join(' and ');

/**
 * recordQuiet's one statement: the events inserted and the groups added as insertEvents and
 * addUsage do, then usage_not_quiet() raises (undoing both) unless every event was new and every
 * counter stayed quiet.
 */
const RECORD_QUIET_SQL = `with ins as (${INSERT_EVENTS_SQL} returning 1),
  up as (${ADD_USAGE_SQL} returning c.subject_id, c.meter_id, c.window_start, c.used, c.notified),
  g as (select * from jsonb_to_recordset(?::jsonb) as g(subject_id uuid, meter_id uuid, window_start timestamptz, included bigint))
  select case when (select count(*) from ins) = ?::int
               and not exists (select 1 from up c join g on g.subject_id = c.subject_id and g.meter_id = c.meter_id and g.window_start = c.window_start
                                where not (${QUIET}))
              then 1 else usage_not_quiet() end as quiet`;

const toGrant = (r: Record<string, unknown>): CreditGrant => ({
  id: r.id as string,
  projectId: r.project_id as string,
  subject: { kind: r.subject_kind as 'user' | 'organization', id: r.subject_id as string },
  meterId: r.meter_id as string,
  amount: Number(r.amount),
  remaining: Number(r.remaining),
  expiresAt: read.dateOrNull(r.expires_at),
  reason: r.reason as string,
  source: r.source as CreditSource,
  createdAt: read.date(r.created_at),
  expiredAt: read.dateOrNull(r.expired_at),
});
const GRANT_COLUMNS =
  'id::text as id, project_id::text as project_id, subject_kind, subject_id::text as subject_id, meter_id::text as meter_id, ' +
  'amount, remaining, expires_at, reason, source, created_at, expired_at';

export class PostgresCreditStore implements CreditStore {
  constructor(private readonly db: Database) {}

  async insert(g: CreditGrant & { externalId: string | null }): Promise<void> {
    try {
      await writeUnlessTaken(this.db, GRANT_EXTERNAL_ID, () =>
        this.db.query(
          `insert into usage_credit_grants (id, project_id, external_id, subject_kind, subject_id, meter_id, amount, remaining, expires_at, reason,
             source, created_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [g.id, g.projectId, g.externalId, g.subject.kind, g.subject.id, g.meterId, g.amount, g.remaining, g.expiresAt, g.reason, g.source, g.createdAt],
        ),
      );
    } catch (e) {
      if (!isUniqueViolation(e, GRANT_EXTERNAL_ID)) throw e;
    }
  }

  async findByExternalId(projectId: string, externalId: string): Promise<CreditGrant | null> {
    const rows = await this.db.query(`select ${GRANT_COLUMNS} from usage_credit_grants where project_id = ? and external_id = ?`, [projectId, externalId]);
    return rows[0] === undefined ? null : toGrant(rows[0]);
  }

  async list(projectId: string, subjectId: string, meterId: string | null): Promise<CreditGrant[]> {
    const rows = await this.db.query(
      `select ${GRANT_COLUMNS} from usage_credit_grants where project_id = ? and subject_id = ?${meterId === null ? '' : ' and meter_id = ?'}
        order by created_at desc, id desc limit 200`,
      meterId === null ? [projectId, subjectId] : [projectId, subjectId, meterId],
    );
    return rows.map(toGrant);
  }

  async balances(projectId: string, subjectId: string, now: Date): Promise<Map<string, number>> {
    const rows = await this.db.query<{ meter_id: string; balance: string }>(
      `select meter_id::text as meter_id, sum(remaining) as balance from usage_credit_grants
        where project_id = ? and subject_id = ? and ${LIVE_GRANT} group by meter_id`,
      [projectId, subjectId, now],
      { prepare: 'usage_credit_balances' },
    );
    return new Map(rows.map((r) => [r.meter_id, Number(r.balance)]));
  }

  async dueExpiries(now: Date, limit: number): Promise<CreditGrant[]> {
    const rows = await this.db.query(
      `select ${GRANT_COLUMNS} from usage_credit_grants
        where expired_at is null and expires_at is not null and expires_at <= ? order by expires_at, id limit ?`,
      [now, limit],
    );
    return rows.map(toGrant);
  }

  async markExpired(grantId: string, at: Date): Promise<boolean> {
    const rows = await this.db.query('update usage_credit_grants set expired_at = ? where id = ? and expired_at is null returning id', [at, grantId]);
    return rows.length > 0;
  }
}

/** Billing's view of usage: the meters plans may limit, and overage still to report to the processor. */
export class PostgresMeteredUsage implements MeteredUsage {
  constructor(private readonly db: Database) {}

  async meterKeys(projectId: string): Promise<string[]> {
    if (!isUuid(projectId)) return [];
    return (await this.db.query<{ key: string }>('select key from usage_meters where project_id = ?', [projectId])).map((r) => r.key);
  }

  async unreported(projectId: string | null, limit: number, subject?: BillingSubject): Promise<UnreportedOverage[]> {
    if (projectId !== null && !isUuid(projectId)) return [];
    if (subject !== undefined && (projectId === null || !isUuid(subject.id))) return [];
    const where =
      projectId === null ? '' : subject === undefined ? ' and c.project_id = ?' : ' and c.project_id = ? and c.subject_id = ? and c.subject_kind = ?';
    const rows = await this.db.query<Record<string, unknown>>(
      `select c.project_id::text as project_id, c.subject_kind, c.subject_id::text as subject_id, c.meter_id::text as meter_id, m.key, m.name,
              c.window_start, c.overage, c.overage_reported
         from usage_counters c join usage_meters m on m.id = c.meter_id
        where c.overage > c.overage_reported${where}
        order by c.window_start, c.subject_id, c.meter_id
        limit ?`,
      projectId === null ? [limit] : subject === undefined ? [projectId, limit] : [projectId, subject.id, subject.kind, limit],
    );
    return rows.map((r) => ({
      projectId: r.project_id as string,
      subject: { kind: r.subject_kind as 'user' | 'organization', id: r.subject_id as string },
      meterId: r.meter_id as string,
      meterKey: r.key as string,
      meterName: r.name as string,
      windowStart: read.date(r.window_start),
      overage: Number(r.overage),
      reported: Number(r.overage_reported),
    }));
  }

  async meter(projectId: string, key: string): Promise<{ id: string; key: string; name: string; unit: string } | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query<{ id: string; key: string; name: string; unit: string }>(
      'select id::text as id, key, name, unit from usage_meters where project_id = ? and key = ?',
      [projectId, key],
    );
    return rows[0] ?? null;
  }

  async grantPurchase(g: PurchasedCredits): Promise<boolean> {
    const rows = await this.db.query(
      `insert into usage_credit_grants (id, project_id, external_id, subject_kind, subject_id, meter_id, amount, remaining, expires_at, reason,
                                        source, created_at)
       select ?, ?, ?, ?, ?, m.id, ?, ?, ?, ?, 'purchase', ? from usage_meters m where m.project_id = ? and m.key = ?
       on conflict (project_id, external_id) do nothing
       returning id`,
      [g.id, g.projectId, g.externalId, g.subject.kind, g.subject.id, g.units, g.units, g.expiresAt, g.reason, g.at, g.projectId, g.meterKey],
    );
    return rows.length > 0;
  }

  async markReported(row: UnreportedOverage, to: number): Promise<boolean> {
    const rows = await this.db.query(
      `update usage_counters set overage_reported = ?
        where project_id = ? and subject_id = ? and meter_id = ? and window_start = ? and overage_reported = ? returning 1`,
      [to, row.projectId, row.subject.id, row.meterId, row.windowStart, row.reported],
    );
    return rows.length > 0;
  }
}

const toPack = (r: Record<string, unknown>): CreditPack => ({
  id: r.id as string,
  projectId: r.project_id as string,
  meterKey: r.meter_key as string,
  name: r.name as string,
  units: Number(r.units),
  amount: Number(r.amount),
  currency: r.currency as string,
  expiresInDays: read.numberOrNull(r.expires_in_days),
  active: r.active === true,
  createdAt: read.date(r.created_at),
});
const PACK_COLUMNS = 'id::text as id, project_id::text as project_id, meter_key, name, units, amount, currency, expires_in_days, active, created_at';

/** Credit packs: the credits of a meter sold for a one-off amount. */
export class PostgresCreditPackStore implements CreditPackStore {
  constructor(private readonly db: Database) {}

  async insert(p: CreditPack): Promise<void> {
    await this.db.query(
      `insert into usage_credit_packs (id, project_id, meter_key, name, units, amount, currency, expires_in_days, active, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [p.id, p.projectId, p.meterKey, p.name, p.units, p.amount, p.currency, p.expiresInDays, p.active, p.createdAt],
    );
  }

  async list(projectId: string, options: { activeOnly: boolean }): Promise<CreditPack[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(
      `select ${PACK_COLUMNS} from usage_credit_packs where project_id = ?${options.activeOnly ? ' and active' : ''} order by created_at desc, id desc`,
      [projectId],
    );
    return rows.map(toPack);
  }

  async get(projectId: string, id: string): Promise<CreditPack | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    const rows = await this.db.query(`select ${PACK_COLUMNS} from usage_credit_packs where project_id = ? and id = ?`, [projectId, id]);
    return rows[0] === undefined ? null : toPack(rows[0]);
  }

  async setActive(projectId: string, id: string, active: boolean): Promise<void> {
    await this.db.query('update usage_credit_packs set active = ? where project_id = ? and id = ?', [active, projectId, id]);
  }
}
