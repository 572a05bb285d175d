import type Stripe from 'stripe';
import type { Account, StripeObject } from './account';
import { applyMetadata, billedQuantity, matchesCreated, priceAmount, promotionCodeProblem, couponValid, tierCharges } from './catalog';
import type { Ctx, Route, Settings } from './context';
import { attachPaymentMethod, chargeOutcome, requireAttached, resolvePaymentMethod } from './customers';
import { cardError, invalidRequest, missingParameter, resourceMissing, type Decline } from './errors';
import { meterUsage } from './meters';
import { createdFilter, listFields, s, type Fields } from './params';
import { refundableOf } from './refunds';
import { planFromPrice } from './render';
import { addInterval, DAY, formatDate, newId, nextBoundary, paginate, previousAttributes, randomString, type Interval } from './util';

/**
 * Subscriptions, invoices, invoice items, invoice payments and payment intents, following Stripe
 * Billing for API version 2025-08-27.basil:
 * - billing periods live on subscription items (`current_period_start/end`), changelog
 *   2025-03-31.basil "deprecate subscription current period start and end";
 * - an invoice names its subscription in `parent.subscription_details`, its payments are
 *   InvoicePayment objects (`payments`, expandable `payments.data.payment.payment_intent`) and its
 *   client secret is `confirmation_secret` (changelog 2025-03-31.basil "add support for multiple
 *   partial payments on invoices": `payment_intent`, `charge`, `paid` removed from Invoice);
 * - classic billing mode: prorations to the second, credits at the current price
 *   (https://docs.stripe.com/billing/subscriptions/prorations).
 */

type Sub = Stripe.Subscription;
type Inv = Stripe.Invoice & { id: string };
type Params = Record<string, any>;

const ACTIVE_STATUSES = ['trialing', 'active', 'past_due', 'unpaid'];
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
/** Stripe's minimum charge amounts (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). */
export const MINIMUM_CHARGE: Record<string, number> = { usd: 50, eur: 50, gbp: 30, cad: 50, aud: 50, chf: 50, jpy: 50 };

export function formatAmount(amount: number, currency: string): string {
  const symbols: Record<string, string> = { usd: '$', eur: '€', gbp: '£', jpy: '¥' };
  const value = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return `${symbols[currency] ?? `${currency.toUpperCase()} `}${value}`;
}

function intervalText(price: Stripe.Price): string {
  const r = price.recurring!;
  return r.interval_count === 1 ? `/ ${r.interval}` : `every ${r.interval_count} ${r.interval}s`;
}

function productName(acct: Account, price: Stripe.Price): string {
  const product = acct.get(price.product as string);
  return (product?.name as string | undefined) ?? String(price.product);
}

const priceOf = (acct: Account, item: Stripe.SubscriptionItem) => acct.get(item.price.id) as Stripe.Price;
/** A price billed in arrears from a meter's usage (`recurring.usage_type=metered`): no quantity, no proration. */
const isMetered = (price: Stripe.Price) => price.recurring?.usage_type === 'metered';
const itemsOf = (sub: Sub) => sub.items.data;
const periodOf = (sub: Sub) => ({ start: itemsOf(sub)[0]!.current_period_start, end: itemsOf(sub)[0]!.current_period_end });
const subscriptionOfInvoice = (acct: Account, inv: Inv) => {
  const id = inv.parent?.subscription_details?.subscription;
  return id ? (acct.get(id as string) as Sub | undefined) : undefined;
};

// ---- lines, invoice items, discounts ---------------------------------------------------------

interface LineSpec {
  amount: number;
  description: string;
  period: { start: number; end: number };
  price: Stripe.Price;
  quantity: number;
  subscription: string | null;
  subscriptionItem: string | null;
  proration: boolean;
  invoiceItem: string | null;
  discountable: boolean;
  unitAmountDecimal: string | null;
}

/**
 * The lines that bill one item for a period. A per-unit price is one line ("3 × Team (at $10.00 /
 * month)"); a tiered price is a line per tier the quantity reaches, for its units ("2 × Team (Tier 1
 * at $0.00 / month)") and, when the tier has one, for its flat fee ("Team (Tier 1 at $20.00 /
 * month)", quantity 0), as Stripe itemizes a tiered price on an invoice.
 */
function periodLines(acct: Account, sub: Sub, item: Stripe.SubscriptionItem, period: { start: number; end: number }, trial: boolean): LineSpec[] {
  const price = priceOf(acct, item);
  // A metered item bills its usage after the period (usageLines), nothing in advance.
  if (isMetered(price)) return [];
  const qty = item.quantity ?? 1;
  const name = productName(acct, price);
  const base = {
    period,
    price,
    subscription: sub.id,
    subscriptionItem: item.id,
    proration: false,
    invoiceItem: null,
    discountable: true,
  };
  if (trial) return [{ ...base, amount: 0, description: `Trial period for ${name}`, quantity: qty, unitAmountDecimal: '0' }];
  const at = (amount: number) => `${formatAmount(amount, price.currency)} ${intervalText(price)}`;
  const tiers = tierCharges(acct, price, qty);
  if (tiers === null) {
    const unit = price.unit_amount ?? 0;
    return [{ ...base, amount: unit * qty, description: `${qty} × ${name} (at ${at(unit)})`, quantity: qty, unitAmountDecimal: String(unit) }];
  }
  return tiers.flatMap((t): LineSpec[] => [
    {
      ...base,
      amount: t.unitAmount * t.units,
      description: `${t.units} × ${name} (Tier ${t.tier} at ${at(t.unitAmount)})`,
      quantity: t.units,
      unitAmountDecimal: String(t.unitAmount),
    },
    ...(t.flatAmount === null
      ? []
      : [{ ...base, amount: t.flatAmount, description: `${name} (Tier ${t.tier} at ${at(t.flatAmount)})`, quantity: 0, unitAmountDecimal: null }]),
  ]);
}

/**
 * The lines that bill a period's metered usage, in arrears (https://docs.stripe.com/billing/subscriptions/usage-based):
 * per metered item, what its meter aggregated for the customer over the period, through the price's
 * `transform_quantity` (packages: 1,501 units at `divide_by=1000, round=up` are 2), times
 * `unit_amount`. The line's quantity is the billed quantity ("2 × AI tokens (at $2.00 per 1000 units
 * / month)"). An item with no usage still has its line, for 0.
 */
function usageLines(acct: Account, sub: Sub, period: { start: number; end: number }, through = period.end): LineSpec[] {
  const lines: LineSpec[] = [];
  for (const item of itemsOf(sub)) {
    const price = priceOf(acct, item);
    if (!isMetered(price) || !price.recurring?.meter) continue;
    const usage = meterUsage(acct, price.recurring.meter, sub.customer as string, period.start, through);
    const qty = billedQuantity(price, usage);
    const unit = price.unit_amount ?? 0;
    const per = price.transform_quantity && price.transform_quantity.divide_by > 1 ? ` per ${price.transform_quantity.divide_by} units` : '';
    lines.push({
      amount: unit * qty,
      description: `${qty} × ${productName(acct, price)} (at ${formatAmount(unit, price.currency)}${per} ${intervalText(price)})`,
      period,
      price,
      quantity: qty,
      subscription: sub.id,
      subscriptionItem: item.id,
      proration: false,
      invoiceItem: null,
      discountable: true,
      unitAmountDecimal: String(unit),
    });
  }
  return lines;
}

/**
 * A draft's metered lines read the meter again when it is finalized: "During the finalization grace
 * period, you can continue to report usage for the previous billing period. When the invoice
 * finalizes, Stripe updates it to reflect the latest quantity for its billing period"
 * (https://docs.stripe.com/billing/subscriptions/usage-based/configure-grace-period).
 */
function refreshUsageLines(acct: Account, inv: Inv) {
  for (const line of inv.lines.data) {
    const priceId = line.pricing?.price_details?.price;
    const price = typeof priceId === 'string' ? (acct.get(priceId) as Stripe.Price | undefined) : undefined;
    if (!price || !isMetered(price) || !price.recurring?.meter || line.parent?.subscription_item_details?.proration) continue;
    const qty = billedQuantity(price, meterUsage(acct, price.recurring.meter, inv.customer as string, line.period.start, line.period.end));
    if (qty === line.quantity) continue;
    const unit = price.unit_amount ?? 0;
    line.quantity = qty;
    line.amount = unit * qty;
    line.description = (line.description ?? '').replace(/^\d+ × /, `${qty} × `);
  }
}

/** A pending proration invoice item (invoiceitem.created), billed on the next invoice. */
function prorationItem(
  acct: Account,
  sub: Sub,
  itemId: string,
  price: Stripe.Price,
  qty: number,
  amount: number,
  description: string,
  period: { start: number; end: number },
): Stripe.InvoiceItem {
  const ii: Stripe.InvoiceItem = {
    id: newId('ii'),
    object: 'invoiceitem',
    amount,
    currency: price.currency,
    customer: sub.customer as string,
    date: acct.now,
    description,
    discountable: false,
    discounts: [],
    invoice: null,
    livemode: false,
    metadata: {},
    parent: { subscription_details: { subscription: sub.id, subscription_item: itemId }, type: 'subscription_details' },
    period,
    pricing: {
      price_details: { price: price.id, product: price.product as string },
      type: 'price_details',
      unit_amount_decimal: qty ? String(amount / qty) : String(amount),
    },
    proration: true,
    quantity: qty,
    tax_rates: [],
    test_clock: null,
  };
  acct.put(ii);
  acct.emit('invoiceitem.created', ii);
  return ii;
}

function lineFromItem(acct: Account, ii: Stripe.InvoiceItem): LineSpec {
  const price = acct.get(ii.pricing!.price_details!.price) as Stripe.Price;
  return {
    amount: ii.amount,
    description: ii.description ?? '',
    period: ii.period,
    price,
    quantity: ii.quantity,
    subscription: ii.parent?.subscription_details?.subscription ?? null,
    subscriptionItem: ii.parent?.subscription_details?.subscription_item ?? null,
    proration: ii.proration,
    invoiceItem: ii.id,
    discountable: ii.discountable,
    unitAmountDecimal: ii.pricing?.unit_amount_decimal ?? null,
  };
}

/**
 * Proration lines for moving `qty × oldPrice` to `newQty × newPrice` at time `t` within [start, end):
 * each side prorates the whole amount of its quantity (a tiered price's too: "Unused time on 3 ×
 * Team", "Remaining time on 5 × Team"), one line each.
 */
function prorations(
  acct: Account,
  item: Stripe.SubscriptionItem,
  oldPrice: Stripe.Price,
  oldQty: number,
  newPrice: Stripe.Price | null,
  newQty: number,
  t: number,
) {
  const start = item.current_period_start;
  const end = item.current_period_end;
  const fraction = (end - t) / (end - start);
  const when = formatDate(t);
  const label = (price: Stripe.Price, qty: number) => `${qty > 1 ? `${qty} × ` : ''}${productName(acct, price)}`;
  const out: { price: Stripe.Price; qty: number; amount: number; description: string }[] = [];
  const oldAmount = isMetered(oldPrice) ? 0 : priceAmount(acct, oldPrice, oldQty);
  if (oldAmount > 0)
    out.push({
      price: oldPrice,
      qty: oldQty,
      amount: -Math.round(oldAmount * fraction),
      description: `Unused time on ${label(oldPrice, oldQty)} after ${when}`,
    });
  if (newPrice) {
    const newAmount = isMetered(newPrice) ? 0 : priceAmount(acct, newPrice, newQty);
    if (newAmount > 0)
      out.push({
        price: newPrice,
        qty: newQty,
        amount: Math.round(newAmount * fraction),
        description: `Remaining time on ${label(newPrice, newQty)} after ${when}`,
      });
  }
  return out.map((p) => ({ ...p, period: { start: t, end } }));
}

