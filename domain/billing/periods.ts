/**
 * Billing periods, computed the way Stripe Billing computes them
 * (https://docs.stripe.com/billing/subscriptions/billing-cycle):
 *
 * - The billing cycle anchor "sets the day of week for week intervals, the day of month for month and
 *   year intervals, and the month of year for year intervals". It defaults to the subscription's
 *   creation, or to the trial end when there is a trial.
 * - Month-end rule: "A monthly subscription with a billing cycle anchor date of January 31 bills the
 *   last day of the month closest to the anchor date, so February 28 (or February 29 in a leap
 *   year), then March 31, April 30, and so on." Every boundary is computed from the anchor, never
 *   from the previous boundary, so a short month does not pull later dates back.
 * - The time of day of the anchor is kept.
 *
 * All calendar arithmetic is in UTC. Boundaries are whole seconds (Stripe timestamps are Unix
 * seconds); {@link toWholeSeconds} drops milliseconds.
 */

export const BILLING_INTERVALS = ['month', 'year'] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];

export const isBillingInterval = (value: string): value is BillingInterval => (BILLING_INTERVALS as readonly string[]).includes(value);

export interface Period {
  /** Inclusive. */
  readonly start: Date;
  /** Exclusive: the period [start, end) ends where the next one starts. */
  readonly end: Date;
}

export const SECONDS_PER_DAY = 86_400;

/** Stripe's limit on `trial_period_days` and the spec's trialDays: 1 to 730 days. */
export const MAX_TRIAL_DAYS = 730;

export const toWholeSeconds = (date: Date): Date => new Date(Math.floor(date.getTime() / 1000) * 1000);

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export const addSeconds = (date: Date, seconds: number): Date => new Date(date.getTime() + seconds * 1000);

export const addDays = (date: Date, days: number): Date => addSeconds(date, days * SECONDS_PER_DAY);

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Days in a month; `month` is 0-based as in `Date` (1 = February). */
export function daysInMonth(year: number, month: number): number {
  return [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month]!;
}

const monthsPer = (interval: BillingInterval): number => (interval === 'month' ? 1 : 12);

/**
 * The n-th boundary of a cycle anchored at `anchor` (n = 0 is the anchor itself): the anchor moved by
 * n intervals, its day of month clamped to the target month's length, its time of day kept.
 * Jan 31 + 1 month = Feb 28 (Feb 29 in a leap year); Jan 31 + 2 months = Mar 31;
 * Feb 29 2024 + 1 year = Feb 28 2025; + 4 years = Feb 29 2028.
 */
export function cycleBoundary(anchor: Date, interval: BillingInterval, n: number): Date {
  if (!Number.isSafeInteger(n)) throw new RangeError(`Not an integer count of intervals: ${n}`);
  const months = anchor.getUTCMonth() + n * monthsPer(interval);
  const year = anchor.getUTCFullYear() + Math.floor(months / 12);
  const month = ((months % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  const result = new Date(0);
  result.setUTCFullYear(year, month, day);
  result.setUTCHours(anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), 0);
  return result;
}

/** The index n of the first boundary of the cycle strictly after `after`. */
function indexAfter(anchor: Date, interval: BillingInterval, after: Date): number {
  const step = monthsPer(interval);
  const monthsApart = (after.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (after.getUTCMonth() - anchor.getUTCMonth());
  // Start one step below the estimate and walk: at most a few iterations either way.
  let n = Math.floor(monthsApart / step) - 1;
  while (cycleBoundary(anchor, interval, n).getTime() <= after.getTime()) n += 1;
  while (cycleBoundary(anchor, interval, n - 1).getTime() > after.getTime()) n -= 1;
  return n;
}

/**
 * The first boundary of the cycle strictly after `after`. With `after` at a boundary this is the
 * next one (the end of the period starting there); with `after` before the anchor (a trial that has
 * not ended) it can be the anchor itself.
 */
export const nextCycleBoundary = (anchor: Date, interval: BillingInterval, after: Date): Date =>
  cycleBoundary(anchor, interval, indexAfter(anchor, interval, after));

/** The period of the cycle that contains `at`: [last boundary <= at, next boundary > at). */
export function periodContaining(anchor: Date, interval: BillingInterval, at: Date): Period {
  const n = indexAfter(anchor, interval, at);
  return { start: cycleBoundary(anchor, interval, n - 1), end: cycleBoundary(anchor, interval, n) };
}

/** The billing period that starts at `start` on a cycle anchored at `anchor`. */
export const periodFrom = (anchor: Date, interval: BillingInterval, start: Date): Period => ({
  start,
  end: nextCycleBoundary(anchor, interval, start),
});

/** True when `at` lies in [start, end). */
export const isWithin = (period: Period, at: Date): boolean => period.start.getTime() <= at.getTime() && at.getTime() < period.end.getTime();

/** Length of a period in whole seconds, the unit Stripe prorates by. */
export const periodSeconds = (period: Period): number => unixSeconds(period.end) - unixSeconds(period.start);
