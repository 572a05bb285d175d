import type autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import type { EndUser } from '../../domain/user';
import { createLogger } from '../../apps/server/http/logger';
import { createTollgate } from '../../apps/server/tollgate';
import { Database } from '../../infrastructure/persistence/database';
import { compare, CONNECTIONS, load, log, post, ROUNDS, smoke, type Bench } from '../harness';
import type { Workload } from './workload';

/** Subscribers of the bench's metered plan: the subjects the usage workloads (11 and 12) spread their events over. */
const USAGE_USERS = smoke ? 50 : 1000;
/** Events of one POST usage/events, and the subscribers one batch is spread over. */
export const BATCH = 100;
const SUBJECTS_PER_BATCH = 10;
/** The included amount of `exports` that workload 12's last round consumes to the end: exactly this many allowed. */
export const LAST_UNITS = smoke ? 50 : 500;

/** What workload 11 tracks: a few meters of each aggregation, included amounts no batch reaches (no credits read, no overage). */
const TRACKED = [
  { key: 'api_calls', name: 'API calls', unit: 'calls', aggregation: 'sum', weight: 5 },
  { key: 'tokens', name: 'AI tokens', unit: 'tokens', aggregation: 'sum', weight: 3 },
  { key: 'reports', name: 'Reports', unit: 'reports', aggregation: 'count', weight: 1 },
  { key: 'storage_mb', name: 'Storage', unit: 'MB', aggregation: 'max', weight: 1 },
] as const;
const PICK = TRACKED.flatMap((m) => Array.from({ length: m.weight }, () => m.key));

export interface UsageRig {
  /** The metered plan's subscribers (user ids). */
  subjects: string[];
  /** A subscriber of its own, whose `exports` (LAST_UNITS included, hard limit) workload 12 consumes to the end. */
  lastUnitsSubject: string;
  /** The meters' ids by key (the baseline writes them). */
  meterIds: Record<string, string>;
}

let rig: Promise<UsageRig> | null = null;

/**
 * The usage workloads' seed, once per run, through the application's own use cases: the meters,
 * a plan "Metered" with usage limits (api_calls, tokens, reports and storage_mb for workload 11;
 * `requests` with 10^9 included for workload 12's consumers; `exports` with LAST_UNITS included
 * and a hard limit for its last round), USAGE_USERS users each subscribed to it on the sandbox,
 * and one more subscriber for the last round.
 */
export function usageRig(bench: Bench): Promise<UsageRig> {
  rig ??= seedUsage(bench);
  return rig;
}

