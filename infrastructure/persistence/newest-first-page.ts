import type { Database } from './database';
import { isUuid } from './rows';

/** A condition of a page query: its SQL, with `?` for each of its parameters. */
export type PageCondition = readonly [sql: string, ...params: unknown[]];

export interface NewestFirstPageQuery {
  /** A table with `id`, `project_id`, `user_id` and `created_at` columns. */
  table: string;
  /** The select list. */
  columns: string;
  /** The column that orders rows created in the same instant, after `created_at`. */
  tieBreaker: 'id' | 'seq';
  projectId: string;
  /** Only this user's rows. */
  userId?: string;
  /** Further conditions, all of them met. */
  conditions?: readonly PageCondition[];
  limit: number;
  /** The id of the last row of the previous page: the page after that row, by its place in this order. */
  after?: string;
}

/**
 * One page of a project's rows, newest first (`created_at desc`, then the tie-breaker desc), read in
 * order from the table's (project_id | user_id, created_at) index. An id that is not a uuid (a
 * project, a user, the cursor) gives an empty page, as does a cursor that names no row of the
 * project.
 */
export async function newestFirstPage(db: Database, page: NewestFirstPageQuery): Promise<Array<Record<string, unknown>>> {
  if (!isUuid(page.projectId)) return [];
  const where = ['project_id = ?'];
  const params: unknown[] = [page.projectId];
  if (page.userId !== undefined) {
    if (!isUuid(page.userId)) return [];
    where.push('user_id = ?');
    params.push(page.userId);
  }
  for (const [sql, ...values] of page.conditions ?? []) {
    where.push(sql);
    params.push(...values);
  }
  const order = `created_at, ${page.tieBreaker}`;
  if (page.after !== undefined) {
    if (!isUuid(page.after)) return [];
    where.push(`(${order}) < (select ${order} from ${page.table} where id = ? and project_id = ?)`);
    params.push(page.after, page.projectId);
  }
  params.push(Math.max(0, Math.floor(page.limit)));
  return db.query(`select ${page.columns} from ${page.table} where ${where.join(' and ')} order by created_at desc, ${page.tieBreaker} desc limit ?`, params);
}
