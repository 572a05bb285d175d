import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type { MeteredPriceInput, UsageReport } from '../../../application/billing/payment-processor';
import { RefusedBeforeStripe, requireId } from './stripe-errors';
import { callKey, contentKey, replayed, stepKey } from './stripe-keys';
import { stripeMetadata, toUnix } from './stripe-mapping';

/**
 * Usage past a plan's included amount, billed by Stripe's Billing Meters
 * (https://docs.stripe.com/billing/subscriptions/usage-based): a meter per Tollgate meter key (event
 * name `tollgate_<meterKey>`, summing the `value` of the events of each customer, named by
 * `stripe_customer_id`); a metered price per overage terms (amount per started package, through
 * `transform_quantity`), found again by its `lookup_key`; on the subscription an item of that price,
 * added without proration; and a meter event per report, its `identifier` Tollgate's, so a report
 * repeated is counted once. Stripe bills the period's usage on the renewal invoice.
 *
 * Each call throws what Stripe refused; `StripeProcessor` turns it into the port's failure.
 */

/** Where Tollgate's meter key is kept on the metered price. */
export const METER_KEY = 'tollgate_meter';
/** Stripe's limit on a meter event's identifier. */
const MAX_IDENTIFIER = 100;
/** Meters, prices and items found are remembered this long (a price archived in Stripe is looked up again after it). */
const REMEMBER_MS = 10 * 60_000;
/** A report dated this long before now is late: its period may have been invoiced. */
const LATE_MS = 5_000;
/** A guard against paging forever through an account's meters. */
const MAX_LISTED = 1000;

export const meterEventName = (meterKey: string): string => `tollgate_${meterKey}`;

/** The `lookup_key` of the metered price of these terms: the same terms find the same price. */
export function meteredLookupKey(input: Pick<MeteredPriceInput, 'meterKey' | 'unitAmount' | 'packageSize' | 'currency' | 'interval'>): string {
  return ['tollgate_metered', input.meterKey, input.currency.toLowerCase(), input.interval, input.unitAmount, input.packageSize].join(':');
}

/** Tollgate's identifier as a meter event's (at most 100 characters: a longer one is hashed, the same each time). */
export function meterEventIdentifier(identifier: string): string {
  return identifier.length <= MAX_IDENTIFIER ? identifier : `tollgate_${createHash('sha256').update(identifier).digest('hex')}`;
}

/** Stripe's refusal of an identifier it already recorded ("An event already exists with identifier ..."): the usage is in. */
function isDuplicateEvent(error: unknown): boolean {
  return (
    error instanceof Stripe.errors.StripeInvalidRequestError &&
    (error.code === 'duplicate_meter_event' || /already exists with identifier/i.test(error.message ?? ''))
  );
}

export class StripeUsage {
  private readonly remembered = new Map<string, { id: string; until: number }>();

