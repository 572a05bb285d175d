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
