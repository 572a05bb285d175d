/**
 * Workload 13 of `npm run bench` (`npm run bench -- --only=13` alone): the console's project
 * overview (GET /api/admin/projects/:id/overview) on a project with 1,000,000 audit rows over a
 * year (and 200,000 of another project interleaved), 50,000 users, factors, 5,000 subscriptions
 * and 200,000 webhook deliveries, seeded with generate_series statements. It times each of the
 * overview's statements for the 7-, 30- and 90-day ranges (the median of 5 runs after a warm-up;
 * the goal is under 100 ms each) and prints the indexes each one reads (EXPLAIN). It runs in a
 * database of its own on the bench's PostgreSQL, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { Database } from '../../infrastructure/persistence/database';
import { FULL_SEED, OVERVIEW_PARTS, overviewPlans, seedOverview, timeOverview } from '../../test/support/overview-seed';
import { insertTestProject } from '../../test/support/sandbox';
import { log, smoke, type Row } from '../harness';
import type { Workload } from './workload';

/** 13. The overview's statements at a million audit rows. */
export const overview: Workload = {
  id: '13',
  run: async (bench) => [await overviewWorkload(bench.databaseUrl)],
};

async function overviewWorkload(databaseUrl: string): Promise<Row> {
  const seed = smoke ? { auditRows: 20_000, otherAuditRows: 4_000, users: 1_000, subscriptions: 100, deliveries: 4_000 } : FULL_SEED;
  const name = `tollgate_bench_overview_${randomBytes(4).toString('hex')}`;
  const admin = await Database.open({ url: databaseUrl, poolMax: 1 });
  await admin.withContext(() => admin.query(`create database ${name}`));
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const db = await Database.open({ url: url.toString(), poolMax: 2 });
  try {
    await db.migrate();
    const project = await insertTestProject(db, 'busy');
    const other = await insertTestProject(db, 'other');
    const now = new Date();
    const started = Date.now();
    await seedOverview(db, project, other, seed, now);
    log(`  13. overview: ${seed.auditRows} audit rows (+${seed.otherAuditRows} of another project) seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const times = await timeOverview(db, project, now, smoke ? 1 : 5);
    const plans = await overviewPlans(db, project, now);
    for (const part of OVERVIEW_PARTS) {
      const ms = ([7, 30, 90] as const).map((r) => `${r} days ${times[r][part].toFixed(1)} ms`).join(', ');
      const scans = plans[part].seqScans.length ? `; scans ${plans[part].seqScans.join(', ')}` : '';
      log(`  13. ${part}: ${ms}; reads ${plans[part].indexes.join(', ') || '-'}${scans}`);
    }
    const all = Object.values(times).flatMap((byPart) => Object.values(byPart));
    const slowest = Math.max(...all);
    const total90 = Object.values(times[90]).reduce((a, b) => a + b, 0);
    return {
      workload: `13. console overview statements (${seed.auditRows} audit rows)`,
      baseline: '-',
      goal: 'each < 100 ms',
      candidate: { rps: 1000 / total90, p50: total90, p99: slowest, non2xx: 0, errors: 0 },
      note: `ms: p50 = the 90-day overview's 8 statements one after another, p99 = the slowest statement of any range (${slowest.toFixed(1)} ms)`,
    };
  } finally {
    await db.close();
    await admin.withContext(() => admin.query(`drop database if exists ${name}`));
    await admin.close();
  }
}
