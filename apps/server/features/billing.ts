import type express from 'express';
import type { BillingDeps } from '../../../application/billing/deps';
import { makeChangeSubscription, makePreviewChange } from '../../../application/billing/change-subscription';
import { makeCreateSetupIntent } from '../../../application/billing/create-setup-intent';
import { makeListProducts, makeListVisiblePlans } from '../../../application/billing/list-catalog';
import { makeListEvents, makeListProjectInvoices, makeListSubscriptions } from '../../../application/billing/list-records';
import { makeArchivePrice, makeCreatePrice } from '../../../application/billing/manage-prices';
import { makeCreatePlan, makeListPlans, makeReorderPlans, makeUpdatePlan } from '../../../application/billing/manage-plans';
import { makeBillingStatus, makeConnectBilling, makeDisconnectBilling } from '../../../application/billing/manage-connection';
import { makeCancelSubscription, makePauseSubscription, makeResumeSubscription } from '../../../application/billing/manage-subscription';
import { makeCurrentSubscription, makeEntitlements, makeListInvoices } from '../../../application/billing/read-subscription';
import { makeReceiveProcessorWebhook } from '../../../application/billing/receive-processor-webhook';
import { makeReportUsage } from '../../../application/billing/report-usage';
import { makeArchiveCreditPack, makeBuyCreditPack, makeCreateCreditPack, makeListCreditPacks } from '../../../application/billing/credit-packs';
import { makeSandboxOperations } from '../../../application/billing/sandbox-operations';
import { makeStartCheckout } from '../../../application/billing/start-checkout';
import { makeSubscribe } from '../../../application/billing/subscribe';
import { makeOrganizationBilling, makeWindDownOrganization } from '../../../application/billing/organization-billing';
import { makeSubjectEntitlements } from '../../../application/billing/read-subscription';
import { makePreviewSeats, makeSetSeats, makeSyncSeats } from '../../../application/billing/organization-seats';
import { ORGANIZATION_SEATS_TOPIC } from '../../../application/organizations/seats';
import { ORGANIZATION_DELETED_TOPIC } from '../../../application/organizations/organization-deleted';
import { handleTopic, type TopicHandler } from '../../../application/ports/outbox';
import { auditBillingActions } from '../../../application/billing/audited-actions';
import type { BillingUseCases } from '../../../application/billing/use-cases';
import { ProcessorRegistry } from '../../../infrastructure/billing/processor-directory';
import { SandboxControlService } from '../../../infrastructure/billing/sandbox/sandbox-control';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import type { ScheduledJob } from '../../../application/ports/scheduled-job';
import { makeAdminBillingRoutes } from '../http/admin-billing.routes';
import { makeBillingRoutes } from '../http/billing.routes';
import { mountSandboxCheckout } from '../http/sandbox-checkout.page';
import type { ConsoleAccounts } from './console';
import type { Feature } from './types';
import { meteredFeatures } from './usage';
import { webhookEventPublisher } from './webhooks';

/** Whether the sandbox processor may run: never with real money, so not in production unless asked. */
export const sandboxAllowed = (config: Pick<CoreConfig, 'NODE_ENV' | 'BILLING_SANDBOX_IN_PRODUCTION'>): boolean =>
  config.NODE_ENV !== 'production' || config.BILLING_SANDBOX_IN_PRODUCTION;

export interface BillingFeatureInput {
  core: Core;
  config: CoreConfig;
  /** The console's check that an account may see a project, which every billing admin route asks first. */
  console: Pick<ConsoleAccounts, 'projectAccess'>;
}

export interface BillingFeature extends Feature {
  useCases: BillingUseCases;
  /** The end user's and the processors' routes (contract/billing.contract.ts). */
  routes: { billing: ReturnType<typeof makeBillingRoutes> };
  /** The console's Billing pages (contract/admin/billing.contract.ts). */
  adminRoutes: { billing: ReturnType<typeof makeAdminBillingRoutes> };
  /** The sandbox processor's checkout page. */
  pages: (app: express.Express) => void;
  /** A deleted organization's subscription canceled. */
  handlers: readonly TopicHandler[];
  /** The sandbox's renewals, trial ends and scheduled cancellations, on BILLING_SANDBOX_CRON. */
  schedules: ScheduledJob[];
}

/**
 * Billing: the catalog, a project's connection to Stripe or the sandbox, subscriptions, invoices,
 * entitlements and inbound processor webhooks. The server, the worker and the CLI build the same
 * use cases from the core; the HTTP routes, the sandbox checkout page and the CLI commands call
 * nothing else.
 */
