import type { MeteredFeatures } from '../../../application/billing/billing.store';
import { makeUsageStanding } from '../../../application/usage/read-usage';
import { makeUsageUseCases, type UsageUseCases } from '../../../application/usage/use-cases';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import type { Core } from '../core';
import { makeAdminUsageRoutes } from '../http/admin-usage.routes';
import { makeUsageRoutes } from '../http/usage.routes';
import type { ConsoleAccounts } from './console';
import type { Feature } from './types';
import { webhookEventPublisher } from './webhooks';

export interface UsageFeatureInput {
  core: Core;
  /** Which projects a console account may see (the admin routes). */
  console: Pick<ConsoleAccounts, 'projectAccess'>;
}

export interface UsageFeature extends Feature {
  useCases: UsageUseCases;
  routes: { usage: ReturnType<typeof makeUsageRoutes> };
  adminRoutes: { usage: ReturnType<typeof makeAdminUsageRoutes> };
  /** Credits past their expiry marked expired (credits.expired), every minute. */
  schedules: ScheduledJob[];
}

/** The usage use cases on the core's stores (the server's, the worker's and the CLI's). */
export function usageUseCases(core: Core): UsageUseCases {
  const { stores } = core;
  return makeUsageUseCases({
    meters: stores.usage.meters,
    subjects: stores.usage.subjects,
    ledger: stores.usage.ledger,
    credits: stores.usage.credits,
    // Each usage event is also fanned out to the project's webhook endpoints, in the same transaction.
    events: webhookEventPublisher({ core }, stores.billing.events),
    uow: core.db,
    clock: core.clock,
    crypto: core.crypto,
    audit: core.audit,
    organizations: { memberships: core.memberships, store: stores.organizations },
  });
}

/** The standing of a plan's metered features, which entitlements (billing's and token verification's) add. */
export function meteredFeatures(core: Core): MeteredFeatures {
  const standing = makeUsageStanding({
    meters: core.stores.usage.meters,
    ledger: core.stores.usage.ledger,
    credits: core.stores.usage.credits,
    clock: core.clock,
  });
  return (projectId, subject, current) => standing(projectId, subject, current, { withCredits: false });
}

/**
 * Usage-based billing (docs/usage.md): meters, plan limits, usage tracked, checked and consumed,
 * credits; the project server's routes, the signed-in user's own usage, the console's routes and
 * the expiry of credits.
 */
export function wireUsage({ core, console: accounts }: UsageFeatureInput): UsageFeature {
  const useCases = usageUseCases(core);
  return {
    useCases,
    routes: { usage: makeUsageRoutes(useCases, () => core.clock.now()) },
    adminRoutes: { usage: makeAdminUsageRoutes({ usage: useCases, accounts, now: () => core.clock.now() }) },
    schedules: [useCases.expireCredits],
  };
}
