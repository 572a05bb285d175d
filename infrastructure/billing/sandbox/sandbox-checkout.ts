import {
  type CheckoutInput,
  type PackCheckout,
  type PackCheckoutInput,
  type ProcessorFailure,
  type ProcessorResult,
  processorFailed,
  processorOk,
} from '../../../application/billing/payment-processor';
import { parseCurrency, validateAmount } from '../../../domain/billing/money';
import type { SandboxCheckoutView } from '../../../application/billing/processors';
import { addSeconds, toWholeSeconds } from '../../../domain/billing/periods';
import { seatAmount } from '../../../domain/billing/seat-terms';
import { type SandboxContext, iso } from './sandbox-context';
import { declined, invalidRequest, noSuch, refused } from './sandbox-errors';
import { type SandboxPaymentMethods, chargeCard } from './sandbox-payment-methods';
import { GENERIC_DECLINE } from './test-cards';
import type { CheckoutData, CustomerData, PriceData, ProductData, PromotionCodeData } from './sandbox-objects';
import { type SandboxSubscriptions, isTrialDays } from './sandbox-subscriptions';

/** How long an open checkout session stays payable (Stripe's default `expires_at`: 24 hours). */
export const CHECKOUT_TTL_SECONDS = 24 * 60 * 60;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Checkout sessions: created by the API, shown and paid on the sandbox's checkout page. */
export class SandboxCheckout {
  constructor(
    private readonly ctx: SandboxContext,
    private readonly subscriptions: SandboxSubscriptions,
    private readonly paymentMethods: SandboxPaymentMethods,
  ) {}

  createCheckout(projectId: string, input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    const params = {
      customerId: input.customerId,
      priceId: input.priceId,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      promotionCodeId: input.promotionCodeId,
      trialDays: input.trialDays,
      quantity: input.quantity ?? 1,
      metadata: { ...input.metadata },
      email: input.email,
    };
    return this.ctx.idempotent(projectId, input.idempotencyKey, 'checkout.sessions.create', params, async (now) => {
      const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', input.customerId);
      if (!customer) return noSuch('customer', input.customerId);
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', input.priceId);
      if (!price) return noSuch('price', input.priceId);
      if (!price.data.active) return refused('price_inactive');
      if (!isHttpUrl(input.successUrl)) return processorFailed(invalidRequest('Invalid URL: success_url must be a valid URL.'));
      if (!isHttpUrl(input.cancelUrl)) return processorFailed(invalidRequest('Invalid URL: cancel_url must be a valid URL.'));
      if (input.trialDays !== null && !isTrialDays(input.trialDays)) return refused('invalid_trial_days');
      let percentOff: number | null = null;
      if (input.promotionCodeId !== null) {
        const promo = await this.ctx.objects.get<PromotionCodeData>(projectId, 'promotion_code', input.promotionCodeId);
        if (!promo) return noSuch('promotion code', input.promotionCodeId);
        if (!promo.data.active) return processorFailed(invalidRequest('This promotion code is inactive.'));
        percentOff = promo.data.percentOff;
      }
      const id = this.ctx.newId('checkout_session');
      const data: CheckoutData = {
        ...params,
        percentOff,
        status: 'open',
        expiresAt: iso(addSeconds(toWholeSeconds(now), CHECKOUT_TTL_SECONDS)),
        subscriptionId: null,
        completedAt: null,
      };
      await this.ctx.objects.insert({ id, projectId, kind: 'checkout_session', parentId: input.customerId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, url: `${this.ctx.deps.publicUrl.replace(/\/+$/, '')}/sandbox/checkout/${id}` });
    });
  }

  /** A one-off payment's session (a credit pack): its page charges the card once, no subscription. */
  createPackCheckout(projectId: string, input: PackCheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    const params = {
      customerId: input.customerId,
      name: input.name,
      amount: input.amount,
      currency: input.currency,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      metadata: { ...input.metadata },
      email: input.email,
    };
    return this.ctx.idempotent(projectId, input.idempotencyKey, 'checkout.sessions.create', params, async (now) => {
      const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', input.customerId);
      if (!customer) return noSuch('customer', input.customerId);
      const currency = parseCurrency(input.currency);
      if (currency === null || !validateAmount(input.amount, currency).ok || input.amount <= 0) {
        return processorFailed(invalidRequest(`Invalid unit_amount: ${input.amount}.`));
      }
      if (!isHttpUrl(input.successUrl)) return processorFailed(invalidRequest('Invalid URL: success_url must be a valid URL.'));
      if (!isHttpUrl(input.cancelUrl)) return processorFailed(invalidRequest('Invalid URL: cancel_url must be a valid URL.'));
      const id = this.ctx.newId('checkout_session');
      const data: CheckoutData = {
        customerId: input.customerId,
        priceId: '',
        successUrl: input.successUrl,
        cancelUrl: input.cancelUrl,
        promotionCodeId: null,
        percentOff: null,
        trialDays: null,
        quantity: 1,
        metadata: { ...input.metadata },
        email: input.email,
        status: 'open',
        expiresAt: iso(addSeconds(toWholeSeconds(now), CHECKOUT_TTL_SECONDS)),
        subscriptionId: null,
        completedAt: null,
        payment: { name: input.name, amount: input.amount, currency, paid: false },
      };
      await this.ctx.objects.insert({ id, projectId, kind: 'checkout_session', parentId: input.customerId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, url: `${this.ctx.deps.publicUrl.replace(/\/+$/, '')}/sandbox/checkout/${id}` });
    });
  }

