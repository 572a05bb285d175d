import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

/** Refuses any database whose name does not say it is for tests. */
export function assertTestDatabase(url: string): void {
  const name = new URL(url).pathname.replace(/^\//, '');
  if (!/test/i.test(name)) {
    throw new Error(`refusing to run tests against database "${name}": its name must contain "test"`);
  }
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one test file, on the server chosen by the global setup. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = inject('adminDatabaseUrl');
  assertTestDatabase(admin);
  const name = `tollgate_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  assertTestDatabase(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/**
 * Ends every connection to the test database at `url` (57P01, as a restart does) and refuses new
 * ones for `downMs` (0: a blip, new connections welcome at once). Answers how many it ended.
 */
export async function cutDatabase(url: string, downMs: number): Promise<number> {
  const name = new URL(url).pathname.slice(1);
  assertTestDatabase(url);
  const c = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await c.connect();
  try {
    if (downMs > 0) await c.query(`alter database ${pg.escapeIdentifier(name)} allow_connections false`);
    const ended = await c.query(`select count(pg_terminate_backend(pid)) as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [name]);
    if (downMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await c.query(`alter database ${pg.escapeIdentifier(name)} allow_connections true`);
    }
    return Number(ended.rows[0].n);
  } finally {
    await c.end();
  }
}
