import type Stripe from 'stripe';
import type { ProcessorMetadata } from '../../../application/billing/payment-processor';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { requireId } from './stripe-errors';
import { callKey, contentKey, replayed } from './stripe-keys';
import { SEATS_KEY, stripeMetadata } from './stripe-mapping';

/**
 * The catalog at Stripe: a plan is a Product, each of its prices a Price (immutable: a new amount is
 * a new Price, and archiving sets `active: false`). Each call throws what Stripe refused;
 * `StripeProcessor` turns it into the port's failure.
 */
export class StripeCatalog {
  constructor(private readonly stripe: Stripe) {}

  async upsertProduct(plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<string> {
    const md = { ...stripeMetadata(metadata), tollgate_plan_id: plan.id };
    if (productId !== null) {
      // An empty description unsets it (Stripe's convention for updates).
      const params: Stripe.ProductUpdateParams = { name: plan.name, description: plan.description, metadata: md };
      const product = await this.stripe.products.update(requireId(productId, 'product'), params, { idempotencyKey: callKey('product-update', productId) });
      return product.id;
    }
    // Stripe refuses an empty description on create ("cannot be unset").
    const params: Stripe.ProductCreateParams = { name: plan.name, metadata: md, ...(plan.description ? { description: plan.description } : {}) };
    const product = await this.stripe.products.create(params, { idempotencyKey: contentKey('product', plan.id, params) });
    return product.id;
  }

  async createPrice(price: Price, productId: string, metadata: ProcessorMetadata): Promise<string> {
    const md = stripeMetadata({ ...metadata, priceId: metadata.priceId ?? price.id });
    const params: Stripe.PriceCreateParams = {
      product: productId,
      currency: price.currency,
      recurring: { interval: price.interval },
      nickname: price.name,
      metadata: price.seats === null ? md : { ...md, [SEATS_KEY]: '1' },
      ...amountsOf(price),
    };
    const created = await this.stripe.prices.create(params, { idempotencyKey: contentKey('price', price.id, params) });
    // A replay answers the price made earlier for the same content; it may have been archived since
    // (an amount changed and then changed back): the catalog wants it selling again.
    if (replayed(created)) {
      const current = await this.stripe.prices.retrieve(created.id);
      if (!current.active) await this.stripe.prices.update(created.id, { active: true }, { idempotencyKey: callKey('price-reactivate', created.id) });
    }
    return created.id;
  }

  async archivePrice(priceId: string): Promise<void> {
    await this.stripe.prices.update(requireId(priceId, 'price'), { active: false }, { idempotencyKey: callKey('price-archive', priceId) });
  }
}

/**
 * What a price charges per period, as Stripe prices it. A flat price: its amount (`unit_amount`).
 * A per-seat price (https://docs.stripe.com/subscriptions/pricing-models/tiered-pricing): with a
 * base amount or included seats, a graduated tiered price whose first tier covers the included
 * seats for the base (`flat_amount`, `unit_amount` 0) and whose last charges `unit_amount` per
 * further seat (with nothing included, one tier with both); with neither, a plain per-unit price of
 * the seat's amount. Either way `quantity` seats cost amount + unitAmount × max(0, quantity - included).
 */
function amountsOf(price: Price): Pick<Stripe.PriceCreateParams, 'unit_amount' | 'billing_scheme' | 'tiers_mode' | 'tiers'> {
  const seats = price.seats;
  if (seats === null) return { unit_amount: price.amount };
  if (seats.included === 0 && price.amount === 0) return { unit_amount: seats.unitAmount };
  const tiers: Stripe.PriceCreateParams.Tier[] =
    seats.included > 0
      ? [
          { up_to: seats.included, flat_amount: price.amount, unit_amount: 0 },
          { up_to: 'inf', unit_amount: seats.unitAmount },
        ]
      : [{ up_to: 'inf', flat_amount: price.amount, unit_amount: seats.unitAmount }];
  return { billing_scheme: 'tiered', tiers_mode: 'graduated', tiers };
}
