import type { Database } from '../persistence/database';
import type { PoolState } from './prometheus-metrics';

/** The parts of tarn's pool (knex's, under MikroORM) that are read. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  on(event: 'acquireRequest', listener: (eventId: number) => void): void;
  on(event: 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void;
}

const poolOf = (db: Database): TarnPool | null =>
  ((db.orm.em.getConnection().getKnex().client as unknown as { pool?: TarnPool }).pool ?? null) as TarnPool | null;

/**
 * The database pool's state for the scrape, and each wait for a connection (from tarn's acquire
 * events: request to success) for `observeWait`. The pool is the one the stores' statements use
 * (MikroORM's knex pool); pg-boss's own small pool is not included.
 */
export function watchDatabasePool(db: Database, observeWait: (seconds: number) => void): () => PoolState | null {
  const watched = poolOf(db);
  if (watched) {
    const started = new Map<number, number>();
    watched.on('acquireRequest', (id) => started.set(id, performance.now()));
    const ended = (id: number) => {
      const at = started.get(id);
      if (at === undefined) return;
      started.delete(id);
      observeWait((performance.now() - at) / 1000);
    };
    watched.on('acquireSuccess', ended);
    watched.on('acquireFail', ended);
  }
  return () => {
    // Looked up at each scrape: a reconnect replaces the pool.
    const pool = poolOf(db);
    if (!pool) return null;
    return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max };
  };
}
