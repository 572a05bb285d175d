import type { PlanError, PlanOrderError, PriceError, TrialError } from '../../domain/billing/catalog';
import type { RedirectUrlError } from '../../domain/billing/redirect';
import type { SubscriptionError } from '../../domain/billing/subscription';
import type { ProcessorFailure } from './payment-processor';

/**
 * Every refusal a billing use case can answer. contract/errors/billing.errors.ts gives each its
 * status and message; the HTTP layer and the CLI word them from there.
 */
export type BillingErrorCode =
  | PlanError
  | PriceError
  | PlanOrderError
  | TrialError
  | RedirectUrlError
  | Exclude<SubscriptionError, 'payment_required' | 'incomplete_not_expired' | 'period_not_ended' | 'trial_not_ended' | 'grace_period_not_over' | 'subscription_not_incomplete' | 'subscription_not_past_due' | 'subscription_not_trialing' | 'cancellation_not_scheduled' | 'outside_current_period' | 'subscription_not_paused'>
  | 'project_not_found'
  | 'user_not_found'
  | 'billing_not_connected'
  | 'sandbox_unavailable'
  | 'invalid_secret_key'
  | 'invalid_publishable_key'
  | 'invalid_webhook_secret'
  | 'processor_rejected_key'
  | 'plan_not_found'
  | 'plan_name_taken'
  | 'price_not_found'
  | 'promotion_code_not_found'
  | 'subscription_exists'
  | 'subscription_busy'
  | 'subscription_not_found'
  | 'card_declined'
  | 'invalid_payment_method'
  | 'processor_rejected'
  | 'processor_unavailable'
  | 'invalid_webhook_signature'
  | 'webhook_project_unknown'
  | 'checkout_not_found'
  | 'checkout_not_open'
  | 'invalid_sandbox_days'
  | 'invalid_promotion_code'
  | 'invalid_percent_off'
  | 'invalid_cursor';

/** The refusal for a processor failure (a decline, a refusal, an outage). */
export function processorError(
  failure: ProcessorFailure,
): 'card_declined' | 'invalid_payment_method' | 'processor_rejected' | 'processor_unavailable' {
  switch (failure.kind) {
    case 'card_declined':
      return 'card_declined';
    case 'invalid_payment_method':
      return 'invalid_payment_method';
    case 'invalid_request':
      return 'processor_rejected';
    case 'authentication':
    case 'unavailable':
      return 'processor_unavailable';
  }
}

/** A billing refusal: its code, and the processor's or validator's words when they say more. */
export interface BillingRefusal<E extends BillingErrorCode = BillingErrorCode> {
  readonly ok: false;
  readonly error: E;
  /** Replaces the table's message (e.g. Stripe's reason for refusing a key, a decline's reason). */
  readonly detail?: string;
}

export const refuse = <E extends BillingErrorCode>(error: E, detail?: string): BillingRefusal<E> =>
  detail === undefined ? { ok: false, error } : { ok: false, error, detail };

/** What a billing use case answers: a value, or a refusal. */
export type BillingOutcome<T, E extends BillingErrorCode = BillingErrorCode> = { readonly ok: true; readonly value: T } | BillingRefusal<E>;

/** The refusal for a processor failure, with the processor's message. */
export const refuseFailure = (failure: ProcessorFailure) => refuse(processorError(failure), failure.message);
