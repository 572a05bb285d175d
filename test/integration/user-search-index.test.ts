import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../infrastructure/persistence/database';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertTestProject } from '../support/sandbox';
import { addUser, searchPlan, seedUsers, timeSearch } from '../support/user-search';

/**
 * The operator's user search by part of an email reads the trigram index on lower(email)
 * (migration UserSearchTrigram) rather than every user of the project: on a project of 100,000
 * seeded users, the plan of the store's own statement for a rare text uses users_email_trgm_idx.
 * (bench/workloads/10-user-search.ts measures the same at 1,000,000 users.)
 */
const USERS = 100_000;
let database: TestDatabase;
let db: Database;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 4 });
  await db.migrate();
  projectId = await insertTestProject(db);
  await seedUsers(db, projectId, USERS);
  await addUser(db, projectId, 'Ada.Needle@Example.com');
}, 120_000);
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('user search by part of the email', () => {
  it('reads the trigram index for a text of 3 characters or more, and finds the user whatever the case', async () => {
    const plan = await searchPlan(db, projectId, 'needle');
    expect(plan.indexes, plan.text).toContain('users_email_trgm_idx');
    expect(plan.nodes, plan.text).not.toContain('Seq Scan');
    const run = await timeSearch(db, projectId, 'NEEDLE');
    expect(run.found).toBe(1);
  });

  it('still finds users with a text too short for trigrams (a scan)', async () => {
    expect((await timeSearch(db, projectId, 'a.')).found).toBe(1);
  });
});
