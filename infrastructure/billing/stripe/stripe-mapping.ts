import type Stripe from 'stripe';
import type { ProcessorInvoice, ProcessorInvoiceLine, ProcessorMetadata, ProcessorSubscription } from '../../../application/billing/payment-processor';
import type { InvoiceReason, InvoiceStatus, PaymentMethodSummary } from '../../../domain/billing/invoice';
import type { SubscriptionStatus } from '../../../domain/billing/subscription';
import { StripeShapeError } from './stripe-errors';

/**
 * Stripe objects (API 2025-08-27.basil, the version stripe-node 18.5 pins) in the port's terms. No
 * Stripe type leaves this folder.
 */

/** Where Tollgate's ids live in Stripe metadata (subscriptions, customers, products, prices, sessions). */
export const METADATA_KEYS = {
  projectId: 'tollgate_project_id',
  userId: 'tollgate_user_id',
  organizationId: 'tollgate_organization_id',
  subscriptionId: 'tollgate_subscription_id',
  priceId: 'tollgate_price_id',
  packId: 'tollgate_pack_id',
} as const satisfies Record<keyof ProcessorMetadata, string>;

/** On a price Tollgate sells per seat (`'1'`): its lines carry their seats. */
export const SEATS_KEY = 'tollgate_seats';

/** Tollgate's pause mark on a Stripe subscription: when it was paused (unix seconds). */
export const PAUSED_AT_KEY = 'tollgate_paused_at';
/** The end (unix seconds) of the period Tollgate's pause began in: a resume after it charges a new period. */
export const PAUSED_PERIOD_END_KEY = 'tollgate_paused_period_end';

export function stripeMetadata(metadata: ProcessorMetadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, key] of Object.entries(METADATA_KEYS) as Array<[keyof ProcessorMetadata, string]>) {
    const value = metadata[field];
    if (typeof value === 'string' && value !== '') out[key] = value;
  }
  return out;
}

export function metadataOf(metadata: Stripe.Metadata | null | undefined): Partial<ProcessorMetadata> {
  const out: Partial<ProcessorMetadata> = {};
  if (!metadata || typeof metadata !== 'object') return out;
  for (const [field, key] of Object.entries(METADATA_KEYS) as Array<[keyof ProcessorMetadata, string]>) {
    const value = metadata[key];
    if (typeof value === 'string' && value !== '') out[field] = value;
  }
  return out;
}

export const toDate = (unixSeconds: number): Date => new Date(unixSeconds * 1000);
export const toDateOrNull = (unixSeconds: number | null | undefined): Date | null => (typeof unixSeconds === 'number' ? toDate(unixSeconds) : null);
export const toUnix = (date: Date): number => Math.floor(date.getTime() / 1000);

/** The id of a field that is an id or, expanded, an object with one. */
export function idOf(value: string | { id?: string } | null | undefined): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof value.id === 'string') return value.id;
  return null;
}

/** What a subscription shows of its card: brand, last 4 and expiry of an expanded card PaymentMethod. */
export function paymentMethodOf(value: string | Stripe.PaymentMethod | null | undefined): PaymentMethodSummary | null {
  if (!value || typeof value !== 'object' || !value.card) return null;
  const { brand, last4, exp_month, exp_year } = value.card;
  return { id: value.id, brand, last4, expMonth: exp_month, expYear: exp_year };
}

/**
 * The card renewals are charged to: the subscription's default, or else the customer's invoice
 * default (Stripe's order), when the caller expanded them.
 */
function renewalCardOf(sub: Stripe.Subscription): PaymentMethodSummary | null {
  const own = paymentMethodOf(sub.default_payment_method);
  if (own) return own;
  const customer = sub.customer;
  if (customer && typeof customer === 'object' && !('deleted' in customer && customer.deleted)) {
    return paymentMethodOf((customer as Stripe.Customer).invoice_settings?.default_payment_method);
  }
  return null;
}

/** Tollgate's pause: `pause_collection[behavior]=void` plus its own mark; null when not paused that way. */
function tollgatePause(sub: Stripe.Subscription): { pausedAt: Date | null } | null {
  const mark = sub.metadata?.[PAUSED_AT_KEY];
  if (sub.pause_collection?.behavior !== 'void' || typeof mark !== 'string' || mark === '') return null;
  return { pausedAt: /^\d{1,12}$/.test(mark) ? toDate(Number(mark)) : null };
}

