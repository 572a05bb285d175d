import type { UsageLimit } from '../../domain/usage/limits';
import type { Entitlements } from '../../domain/billing/entitlements';
import type { BillingInterval } from '../../domain/billing/periods';
import type { SeatPolicy, SeatPricing } from '../../domain/billing/seat-terms';
import { organizationIdOf, type PlanAudience, userIdOf } from '../../domain/billing/subject';
import { type SubscriptionState, subscriptionState, upcomingInvoice } from '../../domain/billing/subscription';
import type { BillingInvoice, BillingSubscription, CatalogStore, StoredPlan, StoredPrice } from './billing.store';
import type { ProcessorInvoiceLine, ProcessorKind } from './payment-processor';

/**
 * What billing use cases answer: plain records in Tollgate's terms (camelCase, integer minor units,
 * dates), rendered by the HTTP layer and the CLI. Processor ids appear only where an operator needs
 * them (the connection, the catalog as the CLI lists it). Each view's mapper from the stored record
 * follows the views.
 */

export interface PriceView {
  id: string;
  planId: string;
  name: string;
  /** Integer minor units of `currency` (cents for usd). */
  amount: number;
  currency: string;
  interval: BillingInterval;
  active: boolean;
  /** A per-seat price's terms: `amount` covers `included` seats, each further one costs `unitAmount`; null: flat. */
  seats: SeatPricing | null;
}

export interface PlanView {
  id: string;
  name: string;
  description: string;
  features: string[];
  hidden: boolean;
  recommended: boolean;
  trialsEnabled: boolean;
  defaultTrialDays: number | null;
  /** Whom the plan is sold to: users, organizations or both. */
  audience: PlanAudience;
  /** How the seats of its per-seat prices move (automatic or bought). */
  seatPolicy: SeatPolicy;
  /** Metered features: included amount per window of each meter and what happens past it. */
  usageLimits: UsageLimit[];
  /** Place in the hierarchy, 0 = lowest tier. */
  position: number;
  prices: PriceView[];
}

/** A catalog entry as the operator sees it (CLI, dashboard): with the processor's ids. */
export interface OperatorPlanView extends PlanView {
  processorProductId: string | null;
  prices: Array<PriceView & { processorPriceId: string | null }>;
}

