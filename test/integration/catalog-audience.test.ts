import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredPlan } from '../../application/billing/billing.store';
import { PLAN_AUDIENCES } from '../../domain/billing/subject';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresCatalogStore } from '../../infrastructure/persistence/postgres-catalog.store';
import { createTestDatabase, type TestDatabase } from '../support/database';

/**
 * A plan's audience (whom it is sold to: users, organizations or both) in the catalog store on a
 * migrated PostgreSQL database: written and read back, changed by an update, 'users' for a row
 * written without it (every plan from before organizations could pay), and nothing else accepted
 * by the column.
 */

let database: TestDatabase;
let db: Database;
let catalog: PostgresCatalogStore;
let project: string;

const T0 = new Date('2026-12-01T10:00:00.000Z');
const inContext = <T>(fn: () => Promise<T>): Promise<T> => db.withContext(fn);
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => inContext(() => db.query<T>(text, params));

function plan(overrides: Partial<StoredPlan> = {}): StoredPlan {
  return {
    id: randomUUID(),
    projectId: project,
    name: `Plan ${randomUUID().slice(0, 8)}`,
    description: '',
    features: [],
    hidden: false,
    recommended: false,
    trialsEnabled: false,
    defaultTrialDays: null,
    audience: 'users',
    seatPolicy: DEFAULT_SEAT_POLICY,
    usageLimits: [],
    position: 0,
    processor: null,
    processorProductId: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 4 });
  await db.migrate();
  project = randomUUID();
  await sql(
    `insert into projects (id, name, active, signing_secret_enc, settings, created_at, updated_at) values (?, 'Audience', true, 'x', '{}'::jsonb, ?, ?)`,
    [project, T0, T0],
  );
  catalog = new PostgresCatalogStore(db);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('catalog store: plan audience', () => {
  it('writes each audience and reads it back, from getPlan and listPlans', async () => {
    const plans = PLAN_AUDIENCES.map((audience, position) => plan({ audience, position }));
    await inContext(async () => {
      for (const p of plans) expect(await catalog.insertPlan(p)).toBe(true);
      for (const p of plans) expect(await catalog.getPlan(project, p.id)).toEqual(p);
      const listed = await catalog.listPlans(project);
      expect(listed.filter((p) => plans.some((q) => q.id === p.id)).map((p) => p.audience)).toEqual(['users', 'organizations', 'both']);
    });
  });

  it('an update changes the audience (and keeps it when the plan is saved with it unchanged)', async () => {
    const team = plan({ name: 'Team', audience: 'organizations', position: 10 });
    await inContext(async () => {
      expect(await catalog.insertPlan(team)).toBe(true);
      expect(await catalog.updatePlan({ ...team, description: 'For companies' })).toBe(true);
      expect(await catalog.getPlan(project, team.id)).toMatchObject({ audience: 'organizations', description: 'For companies' });
      expect(await catalog.updatePlan({ ...team, audience: 'both' })).toBe(true);
      expect(await catalog.getPlan(project, team.id)).toMatchObject({ audience: 'both' });
    });
  });

  it('a plan row written without an audience (as before the column) is sold to users; the column takes no other value', async () => {
    const id = randomUUID();
    await sql(
      `insert into billing_plans (id, project_id, name, description, features, hidden, recommended, trials_enabled, position, created_at, updated_at)
       values (?, ?, 'Legacy', '', '[]'::jsonb, false, false, false, 20, ?, ?)`,
      [id, project, T0, T0],
    );
    expect(await inContext(() => catalog.getPlan(project, id))).toMatchObject({ name: 'Legacy', audience: 'users' });
    await expect(sql(`update billing_plans set audience = 'teams' where id = ?`, [id])).rejects.toThrow(/check constraint/);
  });
});