export const isTollgatePaused = (sub: Stripe.Subscription): boolean => tollgatePause(sub) !== null;

function statusOf(sub: Stripe.Subscription): SubscriptionStatus {
  const status = sub.status;
  switch (status) {
    case 'canceled':
    case 'incomplete':
    case 'incomplete_expired':
      return status;
    // Stripe's own pause (a trial that ended without a payment method, trial_settings) stops service too.
    case 'paused':
      return 'paused';
    case 'active':
    case 'trialing':
    case 'past_due':
      return tollgatePause(sub) ? 'paused' : status;
    // Tollgate does not use `unpaid`: past due, whose grace period ends entitlement anyway.
    case 'unpaid':
      return tollgatePause(sub) ? 'paused' : 'past_due';
    default:
      throw new StripeShapeError(`subscription ${sub.id} has status ${String(status)}`);
  }
}

/**
 * When a past-due subscription first failed to pay, as far as Stripe tells: the oldest unpaid
 * invoice that was attempted was charged when it was finalized (automatic collection); without one
 * in view, the start of the current period (a failed renewal is charged an hour after it).
 */
function pastDueSince(invoices: readonly Stripe.Invoice[], periodStart: number): Date {
  const unpaid = invoices
    .filter((i) => (i.status === 'open' || i.status === 'uncollectible') && i.attempt_count > 0)
    .map((i) => i.status_transitions?.finalized_at ?? i.created)
    .sort((a, b) => a - b);
  return toDate(unpaid[0] ?? periodStart);
}

/** A price billed from a meter's usage in arrears (`recurring.usage_type=metered`): usage past a plan's included amount. */
export const isMeteredPrice = (price: Pick<Stripe.Price, 'recurring'>): boolean => price.recurring?.usage_type === 'metered';

/**
 * The subscription's plan item: the item of the plan's price, which Tollgate makes one of per
 * subscription. A metered item (usage overage, added by reportUsage) is not the plan: skipped
 * unless it is all there is.
 */
export function planItem(sub: Stripe.Subscription): Stripe.SubscriptionItem {
  const items = sub.items?.data ?? [];
  const item = items.find((i) => !isMeteredPrice(i.price)) ?? items[0];
  if (!item) throw new StripeShapeError(`subscription ${sub.id} has no items`);
  return item;
}

/**
 * A Stripe subscription in the port's terms: its price and quantity are its plan item's (a
 * metered item is not read). Its periods live on the item (basil); `invoices` are its recent
 * invoices, used to tell since when it is past due.
 */
export function subscriptionOf(sub: Stripe.Subscription, invoices: readonly Stripe.Invoice[] = []): ProcessorSubscription {
  const item = planItem(sub);
  const customerId = idOf(sub.customer as string | { id: string });
  if (!customerId) throw new StripeShapeError(`subscription ${sub.id} has no customer`);
  const status = statusOf(sub);
  const pause = status === 'paused' ? tollgatePause(sub) : null;
  // Stripe keeps cancel_at_period_end=true on a subscription its period end canceled; the port's
  // flag means a cancellation still to come, so an ended subscription has none (as the sandbox).
  const ended = status === 'canceled' || status === 'incomplete_expired';
  return {
    id: sub.id,
    customerId,
    priceId: item.price.id,
    quantity: item.quantity ?? 1,
    status,
    cancelAtPeriodEnd: !ended && (sub.cancel_at_period_end === true || (sub.cancel_at !== null && sub.cancel_at === item.current_period_end)),
    currentPeriodStart: toDate(item.current_period_start),
    currentPeriodEnd: toDate(item.current_period_end),
    billingCycleAnchor: toDate(sub.billing_cycle_anchor),
    canceledAt: toDateOrNull(sub.canceled_at),
    endedAt: toDateOrNull(sub.ended_at),
    trialStart: toDateOrNull(sub.trial_start),
    trialEnd: toDateOrNull(sub.trial_end),
    pausedAt: status === 'paused' ? (pause?.pausedAt ?? toDateOrNull(sub.trial_end)) : null,
    pastDueAt: status === 'past_due' ? pastDueSince(invoices, item.current_period_start) : null,
    paymentMethod: renewalCardOf(sub),
    metadata: metadataOf(sub.metadata),
    createdAt: toDate(sub.created),
  };
}

