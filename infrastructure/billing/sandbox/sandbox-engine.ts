import { SandboxCatalog } from './sandbox-catalog';
import { SandboxCheckout } from './sandbox-checkout';
import { SandboxClock } from './sandbox-clock';
import { SandboxContext, type SandboxDependencies } from './sandbox-context';
import { SandboxCustomers } from './sandbox-customers';
import { SandboxInvoices } from './sandbox-invoices';
import { SandboxPaymentMethods } from './sandbox-payment-methods';
import { SandboxPromotionCodes } from './sandbox-promotion-codes';
import { SandboxRefunds } from './sandbox-refunds';
import { SandboxSubscriptionChanges } from './sandbox-subscription-changes';
import { SandboxSubscriptions } from './sandbox-subscriptions';

export type { SandboxDependencies } from './sandbox-context';

/**
 * The sandbox processor's work, shared by the per-project `SandboxProcessor` (the port) and the
 * cross-project `SandboxControlService` (clock, due work, checkout page, promotion codes): one
 * module per resource, as Stripe's API is laid out, over one shared context (stored objects,
 * sandbox time, idempotent requests). Every transition is the domain's
 * (domain/billing/subscription.ts); the modules store the results the way Stripe would report
 * them and charge test cards. No money moves.
 */
export class SandboxEngine {
  readonly context: SandboxContext;
  readonly catalog: SandboxCatalog;
  readonly customers: SandboxCustomers;
  readonly paymentMethods: SandboxPaymentMethods;
  readonly promotionCodes: SandboxPromotionCodes;
  readonly invoices: SandboxInvoices;
  readonly subscriptions: SandboxSubscriptions;
  readonly subscriptionChanges: SandboxSubscriptionChanges;
  readonly refunds: SandboxRefunds;
  readonly checkout: SandboxCheckout;
  readonly clock: SandboxClock;

  constructor(deps: SandboxDependencies) {
    const context = new SandboxContext(deps);
    this.context = context;
    this.catalog = new SandboxCatalog(context);
    this.customers = new SandboxCustomers(context);
    this.paymentMethods = new SandboxPaymentMethods(context);
    this.promotionCodes = new SandboxPromotionCodes(context);
    this.invoices = new SandboxInvoices(context);
    this.subscriptions = new SandboxSubscriptions(context, this.customers, this.paymentMethods, this.invoices);
    this.subscriptionChanges = new SandboxSubscriptionChanges(context, this.customers, this.paymentMethods, this.invoices, this.subscriptions);
    this.refunds = new SandboxRefunds(context);
    this.checkout = new SandboxCheckout(context, this.subscriptions, this.paymentMethods);
    this.clock = new SandboxClock(context, this.subscriptions);
  }
}
