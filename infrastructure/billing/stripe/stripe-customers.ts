import type Stripe from 'stripe';
import type { CheckoutInput, PackCheckout, PackCheckoutInput, ProcessorMetadata } from '../../../application/billing/payment-processor';
import { StripeShapeError, isResourceMissing, requireId } from './stripe-errors';
import { stepKey } from './stripe-keys';
import { idOf, metadataOf, stripeMetadata } from './stripe-mapping';

/**
 * A customer at Stripe and how a card or a first payment is collected from them: the Customer,
 * a SetupIntent for Stripe Elements, promotion codes and Checkout Sessions (mode subscription, and
 * mode payment for a credit pack's one-off amount).
 * Each call throws what Stripe refused; `StripeProcessor` turns it into the port's failure.
 */
export class StripeCustomers {
  constructor(private readonly stripe: Stripe) {}

  async createCustomer(input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string }): Promise<string> {
    const params: Stripe.CustomerCreateParams = { metadata: stripeMetadata(input.metadata) };
    if (input.email) params.email = input.email;
    if (input.name) params.name = input.name;
    const customer = await this.stripe.customers.create(params, { idempotencyKey: stepKey(input.idempotencyKey, 'create-customer') });
    return customer.id;
  }

  async createSetupIntent(customerId: string, idempotencyKey: string): Promise<{ id: string; clientSecret: string }> {
    const intent = await this.stripe.setupIntents.create(
      { customer: customerId, usage: 'off_session', payment_method_types: ['card'] },
      { idempotencyKey: stepKey(idempotencyKey, 'create-setup-intent') },
    );
    if (!intent.client_secret) throw new StripeShapeError(`setup intent ${intent.id} has no client_secret`);
    return { id: intent.id, clientSecret: intent.client_secret };
  }

  async findPromotionCode(code: string): Promise<string | null> {
    const wanted = code.trim();
    if (wanted === '') return null;
    const found = await this.stripe.promotionCodes.list({ code: wanted, active: true, limit: 1 });
    return found.data[0]?.id ?? null;
  }

  async createCheckout(input: CheckoutInput): Promise<{ id: string; url: string }> {
    const metadata = stripeMetadata(input.metadata);
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: 'subscription',
      customer: input.customerId,
      line_items: [{ price: input.priceId, quantity: input.quantity ?? 1 }],
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
      subscription_data: { metadata, ...(input.trialDays ? { trial_period_days: input.trialDays } : {}) },
      metadata,
    };
    if (input.promotionCodeId) params.discounts = [{ promotion_code: input.promotionCodeId }];
    const session = await this.stripe.checkout.sessions.create(params, { idempotencyKey: stepKey(input.idempotencyKey, 'create-checkout') });
    if (!session.url) throw new StripeShapeError(`checkout session ${session.id} has no url`);
    return { id: session.id, url: session.url };
  }

  /**
   * A credit pack's Checkout Session (https://docs.stripe.com/payments/checkout/how-checkout-works):
   * `mode: payment`, one line of inline `price_data` (the pack's amount and currency, a product
   * named after the pack: nothing is added to the catalog), the customer's id, and Tollgate's ids
   * in the session's metadata (which checkout.session.completed carries back) and the payment's.
   */
  async createPackCheckout(input: PackCheckoutInput): Promise<{ id: string; url: string }> {
    const metadata = stripeMetadata(input.metadata);
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: 'payment',
      customer: requireId(input.customerId, 'customer'),
      line_items: [{ price_data: { currency: input.currency.toLowerCase(), unit_amount: input.amount, product_data: { name: input.name } }, quantity: 1 }],
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
      payment_intent_data: { metadata },
      metadata,
    };
    const session = await this.stripe.checkout.sessions.create(params, { idempotencyKey: stepKey(input.idempotencyKey, 'create-pack-checkout') });
    if (!session.url) throw new StripeShapeError(`checkout session ${session.id} has no url`);
    return { id: session.id, url: session.url };
  }

  /** A payment-mode session as Stripe has it now; null for an unknown one or a subscription's. */
  async getPackCheckout(checkoutId: string): Promise<PackCheckout | null> {
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.retrieve(requireId(checkoutId, 'checkout'));
    } catch (error) {
      if (isResourceMissing(error)) return null;
      throw error;
    }
    if (session.mode !== 'payment') return null;
    return {
      id: session.id,
      status: session.status ?? 'open',
      paid: session.payment_status === 'paid',
      customerId: idOf(session.customer),
      metadata: metadataOf(session.metadata),
    };
  }

  async checkoutSubscriptionId(checkoutId: string): Promise<string | null> {
    const session = await this.stripe.checkout.sessions.retrieve(requireId(checkoutId, 'checkout'));
    return idOf(session.subscription);
  }
}