const INVOICE_STATUSES: readonly string[] = ['open', 'paid', 'void', 'uncollectible'] satisfies InvoiceStatus[];
const SUBSCRIPTION_REASONS: readonly string[] = ['subscription_create', 'subscription_cycle', 'subscription_update'] satisfies InvoiceReason[];

/** The subscription an invoice bills (basil: `parent.subscription_details.subscription`). */
export function invoiceSubscriptionId(invoice: Pick<Stripe.Invoice, 'parent'>): string | null {
  return idOf(invoice.parent?.subscription_details?.subscription as string | { id: string } | undefined);
}

/** What the lines of an invoice need to know about a price: whether it is per seat or metered, and its product's name. */
export interface LinePrice {
  perSeat: boolean;
  name: string | null;
  /** A metered price's amount per billed unit (a package when it has `transform_quantity`); null for a licensed price. */
  metered?: { unitAmount: number } | null;
}

/** A price as invoice lines read it. */
export function linePriceOf(price: Stripe.Price, name: string | null = null): LinePrice {
  return { perSeat: isPerSeatPrice(price), name, metered: isMeteredPrice(price) ? { unitAmount: price.unit_amount ?? 0 } : null };
}

/** Line prices by Stripe price id; a price not in it is read as flat. */
export type LinePrices = ReadonlyMap<string, LinePrice>;

/**
 * Whether a Stripe price is sold per seat: Tollgate marks its own ({@link SEATS_KEY}); any tiered
 * price counts its quantity too.
 */
export const isPerSeatPrice = (price: Pick<Stripe.Price, 'metadata' | 'billing_scheme'>): boolean =>
  price.metadata?.[SEATS_KEY] === '1' || price.billing_scheme === 'tiered';

/** The name of a price's product, when it is expanded. */
export function productNameOf(product: Stripe.Price['product']): string | null {
  return product && typeof product === 'object' && !('deleted' in product && product.deleted) ? ((product as Stripe.Product).name ?? null) : null;
}

/**
 * A line: a proration (basil: `parent.subscription_item_details.proration`, or the invoice item's
 * for prorations billed later) is unused time when it credits and remaining time when it charges;
 * anything else is a period of the subscription. Its price is `pricing.price_details.price`; a
 * per-seat price's line carries its quantity, any other line none (null).
 */
export function invoiceLineOf(line: Stripe.InvoiceLineItem, prices: LinePrices = new Map()): ProcessorInvoiceLine {
  const parent = line.parent;
  const proration = parent?.subscription_item_details?.proration ?? parent?.invoice_item_details?.proration ?? false;
  const priceId = line.pricing?.price_details?.price ?? null;
  const price = priceId === null ? undefined : prices.get(priceId);
  const metered = price?.metered ?? null;
  return {
    kind: proration ? (line.amount < 0 ? 'unused_time' : 'remaining_time') : 'subscription',
    description: line.description ?? '',
    priceId,
    quantity: metered ? billedUnits(line, metered.unitAmount) : price?.perSeat === true ? (line.quantity ?? null) : null,
    amount: line.amount,
    periodStart: toDate(line.period.start),
    periodEnd: toDate(line.period.end),
  };
}

/**
 * The units a metered line bills (packages, for a price with `transform_quantity`): its amount over
 * the price's unit amount, which holds whether Stripe's line counts the usage before or after the
 * transformation; the line's quantity for a free price.
 */
function billedUnits(line: Stripe.InvoiceLineItem, unitAmount: number): number {
  return unitAmount > 0 ? Math.round(line.amount / unitAmount) : (line.quantity ?? 0);
}

/** A metered line that bills nothing: Stripe lists every metered item each period, used or not; Tollgate's invoices show usage only. */
function isUnusedMeteredLine(line: ProcessorInvoiceLine, prices: LinePrices): boolean {
  return line.kind === 'subscription' && line.priceId !== null && !!prices.get(line.priceId)?.metered && line.amount === 0 && !line.quantity;
}

/**
 * An invoice's lines in the port's terms: one line per line, except that Stripe itemizes a tiered
 * price's period per tier (a line for the units in each tier, "2 × Team (Tier 1 at $0.00 / month)",
 * and one for a tier's flat fee, "Team (Tier 1 at $20.00 / month)" with quantity 0): those of one
 * item, price and period become one line for all its seats ("3 × Team"), their amounts summed.
 */
