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
import { makeReceiveStripeWebhook } from '../../../application/billing/receive-stripe-webhook';
import { makeSandboxOperations } from '../../../application/billing/sandbox-operations';
import { makeStartCheckout } from '../../../application/billing/start-checkout';
import { makeSubscribe } from '../../../application/billing/subscribe';
import { auditBillingActions } from '../../../application/billing/audited-actions';
import type { BillingUseCases } from '../../../application/billing/use-cases';
import { ProcessorRegistry } from '../../../infrastructure/billing/processor-directory';
import { SandboxControlService } from '../../../infrastructure/billing/sandbox/sandbox-control';
import { StripeWebhooks } from '../../../infrastructure/billing/stripe/stripe-webhooks';
import { PostgresBillingConnectionStore } from '../../../infrastructure/persistence/postgres-billing-connection.store';
import { PostgresCustomerStore } from '../../../infrastructure/persistence/postgres-billing-customer.store';
import { PostgresBillingEventLog, PostgresEventPublisher } from '../../../infrastructure/persistence/postgres-billing-event.store';
import { PostgresUserDirectory } from '../../../infrastructure/persistence/postgres-user-directory';
import { PostgresSubscriptionLocks } from '../../../infrastructure/persistence/postgres-billing-lock.store';
import { PostgresCatalogStore } from '../../../infrastructure/persistence/postgres-catalog.store';
import { PostgresEntitlementsReader } from '../../../infrastructure/persistence/postgres-entitlements.reader';
import { PostgresInvoiceStore } from '../../../infrastructure/persistence/postgres-invoice.store';
import { PostgresProcessorEventLog } from '../../../infrastructure/persistence/postgres-processor-event.store';
import { PostgresSubscriptionStore } from '../../../infrastructure/persistence/postgres-subscription.store';
import type { CoreConfig } from '../config';
import type { Core } from '../core';
import type { JobsFeature } from './types';
import { webhookEventPublisher } from './webhooks';

/** Whether the sandbox processor may run: never with real money, so not in production unless asked. */
export const sandboxAllowed = (config: Pick<CoreConfig, 'NODE_ENV' | 'BILLING_SANDBOX_IN_PRODUCTION'>): boolean =>
  config.NODE_ENV !== 'production' || config.BILLING_SANDBOX_IN_PRODUCTION;

export interface BillingFeature {
  useCases: BillingUseCases;
  /** The sandbox's renewals, trial ends and scheduled cancellations, on BILLING_SANDBOX_CRON. */
  jobs: JobsFeature;
}

/**
 * Billing: the catalog, a project's connection to Stripe or the sandbox, subscriptions, invoices,
 * entitlements and inbound processor webhooks. The server, the worker and the CLI build the same
 * use cases from the core; the HTTP routes and the CLI commands call nothing else.
 */
export function wireBilling({ core, config }: { core: Core; config: CoreConfig }): BillingFeature {
  const { db, clock, crypto, box, logger } = core;
  const sandboxDeps = { db, clock, crypto, publicUrl: config.publicUrl };
  const allowed = sandboxAllowed(config);
  const deps: BillingDeps = {
    connections: new PostgresBillingConnectionStore(db, box),
    catalog: new PostgresCatalogStore(db),
    customers: new PostgresCustomerStore(db),
    subscriptions: new PostgresSubscriptionStore(db),
    invoices: new PostgresInvoiceStore(db),
    // Each new event is also fanned out to the project's webhook endpoints, in the same transaction.
    events: webhookEventPublisher({ core, config }, new PostgresEventPublisher(db)),
    eventLog: new PostgresBillingEventLog(db),
    locks: new PostgresSubscriptionLocks(db),
    processorEvents: new PostgresProcessorEventLog(db),
    entitlementsReader: new PostgresEntitlementsReader(db),
    processors: new ProcessorRegistry({
      sandbox: sandboxDeps,
      stripe: { apiUrl: config.STRIPE_API_URL, timeoutMs: config.STRIPE_TIMEOUT_MS, maxNetworkRetries: config.STRIPE_MAX_NETWORK_RETRIES },
    }),
    webhooks: new StripeWebhooks(),
    sandbox: allowed ? new SandboxControlService(sandboxDeps) : null,
    projects: core.stores.projects,
    users: core.stores.users,
    directory: new PostgresUserDirectory(db),
    uow: db,
    clock,
    crypto,
    logger,
    audit: core.audit,
    settings: { sandboxAllowed: allowed, publicUrl: config.publicUrl },
  };
  const sandbox = makeSandboxOperations(deps);
  // The end user's subscribe, change, cancel, pause and resume are recorded in the audit log.
  const useCases: BillingUseCases = auditBillingActions({
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
    receiveStripeWebhook: makeReceiveStripeWebhook(deps),
    runSandboxRenewals: sandbox.runSandboxRenewals,
    sandboxCheckout: sandbox.sandboxCheckout,
    completeSandboxCheckout: sandbox.completeSandboxCheckout,
  }, { audit: core.audit, clock });
  const jobs: JobsFeature = {
    schedules: allowed
      ? [{ name: 'billing.sandbox-renewals', cron: config.BILLING_SANDBOX_CRON, run: () => useCases.runSandboxRenewals().then(() => undefined) }]
      : [],
  };
  return { useCases, jobs };
}