  constructor(
    private readonly stripe: Stripe,
    private readonly clock: () => number = Date.now,
    /** Tollgate's clock: how late a report is. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  async ensureMeteredPrice(input: MeteredPriceInput): Promise<string> {
    refuseBadTerms(input);
    const lookupKey = meteredLookupKey(input);
    return this.remember(`price:${lookupKey}`, async () => {
      const found = await this.stripe.prices.list({ lookup_keys: [lookupKey], active: true, limit: 1 });
      if (found.data[0]) return found.data[0].id;
      const meter = await this.ensureMeter(input);
      const params: Stripe.PriceCreateParams = {
        currency: input.currency.toLowerCase(),
        unit_amount: input.unitAmount,
        recurring: { interval: input.interval, usage_type: 'metered', meter },
        product_data: { name: input.meterName },
        lookup_key: lookupKey,
        // An archived price of the same terms (not listed as active) gives its key to the new one.
        transfer_lookup_key: true,
        metadata: { ...stripeMetadata(input.metadata), [METER_KEY]: input.meterKey },
        ...(input.packageSize > 1 ? { transform_quantity: { divide_by: input.packageSize, round: 'up' as const } } : {}),
      };
      const created = await this.stripe.prices.create(params, { idempotencyKey: contentKey('metered-price', lookupKey, params) });
      // A replay (within Stripe's 24 hours) answers the price made then, archived since: it sells again.
      if (replayed(created) && !(await this.stripe.prices.retrieve(created.id)).active) {
        await this.stripe.prices.update(created.id, { active: true }, { idempotencyKey: callKey('price-reactivate', created.id) });
      }
      return created.id;
    });
  }

  async reportUsage(input: UsageReport): Promise<void> {
    if (!Number.isSafeInteger(input.quantity) || input.quantity < 0) {
      throw new RefusedBeforeStripe({ kind: 'invalid_request', message: `Invalid usage quantity: ${input.quantity}` });
    }
    const subscriptionId = requireId(input.subscriptionId, 'subscription');
    const priceId = requireId(input.meteredPriceId, 'price');
    const at = await this.billableTime(subscriptionId, priceId, input.timestamp);
    // Nothing can bill it any more: the subscription ended and its final invoice is final.
    if (at === null) return;
    await this.ensureItem(subscriptionId, priceId);
    const params: Stripe.Billing.MeterEventCreateParams = {
      event_name: meterEventName(input.meterKey),
      payload: { stripe_customer_id: requireId(input.customerId, 'customer'), value: String(input.quantity) },
      identifier: meterEventIdentifier(input.identifier),
      timestamp: toUnix(at),
    };
    try {
      // A key per call: stripe-node's retries of this call replay it; a later report of the same
      // identifier (another timestamp) is refused by Stripe as a duplicate, which is success.
      await this.stripe.billing.meterEvents.create(params, { idempotencyKey: callKey('meter-event', params.identifier!) });
    } catch (error) {
      if (!isDuplicateEvent(error)) throw error;
    }
  }

  /**
   * When to date a report of usage that happened at `at`. Stripe bills a meter event in the period
   * that holds its timestamp, and a period's usage is read when its invoice is finalized (an hour
   * after the period ends by default): a timestamp in a period already invoiced would never be
   * billed. So a late report (an ended window) keeps its time while the subscription's current
   * period holds it or a draft invoice of the subscription covers it (the renewal's or the final
   * one's, within the finalization grace period); otherwise it is dated now and billed on the next
   * invoice, or, for a subscription that ended, not sent (null).
   */
  private async billableTime(subscriptionId: string, priceId: string, at: Date): Promise<Date | null> {
    const now = this.now();
    if (at.getTime() >= now.getTime() - LATE_MS) return at;
    const subscription = await this.stripe.subscriptions.retrieve(subscriptionId);
    const ended = subscription.status === 'canceled' || subscription.status === 'incomplete_expired';
    const periodStart = Math.min(...subscription.items.data.map((item) => item.current_period_start)) * 1000;
    if (!ended && at.getTime() >= periodStart) return at;
    const drafts = await this.stripe.invoices.list({ subscription: subscriptionId, status: 'draft', limit: 10 });
    const open = drafts.data.some((invoice) => invoice.period_start * 1000 <= at.getTime() && at.getTime() < invoice.period_end * 1000);
    if (open && (!ended || subscription.items.data.some((item) => item.price.id === priceId))) return at;
    return ended ? null : now;
  }

  /** The active meter of this key's event name, created once. */
  private ensureMeter(input: MeteredPriceInput): Promise<string> {
    const eventName = meterEventName(input.meterKey);
    return this.remember(`meter:${eventName}`, async () => {
      const existing = await this.findMeter(eventName);
      if (existing) return existing;
      const params: Stripe.Billing.MeterCreateParams = {
        display_name: input.meterName,
        event_name: eventName,
        default_aggregation: { formula: 'sum' },
        customer_mapping: { type: 'by_id', event_payload_key: 'stripe_customer_id' },
        value_settings: { event_payload_key: 'value' },
      };
      try {
        return (await this.stripe.billing.meters.create(params, { idempotencyKey: contentKey('meter', eventName, params) })).id;
      } catch (error) {
        // Another process made it meanwhile (Stripe keeps one active meter per event name).
        const made = error instanceof Stripe.errors.StripeInvalidRequestError ? await this.findMeter(eventName) : null;
        if (made) return made;
        throw error;
      }
    });
  }

  private async findMeter(eventName: string): Promise<string | null> {
    let seen = 0;
    for await (const meter of this.stripe.billing.meters.list({ status: 'active', limit: 100 })) {
      if (meter.event_name === eventName) return meter.id;
      if (++seen >= MAX_LISTED) break;
    }
    return null;
  }

  /** The subscription has an item of the metered price: added if missing, without proration (it bills usage in arrears). */
  private async ensureItem(subscriptionId: string, priceId: string): Promise<void> {
    await this.remember(`item:${subscriptionId}:${priceId}`, async () => {
      const existing = await this.itemOf(subscriptionId, priceId);
      if (existing) return existing;
      try {
        const item = await this.stripe.subscriptionItems.create(
          { subscription: subscriptionId, price: priceId, proration_behavior: 'none' },
          { idempotencyKey: stepKey(`tollgate:subscription-item:${subscriptionId}:${priceId}`, 'create') },
        );
        return item.id;
      } catch (error) {
        // Added meanwhile by another report ("Cannot add multiple subscription items with the same price").
        const added = error instanceof Stripe.errors.StripeInvalidRequestError ? await this.itemOf(subscriptionId, priceId) : null;
        if (added) return added;
        throw error;
      }
    });
  }

  private async itemOf(subscriptionId: string, priceId: string): Promise<string | null> {
    const items = await this.stripe.subscriptionItems.list({ subscription: subscriptionId, limit: 100 });
    return items.data.find((i) => i.price.id === priceId)?.id ?? null;
  }

  /** `find` once per {@link REMEMBER_MS}; nothing is remembered from a failure. */
  private async remember(key: string, find: () => Promise<string>): Promise<string> {
    const now = this.clock();
    const known = this.remembered.get(key);
    if (known && known.until > now) return known.id;
    const id = await find();
    if (this.remembered.size >= 10_000) this.remembered.clear();
    this.remembered.set(key, { id, until: now + REMEMBER_MS });
    return id;
  }
}

function refuseBadTerms(input: MeteredPriceInput): void {
  const bad = (message: string) => new RefusedBeforeStripe({ kind: 'invalid_request', message });
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(input.meterKey)) throw bad(`Invalid meter key: ${input.meterKey}`);
  if (!Number.isSafeInteger(input.unitAmount) || input.unitAmount < 0) throw bad(`Invalid unit_amount: ${input.unitAmount}`);
  if (!Number.isSafeInteger(input.packageSize) || input.packageSize < 1) throw bad(`Invalid transform_quantity[divide_by]: ${input.packageSize}`);
}
