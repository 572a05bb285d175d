import type { Clock } from '../ports/clock';
import type { AuditLogStore } from './audit-log';

/** Rows deleted per statement, so that pruning a large backlog holds no long lock. */
export const AUDIT_PRUNE_BATCH = 5000;

export interface PruneAuditLogDeps {
  audit: Pick<AuditLogStore, 'pruneBefore'>;
  clock: Clock;
  /** AUDIT_RETENTION_DAYS: entries older than this many days are deleted. */
  retentionDays: number;
}

/**
 * The audit log's retention: deletes entries older than `retentionDays` by the clock, a batch at a
 * time until none is left. Returns how many were deleted. Run by the `audit.prune` scheduled job.
 */
export function makePruneAuditLog(deps: PruneAuditLogDeps) {
  return async (options: { signal?: AbortSignal } = {}): Promise<number> => {
    const before = new Date(deps.clock.now().getTime() - deps.retentionDays * 86_400_000);
    let total = 0;
    for (;;) {
      const deleted = await deps.audit.pruneBefore(before, AUDIT_PRUNE_BATCH);
      total += deleted;
      if (deleted < AUDIT_PRUNE_BATCH || options.signal?.aborted) return total;
    }
  };
}
