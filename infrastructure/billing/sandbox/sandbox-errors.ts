import { type RequestFailure, processorFailed } from '../../../application/billing/payment-processor';
import { MAX_TRIAL_DAYS } from '../../../domain/billing/periods';
import type { SubscriptionError } from '../../../domain/billing/subscription';
import type { Decline } from './test-cards';

/** The sandbox's refusals, in Stripe's words. */

export const invalidRequest = (message: string): RequestFailure => ({ kind: 'invalid_request', message });
export const noSuch = (what: string, id: string) => processorFailed(invalidRequest(`No such ${what}: '${id}'`));
export const declined = (decline: Decline) => processorFailed({ kind: 'card_declined', message: decline.message, declineCode: decline.declineCode });

/** Stripe-like words for the domain's refusals. */
function refusalMessage(error: SubscriptionError): string {
  switch (error) {
    case 'price_inactive':
      return 'The price specified is inactive. This field only accepts active prices.';
    case 'trials_not_enabled':
    case 'invalid_trial_days':
    case 'trial_not_eligible':
      return `Invalid trial_period_days: must be an integer from 1 to ${MAX_TRIAL_DAYS}.`;
    case 'subscription_canceled':
      return 'A canceled subscription can only update its cancellation_details and metadata.';
    case 'subscription_incomplete':
      return 'This subscription never started: its first payment was not made.';
    case 'subscription_paused':
      return 'This subscription is paused: resume it first.';
    case 'subscription_past_due':
      return 'This subscription is past due: its open invoice must be paid first.';
    case 'subscription_trialing':
      return 'A subscription in its trial cannot be paused.';
    case 'subscription_not_resumable':
      return 'This subscription is neither paused nor scheduled to cancel.';
    case 'cancellation_scheduled':
      return 'This subscription is scheduled to cancel at the end of its period: resume it first.';
    case 'same_price':
      return 'The subscription is already on this price.';
    case 'currency_mismatch':
      return "The price's currency differs from the subscription's currency.";
    case 'outside_current_period':
      return "The subscription's current period has ended.";
    default:
      return `The request was refused (${error}).`;
  }
}

export const refused = (error: SubscriptionError) => processorFailed(invalidRequest(refusalMessage(error)));
