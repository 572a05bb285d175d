import type { Clock } from '../ports/clock';
import type { ScheduledJob } from '../ports/scheduled-job';
import type { ActivityDays } from './overview.store';

/**
 * How long a user's active days are kept. The daily and monthly counts are kept apart and never
 * pruned; the days serve only to find a user's previous active day, and one more than 30 days back
 * counts as none (the 30-day coverage it gave is over), so a day older than this is no longer read.
 */
export const ACTIVITY_DAYS_KEPT = 32;

/** Deletes users' active days older than {@link ACTIVITY_DAYS_KEPT} days, in batches, once a day. */
export function makePruneActivityDays(deps: { days: ActivityDays; clock: Clock }): ScheduledJob {
  return {
    name: 'overview.activity-days.prune',
    cron: '23 3 * * *',
    timeoutSeconds: 300,
    async run({ signal }) {
      const before = new Date(deps.clock.now().getTime() - ACTIVITY_DAYS_KEPT * 86_400_000).toISOString().slice(0, 10);
      while (!signal.aborted && (await deps.days.deleteBefore(before, 10_000)) > 0);
    },
  };
}
