import { randomUUID } from 'node:crypto';
import type { Database } from '../../infrastructure/persistence/database';
import { PostgresUserDirectory } from '../../infrastructure/persistence/postgres-user-directory';

/**
 * The operator's user search at scale (the Users list's `--search`): a project seeded with many
 * users in one statement, and the plan PostgreSQL picks for the store's own statement. Used by
 * test/integration/user-search-index.test.ts and the bench's user-search workload.
 */

/** Inserts `count` users `user-<n>@example.com` into the project with one generate_series statement. */
export async function seedUsers(db: Database, projectId: string, count: number): Promise<void> {
  await db.withContext(() =>
    db.query(
      `insert into users (id, project_id, email, provider, email_verified, created_at, updated_at)
       select gen_random_uuid(), ?, 'user-' || n || '@example.com', 'email', true,
              timestamptz '2026-01-01' + n * interval '1 second', timestamptz '2026-01-01' + n * interval '1 second'
         from generate_series(1, ?) as n`,
      [projectId, count],
    ),
  );
  await db.withContext(() => db.query('analyze users'));
}

/** Adds one user with this email (the needle a search looks for). */
export async function addUser(db: Database, projectId: string, email: string): Promise<void> {
  await db.withContext(() =>
    db.query(`insert into users (id, project_id, email, provider, email_verified, created_at, updated_at) values (?, ?, ?, 'email', true, now(), now())`, [
      randomUUID(),
      projectId,
      email,
    ]),
  );
}

export interface SearchRun {
  /** The users found. */
  found: number;
  /** How long the store's search took, in milliseconds. */
  ms: number;
}

/** Runs the store's search for `text` (a page of 50, as the CLI asks) and times it. */
export async function timeSearch(db: Database, projectId: string, text: string): Promise<SearchRun> {
  const directory = new PostgresUserDirectory(db);
  const started = process.hrtime.bigint();
  const users = await db.withContext(() => directory.search(projectId, { emailContains: text, limit: 50 }));
  return { found: users.length, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };

/**
 * The plan of the store's own search statement (recorded as the store sends it, then explained
 * with its parameters): the text EXPLAIN prints and the indexes it reads.
 */
export async function searchPlan(db: Database, projectId: string, text: string): Promise<{ text: string; indexes: string[]; nodes: string[] }> {
  let statement: { sql: string; params: unknown[] } | null = null;
  const recording = {
    query: async (sql: string, params: unknown[] = []) => {
      statement = { sql, params };
      return [];
    },
  } as unknown as Database;
  await new PostgresUserDirectory(recording).search(projectId, { emailContains: text, limit: 50 });
  if (statement === null) throw new Error('the search sent no statement');
  const { sql, params } = statement;
  const [json] = await db.withContext(() => db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${sql}`, params));
  const lines = await db.withContext(() => db.query<{ 'QUERY PLAN': string }>(`explain (analyze, costs off, timing off, summary off) ${sql}`, params));
  const indexes: string[] = [];
  const nodes: string[] = [];
  const walk = (node: PlanNode) => {
    nodes.push(node['Node Type']);
    if (node['Index Name']) indexes.push(node['Index Name']);
    node.Plans?.forEach(walk);
  };
  walk(json!['QUERY PLAN'][0]!.Plan);
  return { text: lines.map((l) => l['QUERY PLAN']).join('\n'), indexes, nodes };
}
