import { makeReadOverview } from '../../../application/overview/read-overview';
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
}

/** The console's project overview (docs/dashboard.md, "Overview"): charts of the last 7, 30 or 90 days, read by SQL. */
export function wireOverview({ core, console: accounts }: OverviewFeatureInput): OverviewFeature {
  const readOverview = makeReadOverview({ reader: core.stores.overview, clock: core.clock });
  return { useCases: { readOverview }, adminRoutes: { overview: makeAdminOverviewRoutes({ readOverview, accounts }) } };
}