function activeDiscounts(acct: Account, sub: Sub | undefined, at: number): Stripe.Discount[] {
  if (!sub) return [];
  const out: Stripe.Discount[] = [];
  for (const id of sub.discounts) {
    const d = acct.get(id as string) as Stripe.Discount | undefined;
    if (!d) continue;
    if (d.end !== null && at >= d.end) continue;
    if (d.coupon.duration === 'once' && (acct.state(d.id).discountInvoices ?? 0) > 0) continue;
    out.push(d);
  }
  return out;
}

/** Lines, discounts and totals; the customer's balance is applied when the invoice is finalized. */
function computeTotals(acct: Account, inv: Inv, discounts: Stripe.Discount[]) {
  const lines = inv.lines.data;
  for (const line of lines) {
    line.discount_amounts = [];
    line.pretax_credit_amounts = [];
  }
  const totals: { amount: number; discount: string }[] = [];
  for (const d of discounts) {
    const coupon = (acct.get(d.coupon.id) as Stripe.Coupon | undefined) ?? d.coupon;
    const eligible = lines.filter((l) => l.discountable && l.amount > 0);
    const base = eligible.reduce((sum, l) => sum + l.amount - (l.discount_amounts ?? []).reduce((a, x) => a + x.amount, 0), 0);
    let total = 0;
    if (coupon.percent_off !== null) {
      for (const l of eligible) {
        const amount = Math.round((l.amount * coupon.percent_off) / 100);
        l.discount_amounts!.push({ amount, discount: d.id });
        total += amount;
      }
    } else if (coupon.amount_off !== null && coupon.currency === inv.currency && base > 0) {
      const off = Math.min(coupon.amount_off, base);
      let left = off;
      eligible.forEach((l, i) => {
        const amount = i === eligible.length - 1 ? left : Math.floor((off * l.amount) / base);
        left -= amount;
        l.discount_amounts!.push({ amount, discount: d.id });
      });
      total = off;
    }
    totals.push({ amount: total, discount: d.id });
  }
  for (const line of lines) {
    line.pretax_credit_amounts = (line.discount_amounts ?? []).map((x) => ({ amount: x.amount, discount: x.discount, type: 'discount' as const }));
  }
  const subtotal = lines.reduce((sum, l) => sum + l.amount, 0);
  const discountTotal = totals.reduce((sum, t) => sum + t.amount, 0);
  inv.discounts = discounts.map((d) => d.id);
  inv.total_discount_amounts = totals;
  inv.total_pretax_credit_amounts = totals.map((t) => ({ amount: t.amount, discount: t.discount, type: 'discount' as const }));
  inv.subtotal = subtotal;
  inv.subtotal_excluding_tax = subtotal;
  inv.total = subtotal - discountTotal;
  inv.total_excluding_tax = inv.total;
  const customer = acct.get(inv.customer as string) as Stripe.Customer | undefined;
  const balance = inv.status === 'draft' ? (customer?.balance ?? 0) : inv.starting_balance;
  inv.starting_balance = balance;
  inv.amount_due = Math.max(0, inv.total + balance);
  inv.amount_remaining = inv.amount_due - inv.amount_paid;
}

interface InvoiceInit {
  customer: string;
  subscription: Sub | null;
  billingReason: Stripe.Invoice.BillingReason;
  lines: LineSpec[];
  periodStart: number;
  periodEnd: number;
  /** Include the customer's pending invoice items of this subscription. */
  includePending: boolean;
  /** Draft that finalizes itself at this time (renewals), or null (finalized by the caller). */
  autoFinalizeAt: number | null;
  preview?: boolean;
  discounts?: Stripe.Discount[];
}

export function createInvoice(acct: Account, init: InvoiceInit): Inv {
  const customer = acct.find<Stripe.Customer>('customer', init.customer, 'customer', 'customer');
  const id = init.preview ? `upcoming_in_${randomString(24)}` : newId('in');
  const pending = init.includePending
    ? acct
        .all<Stripe.InvoiceItem>(
          'invoiceitem',
          (x) =>
            x.invoice === null &&
            x.customer === customer.id &&
            (init.subscription ? x.parent?.subscription_details?.subscription === init.subscription.id : true),
        )
        .reverse()
    : [];
  const specs = [...pending.map((ii) => lineFromItem(acct, ii)), ...init.lines];
  const currency = specs[0]?.price.currency ?? init.subscription?.currency ?? acct.defaultCurrency;
  const lines: Stripe.InvoiceLineItem[] = specs.map((l) => ({
    id: init.preview ? `il_tmp_${randomString(24)}` : newId('il'),
    object: 'line_item',
    amount: l.amount,
    currency: l.price.currency,
    description: l.description,
    discount_amounts: [],
    discountable: l.discountable,
    discounts: [],
    invoice: id,
    livemode: false,
    metadata: {},
    parent: l.subscriptionItem
      ? {
          invoice_item_details: null,
          subscription_item_details: {
            invoice_item: l.invoiceItem,
            proration: l.proration,
            proration_details: { credited_items: null },
            subscription: l.subscription,
            subscription_item: l.subscriptionItem,
          },
          type: 'subscription_item_details',
        }
      : {
          invoice_item_details: {
            invoice_item: l.invoiceItem ?? '',
            proration: l.proration,
            proration_details: { credited_items: null },
            subscription: l.subscription,
          },
          subscription_item_details: null,
          type: 'invoice_item_details',
        },
    period: l.period,
    pretax_credit_amounts: [],
    pricing: { price_details: { price: l.price.id, product: l.price.product as string }, type: 'price_details', unit_amount_decimal: l.unitAmountDecimal },
    quantity: l.quantity,
    subscription: l.subscription,
    taxes: [],
  }));
  const sub = init.subscription;
  const inv: Inv = {
    id,
    object: 'invoice',
    account_country: acct.country,
    account_name: acct.name,
    account_tax_ids: null,
    amount_due: 0,
    amount_overpaid: 0,
    amount_paid: 0,
    amount_remaining: 0,
    amount_shipping: 0,
    application: null,
    attempt_count: 0,
    attempted: false,
    auto_advance: true,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: init.autoFinalizeAt,
    billing_reason: init.billingReason,
    collection_method: 'charge_automatically',
    created: acct.now,
    currency,
    custom_fields: null,
    customer: customer.id,
    customer_address: customer.address ?? null,
    customer_email: customer.email,
    customer_name: customer.name ?? null,
    customer_phone: customer.phone ?? null,
    customer_shipping: null,
    customer_tax_exempt: customer.tax_exempt ?? 'none',
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    due_date: null,
    effective_at: null,
    ending_balance: null,
    footer: customer.invoice_settings.footer,
    from_invoice: null,
    hosted_invoice_url: null,
    invoice_pdf: null,
    issuer: { type: 'self' },
    last_finalization_error: null,
    latest_revision: null,
    lines: { object: 'list', data: lines, has_more: false, url: `/v1/invoices/${id}/lines` },
    livemode: false,
    metadata: {},
    next_payment_attempt: init.autoFinalizeAt,
    number: null,
    on_behalf_of: null,
    parent: sub ? { quote_details: null, subscription_details: { metadata: { ...sub.metadata }, subscription: sub.id }, type: 'subscription_details' } : null,
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: init.periodEnd,
    period_start: init.periodStart,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: 'draft',
    status_transitions: { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null },
    subtotal: 0,
    subtotal_excluding_tax: 0,
    test_clock: null,
    total: 0,
    total_discount_amounts: [],
    total_excluding_tax: 0,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: null,
  };
  const discounts = init.discounts ?? activeDiscounts(acct, sub ?? undefined, acct.now);
  computeTotals(acct, inv, inv.subtotal === 0 && lines.every((l) => l.amount === 0) ? [] : discounts);
  if (init.preview) return inv;
  acct.put(inv);
  for (const ii of pending) acct.update(ii, (o) => void (o.invoice = inv.id));
  acct.emit('invoice.created', inv);
  return inv;
}

// ---- finalization and payment ----------------------------------------------------------------

function defaultPaymentMethod(acct: Account, inv: Inv): string | null {
  const sub = subscriptionOfInvoice(acct, inv);
  if (sub?.default_payment_method) return sub.default_payment_method as string;
  const customer = acct.get(inv.customer as string) as Stripe.Customer | undefined;
  return (customer?.invoice_settings.default_payment_method as string | null) ?? null;
}

function paymentIntentOf(acct: Account, inv: Inv): Stripe.PaymentIntent | undefined {
  const payment = acct.all('invoice_payment', (p) => p.invoice === inv.id && p.status === 'open')[0];
  return payment ? (acct.get(payment.payment.payment_intent) as Stripe.PaymentIntent) : undefined;
}

/** draft -> open: number, customer balance, the PaymentIntent (payment_intent.created). */
export function finalizeInvoice(acct: Account, settings: Settings, inv: Inv) {
  if (inv.status !== 'draft') return;
  const customer = acct.get(inv.customer as string) as Stripe.Customer;
  const sub = subscriptionOfInvoice(acct, inv);
  computeTotals(
    acct,
    inv,
    activeDiscounts(acct, sub, inv.created).filter((d) => inv.discounts.includes(d.id)),
  );
  const starting = customer.balance;
  const net = inv.total + starting;
  acct.update(inv, (o) => {
    o.status = 'open';
    o.number = `${customer.invoice_prefix}-${String(customer.next_invoice_sequence ?? 1).padStart(4, '0')}`;
    o.starting_balance = starting;
    o.amount_due = Math.max(0, net);
    o.amount_remaining = o.amount_due;
    o.ending_balance = Math.min(0, net);
    o.effective_at = acct.now;
    o.status_transitions.finalized_at = acct.now;
    o.automatically_finalizes_at = null;
    o.hosted_invoice_url = `${settings.baseUrl}/invoices/${o.id}`;
    o.invoice_pdf = `${settings.baseUrl}/invoices/${o.id}/pdf`;
  });
  acct.update(
    customer,
    (o) => {
      o.next_invoice_sequence = (o.next_invoice_sequence ?? 1) + 1;
      o.balance = Math.min(0, net);
    },
    starting !== Math.min(0, net) ? 'customer.updated' : undefined,
  );
  for (const d of inv.discounts) {
    if (inv.subtotal > 0) acct.state(d as string).discountInvoices = (acct.state(d as string).discountInvoices ?? 0) + 1;
  }
  acct.emit('invoice.finalized', inv);
  if (inv.amount_due === 0) {
    markPaid(acct, inv, null);
    return;
  }
  const minimum = MINIMUM_CHARGE[inv.currency] ?? 50;
  if (inv.amount_due < minimum) {
    // "If the amount due for the invoice is less than Stripe's minimum allowed charge per currency,
    // the invoice is automatically marked paid, and we add the amount due to the customer's credit
    // balance which is applied to the next invoice." (Invoice object)
    const due = inv.amount_due;
    acct.update(customer, (o) => void (o.balance += due), 'customer.updated');
    acct.update(inv, (o) => {
      o.ending_balance = due;
    });
    markPaid(acct, inv, null);
    return;
  }
  const pmId = defaultPaymentMethod(acct, inv);
  const pi = createPaymentIntent(acct, {
    amount: inv.amount_due,
    currency: inv.currency,
    customer: customer.id,
    description: inv.billing_reason === 'subscription_create' ? 'Subscription creation' : 'Subscription update',
    metadata: {},
    paymentMethod: pmId,
  });
  const payment: Stripe.InvoicePayment = {
    id: newId('inpay'),
    object: 'invoice_payment',
    amount_paid: null,
    amount_requested: inv.amount_due,
    created: acct.now,
    currency: inv.currency,
    invoice: inv.id,
    is_default: true,
    livemode: false,
    payment: { payment_intent: pi.id, type: 'payment_intent' },
    status: 'open',
    status_transitions: { canceled_at: null, paid_at: null },
  };
  acct.put(payment);
}