export interface PaymentMethodView {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export interface SubscriptionView {
  id: string;
  /** Whose it is: a user's (userId) or an organization's (organizationId); the other is null. */
  userId: string | null;
  organizationId: string | null;
  /** active, trialing, past_due, paused, pending_cancellation, canceled, incomplete, incomplete_expired. */
  status: SubscriptionState;
  plan: { id: string; name: string };
  price: { id: string; name: string; amount: number; currency: string; interval: BillingInterval };
  /** Seats billed on a per-seat price; 1 on a flat one. */
  quantity: number;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  endedAt: Date | null;
  trialStart: Date | null;
  trialEnd: Date | null;
  pausedAt: Date | null;
  /** The next charge (the spec's "next invoice amount"); null when none will come. */
  nextInvoice: { amount: number; currency: string; date: Date } | null;
  paymentMethod: PaymentMethodView | null;
  processor: ProcessorKind;
  createdAt: Date;
}

export interface InvoiceLineView {
  description: string;
  amount: number;
  proration: boolean;
  priceId: string | null;
  /** The seats of a per-seat line; null on a flat price's. */
  quantity: number | null;
  periodStart: Date;
  periodEnd: Date;
}

export interface InvoiceView {
  id: string;
  subscriptionId: string | null;
  status: 'open' | 'paid' | 'void' | 'uncollectible';
  reason: string;
  currency: string;
  subtotal: number;
  amountDue: number;
  amountPaid: number;
  /** Refunded of the payment by Tollgate (a duplicate subscription's charge); 0 when none. */
  amountRefunded: number;
  lines: InvoiceLineView[];
  periodStart: Date;
  periodEnd: Date;
  hostedUrl: string | null;
  createdAt: Date;
  paidAt: Date | null;
}

/**
 * A subscription as the operator lists it: with its user's email (null when the user has none, or
 * was deleted, or it is an organization's) or its organization's name (null for a user's, or when
 * the organization was deleted).
 */
export interface OperatorSubscriptionView extends SubscriptionView {
  userEmail: string | null;
  organizationName: string | null;
}

/** An invoice as the operator sees it (CLI, console): whose it is and the processor's id for it. */
export interface OperatorInvoiceView extends InvoiceView {
  /** Whose it is: a user's or an organization's; the other is null. */
  userId: string | null;
  organizationId: string | null;
  /** The user's email, or null when the user has none (or was deleted, or it is an organization's). */
  userEmail: string | null;
  /** The organization's name, or null (a user's invoice, or a deleted organization). */
  organizationName: string | null;
  processor: ProcessorKind;
  processorInvoiceId: string;
}

export interface ChangePreviewView {
  /** Charged now if the change is confirmed; 0 for a downgrade (credited to the next invoices) or a trial. */
  amountDue: number;
  currency: string;
  subtotal: number;
  lines: InvoiceLineView[];
  periodStart: Date;
  periodEnd: Date;
}

export interface ConnectionView {
  processor: ProcessorKind;
  connected: true;
  /** Last 4 characters of the secret key (Stripe); null for the sandbox. */
  keyLast4: string | null;
  mode: 'test' | 'live' | 'sandbox';
  accountId: string | null;
  publishableKey: string | null;
  currency: string;
  connectedAt: Date;
  /** Where the processor sends its webhooks (Stripe); null for the sandbox. */
  webhookUrl: string | null;
}

export type { Entitlements };

// ---- mappers: a stored record as its view -----------------------------------------------------------

/** What a price's view is made of: a stored price, or a view already made (rendered again as is). */
type PriceFields = Pick<StoredPrice, keyof PriceView>;
/** What a plan's view is made of, besides its prices: a stored plan, or a view already made. */
type PlanFields = Pick<StoredPlan, Exclude<keyof PlanView, 'prices'>>;

export const priceView = (price: PriceFields): PriceView => ({
  id: price.id,
  planId: price.planId,
  name: price.name,
  amount: price.amount,
  currency: price.currency,
  interval: price.interval,
  active: price.active,
  seats: price.seats === null ? null : { ...price.seats },
});

export const planView = (plan: PlanFields, prices: readonly PriceFields[]): PlanView => ({
  id: plan.id,
  name: plan.name,
  description: plan.description,
  features: [...plan.features],
  hidden: plan.hidden,
  recommended: plan.recommended,
  trialsEnabled: plan.trialsEnabled,
  defaultTrialDays: plan.defaultTrialDays,
  audience: plan.audience,
  seatPolicy: { ...plan.seatPolicy },
  usageLimits: plan.usageLimits.map((l) => ({ ...l, price: l.price && { ...l.price } })),
  position: plan.position,
  prices: prices.map(priceView),
});

export const operatorPlanView = (plan: StoredPlan, prices: readonly StoredPrice[]): OperatorPlanView => ({
  ...planView(plan, []),
  processorProductId: plan.processorProductId,
  prices: prices.map((p) => ({ ...priceView(p), processorPriceId: p.processorPriceId })),
});

/** Names of the plan and price a subscription is on, for its view. */
export interface CatalogNames {
  planName(planId: string): string;
  priceName(priceId: string): string;
}

export async function catalogNames(catalog: CatalogStore, projectId: string): Promise<CatalogNames> {
  const [plans, prices] = await Promise.all([catalog.listPlans(projectId), catalog.listPrices(projectId)]);
  const planNames = new Map(plans.map((p) => [p.id, p.name]));
  const priceNames = new Map(prices.map((p) => [p.id, p.name]));
  return { planName: (id) => planNames.get(id) ?? '', priceName: (id) => priceNames.get(id) ?? '' };
}

export function subscriptionView(s: BillingSubscription, names: CatalogNames): SubscriptionView {
  const next = upcomingInvoice(s);
  return {
    id: s.id,
    userId: userIdOf(s.subject),
    organizationId: organizationIdOf(s.subject),
    status: subscriptionState(s),
    plan: { id: s.price.planId, name: names.planName(s.price.planId) },
    price: { id: s.price.id, name: names.priceName(s.price.id), amount: s.price.amount, currency: s.price.currency, interval: s.price.interval },
    quantity: s.price.quantity ?? 1,
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    canceledAt: s.canceledAt,
    endedAt: s.endedAt,
    trialStart: s.trialStart,
    trialEnd: s.trialEnd,
    pausedAt: s.pausedAt,
    nextInvoice: next,
    paymentMethod: s.paymentMethod
      ? { brand: s.paymentMethod.brand, last4: s.paymentMethod.last4, expMonth: s.paymentMethod.expMonth, expYear: s.paymentMethod.expYear }
      : null,
    processor: s.processor,
    createdAt: s.createdAt,
  };
}

export const invoiceLineView = (line: ProcessorInvoiceLine): InvoiceLineView => ({
  description: line.description,
  amount: line.amount,
  proration: line.kind !== 'subscription',
  priceId: line.priceId,
  quantity: line.quantity ?? null,
  periodStart: line.periodStart,
  periodEnd: line.periodEnd,
});

export const invoiceView = (invoice: BillingInvoice): InvoiceView => ({
  id: invoice.id,
  subscriptionId: invoice.subscriptionId,
  status: invoice.status,
  reason: invoice.reason,
  currency: invoice.currency,
  subtotal: invoice.subtotal,
  amountDue: invoice.amountDue,
  amountPaid: invoice.amountPaid,
  amountRefunded: invoice.amountRefunded,
  lines: invoice.lines.map(invoiceLineView),
  periodStart: invoice.periodStart,
  periodEnd: invoice.periodEnd,
  hostedUrl: invoice.hostedUrl,
  createdAt: invoice.createdAt,
  paidAt: invoice.paidAt,
});

export const operatorInvoiceView = (invoice: BillingInvoice, owner: { userEmail: string | null; organizationName: string | null }): OperatorInvoiceView => ({
  ...invoiceView(invoice),
  userId: userIdOf(invoice.subject),
  organizationId: organizationIdOf(invoice.subject),
  userEmail: owner.userEmail,
  organizationName: owner.organizationName,
  processor: invoice.processor,
  processorInvoiceId: invoice.processorInvoiceId,
});

/** A view as it is stored in an event payload: plain JSON, dates as ISO strings. */
export const toJson = (value: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
