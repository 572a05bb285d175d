import type { BillingOrganizations } from '../billing/billing-subject';
import { makeCheckUsage, makeReleaseUsage } from './consume-usage';
import { makeExpireCredits, makeGrantCredits, makeListCredits } from './credits';
import type { UsageDeps } from './deps';
import { makeCreateMeter, makeListMeters, makeUpdateMeter } from './meters';
import { makeMyUsage, makeSubjectUsage, makeSubjectUsageDetail, makeTopConsumers, makeUsageStanding } from './read-usage';
import { makeTrackUsage } from './track-usage';

/** Usage-based billing's use cases (docs/usage.md), as the routes, the console and the CLI call them. */
export function makeUsageUseCases(deps: UsageDeps & { organizations: BillingOrganizations }) {
  return {
    listMeters: makeListMeters(deps),
    createMeter: makeCreateMeter(deps),
    updateMeter: makeUpdateMeter(deps),
    track: makeTrackUsage(deps),
    check: makeCheckUsage(deps),
    release: makeReleaseUsage(deps),
    subjectUsage: makeSubjectUsage(deps),
    myUsage: makeMyUsage(deps),
    usageStanding: makeUsageStanding(deps),
    subjectUsageDetail: makeSubjectUsageDetail(deps),
    topConsumers: makeTopConsumers(deps),
    grantCredits: makeGrantCredits(deps),
    listCredits: makeListCredits(deps),
    expireCredits: makeExpireCredits(deps),
  };
}

export type UsageUseCases = ReturnType<typeof makeUsageUseCases>;
