import type { MeterAggregation } from './meter';
import type { OverageMode } from './limits';

/**
 * The usage rules (docs/usage.md): usage consumes the plan's included amount first, then credits
 * (the grant that expires first first, grants without expiry last, older before newer), then
 * overage. A hard limit (`refuse`) refuses a consumption that the included amount and the credits
 * cannot cover, whole: nothing is consumed. Tracked usage (it happened) is never refused: past a
 * hard limit it is recorded as overage, which is not billed.
 */

/** A credit grant's balance, as the rules read it. */
export interface GrantBalance {
  id: string;
  amount: number;
  remaining: number;
  expiresAt: Date | null;
  createdAt: Date;
}

/** A subject's standing on one meter in the current window. */
export interface MeterBalance {
  aggregation: MeterAggregation;
  included: number;
  used: number;
  /** Units past the included amount and the credits so far in the window. */
  overage: number;
  mode: OverageMode;
  /** Unexpired grants with something left. */
  grants: readonly GrantBalance[];
}

/** Where a consumption's units came from. */
export interface Allocation {
  amount: number;
  fromIncluded: number;
  fromCredits: Array<{ grantId: string; amount: number }>;
  overage: number;
}

export const creditBalance = (grants: readonly GrantBalance[], now: Date): number => grants.reduce((sum, g) => (isLive(g, now) ? sum + g.remaining : sum), 0);

const isLive = (g: GrantBalance, now: Date): boolean => g.remaining > 0 && (g.expiresAt === null || g.expiresAt.getTime() > now.getTime());

/** The order credits are drawn in: soonest expiry first, never-expiring last, then oldest first. */
export function drawOrder(grants: readonly GrantBalance[], now: Date): GrantBalance[] {
  const expiry = (g: GrantBalance) => g.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
  return grants.filter((g) => isLive(g, now)).sort((a, b) => expiry(a) - expiry(b) || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
}

/** What is left to use before the limit: the included amount not yet used, plus the credits (a `max` meter: the included amount only). */
export function remainingOf(balance: MeterBalance, now: Date): number {
  const included = Math.max(0, balance.included - balance.used);
  return balance.aggregation === 'max' ? included : included + creditBalance(balance.grants, now);
}

/**
 * Where `amount` units come from, or null when a hard limit refuses them (`track`: never refused).
 * A `max` meter's value is a level, not an addition: the window's usage becomes the highest level
 * seen, nothing is drawn from credits, and the overage is the level past the included amount.
 */
export function allocate(balance: MeterBalance, amount: number, now: Date, options: { track: boolean }): Allocation | null {
  if (balance.aggregation === 'max') {
    if (!options.track && balance.mode === 'refuse' && amount > balance.included) return null;
    const level = Math.max(balance.used, amount);
    const overage = Math.max(0, level - balance.included) - balance.overage;
    return { amount, fromIncluded: 0, fromCredits: [], overage: Math.max(0, overage) };
  }
  let left = amount;
  const fromIncluded = Math.min(left, Math.max(0, balance.included - balance.used));
  left -= fromIncluded;
  const fromCredits: Allocation['fromCredits'] = [];
  for (const grant of drawOrder(balance.grants, now)) {
    if (left === 0) break;
    const take = Math.min(left, grant.remaining);
    fromCredits.push({ grantId: grant.id, amount: take });
    left -= take;
  }
  if (left > 0 && balance.mode === 'refuse' && !options.track) return null;
  return { amount, fromIncluded, fromCredits, overage: left };
}

/** The window's usage after an allocation: a sum or count adds, a `max` keeps the highest level. */
export function usedAfter(balance: Pick<MeterBalance, 'aggregation' | 'used'>, amount: number): number {
  return balance.aggregation === 'max' ? Math.max(balance.used, amount) : balance.used + amount;
}

/**
 * Units of a consumption given back (a reservation settled for less): overage first, then credits
 * (the last grant drawn first), then the included amount, never more than is still held.
 */
export function releaseOf(held: Allocation, units: number): Allocation {
  let left = Math.min(units, held.amount);
  const overage = Math.min(left, held.overage);
  left -= overage;
  const fromCredits: Allocation['fromCredits'] = [];
  for (const draw of [...held.fromCredits].reverse()) {
    if (left === 0) break;
    const back = Math.min(left, draw.amount);
    fromCredits.push({ grantId: draw.grantId, amount: back });
    left -= back;
  }
  const fromIncluded = Math.min(left, held.fromIncluded);
  return { amount: overage + fromIncluded + fromCredits.reduce((s, d) => s + d.amount, 0), fromIncluded, fromCredits, overage };
}

/** What a consumption still holds once `released` was given back. */
export function subtractAllocation(held: Allocation, released: Allocation): Allocation {
  const back = new Map(released.fromCredits.map((d) => [d.grantId, d.amount]));
  return {
    amount: held.amount - released.amount,
    fromIncluded: held.fromIncluded - released.fromIncluded,
    overage: held.overage - released.overage,
    fromCredits: held.fromCredits.map((d) => ({ grantId: d.grantId, amount: d.amount - (back.get(d.grantId) ?? 0) })).filter((d) => d.amount > 0),
  };
}

/** Thresholds of the included amount a subject is told about, once per window each: 80% and 100%. */
export const USAGE_THRESHOLDS = [80, 100] as const;
export type UsageThreshold = (typeof USAGE_THRESHOLDS)[number];

/** Bit of each threshold in a window's `notified` mask. */
export const thresholdBit = (t: UsageThreshold): number => (t === 80 ? 1 : 2);

/** The thresholds usage reached with this change and had not been reported in the window. */
export function thresholdsCrossed(included: number, usedAfterChange: number, notified: number): UsageThreshold[] {
  if (included <= 0) return [];
  return USAGE_THRESHOLDS.filter((t) => (notified & thresholdBit(t)) === 0 && usedAfterChange * 100 >= included * t);
}

/** Credits are low once the balance falls under this share of the live grants' amounts. */
export const CREDITS_LOW_PERCENT = 20;

/** Whether drawing `drawn` credits took the balance from at or above the low mark to under it. */
export function creditsWentLow(grants: readonly GrantBalance[], drawn: number, now: Date): boolean {
  if (drawn <= 0) return false;
  const live = grants.filter((g) => g.expiresAt === null || g.expiresAt.getTime() > now.getTime());
  const total = live.reduce((s, g) => s + g.amount, 0);
  const before = creditBalance(live, now);
  const mark = (total * CREDITS_LOW_PERCENT) / 100;
  return before >= mark && before - drawn < mark;
}
