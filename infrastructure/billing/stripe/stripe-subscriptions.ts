import type Stripe from 'stripe';
import type { ProcessorInvoice, ProcessorSnapshot } from '../../../application/billing/payment-processor';
import { isResourceMissing, requireId } from './stripe-errors';
import { replayed } from './stripe-keys';
import { type LinePrice, type LinePrices, invoiceOf, isPerSeatPrice, linePriceOf, planItem, productNameOf, subscriptionOf } from './stripe-mapping';

/**
 * Expanded on every subscription Tollgate reads: the renewal card (the subscription's default, else
 * the customer's invoice default). `latest_invoice.payment_intent` is never expanded: basil removed it.
 */
export const SUBSCRIPTION_EXPAND = ['default_payment_method', 'customer.invoice_settings.default_payment_method'];

/** Invoices in a snapshot: the subscription's most recent ones. */
const SNAPSHOT_INVOICES = 20;
/** Enough for any customer Tollgate creates; a guard against paging forever. */
const MAX_LISTED = 1000;

/** The subscription's plan item (Tollgate makes one per subscription; a metered item for usage overage is not it). */
export const firstItem = planItem;

/**
 * Subscriptions as Stripe has them now: a subscription read with its recent invoices (the port's
 * snapshot), and a customer's subscriptions. Each call throws what Stripe refused;
 * `StripeProcessor` turns it into the port's failure.
 */
export class StripeSubscriptionReads {
  /** What this account's prices are to invoice lines (a price's scheme and Tollgate's mark never change). */
  private readonly linePrices = new Map<string, LinePrice>();

  constructor(private readonly stripe: Stripe) {}

  retrieve(subscriptionId: string): Promise<Stripe.Subscription> {
    return this.stripe.subscriptions.retrieve(requireId(subscriptionId, 'subscription'), { expand: SUBSCRIPTION_EXPAND });
  }

  /** The subscription, or null when Stripe knows no such subscription. */
  async getSubscription(subscriptionId: string): Promise<ProcessorSnapshot | null> {
    if (subscriptionId.trim() === '') return null;
    let subscription: Stripe.Subscription;
    try {
      subscription = await this.retrieve(subscriptionId);
    } catch (error) {
      if (isResourceMissing(error)) return null;
      throw error;
    }
    return this.snapshotOf(subscription);
  }

  async listSubscriptionIds(customerId: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const subscription of this.stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 100 })) {
      ids.push(subscription.id);
      if (ids.length >= MAX_LISTED) break;
    }
    return ids;
  }

  /** The snapshot after a write; a replayed answer is as old as the first request, so read again. */
  async snapshotAfterWrite(written: Stripe.Response<Stripe.Subscription>): Promise<ProcessorSnapshot> {
    return this.snapshotOf(replayed(written) ? await this.retrieve(written.id) : written);
  }

  async snapshotOf(subscription: Stripe.Subscription): Promise<ProcessorSnapshot> {
    const recent = await this.stripe.invoices.list({ subscription: subscription.id, limit: SNAPSHOT_INVOICES });
    const oldestFirst = [...recent.data].reverse();
    const linesOf = new Map<Stripe.Invoice, readonly Stripe.InvoiceLineItem[]>();
    for (const invoice of oldestFirst) linesOf.set(invoice, invoice.lines.has_more && invoice.id ? await this.allLines(invoice.id) : invoice.lines.data);
    const prices = await this.linePricesOf([...linesOf.values()].flat(), subscription.items?.data?.map((item) => item.price) ?? []);
    const invoices: ProcessorInvoice[] = [];
    for (const invoice of oldestFirst) {
      const mapped = invoiceOf(invoice, linesOf.get(invoice)!, prices);
      if (mapped) invoices.push(mapped);
    }
    return { subscription: subscriptionOf(subscription, oldestFirst), invoices };
  }

  /**
   * Which prices of these lines are per seat or metered, with their product's name: a flat or
   * metered price the caller already holds (`known`, a subscription's items) is taken as it is; any
   * other is read once, with its product. A price Stripe no longer knows reads as flat.
   */
  async linePricesOf(lines: readonly Stripe.InvoiceLineItem[], known: readonly Stripe.Price[] = []): Promise<LinePrices> {
    for (const price of known) {
      if (!this.linePrices.has(price.id) && !isPerSeatPrice(price)) this.linePrices.set(price.id, linePriceOf(price));
    }
    for (const line of lines) {
      const id = line.pricing?.price_details?.price;
      if (!id || this.linePrices.has(id)) continue;
      try {
        const price = await this.stripe.prices.retrieve(id, { expand: ['product'] });
        this.linePrices.set(id, linePriceOf(price, productNameOf(price.product)));
      } catch (error) {
        if (!isResourceMissing(error)) throw error;
        this.linePrices.set(id, { perSeat: false, name: null, metered: null });
      }
    }
    return this.linePrices;
  }

  /** Every line of an invoice (its embedded list holds the first page only). */
  private async allLines(invoiceId: string): Promise<Stripe.InvoiceLineItem[]> {
    const lines: Stripe.InvoiceLineItem[] = [];
    for await (const line of this.stripe.invoices.listLineItems(invoiceId, { limit: 100 })) {
      lines.push(line);
      if (lines.length >= MAX_LISTED) break;
    }
    return lines;
  }
}
