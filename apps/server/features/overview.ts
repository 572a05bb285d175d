import { makePruneActivityDays } from '../../../application/overview/prune-activity-days';
import { makeReadOverview } from '../../../application/overview/read-overview';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { Core } from '../core';
import { makeAdminOverviewRoutes } from '../http/admin-overview.routes';
import type { ConsoleAccounts } from './console';
import type { Feature } from './types';

export interface OverviewFeatureInput {
  core: Core;
  /** Which projects a console account may see. */
  console: Pick<ConsoleAccounts, 'projectAccess'>;
}

export interface OverviewFeature extends Feature {
  useCases: { readOverview: ReturnType<typeof makeReadOverview> };
  adminRoutes: { overview: ReturnType<typeof makeAdminOverviewRoutes> };
  /** Users' active days older than 32 days deleted, once a day (the counts stay). */
  schedules: ScheduledJob[];
}

/** The console's project overview (docs/dashboard.md, "Overview"): charts of the last 7, 30 or 90 days, read by SQL. */
export function wireOverview({ core, console: accounts }: OverviewFeatureInput): OverviewFeature {
  const readOverview = makeReadOverview({ reader: core.stores.overview, clock: core.clock });
  return {
    useCases: { readOverview },
    adminRoutes: { overview: makeAdminOverviewRoutes({ readOverview, accounts }) },
    schedules: [makePruneActivityDays({ days: core.stores.overview, clock: core.clock })],
  };
}