async function seedUsage(bench: Bench): Promise<UsageRig> {
  const started = Date.now();
  const seeder = await createTollgate({
    config: bench.seedConfig,
    databaseUrl: bench.databaseUrl,
    secretKey: Buffer.from(bench.secretKey, 'base64'),
    logger: createLogger('warn', false),
    runWorker: false,
    migrate: false,
  });
  const { core, usage, billing } = seeder;
  const run = <T>(fn: () => Promise<T>) => core.db.withContext(fn);
  const must = <T>(what: string, r: { ok: true; value: T } | { ok: false; error: string }): T => {
    if (!r.ok) throw new Error(`usage seed, ${what}: ${r.error}`);
    return r.value;
  };
  const { projectId } = bench;
  try {
    const operator = { actor: { kind: 'admin' as const, id: 'bench' }, origin: SYSTEM_ORIGIN };
    const meters = [
      ...TRACKED.map(({ key, name, unit, aggregation }) => ({ key, name, unit, aggregation })),
      { key: 'requests', name: 'Requests', unit: 'requests', aggregation: 'sum' as const },
      { key: 'exports', name: 'Exports', unit: 'exports', aggregation: 'sum' as const },
    ];
    const meterIds: Record<string, string> = {};
    for (const m of meters) meterIds[m.key] = must(`meter ${m.key}`, await run(() => usage.createMeter(projectId, m, operator))).id;
    const priceId = await run(async () => {
      must(
        'plan',
        await billing.createPlan(projectId, {
          name: 'Metered',
          features: 'api',
          usageLimits: [
            { meter: 'api_calls', included: 1_000_000_000, reset: 'period', overage: 'refuse', price: null },
            { meter: 'tokens', included: 10_000_000_000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } },
            { meter: 'reports', included: 1_000_000, reset: 'day', overage: 'allow', price: null },
            { meter: 'storage_mb', included: 1_000_000, reset: 'month', overage: 'refuse', price: null },
            { meter: 'requests', included: 1_000_000_000, reset: 'period', overage: 'refuse', price: null },
            { meter: 'exports', included: LAST_UNITS, reset: 'period', overage: 'refuse', price: null },
          ],
        }),
      );
      return must('price', await billing.createPrice(projectId, 'Metered', { name: 'Monthly', amount: 4900, currency: 'usd', interval: 'month' })).id;
    });
    const project = await run(() => seeder.admin.getProject(projectId));
    if (!project) throw new Error(`usage seed: no project ${projectId}`);
    const tag = randomBytes(4).toString('hex');
    const users: EndUser[] = [];
    for (let i = 0; i <= USAGE_USERS; i++) {
      const now = core.clock.now();
      users.push({
        id: core.crypto.uuid(),
        projectId,
        email: `usage-${tag}-${i}@example.com`,
        name: null,
        picture: null,
        provider: 'email',
        emailVerified: true,
        locale: null,
        disabled: false,
        createdAt: now,
        updatedAt: now,
      });
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < users.length) {
          const user = users[next++]!;
          await run(() => core.stores.users.insert(user));
          must(
            'subscribe',
            await run(() => billing.subscribe({ project, user }, { priceId, paymentMethodId: 'pm_card_visa', requestKey: core.crypto.uuid() })),
          );
        }
      }),
    );
    log(`  usage seed: ${meters.length} meters, plan Metered, ${users.length} subscribers in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { subjects: users.slice(1).map((u) => u.id), lastUnitsSubject: users[0]!.id, meterIds };
  } finally {
    await seeder.close();
  }
}

/** Runs `fn` with a small pool on the bench's database (for counts the workloads check their runs with). */
export async function withDatabase<T>(bench: Bench, fn: (query: <R>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>): Promise<T> {
  const db = await Database.open({ url: bench.databaseUrl, poolMax: 1 });
  try {
    return await db.withContext(() => fn((sql, params = []) => db.query(sql, params)));
  } finally {
    await db.close();
  }
}

/**
 * 11. POST usage/events: batches of BATCH events (ids unique across the run), each over
 * SUBJECTS_PER_BATCH random subscribers of USAGE_USERS and a mix of four meters (sum, count, max),
 * at 16 connections; events/s vs bare Express inserting the same rows with plain `pg` (one
 * multi-row INSERT of the batch per request into a table like usage_events), in the same run.
 */
export const usageIngest: Workload = {
  id: '11',
  async run(bench) {
    const { tg, auth } = bench;
    const { subjects, meterIds } = await usageRig(bench);
    await withDatabase(bench, async (query) => {
      await query('drop table if exists bench_usage_events');
      await query('create table bench_usage_events (like usage_events including all)');
    });
    const setup = await post(bench.bs, '/usage/setup', { projectId: bench.projectId, meterIds });
    if (setup.status !== 200) throw new Error(`baseline usage setup failed: ${setup.status}`);

    const tag = randomBytes(4).toString('hex');
    let seq = 0;
    const random = (n: number) => Math.floor(Math.random() * n);
    const batch = () => {
      const who = new Set<string>();
      while (who.size < SUBJECTS_PER_BATCH) who.add(subjects[random(subjects.length)]!);
      const picked = [...who];
      const events = Array.from({ length: BATCH }, (_, i) => {
        const meter = PICK[random(PICK.length)]!;
        const subject = { type: 'user', id: picked[i % picked.length]! };
        return meter === 'reports' ? { id: `${tag}-${seq++}`, subject, meter } : { id: `${tag}-${seq++}`, subject, meter, value: 1 + random(100) };
      });
      return JSON.stringify({ events });
    };
    const sent = { tollgate: 0, accepted: 0 };
    const ingest = (url: string, pid: number | undefined, counted: boolean) =>
      load({
        pid,
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        requests: [
          {
            setupRequest: (req) => ({ ...req, body: batch() }),
            onResponse: (status: number, body: string) => {
              if (!counted || status !== 200) return;
              sent.tollgate += BATCH;
              try {
                sent.accepted += Number(JSON.parse(body).accepted ?? 0);
              } catch {
                /* the status counts show it */
              }
            },
          },
        ],
      } as autocannon.Options);
    const r = await compare(
      'usage/events',
      () => ingest(`${bench.bs}/usage/events`, bench.base.pid, false),
      () => ingest(`${tg}/api/v1/usage/events`, bench.tollgate.pid, true),
    );
    const [recorded] = await withDatabase(bench, (query) =>
      query<{ n: string }>('select count(*) as n from usage_events where project_id = ? and event_id like ?', [bench.projectId, `${tag}-%`]),
    );
    const events = (rps: number) => Math.round(rps * BATCH).toLocaleString('en');
    // A round ends with up to one batch per connection in flight: recorded, its answer not counted.
    const rows = Number(recorded!.n);
    const inFlight = rows - sent.accepted;
    const check =
      sent.accepted === sent.tollgate && inFlight >= 0 && inFlight % BATCH === 0 && inFlight <= CONNECTIONS * BATCH * (ROUNDS + 1)
        ? `each of ${sent.tollgate.toLocaleString('en')} events answered 200 recorded once (and ${inFlight} events of batches in flight as a round ended)`
        : `MISMATCH: ${sent.tollgate} events answered 200, ${sent.accepted} accepted, ${rows} rows`;
    return [
      {
        workload: `11. usage/events, batches of ${BATCH} over ${SUBJECTS_PER_BATCH} of ${subjects.length} subscribers (req/s = batches/s)`,
        baseline: `bare Express + plain pg, one INSERT of ${BATCH} rows`,
        goal: '>= 10,000 events/s, >= 0.5x',
        ...r,
        note: `events/s ${events(r.candidate.rps)} (baseline ${events(r.base.rps)}); ${check}`,
      },
    ];
  },
};
