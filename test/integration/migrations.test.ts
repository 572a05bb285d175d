import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../infrastructure/persistence/database';
import { MIGRATIONS } from '../../infrastructure/persistence/migrations';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
let db: Database | undefined;

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    return rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

let concurrent: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  concurrent = await createTestDatabase();
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
  await concurrent?.drop();
});

describe('migrations', () => {
  it('apply to an empty database, record themselves, and apply nothing the second time', async () => {
    expect(await tables(database.url)).toEqual([]);
    const expected = MIGRATIONS.map((m) => m.name);
    expect(expected.length).toBeGreaterThan(0);

    db = await Database.open({ url: database.url });
    const first = await db.migrate();
    expect(first).toEqual(expected);

    const after = await tables(database.url);
    for (const table of ['projects', 'api_keys', 'users', 'refresh_tokens', 'outbox_messages', 'rate_limits', 'tollgate_migrations']) {
      expect(after).toContain(table);
    }

    const recorded = await db.withContext(() => db!.query<{ name: string }>('select name from tollgate_migrations order by id'));
    expect(recorded.map((r) => r.name)).toEqual(expected);

    // Idempotent: a second run (same process, then a fresh connection as on the next start) applies nothing.
    expect(await db.migrate()).toEqual([]);
    await db.close();
    db = await Database.open({ url: database.url });
    expect(await db.migrate()).toEqual([]);
    const again = await db.withContext(() => db!.query<{ count: string }>('select count(*)::text as count from tollgate_migrations'));
    expect(Number(again[0]!.count)).toBe(expected.length);
  });

  it('apply once when several processes start on a new database at the same time', async () => {
    const processes = await Promise.all([1, 2, 3].map(() => Database.open({ url: concurrent.url, poolMax: 2 })));
    try {
      const applied = await Promise.all(processes.map((p) => p.migrate()));
      // One of them applied everything; the others waited for it and found nothing left.
      expect(applied.map((a) => a.length).sort((a, b) => a - b)).toEqual([0, 0, MIGRATIONS.length]);
      const recorded = await processes[0]!.withContext(() => processes[0]!.query<{ name: string }>('select name from tollgate_migrations order by id'));
      expect(recorded.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
    } finally {
      await Promise.all(processes.map((p) => p.close()));
    }
  });
});