/**
 * A PaymentIntent made now for a charge (an invoice's, a one-time Checkout's), created and
 * announced (payment_intent.created): `requires_confirmation` with a payment method, else
 * `requires_payment_method`.
 */
export function createPaymentIntent(
  acct: Account,
  c: { amount: number; currency: string; customer: string; description: string | null; metadata: Record<string, string>; paymentMethod: string | null },
): Stripe.PaymentIntent {
  const piId = newId('pi');
  const pi: Stripe.PaymentIntent = {
    id: piId,
    object: 'payment_intent',
    amount: c.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic',
    client_secret: `${piId}_secret_${randomString(25)}`,
    confirmation_method: 'automatic',
    created: acct.now,
    currency: c.currency,
    customer: c.customer,
    description: c.description,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: c.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: c.paymentMethod,
    payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: c.paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
    transfer_data: null,
    transfer_group: null,
  };
  acct.put(pi);
  acct.emit('payment_intent.created', pi);
  return pi;
}

/** A declined charge: the intent wants another payment method and says why (payment_intent.payment_failed). */
export function declinePaymentIntent(acct: Account, pi: Stripe.PaymentIntent, decline: Decline, paymentMethod?: Stripe.PaymentMethod) {
  acct.update(pi, (o) => {
    o.status = 'requires_payment_method';
    o.payment_method = null;
    o.last_payment_error = {
      type: 'card_error',
      code: decline.code as never,
      decline_code: decline.decline_code,
      doc_url: `https://stripe.com/docs/error-codes/${decline.code.replace(/_/g, '-')}`,
      message: decline.message,
      ...(paymentMethod ? { payment_method: paymentMethod } : {}),
    };
  });
  acct.emit('payment_intent.payment_failed', pi);
}

function markPaid(acct: Account, inv: Inv, pi: Stripe.PaymentIntent | null, outOfBand = false) {
  acct.update(inv, (o) => {
    o.status = 'paid';
    o.amount_paid = pi ? pi.amount_received : outOfBand ? o.amount_remaining : 0;
    o.amount_remaining = 0;
    o.status_transitions.paid_at = acct.now;
    o.next_payment_attempt = null;
    if (pi) o.attempted = true;
  });
  if (pi) {
    const payment = acct.all<Stripe.InvoicePayment>('invoice_payment', (p) => p.invoice === inv.id && p.payment.payment_intent === pi.id)[0];
    if (payment) {
      acct.update(payment, (o) => {
        o.status = 'paid';
        o.amount_paid = pi.amount_received;
        o.status_transitions.paid_at = acct.now;
      });
      acct.emit('invoice_payment.paid', payment);
    }
  }
  acct.emit('invoice.paid', inv);
  acct.emit('invoice.payment_succeeded', inv);
  const customer = acct.get(inv.customer as string) as Stripe.Customer | undefined;
  if (customer?.delinquent && !acct.all('invoice', (x) => x.customer === customer.id && x.status === 'open' && x.attempted).length) {
    acct.update(customer, (o) => void (o.delinquent = false), 'customer.updated');
  }
}

export type PaymentResult = { paid: true } | { paid: false; decline: Decline | null };

/**
 * One payment attempt on an open invoice with `pmId` (or the default payment method): the
 * PaymentIntent succeeds (payment_intent.succeeded, invoice_payment.paid, invoice.paid,
 * invoice.payment_succeeded) or fails (payment_intent.payment_failed, invoice.payment_failed).
 * With no payment method at all nothing is attempted.
 */
export function attemptPayment(acct: Account, inv: Inv, pmId: string | null = null): PaymentResult {
  if (inv.status !== 'open') return inv.status === 'paid' ? { paid: true } : { paid: false, decline: null };
  const pi = paymentIntentOf(acct, inv);
  if (!pi) return { paid: false, decline: null };
  const method = pmId ?? (pi.payment_method as string | null) ?? defaultPaymentMethod(acct, inv);
  if (!method) {
    acct.update(inv, (o) => {
      o.attempted = true;
      o.attempt_count += 1;
      o.next_payment_attempt = null;
    });
    acct.emit('invoice.payment_failed', inv);
    return { paid: false, decline: null };
  }
  const pm = acct.get(method) as Stripe.PaymentMethod;
  const decline = chargeOutcome(acct, method);
  acct.update(inv, (o) => {
    o.attempted = true;
    o.attempt_count += 1;
  });
  if (decline) {
    declinePaymentIntent(acct, pi, decline, acct.render(acct, pm) as Stripe.PaymentMethod);
    acct.update(inv, (o) => void (o.next_payment_attempt = null));
    acct.emit('invoice.payment_failed', inv);
    const customer = acct.get(inv.customer as string) as Stripe.Customer | undefined;
    if (customer && !customer.delinquent) acct.update(customer, (o) => void (o.delinquent = true), 'customer.updated');
    return { paid: false, decline };
  }
  acct.update(pi, (o) => {
    o.status = 'succeeded';
    o.payment_method = method;
    o.amount_received = o.amount;
    o.last_payment_error = null;
  });
  acct.emit('payment_intent.succeeded', pi);
  markPaid(acct, inv, pi);
  return { paid: true };
}

/** After an invoice of a subscription is paid: incomplete or past_due becomes active. */
function afterInvoicePaid(acct: Account, inv: Inv) {
  const sub = subscriptionOfInvoice(acct, inv);
  if (!sub || sub.latest_invoice !== inv.id) return;
  if (['incomplete', 'past_due', 'unpaid'].includes(sub.status)) {
    acct.update(sub, (o) => void (o.status = sub.trial_end && sub.trial_end > acct.now ? 'trialing' : 'active'), 'customer.subscription.updated');
  }
}

function payAndSettle(acct: Account, inv: Inv, pmId: string | null): PaymentResult {
  const result = attemptPayment(acct, inv, pmId);
  if (result.paid) afterInvoicePaid(acct, inv);
  return result;
}

// ---- discounts on subscriptions --------------------------------------------------------------

function redeemDiscounts(
  acct: Account,
  entries: Params[] | undefined,
  customer: string,
  subId: string | null,
  checkoutSession: string | null,
  param = 'discounts',
): Stripe.Discount[] {
  if (!entries) return [];
  return entries.map((entry, i) => {
    const at = `${param}[${i}]`;
    const given = ['coupon', 'promotion_code', 'discount'].filter((k) => entry[k] !== undefined);
    if (given.length !== 1) throw invalidRequest('You must specify exactly one of coupon, discount, or promotion_code.', { param: at });
    if (entry.discount) return acct.find<Stripe.Discount>('discount', entry.discount, 'discount', `${at}[discount]`);
    let coupon: Stripe.Coupon;
    let promo: Stripe.PromotionCode | null = null;
    if (entry.promotion_code) {
      promo = acct.find<Stripe.PromotionCode>('promotion_code', entry.promotion_code, 'promotion code', `${at}[promotion_code]`);
      const problem = promotionCodeProblem(acct, promo, customer);
      if (problem) throw invalidRequest(problem, { param: `${at}[promotion_code]` });
      coupon = acct.get(promo.coupon.id) as Stripe.Coupon;
    } else {
      coupon = acct.find<Stripe.Coupon>('coupon', entry.coupon, 'coupon', `${at}[coupon]`);
      if (!couponValid(acct, coupon)) throw invalidRequest(`Coupon ${coupon.id} is no longer valid.`, { param: `${at}[coupon]` });
    }
    acct.update(coupon, (o) => {
      o.times_redeemed += 1;
      o.valid = couponValid(acct, o);
    });
    if (promo) acct.update(promo, (o) => void (o.times_redeemed += 1));
    const discount: Stripe.Discount = {
      id: newId('di'),
      object: 'discount',
      checkout_session: checkoutSession,
      coupon: coupon,
      customer,
      end: coupon.duration === 'repeating' ? addInterval(acct.now, 'month', coupon.duration_in_months!) : null,
      invoice: null,
      invoice_item: null,
      promotion_code: promo?.id ?? null,
      start: acct.now,
      subscription: subId,
      subscription_item: null,
    };
    acct.put(discount);
    return discount;
  });
}

// ---- subscriptions: create -------------------------------------------------------------------

const itemCreateFields = s.obj({ price: s.str(), quantity: s.int({ min: 0 }), metadata: s.meta() });
const discountsField = s.arr(s.obj({ coupon: s.str(), promotion_code: s.str(), discount: s.str() }), { emptyable: true });

/** A metered item has no quantity: its usage comes from its meter. */
function checkMeteredQuantity(price: Stripe.Price, item: Params, at: string) {
  if (isMetered(price) && item.quantity !== undefined) {
    throw invalidRequest(`Quantity should not be specified where usage_type is \`metered\`. Remove quantity from \`${at}\`.`, { param: `${at}[quantity]` });
  }
}

function checkPrice(acct: Account, priceId: string, param: string): Stripe.Price {
  const price = acct.find<Stripe.Price>('price', priceId, 'price', param);
  if (!price.active) throw invalidRequest('The price specified is inactive. This field only accepts active prices.', { param });
  if (price.type !== 'recurring') {
    throw invalidRequest('The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.', { param });
  }
  return price;
}

export interface CreateOptions {
  checkoutSession?: string | null;
  discounts?: Stripe.Discount[];
}

