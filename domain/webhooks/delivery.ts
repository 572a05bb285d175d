/**
 * When deliveries are attempted, when they give up, and when an endpoint that never answers is
 * turned off. Designed after Svix and Stripe: about three days of retries, then the delivery is
 * failed (a person can resend it); five days of failures without one success disable the endpoint.
 */

/**
 * Seconds between a failed attempt and the next: the first attempt runs at once, then 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h, 24 h and 24 h later (10 attempts over about 3 days and 3 hours).
 */
export const WEBHOOK_RETRY_DELAYS_SECONDS: readonly number[] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600, 24 * 3600, 24 * 3600];

export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_DELAYS_SECONDS.length + 1;

/** Seconds until the attempt after the `failedAttempt`-th one (1 for the first), or null after the last. */
export function nextAttemptDelaySeconds(failedAttempt: number): number | null {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1) return null;
  return WEBHOOK_RETRY_DELAYS_SECONDS[failedAttempt - 1] ?? null;
}

/** An endpoint failing this long without a single success is disabled. */
export const FAILING_ENDPOINT_DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

export const DISABLED_FAILING = 'failing for 5 days without a successful delivery';
export const DISABLED_GONE = 'the endpoint answered 410 Gone';

/** Whether an endpoint failing since `failingSince` (its first failure after its last success) is disabled at `now`. */
export const failingTooLong = (failingSince: Date | null, now: Date): boolean =>
  failingSince !== null && now.getTime() - failingSince.getTime() >= FAILING_ENDPOINT_DISABLE_AFTER_MS;

/** What an answer's status means for the delivery. */
export type AnswerOutcome = 'succeeded' | 'gone' | 'failed';

/** Any 2xx is success; 410 Gone disables the endpoint; anything else (3xx included: redirects are not followed) is retried. */
export function answerOutcome(status: number): AnswerOutcome {
  if (status >= 200 && status < 300) return 'succeeded';
  if (status === 410) return 'gone';
  return 'failed';
}

/** How much of an answer the delivery log keeps. */
export const RESPONSE_EXCERPT_BYTES = 1024;
