import type { Currency } from './money';
import type { Period } from './periods';

/**
 * What an invoice line is for:
 * - `subscription`: a full period of a price (first charge, renewal, or the new period after a
 *   change that resets the billing cycle);
 * - `unused_time`: the credit for the rest of the period on the old price (negative);
 * - `remaining_time`: the charge for the rest of the period on the new price.
 * The last two are Stripe's proration items ("Unused time on ..." / "Remaining time on ...",
 * https://docs.stripe.com/billing/subscriptions/prorations).
 */
export type InvoiceLineKind = 'subscription' | 'unused_time' | 'remaining_time';

export interface InvoiceLine {
  readonly kind: InvoiceLineKind;
  readonly priceId: string;
  /** The seats a per-seat price's line is for (absent: a flat price). */
  readonly quantity?: number;
  /** Signed minor units: credits are negative. */
  readonly amount: number;
  readonly period: Period;
}

export const isProration = (line: InvoiceLine): boolean => line.kind !== 'subscription';

/** Stripe's `billing_reason` values for the invoices a subscription produces. */
export type InvoiceReason = 'subscription_create' | 'subscription_cycle' | 'subscription_update';

/**
 * An invoice before it is charged: its lines, their sum, the customer credit applied and what is
 * left to charge to the card.
 */
export interface InvoiceDraft {
  readonly reason: InvoiceReason;
  readonly currency: Currency;
  readonly lines: readonly InvoiceLine[];
  /** Sum of the lines; negative when a downgrade credits more than it charges. */
  readonly subtotal: number;
  /** Part of the customer's credit balance used for this invoice. */
  readonly creditApplied: number;
  /** What the card is charged: never negative. */
  readonly amountDue: number;
  /** The customer's credit balance once this invoice is finalized. */
  readonly creditBalanceAfter: number;
}

/**
 * The customer's credit balance works as Stripe's customer invoice balance
 * (https://docs.stripe.com/billing/customer/balance): "The invoice balance automatically applies
 * toward the next invoice finalized to a customer", and "Prorations from downgrading a subscription
 * can indirectly create credits to reduce the amount due on the next invoice". An invoice whose
 * lines sum below zero charges nothing (amount due 0) and adds the difference to the balance; a
 * positive invoice first uses the balance, then charges the rest. Nothing is refunded to the card.
 *
 * Sign convention: Tollgate's `creditBalance` is the credit the customer HOLDS, so it is zero or
 * positive. (Stripe's `customer.balance` has the opposite sign: negative means credit; the Stripe
 * adapter converts.)
 */
export function draftInvoice(reason: InvoiceReason, currency: Currency, lines: readonly InvoiceLine[], creditBalance: number): InvoiceDraft {
  if (!Number.isSafeInteger(creditBalance) || creditBalance < 0) {
    throw new RangeError(`Credit balance must be a non-negative integer: ${creditBalance}`);
  }
  const subtotal = lines.reduce((sum, line) => sum + line.amount, 0);
  if (subtotal <= 0) {
    return { reason, currency, lines, subtotal, creditApplied: 0, amountDue: 0, creditBalanceAfter: creditBalance - subtotal };
  }
  const creditApplied = Math.min(creditBalance, subtotal);
  return {
    reason,
    currency,
    lines,
    subtotal,
    creditApplied,
    amountDue: subtotal - creditApplied,
    creditBalanceAfter: creditBalance - creditApplied,
  };
}

export const INVOICE_STATUSES = ['open', 'paid', 'void', 'uncollectible'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** A recorded invoice (GET invoices lists them per user, newest first). */
export interface Invoice extends InvoiceDraft {
  readonly id: string;
  readonly subscriptionId: string;
  readonly status: InvoiceStatus;
  readonly amountPaid: number;
  readonly createdAt: Date;
  readonly paidAt: Date | null;
}

export const INVOICE_LIST_DEFAULT_LIMIT = 10;
export const INVOICE_LIST_MAX_LIMIT = 100;

/** GET invoices `limit`: absent means 10; otherwise an integer 1..100 or null (a 400). */
export function invoiceListLimit(limit: number | undefined): number | null {
  if (limit === undefined) return INVOICE_LIST_DEFAULT_LIMIT;
  return Number.isInteger(limit) && limit >= 1 && limit <= INVOICE_LIST_MAX_LIMIT ? limit : null;
}

/** Newest first; invoices created in the same millisecond are ordered by id, descending. */
export function sortInvoicesNewestFirst<I extends Pick<Invoice, 'id' | 'createdAt'>>(invoices: readonly I[]): I[] {
  return [...invoices].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** What a subscription shows of its card: never the number, only brand, last 4 and expiry. */
export interface PaymentMethodSummary {
  readonly id: string;
  /** Stripe's card brand: `visa`, `mastercard`, `amex`, ... */
  readonly brand: string;
  readonly last4: string;
  /** 1..12 */
  readonly expMonth: number;
  readonly expYear: number;
}

/** A card is valid through the last day of its expiry month (UTC): expired from the 1st of the next. */
export function isCardExpired(card: Pick<PaymentMethodSummary, 'expMonth' | 'expYear'>, now: Date): boolean {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  return year > card.expYear || (year === card.expYear && month > card.expMonth);
}
