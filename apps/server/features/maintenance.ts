import { idempotencyExpiry } from '../../../application/idempotency/run-idempotent';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import type { Feature } from './types';

export interface MaintenanceFeatureInput {
  core: Core;
  config: Pick<CoreConfig, 'OUTBOX_RETENTION_DAYS'>;
}

export interface MaintenanceFeature extends Feature {
  /**
   * `outbox.sweep` (hands over again what was lost or stuck, every minute), `outbox.purge` (settled
   * messages older than OUTBOX_RETENTION_DAYS), `rate-limits.purge-expired` (every minute) and
   * `idempotency.purge-expired` (Idempotency-Key records older than 24 hours, hourly).
   */
  schedules: ScheduledJob[];
}

/** The upkeep of the tables every feature shares: the outbox, the rate-limit counters and the Idempotency-Key records. */
export function wireMaintenance({ core, config }: MaintenanceFeatureInput): MaintenanceFeature {
  const { outbox, rateLimiter, clock, stores } = core;
  return {
    schedules: [
      outbox.sweepJob(),
      outbox.purgeJob(config.OUTBOX_RETENTION_DAYS),
      { name: 'rate-limits.purge-expired', cron: '* * * * *', run: () => rateLimiter.purgeExpired().then(() => undefined) },
      // Idempotency-Key answers are kept 24 hours; older records only take room.
      {
        name: 'idempotency.purge-expired',
        cron: '7 * * * *',
        run: () => stores.idempotentRequests.purgeExpired(idempotencyExpiry(clock.now())).then(() => undefined),
      },
    ],
  };
}
