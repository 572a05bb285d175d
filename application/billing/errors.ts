import type { PlanError, PlanOrderError, PriceError, TrialError } from '../../domain/billing/catalog';
import type { RedirectUrlError } from '../../domain/billing/redirect';
import type { SubscriptionError } from '../../domain/billing/subscription';
import { type Err, type Result, err } from '../../domain/result';
import type { ProcessorFailure, RequestFailure } from './payment-processor';

/**
 * Every refusal a billing use case can answer. Each use case returns `Result<T, E>` (domain/result)
 * with the narrow union `E` of the codes it really answers, so a route compiles only if it declares
 * each of them. contract/errors/billing.errors.ts gives each its status and message; the HTTP layer
 * and the CLI word them from there.
 */
export type BillingErrorCode =
  | PlanError
  | 'unknown_meter'
  | PriceError
  | PlanOrderError
  | TrialError
  | RedirectUrlError
  | Exclude<
      SubscriptionError,
      | 'payment_required'
      | 'incomplete_not_expired'
      | 'period_not_ended'
      | 'trial_not_ended'
      | 'grace_period_not_over'
      | 'subscription_not_incomplete'
      | 'subscription_not_past_due'
      | 'subscription_not_trialing'
      | 'cancellation_not_scheduled'
      | 'outside_current_period'
      | 'subscription_not_paused'
    >
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
  | 'invalid_cursor'
  | 'plan_audience_mismatch'
  | 'invalid_seat_pricing'
  | 'invalid_seat_policy'
  | 'seats_not_for_users'
  | 'invalid_quantity'
  | 'quantity_below_minimum'
  | 'quantity_above_maximum'
  | 'quantity_below_seats_in_use'
  | 'not_per_seat'
  | 'same_quantity'
  | 'seats_managed_automatically'
  | 'no_active_organization'
  | 'organization_not_found'
  | 'missing_permission';

/** The code each kind of processor failure answers. */
const FAILURE_CODES = {
  card_declined: 'card_declined',
  invalid_payment_method: 'invalid_payment_method',
  invalid_request: 'processor_rejected',
  authentication: 'processor_unavailable',
  unavailable: 'processor_unavailable',
} as const satisfies Record<ProcessorFailure['kind'], BillingErrorCode>;

/** The codes a processor failure of kind `F` answers. */
export type FailureCode<F extends ProcessorFailure = ProcessorFailure> = (typeof FAILURE_CODES)[F['kind']];
/** What a request that charges no card answers when it fails: `processor_rejected` or `processor_unavailable`. */
export type RequestFailureCode = FailureCode<RequestFailure>;

/** The refusal for a processor failure (a decline, a refusal, an outage). */
export function processorError<F extends ProcessorFailure>(failure: F): FailureCode<F> {
  return FAILURE_CODES[failure.kind as F['kind']];
}

/** The refusal for a processor failure, with the processor's message (e.g. a decline's reason). */
export const refuseFailure = <F extends ProcessorFailure>(failure: F): Err<FailureCode<F>> => err(processorError(failure), failure.message);

/** A billing refusal: its code, and the processor's or validator's words when they say more. */
export type BillingRefusal<E extends BillingErrorCode = BillingErrorCode> = Err<E>;

/** What a billing use case answers: a value, or a refusal with one of the codes `E`. */
export type BillingOutcome<T, E extends BillingErrorCode = BillingErrorCode> = Result<T, E>;