export function createSubscription(ctx: Ctx, p: Params, opts: CreateOptions = {}): Sub {
  const { acct, settings } = ctx;
  const customer = acct.find<Stripe.Customer>('customer', p.customer, 'customer', 'customer');
  if (!p.items?.length) throw missingParameter('items');
  const behavior: string = p.payment_behavior ?? 'allow_incomplete';
  if (behavior === 'pending_if_incomplete') {
    throw invalidRequest('`payment_behavior=pending_if_incomplete` can only be used when updating a subscription.', { param: 'payment_behavior' });
  }
  const prices = p.items.map((item: Params, i: number) => {
    if (!item.price) throw missingParameter(`items[${i}][price]`);
    const price = checkPrice(acct, item.price, `items[${i}][price]`);
    checkMeteredQuantity(price, item, `items[${i}]`);
    return price;
  });
  const first = prices[0]!;
  for (const [i, price] of prices.entries()) {
    if (price.currency !== first.currency) throw invalidRequest('All prices on a subscription must have the same `currency`.', { param: `items[${i}][price]` });
    if (price.recurring!.interval !== first.recurring!.interval || price.recurring!.interval_count !== first.recurring!.interval_count) {
      throw invalidRequest('All prices on a subscription must have the same `recurring.interval` and `recurring.interval_count`.', {
        param: `items[${i}][price]`,
      });
    }
  }
  if (new Set(prices.map((x: Stripe.Price) => x.id)).size !== prices.length) {
    throw invalidRequest(`Cannot add multiple subscription items with the same price: ${first.id}`, { param: 'items' });
  }
  if (p.currency && p.currency !== first.currency) throw invalidRequest('The currency must match the currency of the prices.', { param: 'currency' });
  let defaultPm: string | null = null;
  if (p.default_payment_method) defaultPm = requireAttached(acct, p.default_payment_method, customer.id, 'default_payment_method').id;
  if (p.trial_end !== undefined && p.trial_period_days !== undefined) {
    throw invalidRequest('You may only specify one of these parameters: trial_end, trial_period_days.', { param: 'trial_end' });
  }
  const now = acct.now;
  let trialEnd: number | null = null;
  if (p.trial_period_days) trialEnd = now + p.trial_period_days * DAY;
  else if (typeof p.trial_end === 'number') {
    if (p.trial_end <= now) throw invalidRequest('Invalid timestamp: must be an integer Unix timestamp in the future.', { param: 'trial_end' });
    if (p.trial_end > now + 730 * DAY) throw invalidRequest('Trial end can be no more than 730 days in the future.', { param: 'trial_end' });
    trialEnd = p.trial_end;
  } else if (p.trial_end === undefined && p.trial_from_plan && first.recurring!.trial_period_days) {
    trialEnd = now + first.recurring!.trial_period_days * DAY;
  }
  const interval = first.recurring!.interval as Interval;
  const count = first.recurring!.interval_count;
  const anchor = trialEnd ?? now;
  const periodEnd = trialEnd ?? addInterval(now, interval, count);
  const subId = newId('sub');
  const items: Stripe.SubscriptionItem[] = p.items.map((item: Params, i: number) => ({
    id: newId('si', 14),
    object: 'subscription_item',
    billing_thresholds: null,
    created: now,
    current_period_end: periodEnd,
    current_period_start: now,
    discounts: [],
    metadata: applyMetadata({}, item.metadata),
    plan: planFromPrice(prices[i]!),
    price: prices[i]!,
    ...(isMetered(prices[i]!) ? {} : { quantity: item.quantity ?? 1 }),
    subscription: subId,
    tax_rates: [],
  }));
  const sub: Sub = {
    id: subId,
    object: 'subscription',
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: anchor,
    billing_cycle_anchor_config: null,
    billing_mode: { type: 'classic' },
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created: now,
    currency: first.currency,
    customer: customer.id,
    days_until_due: null,
    default_payment_method: defaultPm,
    default_source: null,
    default_tax_rates: [],
    description: p.description ?? null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: { object: 'list', data: items, has_more: false, url: `/v1/subscription_items?subscription=${subId}` },
    latest_invoice: null,
    livemode: false,
    metadata: applyMetadata({}, p.metadata),
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: {
      payment_method_options: null,
      payment_method_types: p.payment_settings?.payment_method_types ?? null,
      save_default_payment_method: p.payment_settings?.save_default_payment_method ?? 'off',
    },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: now,
    status: 'incomplete',
    test_clock: null,
    transfer_data: null,
    trial_end: trialEnd,
    trial_settings: { end_behavior: { missing_payment_method: p.trial_settings?.end_behavior?.missing_payment_method ?? 'create_invoice' } },
    trial_start: trialEnd ? now : null,
  };
  acct.put(sub);
  const discounts = opts.discounts ?? redeemDiscounts(acct, p.discounts, customer.id, sub.id, opts.checkoutSession ?? null);
  for (const d of discounts) acct.update(d, (o) => void (o.subscription = sub.id));
  sub.discounts = discounts.map((d) => d.id);
  if (p.cancel_at_period_end) {
    sub.cancel_at_period_end = true;
    sub.cancel_at = periodEnd;
    sub.canceled_at = now;
    sub.cancellation_details = { comment: null, feedback: null, reason: 'cancellation_requested' };
  } else if (p.cancel_at) {
    sub.cancel_at = p.cancel_at;
  }
  const mark = acct.mark();
  const trial = trialEnd !== null;
  const inv = createInvoice(acct, {
    customer: customer.id,
    subscription: sub,
    billingReason: 'subscription_create',
    lines: items.flatMap((item) => periodLines(acct, sub, item, { start: now, end: periodEnd }, trial)),
    periodStart: now,
    periodEnd: now,
    includePending: false,
    autoFinalizeAt: null,
  });
  sub.latest_invoice = inv.id;
  finalizeInvoice(acct, settings, inv);
  const stored = acct.get(inv.id) as Inv;
  let status: Sub['status'];
  if (stored.status === 'paid') status = trial ? 'trialing' : 'active';
  else if (behavior === 'default_incomplete') status = 'incomplete';
  else {
    const pmId = defaultPaymentMethod(acct, stored);
    if (!pmId && behavior === 'error_if_incomplete') {
      throw invalidRequest(
        'This customer has no attached payment source or default payment method. Please consider adding a default payment method. For more ' +
          'information, visit https://stripe.com/docs/billing/subscriptions/payment-methods-setting#payment-method-priority.',
        { code: 'resource_missing' },
      );
    }
    const result = pmId ? attemptPayment(acct, stored, pmId) : { paid: false as const, decline: null };
    if (result.paid) status = trial ? 'trialing' : 'active';
    else {
      if (behavior === 'error_if_incomplete' && result.decline) throw cardError(result.decline);
      status = 'incomplete';
    }
  }
  sub.status = status;
  acct.emitAt(mark, 'customer.subscription.created', sub);
  if (trial) maybeTrialWillEnd(acct, sub);
  return sub;
}

function maybeTrialWillEnd(acct: Account, sub: Sub) {
  const state = acct.state(sub.id);
  if (sub.status !== 'trialing' || state.trialWillEndSent || !sub.trial_end) return;
  if (acct.now >= sub.trial_end - 3 * DAY) {
    state.trialWillEndSent = true;
    acct.emit('customer.subscription.trial_will_end', sub);
  }
}

// ---- subscriptions: update -------------------------------------------------------------------

interface UpdateOutcome {
  sub: Sub;
  /** The invoice made now (always_invoice, billing cycle reset), before payment. */
  immediateInvoice: Inv | null;
  prorationDate: number;
}

/** Applies an update's items/trial/cycle changes; shared by `update` and `create_preview`. */
function applyItemChanges(ctx: Ctx, sub: Sub, p: Params, preview: boolean): UpdateOutcome {
  const { acct } = ctx;
  const now = acct.now;
  const period = periodOf(sub);
  const prorationBehavior: string = p.proration_behavior ?? 'create_prorations';
  const t = p.proration_date ?? now;
  if (p.proration_date !== undefined && (p.proration_date < period.start || p.proration_date > period.end)) {
    throw invalidRequest('Proration date must be within the current billing period.', { param: 'proration_date' });
  }
  const prorate = prorationBehavior !== 'none' && sub.status !== 'trialing';
  const credits: { item: string; price: Stripe.Price; qty: number; amount: number; description: string; period: { start: number; end: number } }[] = [];
  let intervalChanged = false;
  const items = itemsOf(sub);
  for (const [i, change] of (p.items ?? []).entries()) {
    const at = (k: string) => `items[${i}][${k}]`;
    if (change.id) {
      const item = items.find((x) => x.id === change.id);
      if (!item) throw resourceMissing('subscription_item', change.id, at('id'));
      const oldPrice = priceOf(acct, item);
      const oldQty = item.quantity ?? 1;
      if (change.deleted) {
        if (items.length === 1)
          throw invalidRequest(
            'A subscription must have at least one active plan. To cancel a subscription, please use the cancel API endpoint on /v1/subscriptions.',
            { param: at('deleted') },
          );
        if (prorate) for (const pr of prorations(acct, item, oldPrice, oldQty, null, 0, t)) credits.push({ item: item.id, ...pr, qty: pr.qty });
        items.splice(items.indexOf(item), 1);
        continue;
      }
      const newPrice = change.price ? checkPrice(acct, change.price, at('price')) : oldPrice;
      const newQty = change.quantity ?? oldQty;
      if (newPrice.currency !== sub.currency)
        throw invalidRequest('The price specified has a different currency than the subscription.', { param: at('price') });
      if (newPrice.recurring!.interval !== oldPrice.recurring!.interval || newPrice.recurring!.interval_count !== oldPrice.recurring!.interval_count)
        intervalChanged = true;
      if (newPrice.id === oldPrice.id && newQty === oldQty) {
        if (change.metadata !== undefined) item.metadata = applyMetadata(item.metadata, change.metadata);
        continue;
      }
      if (prorate && !intervalChanged) for (const pr of prorations(acct, item, oldPrice, oldQty, newPrice, newQty, t)) credits.push({ item: item.id, ...pr });
      if (intervalChanged && prorate) for (const pr of prorations(acct, item, oldPrice, oldQty, null, 0, t)) credits.push({ item: item.id, ...pr });
      item.price = newPrice;
      item.plan = planFromPrice(newPrice);
      item.quantity = newQty;
      if (change.metadata !== undefined) item.metadata = applyMetadata(item.metadata, change.metadata);
    } else {
      if (!change.price) throw missingParameter(at('price'));
      const price = checkPrice(acct, change.price, at('price'));
      checkMeteredQuantity(price, change, `items[${i}]`);
      if (items.some((x) => x.price.id === price.id))
        throw invalidRequest(`Cannot add multiple subscription items with the same price: ${price.id}`, { param: at('price') });
      if (price.currency !== sub.currency) throw invalidRequest('The price specified has a different currency than the subscription.', { param: at('price') });
      const base = items[0]!.price;
      if (price.recurring!.interval !== base.recurring!.interval || price.recurring!.interval_count !== base.recurring!.interval_count) {
        throw invalidRequest('All prices on a subscription must have the same `recurring.interval` and `recurring.interval_count`.', { param: at('price') });
      }
      const item: Stripe.SubscriptionItem = {
        id: newId('si', 14),
        object: 'subscription_item',
        billing_thresholds: null,
        created: now,
        current_period_end: period.end,
        current_period_start: period.start,
        discounts: [],
        metadata: applyMetadata({}, change.metadata),
        plan: planFromPrice(price),
        price,
        ...(isMetered(price) ? {} : { quantity: change.quantity ?? 1 }),
        subscription: sub.id,
        tax_rates: [],
      };
      items.push(item);
      if (prorate && !isMetered(price)) for (const pr of prorations(acct, item, price, 0, price, item.quantity!, t)) credits.push({ item: item.id, ...pr });
    }
  }
  const resetCycle = intervalChanged || p.billing_cycle_anchor === 'now' || p.trial_end === 'now';
  let immediateInvoice: Inv | null = null;
  if (p.trial_end === 'now' && sub.status !== 'trialing') {
    throw invalidRequest('The subscription is not in a trial period.', { param: 'trial_end' });
  }
  if (typeof p.trial_end === 'number') {
    if (p.trial_end <= now) throw invalidRequest('Invalid timestamp: must be an integer Unix timestamp in the future.', { param: 'trial_end' });
    if (sub.status !== 'trialing')
      throw invalidRequest('This Stripe-shaped test server only changes `trial_end` of a subscription that is trialing.', { param: 'trial_end' });
    sub.trial_end = p.trial_end;
    sub.billing_cycle_anchor = p.trial_end;
    for (const item of items) item.current_period_end = p.trial_end;
    acct.state(sub.id).trialWillEndSent = false;
  }
  const pendingItems = credits.map((c) => prorationItem(acct, sub, c.item, c.price, c.qty, c.amount, c.description, c.period));
  if (resetCycle) {
    const first = priceOf(acct, items[0]!);
    const end = addInterval(now, first.recurring!.interval as Interval, first.recurring!.interval_count);
    if (sub.trial_end && sub.trial_end > now) sub.trial_end = now;
    sub.billing_cycle_anchor = now;
    for (const item of items) {
      item.current_period_start = now;
      item.current_period_end = end;
    }
    if (sub.status === 'trialing') sub.status = 'active';
    immediateInvoice = createInvoice(acct, {
      customer: sub.customer as string,
      subscription: sub,
      billingReason: 'subscription_update',
      lines: items.flatMap((item) => periodLines(acct, sub, item, { start: now, end }, false)),
      periodStart: now,
      periodEnd: now,
      includePending: true,
      autoFinalizeAt: null,
      preview,
    });
  } else if (
    prorationBehavior === 'always_invoice' &&
    pendingItems.length + acct.all('invoiceitem', (x) => x.invoice === null && x.parent?.subscription_details?.subscription === sub.id).length > 0
  ) {
    immediateInvoice = createInvoice(acct, {
      customer: sub.customer as string,
      subscription: sub,
      billingReason: 'subscription_update',
      lines: [],
      periodStart: now,
      periodEnd: now,
      includePending: true,
      autoFinalizeAt: null,
      preview,
    });
  }
  return { sub, immediateInvoice, prorationDate: t };
}

