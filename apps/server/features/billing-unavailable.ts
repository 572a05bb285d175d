import { refuse } from '../../../application/billing/errors';
import type { BillingUseCases } from '../../../application/billing/use-cases';

/**
 * TEMPORARY, until apps/server/features/billing.ts (wireBilling) is wired in: billing use cases
 * of a deployment where nothing is connected (empty catalog, no subscription, every write
 * refused with billing_not_connected, every webhook with webhook_project_unknown).
 */
export function unavailableBilling(): BillingUseCases {
  const notConnected = async () => refuse('billing_not_connected');
  return {
    connectBilling: notConnected,
    billingStatus: async () => ({ ok: true, value: null }),
    disconnectBilling: notConnected,
    createPlan: notConnected,
    updatePlan: notConnected,
    listPlans: async () => ({ ok: true, value: [] }),
    reorderPlans: notConnected,
    createPrice: notConnected,
    archivePrice: notConnected,
    listSubscriptions: async () => ({ ok: true, value: [] }),
    listEvents: async () => ({ ok: true, value: [] }),
    advanceSandbox: notConnected,
    createSandboxPromotionCode: notConnected,
    listVisiblePlans: async () => [],
    listProducts: async () => [],
    startCheckout: notConnected,
    createSetupIntent: notConnected,
    subscribe: notConnected,
    currentSubscription: async () => ({ ok: true, value: null }),
    listInvoices: async () => ({ ok: true, value: [] }),
    entitlements: async () => null,
    previewChange: notConnected,
    changeSubscription: notConnected,
    cancelSubscription: notConnected,
    pauseSubscription: notConnected,
    resumeSubscription: notConnected,
    receiveStripeWebhook: async () => refuse('webhook_project_unknown'),
    runSandboxRenewals: async () => ({ changed: 0 }),
    sandboxCheckout: async () => refuse('checkout_not_found'),
    completeSandboxCheckout: async () => refuse('checkout_not_found'),
  };
}
