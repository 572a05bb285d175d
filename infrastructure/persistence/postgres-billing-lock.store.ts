import type { SubscriptionLocks } from '../../application/billing/billing.store';
import type { Database } from './database';
import { isUuid } from './rows';

/**
 * Leases in billing_locks, one row per (project, subject): a user's or an organization's id (both
 * UUIDs, so they never meet). Acquiring is one statement: the row is inserted, or taken over when
 * its lease has expired; a live lease of another holder leaves it as is and nothing is returned.
 * Concurrent acquirers serialize on the row, so one wins.
 */
export class PostgresSubscriptionLocks implements SubscriptionLocks {
  constructor(private readonly db: Database) {}

  async acquire(projectId: string, subjectId: string, holder: string, ttlSeconds: number, now: Date): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(subjectId)) return false;
    const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
    const rows = await this.db.query(
      `insert into billing_locks (project_id, subject_id, holder, expires_at) values (?, ?, ?, ?)
       on conflict (project_id, subject_id) do update set holder = excluded.holder, expires_at = excluded.expires_at
        where billing_locks.expires_at <= ?
       returning holder`,
      [projectId, subjectId, holder, expiresAt, now],
    );
    return rows.length > 0;
  }

  async renew(projectId: string, subjectId: string, holder: string, ttlSeconds: number, now: Date): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(subjectId) || !isUuid(holder)) return false;
    const rows = await this.db.query('update billing_locks set expires_at = ? where project_id = ? and subject_id = ? and holder = ? returning holder', [
      new Date(now.getTime() + ttlSeconds * 1000),
      projectId,
      subjectId,
      holder,
    ]);
    return rows.length > 0;
  }

  /** Releases the lease only if `holder` still holds it (an expired lease may have passed to another). */
  async release(projectId: string, subjectId: string, holder: string): Promise<void> {
    if (!isUuid(projectId) || !isUuid(subjectId) || !isUuid(holder)) return;
    await this.db.query('delete from billing_locks where project_id = ? and subject_id = ? and holder = ?', [projectId, subjectId, holder]);
  }
}
