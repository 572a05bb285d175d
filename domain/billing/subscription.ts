/**
 * The subscription state machine, one module per concern; importers use this module:
 * - subscription-status.ts: the statuses, the Subscription type, liveness and the time limits;
 * - subscription-transition.ts: what a transition decides, its errors, and the helpers all share;
 * - subscription-start.ts: subscribe / checkout and the incomplete first payment;
 * - subscription-change.ts: price changes and their preview;
 * - subscription-pause-cancel.ts: cancel, pause and resume;
 * - subscription-period-end.ts: what happens when a period, a trial or a grace period ends;
 * - subscription-schedule.ts: which transition is due when, and the upcoming invoice.
 */
export {
  INCOMPLETE_EXPIRY_SECONDS,
  LIVE_STATUSES,
  PAST_DUE_GRACE_DAYS,
  SUBSCRIPTION_STATUSES,
  type Subscription,
  type SubscriptionState,
  type SubscriptionStatus,
  currentPeriod,
  graceEndsAt,
  incompleteExpiresAt,
  isLive,
  subscriptionState,
} from './subscription-status';
export type { EndedError, PaymentOutcome, SubscriptionError, Transition } from './subscription-transition';
export {
  type StartSubscriptionInput,
  completeInitialPayment,
  expireIncomplete,
  startSubscription,
} from './subscription-start';
export {
  type ChangeError,
  type PriceChangeOptions,
  type QuantityChangeError,
  changePrice,
  changeQuantity,
  previewChange,
  previewQuantityChange,
} from './subscription-change';
export { cancelAtPeriodEnd, cancelNow, pause, pausedAcrossRenewal, resume } from './subscription-pause-cancel';
export {
  endAfterGracePeriod,
  endAtPeriodEnd,
  endTrial,
  endTrialNow,
  renew,
  retryPayment,
  skipPausedPeriod,
} from './subscription-period-end';
export { type DueAction, dueAction, nextActionAt, upcomingInvoice } from './subscription-schedule';