export function wireBilling({ core, config, console }: BillingFeatureInput): BillingFeature {
  const { db, clock, crypto, logger } = core;
  const stores = core.stores.billing;
  const sandboxDeps = { db, clock, crypto, publicUrl: config.publicUrl };
  const allowed = sandboxAllowed(config);
  const deps: BillingDeps = {
    connections: stores.connections,
    catalog: stores.catalog,
    customers: stores.customers,
    subscriptions: stores.subscriptions,
    invoices: stores.invoices,
    // Each new event is also fanned out to the project's webhook endpoints, in the same transaction.
    events: webhookEventPublisher({ core, config }, stores.events),
    eventLog: stores.eventLog,
    usage: meteredFeatures(core),
    meteredUsage: core.stores.usage.metered,
    creditPacks: core.stores.usage.packs,
    locks: stores.locks,
    processorEvents: stores.processorEvents,
    entitlementsReader: stores.entitlements,
    organizations: { memberships: core.memberships, store: core.stores.organizations },
    processors: new ProcessorRegistry({
      sandbox: sandboxDeps,
      stripe: { apiUrl: config.STRIPE_API_URL, timeoutMs: config.STRIPE_TIMEOUT_MS, maxNetworkRetries: config.STRIPE_MAX_NETWORK_RETRIES },
    }),
    sandbox: allowed ? new SandboxControlService(sandboxDeps) : null,
    projects: core.stores.projects,
    users: core.stores.users,
    directory: core.stores.directory,
    uow: db,
    outbox: core.outbox,
    clock,
    crypto,
    logger,
    audit: core.audit,
    settings: { sandboxAllowed: allowed, publicUrl: config.publicUrl },
  };
  const sandbox = makeSandboxOperations(deps);
  // The end user's subscribe, change, cancel, pause and resume are recorded in the audit log.
  const useCases: BillingUseCases = auditBillingActions(
    {
      connectBilling: makeConnectBilling(deps),
      billingStatus: makeBillingStatus(deps),
      disconnectBilling: makeDisconnectBilling(deps),
      createPlan: makeCreatePlan(deps),
      updatePlan: makeUpdatePlan(deps),
      listPlans: makeListPlans(deps),
      reorderPlans: makeReorderPlans(deps),
      createPrice: makeCreatePrice(deps),
      archivePrice: makeArchivePrice(deps),
      listSubscriptions: makeListSubscriptions(deps),
      listProjectInvoices: makeListProjectInvoices(deps),
      listEvents: makeListEvents(deps),
      advanceSandbox: sandbox.advanceSandbox,
      sandboxClock: sandbox.sandboxClock,
      createSandboxPromotionCode: sandbox.createSandboxPromotionCode,
      listVisiblePlans: makeListVisiblePlans(deps),
      listProducts: makeListProducts(deps),
      startCheckout: makeStartCheckout(deps),
      createSetupIntent: makeCreateSetupIntent(deps),
      subscribe: makeSubscribe(deps),
      currentSubscription: makeCurrentSubscription(deps),
      listInvoices: makeListInvoices(deps),
      entitlements: makeEntitlements(deps),
      previewChange: makePreviewChange(deps),
      changeSubscription: makeChangeSubscription(deps),
      cancelSubscription: makeCancelSubscription(deps),
      pauseSubscription: makePauseSubscription(deps),
      resumeSubscription: makeResumeSubscription(deps),
      receiveProcessorWebhook: makeReceiveProcessorWebhook(deps),
      runSandboxRenewals: sandbox.runSandboxRenewals,
      sandboxCheckout: sandbox.sandboxCheckout,
      completeSandboxCheckout: sandbox.completeSandboxCheckout,
      organizationBilling: makeOrganizationBilling(deps),
      windDownOrganization: makeWindDownOrganization(deps),
      subjectEntitlements: makeSubjectEntitlements(deps),
      previewSeats: makePreviewSeats(deps),
      setSeats: makeSetSeats(deps),
      syncSeats: makeSyncSeats(deps),
      reportUsage: makeReportUsage(deps),
      createCreditPack: makeCreateCreditPack(deps),
      listCreditPacks: makeListCreditPacks(deps),
      archiveCreditPack: makeArchiveCreditPack(deps),
      buyCreditPack: makeBuyCreditPack(deps),
    },
    { audit: core.audit, clock },
  );
  return {
    useCases,
    routes: { billing: makeBillingRoutes(useCases) },
    adminRoutes: { billing: makeAdminBillingRoutes({ accounts: console, billing: useCases }) },
    pages: (app) => mountSandboxCheckout(app, useCases),
    handlers: [
      handleTopic(ORGANIZATION_SEATS_TOPIC, (m) => useCases.syncSeats(m.projectId, m.organizationId)),
      handleTopic(ORGANIZATION_DELETED_TOPIC, async (m, { messageId }) => {
        const outcome = await useCases.windDownOrganization({ ...m, messageId });
        if (outcome === 'canceled')
          logger.info({ projectId: m.projectId, organizationId: m.organizationId }, "billing: a deleted organization's subscription was canceled");
      }),
    ],
    schedules: [
      // Usage past the included amounts, reported to the processor that bills it (docs/usage.md).
      { name: 'billing.report-usage', cron: '* * * * *', run: () => useCases.reportUsage().then(() => undefined) },
      ...(allowed
        ? [{ name: 'billing.sandbox-renewals', cron: config.BILLING_SANDBOX_CRON, run: () => useCases.runSandboxRenewals().then(() => undefined) }]
        : []),
    ],
  };
}
