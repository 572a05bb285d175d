import type { BillingUseCases } from '../../../application/billing/use-cases';
import { makeBillingRoutes } from '../http/billing.routes';
import { mountSandboxCheckout } from '../http/sandbox-checkout.page';
import type { HttpFeature } from './types';

/**
 * Billing over HTTP: the contract's billing routes and the sandbox checkout page, on the billing
 * use cases the billing feature assembles.
 */
export function billingHttp(billing: BillingUseCases): HttpFeature<{ billing: ReturnType<typeof makeBillingRoutes> }> {
  return {
    routes: { billing: makeBillingRoutes(billing) },
    pages: (app) => mountSandboxCheckout(app, billing),
  };
}