  async getPackCheckout(projectId: string, checkoutId: string): Promise<ProcessorResult<PackCheckout | null>> {
    const session = await this.ctx.objects.get<CheckoutData>(projectId, 'checkout_session', checkoutId);
    if (!session?.data.payment) return processorOk(null);
    const now = await this.ctx.now(projectId);
    const { data } = session;
    const expired = data.status === 'open' && new Date(data.expiresAt).getTime() <= now.getTime();
    return processorOk({
      id: session.id,
      status: expired ? 'expired' : data.status,
      paid: data.payment?.paid ?? false,
      customerId: data.customerId,
      metadata: { ...data.metadata },
    });
  }

  async checkoutSubscriptionId(projectId: string, checkoutId: string): Promise<ProcessorResult<string | null>> {
    const session = await this.ctx.objects.get<CheckoutData>(projectId, 'checkout_session', checkoutId);
    if (!session) return noSuch('checkout.session', checkoutId);
    return processorOk(session.data.subscriptionId);
  }

  async getCheckout(checkoutId: string): Promise<SandboxCheckoutView | null> {
    const session = await this.ctx.objects.getAnyProject<CheckoutData>('checkout_session', checkoutId);
    if (!session) return null;
    const { projectId, data } = session;
    const now = await this.ctx.now(projectId);
    const status = data.status === 'open' && new Date(data.expiresAt).getTime() <= now.getTime() ? 'expired' : data.status;
    if (data.payment) {
      const { name, amount, currency } = data.payment;
      const base = { id: session.id, projectId, status, priceName: '', quantity: null, interval: '', trialDays: null, percentOff: null } as const;
      return { ...base, planName: name, amount, currency, email: data.email, successUrl: data.successUrl, cancelUrl: data.cancelUrl };
    }
    const price = await this.ctx.objects.get<PriceData>(projectId, 'price', data.priceId);
    const product = price ? await this.ctx.objects.get<ProductData>(projectId, 'product', price.data.productId) : null;
    return {
      id: session.id,
      projectId,
      status,
      planName: product?.data.name ?? '',
      priceName: price?.data.name ?? '',
      amount: price ? seatAmount({ amount: price.data.amount, seats: price.data.seats ?? null }, data.quantity ?? 1) : 0,
      quantity: price?.data.seats ? (data.quantity ?? 1) : null,
      currency: price?.data.currency ?? '',
      interval: price?.data.interval ?? '',
      trialDays: data.trialDays,
      percentOff: data.percentOff,
      email: data.email,
      successUrl: data.successUrl,
      cancelUrl: data.cancelUrl,
    };
  }

  /**
   * Pays an open checkout session with a test card: the subscription is created as
   * `createSubscription` creates it, with the session's trial and promotion code. A declined card
   * leaves the session open (and nothing attached); a completed or expired session is refused.
   */
  completeCheckout(
    checkoutId: string,
    paymentMethodId: string,
  ): Promise<ProcessorResult<{ projectId: string; subscriptionId: string | null; successUrl: string }, ProcessorFailure>> {
    return this.ctx.transaction(async () => {
      const session = await this.ctx.objects.getAnyProject<CheckoutData>('checkout_session', checkoutId, { lock: true });
      if (!session) return noSuch('checkout.session', checkoutId);
      const { projectId, data } = session;
      const now = await this.ctx.now(projectId);
      if (data.status === 'complete') return processorFailed(invalidRequest('This Checkout Session is already complete.'));
      if (new Date(data.expiresAt).getTime() <= now.getTime()) return processorFailed(invalidRequest('This Checkout Session has expired.'));
      if (data.payment) {
        // A one-off payment: the card is charged once (test cards decide), nothing is subscribed.
        const card = await this.paymentMethods.resolveCard(projectId, data.customerId, paymentMethodId, now);
        if (!card.ok) return card;
        const charge = chargeCard(card.value.data);
        if (charge.payment === 'failed') return declined(charge.decline ?? GENERIC_DECLINE);
        const payment = { ...data.payment, paid: true };
        await this.ctx.objects.update({ ...session, data: { ...data, payment, status: 'complete', completedAt: iso(now) }, updatedAt: now });
        return processorOk({ projectId, subscriptionId: null, successUrl: data.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', checkoutId) });
      }
      const created = await this.subscriptions.subscribe(
        projectId,
        {
          customerId: data.customerId,
          priceId: data.priceId,
          paymentMethodId,
          trialDays: data.trialDays,
          quantity: data.quantity ?? 1,
          metadata: data.metadata,
          percentOff: data.percentOff,
          checkoutId,
          keepCardOnDecline: false,
        },
        now,
      );
      if (!created.ok) return created;
      await this.ctx.objects.update({
        ...session,
        data: { ...data, status: 'complete', subscriptionId: created.value, completedAt: iso(now) },
        updatedAt: now,
      });
      return processorOk({
        projectId,
        subscriptionId: created.value,
        successUrl: data.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', checkoutId),
      });
    });
  }
}
