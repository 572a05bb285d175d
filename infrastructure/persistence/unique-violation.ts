import type { Database } from './database';

/**
 * Whether `error` is PostgreSQL's unique_violation (SQLSTATE 23505) raised by the index or
 * constraint named `constraint`. The pg driver's error carries both; MikroORM's exception copies
 * them, so the check holds inside and outside a transaction.
 */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint: name } = error as { code?: unknown; constraint?: unknown };
  return code === '23505' && name === constraint;
}

/**
 * Runs one write and answers false when the unique index `constraint` refuses it; any other error
 * propagates. Inside a transaction the write runs under a savepoint, rolled back on that refusal,
 * so the caller's transaction stays usable (a failed statement would otherwise abort it). Outside
 * one, the statement is its own transaction and needs none.
 */
export async function writeUnlessTaken(db: Database, constraint: string, write: () => Promise<unknown>): Promise<boolean> {
  const inTransaction = db.em.isInTransaction();
  if (inTransaction) await db.query('savepoint unique_write');
  try {
    await write();
  } catch (e) {
    if (!isUniqueViolation(e, constraint)) throw e;
    if (inTransaction) await db.query('rollback to savepoint unique_write');
    return false;
  }
  if (inTransaction) await db.query('release savepoint unique_write');
  return true;
}