const updateFields: Fields = {
  items: s.arr(s.obj({ id: s.str(), price: s.str(), quantity: s.int({ min: 0 }), deleted: s.bool(), metadata: s.meta(), clear_usage: s.bool() })),
  proration_behavior: s.enum(['always_invoice', 'create_prorations', 'none']),
  proration_date: s.int(),
  payment_behavior: s.enum(['allow_incomplete', 'default_incomplete', 'error_if_incomplete', 'pending_if_incomplete']),
  cancel_at_period_end: s.bool(),
  cancel_at: s.ts({ emptyable: true }),
  cancellation_details: s.obj({
    comment: s.str({ emptyable: true }),
    feedback: s.enum(['customer_service', 'low_quality', 'missing_features', 'other', 'switched_service', 'too_complex', 'too_expensive', 'unused'], {
      emptyable: true,
    }),
  }),
  default_payment_method: s.str({ emptyable: true }),
  description: s.str({ emptyable: true }),
  metadata: s.meta(),
  pause_collection: s.obj({ behavior: s.req(s.enum(['keep_as_draft', 'mark_uncollectible', 'void'])), resumes_at: s.int() }, { emptyable: true }),
  trial_end: s.ts({ now: true }),
  discounts: discountsField,
  off_session: s.bool(),
  billing_cycle_anchor: s.enum(['now', 'unchanged']),
  payment_settings: s.obj({ save_default_payment_method: s.enum(['off', 'on_subscription']), payment_method_types: s.arr(s.str(), { emptyable: true }) }),
  trial_settings: s.obj({ end_behavior: s.req(s.obj({ missing_payment_method: s.req(s.enum(['cancel', 'create_invoice', 'pause'])) })) }),
};

export function updateSubscription(ctx: Ctx, p: Params, path: Record<string, string>): Sub {
  const { acct, settings } = ctx;
  const sub = acct.find<Sub>('subscription', path.id!, 'subscription');
  if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    const allowed = ['metadata', 'cancellation_details', 'expand'];
    const other = Object.keys(p).find((k) => !allowed.includes(k));
    if (other) throw invalidRequest(`A canceled subscription can only update its cancellation_details and metadata.`, { param: other });
  }
  const behavior: string = p.payment_behavior ?? 'allow_incomplete';
  if (behavior === 'pending_if_incomplete') {
    throw invalidRequest('This Stripe-shaped test server does not implement pending updates (`payment_behavior=pending_if_incomplete`).', {
      param: 'payment_behavior',
    });
  }
  if (p.pause_collection && !['active', 'trialing', 'past_due', 'unpaid'].includes(sub.status)) {
    throw invalidRequest(`You cannot pause collection on a subscription with status ${sub.status}.`, { param: 'pause_collection' });
  }
  if (p.default_payment_method) requireAttached(acct, p.default_payment_method, sub.customer as string, 'default_payment_method');
  const before = acct.render(acct, sub);
  const mark = acct.mark();
  const outcome = applyItemChanges(ctx, sub, p, false);
  const now = acct.now;
  if (p.cancel_at_period_end !== undefined) {
    sub.cancel_at_period_end = p.cancel_at_period_end;
    sub.cancel_at = p.cancel_at_period_end ? periodOf(sub).end : null;
    sub.canceled_at = p.cancel_at_period_end ? now : null;
    sub.cancellation_details = {
      comment: sub.cancellation_details?.comment ?? null,
      feedback: sub.cancellation_details?.feedback ?? null,
      reason: p.cancel_at_period_end ? 'cancellation_requested' : null,
    };
  }
  if (p.cancel_at !== undefined) {
    sub.cancel_at = p.cancel_at;
    sub.cancel_at_period_end = p.cancel_at !== null && p.cancel_at === periodOf(sub).end;
    sub.canceled_at = p.cancel_at ? now : null;
    sub.cancellation_details = {
      comment: sub.cancellation_details?.comment ?? null,
      feedback: sub.cancellation_details?.feedback ?? null,
      reason: p.cancel_at ? 'cancellation_requested' : null,
    };
  }
  if (p.cancellation_details) {
    const d = sub.cancellation_details ?? { comment: null, feedback: null, reason: null };
    sub.cancellation_details = {
      comment: p.cancellation_details.comment !== undefined ? p.cancellation_details.comment : d.comment,
      feedback: p.cancellation_details.feedback !== undefined ? p.cancellation_details.feedback : d.feedback,
      reason: d.reason,
    };
  }
  if (p.pause_collection !== undefined) {
    sub.pause_collection = p.pause_collection ? { behavior: p.pause_collection.behavior, resumes_at: p.pause_collection.resumes_at ?? null } : null;
  }
  if (p.default_payment_method !== undefined) sub.default_payment_method = p.default_payment_method;
  if (p.description !== undefined) sub.description = p.description;
  if (p.metadata !== undefined) sub.metadata = applyMetadata(sub.metadata, p.metadata);
  if (p.discounts !== undefined) sub.discounts = redeemDiscounts(acct, p.discounts, sub.customer as string, sub.id, null).map((d) => d.id);
  if (p.payment_settings) sub.payment_settings = { ...sub.payment_settings!, ...p.payment_settings };
  if (p.trial_settings) sub.trial_settings = { end_behavior: { missing_payment_method: p.trial_settings.end_behavior.missing_payment_method } };
  const inv = outcome.immediateInvoice;
  if (inv) {
    sub.latest_invoice = inv.id;
    finalizeInvoice(acct, settings, inv);
    const stored = acct.get(inv.id) as Inv;
    if (stored.status === 'open') {
      if (behavior === 'default_incomplete') sub.status = 'past_due';
      else {
        const pmId = defaultPaymentMethod(acct, stored);
        const result = pmId ? attemptPayment(acct, stored, pmId) : { paid: false as const, decline: null };
        if (!result.paid) {
          if (behavior === 'error_if_incomplete') {
            if (result.decline) throw cardError(result.decline);
            throw invalidRequest('This customer has no attached payment source or default payment method.', { code: 'resource_missing' });
          }
          sub.status = 'past_due';
        }
      }
    }
  }
  const prev = previousAttributesOf(acct, before, sub);
  if (Object.keys(prev).length) acct.emitAt(mark, 'customer.subscription.updated', sub, prev);
  return sub;
}

function previousAttributesOf(acct: Account, before: StripeObject, sub: Sub) {
  return previousAttributes(before, acct.render(acct, sub));
}

// ---- subscriptions: cancel, expire, renew (clock) --------------------------------------------

export function cancelSubscription(
  ctx: Ctx,
  sub: Sub,
  opts: {
    invoiceNow?: boolean;
    prorate?: boolean;
    details?: Params;
    endedAt?: number;
    reason?: 'cancellation_requested' | 'payment_disputed' | 'payment_failed';
    /** A cancellation at `cancel_at` (the period's end): the final invoice bills the period's metered usage. */
    atPeriodEnd?: boolean;
  },
) {
  const { acct, settings } = ctx;
  const now = acct.now;
  if (opts.prorate && ['active', 'past_due'].includes(sub.status)) {
    for (const item of itemsOf(sub)) {
      for (const pr of prorations(acct, item, priceOf(acct, item), item.quantity ?? 1, null, 0, now)) {
        prorationItem(acct, sub, item.id, pr.price, pr.qty, pr.amount, pr.description, pr.period);
      }
    }
  }
  // The un-invoiced metered usage of the last period, up to the end: billed on the final invoice
  // with `invoice_now`, and when a cancellation at period end takes effect ("Any metered usage is
  // charged for in a final invoice when the subscription cancels at the end of the billing period").
  // Without either it is discarded, as Stripe does. A trial's usage is never billed.
  const billsUsage = (opts.invoiceNow || opts.atPeriodEnd) && ['active', 'past_due'].includes(sub.status);
  const end = opts.endedAt ?? now;
  // Canceled now: usage of the cancellation's own second is in (a period end is not).
  const usage = billsUsage ? usageLines(acct, sub, { start: periodOf(sub).start, end }, opts.atPeriodEnd ? end : end + 1) : [];
  const pending = opts.invoiceNow && acct.all('invoiceitem', (x) => x.invoice === null && x.parent?.subscription_details?.subscription === sub.id).length > 0;
  if (pending || usage.length > 0) {
    const period = periodOf(sub);
    const inv = createInvoice(acct, {
      customer: sub.customer as string,
      subscription: sub,
      billingReason: opts.atPeriodEnd ? 'subscription_cycle' : 'subscription_update',
      lines: usage,
      periodStart: opts.atPeriodEnd ? period.start : now,
      periodEnd: opts.atPeriodEnd ? period.end : now,
      includePending: !!opts.invoiceNow,
      // At period end, as a renewal: a draft finalized and charged an hour later (usage reported meanwhile counts).
      autoFinalizeAt: opts.atPeriodEnd ? (opts.endedAt ?? now) + settings.finalizeDelaySeconds : null,
    });
    if (!opts.atPeriodEnd) {
      finalizeInvoice(acct, settings, inv);
      attemptPayment(acct, acct.get(inv.id) as Inv);
    }
    sub.latest_invoice = inv.id;
  }
  if (sub.status === 'incomplete' && sub.latest_invoice) {
    const latest = acct.get(sub.latest_invoice as string) as Inv;
    if (latest.status === 'open') voidInvoice(acct, latest);
  }
  acct.update(sub, (o) => {
    o.status = 'canceled';
    o.canceled_at = o.canceled_at ?? now;
    o.ended_at = opts.endedAt ?? now;
    o.cancellation_details = {
      comment: opts.details?.comment ?? o.cancellation_details?.comment ?? null,
      feedback: opts.details?.feedback ?? o.cancellation_details?.feedback ?? null,
      reason: opts.reason ?? 'cancellation_requested',
    };
  });
  acct.emit('customer.subscription.deleted', sub);
}

