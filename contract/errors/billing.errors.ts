import type { ErrorEntry } from './types';

/**
 * Refusals of billing: the catalog, the connection to a payment processor, checkout and
 * subscriptions, inbound processor webhooks and `Idempotency-Key`. docs/billing.md explains each.
 */
export const billingErrors = {
  // Connection
  billing_not_connected: { status: 409, message: 'Billing is not set up for this project: connect Stripe or the sandbox first' },
  sandbox_unavailable: { status: 403, message: 'The sandbox processor is disabled in production (set BILLING_SANDBOX_IN_PRODUCTION=true to allow it)' },
  invalid_secret_key: { status: 400, message: 'Invalid Stripe secret key: it starts with sk_test_, sk_live_, rk_test_ or rk_live_' },
  invalid_publishable_key: { status: 400, message: 'Invalid Stripe publishable key: it starts with pk_test_ or pk_live_, in the same mode as the secret key' },
  invalid_webhook_secret: { status: 400, message: 'Invalid Stripe webhook signing secret: it starts with whsec_' },
  processor_rejected_key: { status: 400, message: 'Stripe refused the secret key' },
  // Catalog
  invalid_plan_name: { status: 400, message: 'Invalid plan name: 1 to 100 characters' },
  invalid_plan_description: { status: 400, message: 'Invalid plan description: at most 1000 characters' },
  invalid_feature: { status: 400, message: 'Invalid feature: each feature flag is 1 to 100 characters, without commas' },
  too_many_features: { status: 400, message: 'Too many features: at most 100 per plan' },
  invalid_trial_days: { status: 400, message: 'Invalid trialDays: a whole number of days from 1 to 730' },
  trials_not_enabled: { status: 400, message: 'This plan does not offer trials' },
  trial_not_eligible: { status: 400, message: 'A trial has already been used for this project' },
  invalid_price_name: { status: 400, message: 'Invalid price name: 1 to 100 characters' },
  invalid_amount: { status: 400, message: 'Invalid amount: a whole number of minor units (cents for usd), 0 to 99999999, valid for the currency' },
  invalid_currency: { status: 400, message: 'Invalid currency: a three-letter ISO 4217 code Stripe supports (usd, eur, ...)' },
  invalid_interval: { status: 400, message: 'Invalid interval: month or year' },
  invalid_plan_audience: { status: 400, message: 'Invalid audience: users, organizations or both' },
  invalid_plan_order: { status: 400, message: 'Invalid plan order: list every plan of the project exactly once' },
  plan_not_found: { status: 404, message: 'Plan not found' },
  plan_name_taken: { status: 409, message: 'A plan with this name already exists in the project' },
  price_not_found: { status: 404, message: 'Price not found' },
  price_inactive: { status: 400, message: 'This price is archived and cannot be subscribed to' },
  price_plan_mismatch: { status: 400, message: 'The price does not belong to the plan' },
  plan_audience_mismatch: { status: 400, message: "This plan is not sold to this kind of customer (see the plan's audience)" },
  // Seats
  invalid_seat_pricing: { status: 400, message: 'Invalid per-seat price: unitAmount above 0, included 0 or more, minimum 1 or more, maximum at least both' },
  invalid_seat_policy: { status: 400, message: 'Invalid seat policy: mode automatic or bought, removal period_end or immediately' },
  seats_not_for_users: { status: 400, message: 'A per-seat price is sold to organizations: sell the plan to organizations (or both) first' },
  invalid_quantity: { status: 400, message: 'Invalid quantity: a whole number of seats from 1 to 100000' },
  quantity_below_minimum: { status: 400, message: 'The quantity is below the fewest seats this price sells' },
  quantity_above_maximum: { status: 400, message: 'The quantity is above the most seats this price sells' },
  quantity_below_seats_in_use: { status: 400, message: 'More seats are in use than this quantity: remove members or revoke invitations first' },
  same_quantity: { status: 400, message: 'The subscription already has this quantity' },
  not_per_seat: { status: 400, message: "This subscription's price is not per seat" },
  seats_managed_automatically: { status: 409, message: "This plan counts its seats from the organization's members: invite or remove members instead" },
  // Organizations as customers
  no_active_organization: { status: 400, message: 'The access token has no active organization: switch to one first (POST organizations/active)' },
  // Checkout and subscriptions
  invalid_redirect_url: { status: 400, message: 'Invalid redirect URL: an absolute http(s) URL' },
  redirect_url_not_allowed: { status: 400, message: 'Redirect URL not allowed: it must match a registered callback URL or its origin' },
  promotion_code_not_found: { status: 400, message: 'Unknown promotion code' },
  subscription_exists: { status: 409, message: 'The user already has a subscription: change it instead' },
  subscription_busy: { status: 409, message: 'Another change to this subscription is in progress: retry in a moment' },
  subscription_not_found: { status: 404, message: 'No current subscription' },
  subscription_canceled: { status: 409, message: 'The subscription is canceled' },
  subscription_incomplete: { status: 409, message: 'The subscription never started: its first payment did not succeed' },
  subscription_paused: { status: 409, message: 'The subscription is paused: resume it first' },
  subscription_past_due: { status: 409, message: 'The subscription is past due: pay the open invoice first' },
  subscription_trialing: { status: 409, message: 'The subscription is in its trial: cancel it instead' },
  subscription_not_resumable: { status: 409, message: 'The subscription is neither paused nor pending cancellation' },
  cancellation_scheduled: { status: 409, message: 'The subscription is pending cancellation: resume it first' },
  same_price: { status: 409, message: 'The subscription is already on this price' },
  currency_mismatch: { status: 400, message: 'The new price is in another currency than the subscription' },
  card_declined: { status: 402, message: 'Your card was declined' },
  invalid_payment_method: { status: 400, message: 'Unknown or unusable payment method' },
  processor_rejected: { status: 400, message: 'The payment processor refused the request' },
  processor_unavailable: { status: 502, message: 'The payment processor is unavailable: nothing was changed, try again' },
  checkout_not_found: { status: 404, message: 'Checkout not found' },
  checkout_not_open: { status: 409, message: 'This checkout is already completed or expired' },
  // Sandbox controls
  invalid_cursor: { status: 400, message: 'Invalid cursor: pass the next_cursor of the previous page' },
  invalid_sandbox_days: { status: 400, message: 'Invalid days: a number of days above 0 and at most 3660 (fractions allowed: 0.5 is 12 hours)' },
  invalid_promotion_code: { status: 400, message: 'Invalid promotion code: 1 to 50 letters, digits, - or _' },
  invalid_percent_off: { status: 400, message: 'Invalid percent off: a whole number from 1 to 100' },
  // Inbound processor webhooks
  invalid_webhook_signature: { status: 400, message: 'Invalid webhook signature' },
  webhook_project_unknown: { status: 400, message: 'The webhook names no project with a Stripe connection' },
  // Idempotency-Key
  invalid_idempotency_key: { status: 400, message: 'Invalid Idempotency-Key: 1 to 255 printable ASCII characters' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request' },
  idempotency_key_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still in progress' },
} as const satisfies Record<string, ErrorEntry>;
