import { type TrialError, resolveTrialDays } from '../../domain/billing/catalog';
import { type RedirectUrlError, checkRedirectUrl } from '../../domain/billing/redirect';
import { type Result, err, ok } from '../../domain/result';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { ensureCustomer, subjectMetadata } from './ensure-customer';
import { payerOf, type SubjectError } from './billing-subject';
import { type RequestFailureCode, refuseFailure } from './errors';
import { type SellableError, processorPriceId, sellablePrice } from './price-lookup';
import { type StartingQuantityError, startingQuantity } from './organization-seats';
import { requestScopedId } from './request-scoped-id';
import type { BillingActor, CheckoutRequest } from './requests';

/** What POST billing/checkout can answer besides a checkout. */
export type StartCheckoutError =
  | SellableError
  | RedirectUrlError
  | TrialError
  | ConnectedError
  | 'subscription_exists'
  | 'trial_not_eligible'
  | 'promotion_code_not_found'
  | RequestFailureCode
  | StartingQuantityError
  | SubjectError;

/**
 * POST billing/checkout: a hosted checkout for one price (Stripe Checkout in subscription mode, or
 * the sandbox's own page). The subscription is recorded when the processor reports the checkout
 * completed. Refused before anything is created: a URL that is not a registered callback URL or
 * its origin (no open redirect), trialDays on a plan without trials (or a second trial), an unknown
 * promotion code, and a user who already has a live subscription (409: change it instead).
 */
export function makeStartCheckout(deps: BillingDeps) {
  return async function startCheckout(actor: BillingActor, input: CheckoutRequest): Promise<Result<{ id: string; url: string }, StartCheckoutError>> {
    const { project, user } = actor;
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    const { subject, key } = payer.value;
    const chosen = await sellablePrice(deps, project.id, input.priceId, subject.kind);
    if (!chosen.ok) return chosen;
    const { price, plan } = chosen.value;
    const quantity = await startingQuantity(deps, subject, plan, price, input.quantity);
    if (!quantity.ok) return quantity;
    for (const url of [input.successUrl, input.cancelUrl]) {
      const checked = checkRedirectUrl(url, project.settings.callbackUrls);
      if (!checked.ok) return checked;
    }
    const trial = resolveTrialDays(plan, input.trialDays);
    if (!trial.ok) return trial;
    const connected = await connectedProcessor(deps, project.id);
    if (!connected.ok) return connected;
    const { connection, processor } = connected.value;
    if ((await deps.subscriptions.findLive(project.id, subject)) !== null) return err('subscription_exists');

    const customer = await ensureCustomer(deps, connection, processor, subject, user);
    if (!customer.ok) return refuseFailure(customer.failure);
    if (customer.value.trialUsed && input.trialDays !== undefined) return err('trial_not_eligible');
    const trialDays = customer.value.trialUsed ? null : trial.value;

    let promotionCodeId: string | null = null;
    if (input.promotionCode !== undefined && input.promotionCode.trim() !== '') {
      const found = await processor.findPromotionCode(input.promotionCode.trim());
      if (!found.ok) return refuseFailure(found.failure);
      if (found.value === null) return err('promotion_code_not_found');
      promotionCodeId = found.value;
    }
    const priceAtProcessor = await processorPriceId(deps, processor, plan, price);
    if (!priceAtProcessor.ok) return priceAtProcessor;
    const session = await processor.createCheckout({
      customerId: customer.value.customerId,
      priceId: priceAtProcessor.value,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      promotionCodeId,
      trialDays,
      ...(price.seats === null ? {} : { quantity: quantity.value }),
      metadata: {
        ...subjectMetadata(project.id, subject),
        subscriptionId: requestScopedId(deps, 'checkout', project.id, key, input.requestKey),
        priceId: price.id,
      },
      email: user.email,
      idempotencyKey: `tollgate-checkout-${project.id}-${key}-${input.requestKey}`,
    });
    if (!session.ok) return refuseFailure(session.failure);
    return ok(session.value);
  };
}