function voidInvoice(acct: Account, inv: Inv) {
  acct.update(inv, (o) => {
    o.status = 'void';
    o.status_transitions.voided_at = acct.now;
    o.amount_remaining = 0;
    o.next_payment_attempt = null;
    o.automatically_finalizes_at = null;
  });
  const pi = paymentIntentOf(acct, inv);
  if (pi && pi.status !== 'succeeded' && pi.status !== 'canceled') {
    acct.update(pi, (o) => {
      o.status = 'canceled';
      o.canceled_at = acct.now;
      o.cancellation_reason = 'void_invoice';
    });
    acct.emit('payment_intent.canceled', pi);
  }
  for (const p of acct.all<Stripe.InvoicePayment>('invoice_payment', (x) => x.invoice === inv.id && x.status === 'open')) {
    acct.update(p, (o) => {
      o.status = 'canceled';
      o.status_transitions.canceled_at = acct.now;
    });
  }
  acct.emit('invoice.voided', inv);
}

function hasPaymentMethod(acct: Account, sub: Sub) {
  if (sub.default_payment_method) return true;
  const customer = acct.get(sub.customer as string) as Stripe.Customer | undefined;
  return !!customer?.invoice_settings.default_payment_method;
}

/** The period of `sub` ended at `t`: trial end or renewal, a new draft invoice. */
function renew(ctx: Ctx, sub: Sub) {
  const { acct, settings } = ctx;
  const t = periodOf(sub).end;
  const endingTrial = sub.status === 'trialing';
  if (endingTrial && !hasPaymentMethod(acct, sub)) {
    const behavior = sub.trial_settings?.end_behavior.missing_payment_method ?? 'create_invoice';
    if (behavior === 'cancel') {
      cancelSubscription(ctx, sub, { endedAt: t, reason: 'cancellation_requested' });
      return;
    }
    if (behavior === 'pause') {
      acct.update(sub, (o) => void (o.status = 'paused'), 'customer.subscription.updated');
      acct.emit('customer.subscription.paused', sub);
      return;
    }
  }
  const first = priceOf(acct, itemsOf(sub)[0]!);
  const end = nextBoundary(sub.billing_cycle_anchor, first.recurring!.interval as Interval, first.recurring!.interval_count, t);
  const previous = periodOf(sub);
  const mark = acct.mark();
  const before = acct.render(acct, sub);
  for (const item of itemsOf(sub)) {
    item.current_period_start = t;
    item.current_period_end = end;
  }
  if (endingTrial) sub.status = 'active';
  const paused = sub.pause_collection?.behavior;
  // "While payment collection is paused, Stripe doesn't send invoice emails or webhooks for these
  // invoices" (https://docs.stripe.com/billing/subscriptions/pause-payment).
  const muteInvoices = (type: string) => !!paused && (type.startsWith('invoice.') || type.startsWith('invoiceitem.') || type.startsWith('payment_intent.'));
  acct.withoutEvents(muteInvoices, () => {
    const inv = createInvoice(acct, {
      customer: sub.customer as string,
      subscription: sub,
      billingReason: 'subscription_cycle',
      // The next period in advance, then the ended period's usage in arrears (none for a trial).
      lines: [
        ...itemsOf(sub).flatMap((item) => periodLines(acct, sub, item, { start: t, end }, false)),
        ...(endingTrial ? [] : usageLines(acct, sub, previous)),
      ],
      periodStart: previous.start,
      periodEnd: previous.end,
      includePending: true,
      autoFinalizeAt: paused === 'keep_as_draft' ? null : t + settings.finalizeDelaySeconds,
    });
    sub.latest_invoice = inv.id;
    if (paused === 'keep_as_draft') acct.update(inv, (o) => void (o.auto_advance = false));
    else if (paused === 'void' || paused === 'mark_uncollectible') {
      acct.update(inv, (o) => void (o.automatically_finalizes_at = null));
      finalizeWithoutPayment(acct, settings, inv, paused);
    }
  });
  const prev = previousAttributesOf(acct, before, sub);
  acct.emitAt(mark, 'customer.subscription.updated', sub, prev);
}

/** Paused collection: the renewal invoice is finalized and at once voided or marked uncollectible. */
function finalizeWithoutPayment(acct: Account, settings: Settings, inv: Inv, behavior: 'void' | 'mark_uncollectible') {
  acct.update(inv, (o) => {
    o.status = 'open';
    const customer = acct.get(o.customer as string) as Stripe.Customer;
    o.number = `${customer.invoice_prefix}-${String(customer.next_invoice_sequence ?? 1).padStart(4, '0')}`;
    customer.next_invoice_sequence = (customer.next_invoice_sequence ?? 1) + 1;
    o.status_transitions.finalized_at = acct.now;
    o.effective_at = acct.now;
    o.amount_due = Math.max(0, o.total);
    o.amount_remaining = o.amount_due;
    o.next_payment_attempt = null;
    o.hosted_invoice_url = `${settings.baseUrl}/invoices/${o.id}`;
    o.invoice_pdf = `${settings.baseUrl}/invoices/${o.id}/pdf`;
  });
  acct.emit('invoice.finalized', inv);
  if (behavior === 'void') voidInvoice(acct, inv);
  else {
    acct.update(inv, (o) => {
      o.status = 'uncollectible';
      o.status_transitions.marked_uncollectible_at = acct.now;
    });
    acct.emit('invoice.marked_uncollectible', inv);
  }
}

/** An automatic draft reached `automatically_finalizes_at`: finalize and charge it off-session. */
function autoAdvance(ctx: Ctx, inv: Inv) {
  const { acct, settings } = ctx;
  if (inv.status === 'draft') refreshUsageLines(acct, inv);
  finalizeInvoice(acct, settings, inv);
  const stored = acct.get(inv.id) as Inv;
  const sub = subscriptionOfInvoice(acct, stored);
  if (stored.status === 'paid') {
    if (sub) afterInvoicePaid(acct, stored);
    return;
  }
  const result = attemptPayment(acct, stored);
  if (result.paid) {
    afterInvoicePaid(acct, stored);
    return;
  }
  if (sub && ['active', 'trialing'].includes(sub.status) && sub.latest_invoice === stored.id) {
    acct.update(sub, (o) => void (o.status = 'past_due'), 'customer.subscription.updated');
  }
}

interface Task {
  at: number;
  priority: number;
  run: () => void;
}

/** What the account's clock has to do next (at or before `until`), earliest first. */
function dueTasks(ctx: Ctx, until: number): Task[] {
  const { acct } = ctx;
  const tasks: Task[] = [];
  for (const sub of acct.all<Sub>('subscription')) {
    if (sub.status === 'incomplete') {
      const at = sub.created + 23 * 3600;
      if (at <= until) {
        tasks.push({
          at,
          priority: 0,
          run: () => {
            const latest = sub.latest_invoice ? (acct.get(sub.latest_invoice as string) as Inv) : null;
            if (latest?.status === 'open') voidInvoice(acct, latest);
            acct.update(
              sub,
              (o) => {
                o.status = 'incomplete_expired';
                o.ended_at = acct.now;
              },
              'customer.subscription.updated',
            );
          },
        });
      }
      continue;
    }
    if (!ACTIVE_STATUSES.includes(sub.status)) continue;
    if (sub.status === 'trialing' && sub.trial_end && !acct.state(sub.id).trialWillEndSent) {
      const at = Math.max(sub.trial_start ?? sub.created, sub.trial_end - 3 * DAY);
      if (at <= until && at < sub.trial_end) tasks.push({ at, priority: 1, run: () => maybeTrialWillEnd(acct, sub) });
    }
    if (sub.pause_collection?.resumes_at && sub.pause_collection.resumes_at <= until) {
      tasks.push({
        at: sub.pause_collection.resumes_at,
        priority: 2,
        run: () => acct.update(sub, (o) => void (o.pause_collection = null), 'customer.subscription.updated'),
      });
    }
    const end = periodOf(sub).end;
    if (sub.cancel_at !== null && sub.cancel_at <= until && sub.cancel_at <= end) {
      tasks.push({ at: sub.cancel_at, priority: 3, run: () => cancelSubscription(ctx, sub, { endedAt: sub.cancel_at!, atPeriodEnd: true }) });
    } else if (end <= until) {
      tasks.push({ at: end, priority: 4, run: () => renew(ctx, sub) });
    }
  }
  for (const inv of acct.all<Inv>('invoice', (x) => x.status === 'draft' && x.auto_advance === true && x.automatically_finalizes_at !== null)) {
    if (inv.automatically_finalizes_at! <= until) tasks.push({ at: inv.automatically_finalizes_at!, priority: 5, run: () => autoAdvance(ctx, inv) });
  }
  for (const session of acct.all('checkout.session', (x) => x.status === 'open' && x.expires_at <= until)) {
    tasks.push({
      at: session.expires_at,
      priority: 6,
      run: () => {
        acct.update(session, (o) => {
          o.status = 'expired';
          o.url = null;
        });
        acct.emit('checkout.session.expired', session);
      },
    });
  }
  return tasks.sort((a, b) => a.at - b.at || a.priority - b.priority);
}

/** Moves the account's clock to `target`, running renewals, trial ends, cancellations and retries in time order. */
export function runClock(ctx: Ctx, target: number) {
  const { acct } = ctx;
  if (target < acct.now) throw new Error(`The clock of ${acct.id} cannot go back (now ${acct.now}, asked ${target})`);
  for (let i = 0; i < 100_000; i++) {
    const next = dueTasks(ctx, target)[0];
    if (!next || next.at > target) break;
    acct.now = Math.max(acct.now, next.at);
    acct.transaction(null, next.run);
  }
  acct.now = target;
}

// ---- create_preview --------------------------------------------------------------------------

