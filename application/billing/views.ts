import type { Entitlements } from '../../domain/billing/entitlements';
import type { BillingInterval } from '../../domain/billing/periods';
import type { SubscriptionState } from '../../domain/billing/subscription';

import type { BillingErrorCode } from './errors';
import type { ProcessorKind } from './payment-processor';

/**
 * What billing use cases answer: plain records in Tollgate's terms (camelCase, integer minor units,
 * dates), rendered by the HTTP layer and the CLI. Processor ids appear only where an operator needs
 * them (the connection, the catalog as the CLI lists it).
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
  userId: string;
  /** active, trialing, past_due, paused, pending_cancellation, canceled, incomplete, incomplete_expired. */
  status: SubscriptionState;
  plan: { id: string; name: string };
  price: { id: string; name: string; amount: number; currency: string; interval: BillingInterval };
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

/** An invoice as the operator sees it (CLI, console): whose it is and the processor's id for it. */
/** A subscription as the operator lists it: with its user's email (null when the user has none, or was deleted). */
export interface OperatorSubscriptionView extends SubscriptionView {
  userEmail: string | null;
}

export interface OperatorInvoiceView extends InvoiceView {
  userId: string;
  /** The user's email, or null when the user has none (or was deleted). */
  userEmail: string | null;
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