export function invoiceLinesOf(lines: readonly Stripe.InvoiceLineItem[], prices: LinePrices = new Map()): ProcessorInvoiceLine[] {
  // Consecutive lines of one tiered period share a key; every other line is a group of its own.
  const groups: { key: string | null; lines: ProcessorInvoiceLine[] }[] = [];
  for (const line of lines) {
    const mapped = invoiceLineOf(line, prices);
    if (isUnusedMeteredLine(mapped, prices)) continue;
    const item = line.parent?.subscription_item_details?.subscription_item ?? null;
    const key =
      mapped.kind === 'subscription' && mapped.quantity !== null && item !== null ? `${item}|${mapped.priceId}|${line.period.start}|${line.period.end}` : null;
    const last = groups.at(-1);
    if (key !== null && last?.key === key) last.lines.push(mapped);
    else groups.push({ key, lines: [mapped] });
  }
  return groups.map((g) => mergedLine(g.lines, prices));
}

function mergedLine(lines: readonly ProcessorInvoiceLine[], prices: LinePrices): ProcessorInvoiceLine {
  const first = lines[0]!;
  if (lines.length === 1) return first;
  const quantity = lines.reduce((sum, l) => sum + (l.quantity ?? 0), 0);
  const name = first.priceId === null ? null : (prices.get(first.priceId)?.name ?? null);
  return {
    ...first,
    description: name === null ? lines.map((l) => l.description).join('; ') : `${quantity} × ${name}`,
    quantity,
    amount: lines.reduce((sum, l) => sum + l.amount, 0),
  };
}

/**
 * The period an invoice bills: its plan's subscription line's (a renewal's metered lines bill the
 * period before), else any subscription line's, else the span of its lines, else Stripe's.
 */
function invoicePeriod(invoice: Stripe.Invoice, lines: readonly ProcessorInvoiceLine[], prices: LinePrices): { start: Date; end: Date } {
  const periodLines = lines.filter((l) => l.kind === 'subscription');
  const full = periodLines.find((l) => l.priceId === null || !prices.get(l.priceId)?.metered) ?? periodLines[0];
  if (full) return { start: full.periodStart, end: full.periodEnd };
  if (lines.length > 0) {
    return {
      start: new Date(Math.min(...lines.map((l) => l.periodStart.getTime()))),
      end: new Date(Math.max(...lines.map((l) => l.periodEnd.getTime()))),
    };
  }
  return { start: toDate(invoice.period_start), end: toDate(invoice.period_end) };
}

/**
 * An invoice in the port's terms, or null for one Tollgate does not record: a draft (not yet
 * final: a renewal is finalized and charged about an hour after it is created) or one without a
 * customer. `lines` are all its lines (the embedded list holds only the first page); `prices` tells
 * which of their prices are per seat.
 */
export function invoiceOf(invoice: Stripe.Invoice, lines: readonly Stripe.InvoiceLineItem[], prices: LinePrices = new Map()): ProcessorInvoice | null {
  if (!invoice.id || !invoice.status || !INVOICE_STATUSES.includes(invoice.status)) return null;
  const customerId = idOf(invoice.customer as string | { id: string } | null);
  if (!customerId) return null;
  const mapped = invoiceLinesOf(lines, prices);
  const period = invoicePeriod(invoice, mapped, prices);
  const reason = invoice.billing_reason;
  return {
    id: invoice.id,
    subscriptionId: invoiceSubscriptionId(invoice),
    customerId,
    status: invoice.status as InvoiceStatus,
    reason: reason && SUBSCRIPTION_REASONS.includes(reason) ? (reason as InvoiceReason) : 'manual',
    currency: invoice.currency,
    subtotal: invoice.subtotal,
    amountDue: invoice.amount_due,
    amountPaid: invoice.amount_paid,
    attemptCount: invoice.attempt_count,
    lines: mapped,
    periodStart: period.start,
    periodEnd: period.end,
    hostedUrl: invoice.hosted_invoice_url ?? null,
    createdAt: toDate(invoice.created),
    paidAt: toDateOrNull(invoice.status_transitions?.paid_at),
  };
}