function createPreview(ctx: Ctx, p: Params) {
  const { acct, settings } = ctx;
  if (!p.customer && !p.subscription) {
    throw invalidRequest('Missing required param: customer or subscription.', { param: 'customer', code: 'parameter_missing' });
  }
  return acct.dryRun(() => {
    const details: Params = p.subscription_details ?? {};
    if (!p.subscription) {
      if (!details.items)
        throw invalidRequest('You must pass a `subscription` or `subscription_details[items]` to preview an invoice.', {
          param: 'subscription_details[items]',
        });
      const sub = createSubscription(
        { ...ctx },
        { customer: p.customer, items: details.items, trial_end: details.trial_end, payment_behavior: 'default_incomplete', discounts: p.discounts },
      );
      const inv = acct.get(sub.latest_invoice as string) as Inv;
      return asPreview(acct, inv, null);
    }
    const sub = acct.find<Sub>('subscription', p.subscription, 'subscription', 'subscription');
    if (p.customer && sub.customer !== p.customer) throw invalidRequest('The subscription does not belong to this customer.', { param: 'subscription' });
    if (['canceled', 'incomplete_expired'].includes(sub.status))
      throw invalidRequest('No upcoming invoices for a canceled subscription.', { code: 'invoice_upcoming_none' });
    const changes = details.items || details.trial_end !== undefined || details.billing_cycle_anchor !== undefined;
    let outcome: UpdateOutcome | null = null;
    if (changes)
      outcome = applyItemChanges(
        ctx,
        sub,
        {
          items: details.items,
          proration_behavior: details.proration_behavior,
          proration_date: details.proration_date,
          trial_end: details.trial_end,
          billing_cycle_anchor: details.billing_cycle_anchor,
        },
        true,
      );
    if (p.discounts) sub.discounts = redeemDiscounts(acct, p.discounts, sub.customer as string, sub.id, null).map((d) => d.id);
    if (outcome?.immediateInvoice) return asPreview(acct, outcome.immediateInvoice, details.proration_date ?? outcome.prorationDate);
    const cancels = details.cancel_at_period_end ?? sub.cancel_at_period_end;
    if (cancels) throw invalidRequest('No upcoming invoices for a subscription that cancels at the end of its period.', { code: 'invoice_upcoming_none' });
    const period = periodOf(sub);
    const first = priceOf(acct, itemsOf(sub)[0]!);
    const end = nextBoundary(sub.billing_cycle_anchor, first.recurring!.interval as Interval, first.recurring!.interval_count, period.end);
    const inv = createInvoice(acct, {
      customer: sub.customer as string,
      subscription: sub,
      billingReason: 'subscription_cycle',
      lines: [
        ...itemsOf(sub).flatMap((item) => periodLines(acct, sub, item, { start: period.end, end }, false)),
        ...(sub.status === 'trialing' ? [] : usageLines(acct, sub, period)),
      ],
      periodStart: period.start,
      periodEnd: period.end,
      includePending: true,
      autoFinalizeAt: null,
      preview: true,
      discounts: activeDiscounts(acct, sub, period.end),
    });
    inv.next_payment_attempt = period.end + settings.finalizeDelaySeconds;
    inv.created = period.end;
    return asPreview(acct, inv, outcome ? outcome.prorationDate : null);
  });
}

function asPreview(acct: Account, inv: Inv, prorationDate: number | null): Inv {
  const out = acct.render(acct, inv) as Inv;
  if (!out.id!.startsWith('upcoming_in_')) {
    const id = `upcoming_in_${randomString(24)}`;
    out.id = id;
    out.lines.url = `/v1/invoices/${id}/lines`;
    for (const line of out.lines.data) {
      line.invoice = id;
      line.id = `il_tmp_${randomString(24)}`;
    }
  }
  out.status = 'draft';
  out.number = null;
  out.hosted_invoice_url = null;
  out.invoice_pdf = null;
  out.amount_paid = 0;
  out.amount_remaining = out.amount_due;
  out.attempted = false;
  out.attempt_count = 0;
  out.status_transitions = { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null };
  if (out.parent?.subscription_details && prorationDate !== null) out.parent.subscription_details.subscription_proration_date = prorationDate;
  return out;
}

// ---- invoices API ----------------------------------------------------------------------------

function invoicePay(ctx: Ctx, p: Params, path: Record<string, string>) {
  const { acct, settings } = ctx;
  const inv = acct.find<Inv>('invoice', path.id!, 'invoice');
  if (inv.status === 'paid') throw invalidRequest('Invoice is already paid', { code: 'invoice_already_paid' });
  if (inv.status === 'void' || inv.status === 'uncollectible') {
    if (inv.status === 'void') throw invalidRequest('This invoice can no longer be paid because it has been voided.', { code: 'invoice_not_editable' });
  }
  if (inv.status === 'draft') finalizeInvoice(acct, settings, inv);
  const stored = acct.get(inv.id) as Inv;
  if (stored.status === 'paid') return stored;
  if (p.paid_out_of_band) {
    markPaid(acct, stored, null, true);
    afterInvoicePaid(acct, stored);
    return stored;
  }
  let pmId: string | null = null;
  if (p.payment_method) {
    const pm = resolvePaymentMethod(acct, p.payment_method);
    if (!pm.customer) attachPaymentMethod(acct, pm.id, stored.customer as string);
    else if (pm.customer !== stored.customer)
      throw invalidRequest('The PaymentMethod must belong to the customer of the invoice.', { param: 'payment_method' });
    pmId = pm.id;
  }
  const result = payAndSettle(acct, stored, pmId);
  if (!result.paid) {
    if (result.decline) throw cardError(result.decline).committed();
    throw invalidRequest('This customer has no attached payment source or default payment method.', { code: 'invoice_no_payment_method_types' }).committed();
  }
  return stored;
}

function paymentIntentConfirm(ctx: Ctx, p: Params, path: Record<string, string>) {
  const { acct } = ctx;
  const pi = acct.find<Stripe.PaymentIntent>('payment_intent', path.id!, 'payment_intent');
  if (pi.status === 'succeeded' || pi.status === 'canceled') {
    throw invalidRequest(`This PaymentIntent's status is ${pi.status}, so it cannot be confirmed.`, { code: 'payment_intent_unexpected_state' });
  }
  const payment = acct.all<Stripe.InvoicePayment>('invoice_payment', (x) => x.payment.payment_intent === pi.id)[0];
  if (!payment) throw invalidRequest('This Stripe-shaped test server only confirms the PaymentIntents of invoices.');
  const inv = acct.get(payment.invoice as string) as Inv;
  let pmId = p.payment_method ?? (pi.payment_method as string | null);
  if (!pmId) throw invalidRequest("You cannot confirm this PaymentIntent because it's missing a payment method.", { code: 'payment_intent_unexpected_state' });
  const pm = resolvePaymentMethod(acct, pmId);
  if (!pm.customer) attachPaymentMethod(acct, pm.id, inv.customer as string);
  pmId = pm.id;
  if (
    p.setup_future_usage ||
    (acct.get(subscriptionOfInvoice(acct, inv)?.id ?? '') as Sub | undefined)?.payment_settings?.save_default_payment_method === 'on_subscription'
  ) {
    const sub = subscriptionOfInvoice(acct, inv);
    if (sub && !sub.default_payment_method) acct.update(sub, (o) => void (o.default_payment_method = pmId));
  }
  const result = payAndSettle(acct, inv, pmId);
  if (!result.paid && result.decline) throw cardError(result.decline, { payment_intent: acct.render(acct, pi) }).committed();
  return acct.get(pi.id)!;
}

// ---- routes ----------------------------------------------------------------------------------

const subscriptionCreateFields: Fields = {
  customer: s.req(s.str()),
  items: s.arr(itemCreateFields),
  default_payment_method: s.str(),
  payment_behavior: s.enum(['allow_incomplete', 'default_incomplete', 'error_if_incomplete', 'pending_if_incomplete']),
  proration_behavior: s.enum(['always_invoice', 'create_prorations', 'none']),
  trial_period_days: s.int({ min: 0, max: 730 }),
  trial_end: s.ts({ now: true }),
  trial_from_plan: s.bool(),
  trial_settings: updateFields.trial_settings!,
  metadata: s.meta(),
  description: s.str({ max: 500 }),
  discounts: discountsField,
  cancel_at_period_end: s.bool(),
  cancel_at: s.int(),
  collection_method: s.enum(['charge_automatically']),
  off_session: s.bool(),
  currency: s.str({ max: 3 }),
  payment_settings: updateFields.payment_settings!,
};

