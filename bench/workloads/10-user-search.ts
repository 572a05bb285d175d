/**
 * Workload 10 of `npm run bench` (`npm run bench -- --only=10` alone): the operator's user search by
 * part of an email (`tollgate user list <project> --search <text>`, the console's Users page) on a
 * project of 1,000,000 users, seeded with one generate_series statement, against a project of one
 * user. The 1,000,000-user project is timed twice: reading every user (the trigram index dropped,
 * as before migration UserSearchTrigram) and with users_email_trgm_idx. It reports the median and
 * p99 of the store's search (a page of 50, as the CLI asks) and prints each EXPLAIN ANALYZE plan.
 * It runs in a database of its own on the bench's PostgreSQL, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { Database } from '../../infrastructure/persistence/database';
import { insertTestProject } from '../../test/support/sandbox';
import { addUser, searchPlan, seedUsers, timeSearch } from '../../test/support/user-search';
import { log, smoke, type Row } from '../harness';
import type { Workload } from './workload';

type Timing = { rps: number; p50: number; p99: number; non2xx: number; errors: number };

const NEEDLE = 'seed';

async function timeRuns(db: Database, projectId: string, runs: number): Promise<Timing> {
  await timeSearch(db, projectId, NEEDLE); // warm the cache
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await timeSearch(db, projectId, NEEDLE);
    if (run.found !== 1) throw new Error(`user search found ${run.found} users, not 1`);
    ms.push(run.ms);
  }
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(ms.length / 2)]!;
  return { rps: 1000 / p50, p50, p99: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]!, non2xx: 0, errors: 0 };
}

/** 10. The user search by part of an email at 1,000,000 users. */
export const userSearch: Workload = {
  id: '10',
  run: async (bench) => [await userSearchWorkload(bench.databaseUrl)],
};

async function userSearchWorkload(databaseUrl: string): Promise<Row> {
  const users = smoke ? 10_000 : 1_000_000;
  const runs = smoke ? 3 : 30;
  const name = `tollgate_bench_search_${randomBytes(4).toString('hex')}`;
  const admin = await Database.open({ url: databaseUrl, poolMax: 1 });
  await admin.withContext(() => admin.query(`create database ${name}`));
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const db = await Database.open({ url: url.toString(), poolMax: 2 });
  try {
    await db.migrate();
    const indexed = (await db.withContext(() => db.query(`select 1 from pg_indexes where indexname = 'users_email_trgm_idx'`))).length > 0;
    if (!indexed) {
      // pg_trgm is not installed on this PostgreSQL: the search is the scan measured below, alone.
      log('  10. user search: users_email_trgm_idx is missing (pg_trgm not available): measuring the scan only');
    }

    const one = await insertTestProject(db, 'one user');
    await addUser(db, one, `${NEEDLE}@example.com`);
    const many = await insertTestProject(db, `${users} users`);
    await db.withContext(() => db.query('drop index if exists users_email_trgm_idx'));
    let started = Date.now();
    await seedUsers(db, many, users);
    await addUser(db, many, `${NEEDLE}@example.com`);
    await db.withContext(() => db.query('analyze users'));
    log(`  10. user search: ${users} users seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const single = await timeRuns(db, one, runs);
    const scan = await timeRuns(db, many, runs);
    const scanPlan = await searchPlan(db, many, NEEDLE);
    if (!indexed) {
      return {
        workload: `10. user search by email part (${users} users)`,
        baseline: '-',
        goal: 'report',
        candidate: scan,
        note: `ms per search, a scan (pg_trgm not available); 1 user: p50 ${single.p50.toFixed(2)} ms`,
      };
    }
    started = Date.now();
    await db.withContext(() => db.query('create index users_email_trgm_idx on users using gin (lower(email) gin_trgm_ops)'));
    await db.withContext(() => db.query('analyze users'));
    const buildSeconds = (Date.now() - started) / 1000;
    const index = await timeRuns(db, many, runs);
    const indexPlan = await searchPlan(db, many, NEEDLE);
    const ms = (t: Timing) => `p50 ${t.p50.toFixed(2)} ms, p99 ${t.p99.toFixed(2)} ms`;
    log(
      `  10. user search "${NEEDLE}", a page of 50: 1 user ${ms(single)}; ${users} users without the index ${ms(scan)}, with it ${ms(index)} ` +
        `(index built in ${buildSeconds.toFixed(1)} s)`,
    );
    log(`  plan without the index:\n${scanPlan.text.replace(/^/gm, '    ')}`);
    log(`  plan with users_email_trgm_idx:\n${indexPlan.text.replace(/^/gm, '    ')}`);
    return {
      workload: `10. user search by email part (${users} users)`,
      baseline: `same search, ${users} users, no trigram index (a scan)`,
      goal: 'report',
      ratio: { median: scan.p50 / index.p50, min: scan.p50 / index.p50, max: scan.p50 / index.p50 },
      candidate: index,
      base: scan,
      note:
        `ms per search (req/s = 1000 / p50); 1 user: p50 ${single.p50.toFixed(2)} ms; plan ` +
        `${indexPlan.indexes.join(', ') || indexPlan.nodes.join(' > ')} vs ${scanPlan.nodes.join(' > ')}; index built in ${buildSeconds.toFixed(1)} s`,
    };
  } finally {
    await db.close();
    await admin.withContext(() => admin.query(`drop database if exists ${name}`));
    await admin.close();
  }
}