export const billingRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/subscriptions',
    paramsType: 'SubscriptionCreateParams',
    fields: subscriptionCreateFields,
    handler: (ctx, p) => createSubscription(ctx, p),
  },
  {
    method: 'GET',
    path: '/v1/subscriptions/:id',
    paramsType: 'SubscriptionRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('subscription', path.id!, 'subscription'),
  },
  { method: 'POST', path: '/v1/subscriptions/:id', paramsType: 'SubscriptionUpdateParams', fields: updateFields, handler: updateSubscription },
  {
    method: 'DELETE',
    path: '/v1/subscriptions/:id',
    paramsType: 'SubscriptionCancelParams',
    fields: { invoice_now: s.bool(), prorate: s.bool(), cancellation_details: updateFields.cancellation_details! },
    handler: (ctx, p, path) => {
      const sub = ctx.acct.find<Sub>('subscription', path.id!, 'subscription');
      if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
        throw invalidRequest(`This subscription is already ${sub.status === 'canceled' ? 'canceled' : 'expired'}.`, {
          code: 'resource_missing',
          status: 404,
          param: 'id',
        });
      }
      cancelSubscription(ctx, sub, { invoiceNow: p.invoice_now, prorate: p.prorate, details: p.cancellation_details });
      return sub;
    },
  },
  {
    method: 'POST',
    path: '/v1/subscriptions/:id/resume',
    paramsType: 'SubscriptionResumeParams',
    fields: {
      billing_cycle_anchor: s.enum(['now', 'unchanged']),
      proration_behavior: s.enum(['always_invoice', 'create_prorations', 'none']),
      proration_date: s.int(),
    },
    handler: (ctx, _p, path) => {
      const { acct, settings } = ctx;
      const sub = acct.find<Sub>('subscription', path.id!, 'subscription');
      if (sub.status !== 'paused') throw invalidRequest('Only subscriptions with status `paused` can be resumed.', { code: 'subscription_unexpected_state' });
      const now = acct.now;
      const first = priceOf(acct, itemsOf(sub)[0]!);
      const end = addInterval(now, first.recurring!.interval as Interval, first.recurring!.interval_count);
      const mark = acct.mark();
      const before = acct.render(acct, sub);
      sub.billing_cycle_anchor = now;
      for (const item of itemsOf(sub)) {
        item.current_period_start = now;
        item.current_period_end = end;
      }
      sub.status = 'active';
      const inv = createInvoice(acct, {
        customer: sub.customer as string,
        subscription: sub,
        billingReason: 'subscription_update',
        lines: itemsOf(sub).flatMap((item) => periodLines(acct, sub, item, { start: now, end }, false)),
        periodStart: now,
        periodEnd: now,
        includePending: true,
        autoFinalizeAt: null,
      });
      sub.latest_invoice = inv.id;
      finalizeInvoice(acct, settings, inv);
      const stored = acct.get(inv.id) as Inv;
      if (stored.status === 'open' && !attemptPayment(acct, stored).paid) sub.status = 'past_due';
      acct.emitAt(mark, 'customer.subscription.updated', sub, previousAttributesOf(acct, before, sub));
      acct.emitAt(mark, 'customer.subscription.resumed', sub);
      return sub;
    },
  },
  {
    method: 'GET',
    path: '/v1/subscriptions',
    paramsType: 'SubscriptionListParams',
    fields: {
      ...listFields,
      customer: s.str(),
      price: s.str(),
      status: s.enum(['active', 'all', 'canceled', 'ended', 'incomplete', 'incomplete_expired', 'past_due', 'paused', 'trialing', 'unpaid']),
      created: createdFilter,
      collection_method: s.enum(['charge_automatically', 'send_invoice']),
    },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Sub>('subscription', (x) => {
          if (p.customer && x.customer !== p.customer) return false;
          if (p.price && !x.items.data.some((i) => i.price.id === p.price)) return false;
          const status: string = p.status ?? 'default';
          if (status === 'default' && x.status === 'canceled') return false;
          if (status === 'ended' && !['canceled', 'incomplete_expired'].includes(x.status)) return false;
          if (!['default', 'all', 'ended'].includes(status) && x.status !== status) return false;
          return matchesCreated(x.created, p.created);
        }),
        p,
        '/v1/subscriptions',
      ),
  },
  {
    method: 'GET',
    path: '/v1/subscription_items',
    paramsType: 'SubscriptionItemListParams',
    fields: { ...listFields, subscription: s.req(s.str()) },
    handler: (ctx, p) => {
      const sub = ctx.acct.find<Sub>('subscription', p.subscription, 'subscription', 'subscription');
      const items = (ctx.acct.render(ctx.acct, { ...sub, items: { ...sub.items } }) as Sub).items.data;
      return paginate(items, p, '/v1/subscription_items');
    },
  },
  {
    method: 'POST',
    path: '/v1/subscription_items',
    paramsType: 'SubscriptionItemCreateParams',
    fields: {
      subscription: s.req(s.str()),
      price: s.str(),
      quantity: s.int({ min: 0 }),
      metadata: s.meta(),
      proration_behavior: s.enum(['always_invoice', 'create_prorations', 'none']),
      proration_date: s.int(),
      payment_behavior: s.enum(['allow_incomplete', 'default_incomplete', 'error_if_incomplete', 'pending_if_incomplete']),
    },
    // "Adds a new item to an existing subscription. No existing items will be changed or replaced":
    // the same as an update adding one item (prorated unless `proration_behavior=none`).
    handler: (ctx, p) => {
      const sub = ctx.acct.find<Sub>('subscription', p.subscription, 'subscription', 'subscription');
      if (!p.price) throw missingParameter('price');
      const { subscription: _, price, quantity, metadata, ...rest } = p;
      const item = { price, ...(quantity === undefined ? {} : { quantity }), ...(metadata === undefined ? {} : { metadata }) };
      const updated = updateSubscription(ctx, { ...rest, items: [item] }, { id: sub.id });
      const added = updated.items.data.find((i) => i.price.id === price)!;
      return ctx.acct.render(ctx.acct, added as unknown as StripeObject);
    },
  },
  {
    method: 'GET',
    path: '/v1/subscription_items/:id',
    paramsType: 'SubscriptionItemRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => {
      for (const sub of ctx.acct.all<Sub>('subscription')) {
        const item = sub.items.data.find((i) => i.id === path.id);
        if (item) return ctx.acct.render(ctx.acct, item as unknown as StripeObject);
      }
      throw resourceMissing('subscription_item', path.id!);
    },
  },
  {
    method: 'GET',
    path: '/v1/invoices/:id',
    paramsType: 'InvoiceRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('invoice', path.id!, 'invoice'),
  },
  {
    method: 'GET',
    path: '/v1/invoices',
    paramsType: 'InvoiceListParams',
    fields: {
      ...listFields,
      customer: s.str(),
      subscription: s.str(),
      status: s.enum(['draft', 'open', 'paid', 'uncollectible', 'void']),
      collection_method: s.enum(['charge_automatically', 'send_invoice']),
      created: createdFilter,
    },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Inv>(
          'invoice',
          (x) =>
            (!p.customer || x.customer === p.customer) &&
            (!p.subscription || x.parent?.subscription_details?.subscription === p.subscription) &&
            (!p.status || x.status === p.status) &&
            (!p.collection_method || x.collection_method === p.collection_method) &&
            matchesCreated(x.created, p.created),
        ),
        p,
        '/v1/invoices',
      ),
  },
  {
    method: 'GET',
    path: '/v1/invoices/:id/lines',
    paramsType: 'InvoiceListLineItemsParams',
    fields: listFields,
    handler: (ctx, p, path) => {
      const inv = ctx.acct.find<Inv>('invoice', path.id!, 'invoice');
      return paginate(inv.lines.data, p, `/v1/invoices/${inv.id}/lines`);
    },
  },
  {
    method: 'POST',
    path: '/v1/invoices/create_preview',
    paramsType: 'InvoiceCreatePreviewParams',
    fields: {
      customer: s.str(),
      subscription: s.str(),
      discounts: discountsField,
      currency: s.str({ max: 3 }),
      subscription_details: s.obj({
        items: s.arr(s.obj({ id: s.str(), price: s.str(), quantity: s.int({ min: 0 }), deleted: s.bool(), metadata: s.meta(), clear_usage: s.bool() })),
        proration_behavior: s.enum(['always_invoice', 'create_prorations', 'none']),
        proration_date: s.int(),
        cancel_at_period_end: s.bool(),
        trial_end: s.ts({ now: true }),
        billing_cycle_anchor: s.enum(['now', 'unchanged']),
      }),
    },
    handler: createPreview,
  },
  {
    method: 'POST',
    path: '/v1/invoices/:id/pay',
    paramsType: 'InvoicePayParams',
    fields: { payment_method: s.str(), off_session: s.bool(), paid_out_of_band: s.bool(), forgive: s.bool() },
    handler: invoicePay,
  },
  {
    method: 'POST',
    path: '/v1/invoices/:id/finalize',
    paramsType: 'InvoiceFinalizeInvoiceParams',
    fields: { auto_advance: s.bool() },
    handler: (ctx, p, path) => {
      const { acct, settings } = ctx;
      const inv = acct.find<Inv>('invoice', path.id!, 'invoice');
      if (inv.status !== 'draft')
        throw invalidRequest(`This invoice is already finalized, you can't re-finalize a non-draft invoice.`, { code: 'invoice_not_editable' });
      finalizeInvoice(acct, settings, inv);
      const stored = acct.get(inv.id) as Inv;
      if (p.auto_advance !== false && stored.status === 'open') payAndSettle(acct, stored, null);
      return stored;
    },
  },
  {
    method: 'POST',
    path: '/v1/invoices/:id/void',
    paramsType: 'InvoiceVoidInvoiceParams',
    fields: {},
    handler: (ctx, _p, path) => {
      const inv = ctx.acct.find<Inv>('invoice', path.id!, 'invoice');
      if (inv.status !== 'open' && inv.status !== 'uncollectible')
        throw invalidRequest(`You can only void an open or uncollectible invoice; this invoice is ${inv.status}.`, { code: 'invoice_not_editable' });
      voidInvoice(ctx.acct, inv);
      return inv;
    },
  },
  {
    method: 'POST',
    path: '/v1/invoices/:id/mark_uncollectible',
    paramsType: 'InvoiceMarkUncollectibleParams',
    fields: {},
    handler: (ctx, _p, path) => {
      const inv = ctx.acct.find<Inv>('invoice', path.id!, 'invoice');
      if (inv.status !== 'open')
        throw invalidRequest(`You can only mark an open invoice as uncollectible; this invoice is ${inv.status}.`, { code: 'invoice_not_editable' });
      ctx.acct.update(inv, (o) => {
        o.status = 'uncollectible';
        o.status_transitions.marked_uncollectible_at = ctx.acct.now;
      });
      ctx.acct.emit('invoice.marked_uncollectible', inv);
      return inv;
    },
  },
  {
    method: 'GET',
    path: '/v1/invoice_payments',
    paramsType: 'InvoicePaymentListParams',
    fields: {
      ...listFields,
      invoice: s.str(),
      payment: s.obj({ type: s.req(s.enum(['payment_intent'])), payment_intent: s.str() }),
      status: s.enum(['canceled', 'open', 'paid']),
    },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.InvoicePayment>(
          'invoice_payment',
          (x) =>
            (!p.invoice || x.invoice === p.invoice) &&
            (!p.payment?.payment_intent || x.payment.payment_intent === p.payment.payment_intent) &&
            (!p.status || x.status === p.status),
        ),
        p,
        '/v1/invoice_payments',
      ),
  },
  {
    method: 'GET',
    path: '/v1/invoice_payments/:id',
    paramsType: 'InvoicePaymentRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('invoice_payment', path.id!, 'invoice_payment'),
  },
  {
    method: 'GET',
    path: '/v1/invoiceitems',
    paramsType: 'InvoiceItemListParams',
    fields: { ...listFields, customer: s.str(), invoice: s.str(), pending: s.bool(), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.InvoiceItem>(
          'invoiceitem',
          (x) =>
            (!p.customer || x.customer === p.customer) &&
            (!p.invoice || x.invoice === p.invoice) &&
            (p.pending === undefined || (x.invoice === null) === p.pending) &&
            matchesCreated(x.date, p.created),
        ),
        p,
        '/v1/invoiceitems',
      ),
  },
  {
    method: 'GET',
    path: '/v1/invoiceitems/:id',
    paramsType: 'InvoiceItemRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('invoiceitem', path.id!, 'invoiceitem'),
  },
  {
    method: 'GET',
    path: '/v1/payment_intents/:id',
    paramsType: 'PaymentIntentRetrieveParams',
    fields: { client_secret: s.str() },
    handler: (ctx, _p, path) => ctx.acct.find('payment_intent', path.id!, 'payment_intent'),
  },
  {
    method: 'GET',
    path: '/v1/payment_intents',
    paramsType: 'PaymentIntentListParams',
    fields: { ...listFields, customer: s.str(), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.PaymentIntent>('payment_intent', (x) => (!p.customer || x.customer === p.customer) && matchesCreated(x.created, p.created)),
        p,
        '/v1/payment_intents',
      ),
  },
  {
    method: 'POST',
    path: '/v1/payment_intents/:id/confirm',
    paramsType: 'PaymentIntentConfirmParams',
    fields: {
      payment_method: s.str(),
      off_session: s.bool(),
      return_url: s.str(),
      setup_future_usage: s.enum(['off_session', 'on_session'], { emptyable: true }),
      error_on_requires_action: s.bool(),
    },
    handler: paymentIntentConfirm,
  },
  {
    method: 'DELETE',
    path: '/v1/customers/:id',
    paramsType: 'CustomerDeleteParams',
    noExpand: true,
    fields: {},
    handler: (ctx, _p, path) => {
      const { acct } = ctx;
      const customer = acct.find<Stripe.Customer>('customer', path.id!, 'customer');
      for (const sub of acct.all<Sub>('subscription', (x) => x.customer === customer.id && !['canceled', 'incomplete_expired'].includes(x.status))) {
        cancelSubscription(ctx, sub, {});
      }
      acct.emit('customer.deleted', customer);
      acct.update(customer, (o) => void ((o as any).deleted = true));
      return { id: customer.id, object: 'customer', deleted: true };
    },
  },
  {
    method: 'GET',
    path: '/v1/balance',
    paramsType: 'BalanceRetrieveParams',
    fields: {},
    handler: (ctx) => {
      const totals = new Map<string, number>();
      for (const pi of ctx.acct.all<Stripe.PaymentIntent>('payment_intent', (x) => x.status === 'succeeded'))
        totals.set(pi.currency, (totals.get(pi.currency) ?? 0) + refundableOf(ctx.acct, pi));
      if (!totals.size) totals.set(ctx.acct.defaultCurrency, 0);
      const available = [...totals].map(([currency, amount]) => ({ amount, currency, source_types: { card: amount } }));
      const balance: Stripe.Balance = {
        object: 'balance',
        available,
        livemode: false,
        pending: available.map((a) => ({ amount: 0, currency: a.currency, source_types: { card: 0 } })),
      };
      return balance as unknown as StripeObject;
    },
  },
];
