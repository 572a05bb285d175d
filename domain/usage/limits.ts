import { MAX_AMOUNT } from '../billing/money';
import { type Result, err, ok } from '../result';
import { MAX_USAGE_VALUE, METER_KEY } from './meter';

/**
 * A metered feature of a plan: how much of a meter a subscriber may use per window, and what
 * happens past it.
 * - `reset`: `period` (each billing period of the subscription; a subject without one, each
 *   calendar month), `day` (each UTC day) or `month` (each UTC calendar month).
 * - `overage`: `refuse` (a hard limit: a check past it answers allowed false and consumes nothing),
 *   `bill` (allowed, and the units past the included amount and the credits are billed at the
 *   period's end at `price`), `allow` (a soft limit: allowed, reported, never billed).
 * - `price`: with `bill` only: `unitAmount` minor units of the subscription's currency for each
 *   started package of `packageSize` units (1: per unit), as Stripe's `transform_quantity` rounds up.
 */
export interface UsageLimit {
  meter: string;
  included: number;
  reset: UsageReset;
  overage: OverageMode;
  price: OveragePrice | null;
}

export interface OveragePrice {
  unitAmount: number;
  packageSize: number;
}

export const USAGE_RESETS = ['period', 'day', 'month'] as const;
export type UsageReset = (typeof USAGE_RESETS)[number];
export const OVERAGE_MODES = ['refuse', 'bill', 'allow'] as const;
export type OverageMode = (typeof OVERAGE_MODES)[number];
export const MAX_LIMITS_PER_PLAN = 20;
export const MAX_PACKAGE_SIZE = 1_000_000_000;

export type UsageLimitError = 'invalid_usage_limit' | 'too_many_usage_limits';

const oneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (values as readonly string[]).includes(value);

/** What a client sends for a limit (the console's form, the CLI, the admin API). */
export interface UsageLimitInput {
  meter: string;
  included: number;
  reset?: string | null;
  overage?: string | null;
  price?: { unitAmount: number; packageSize?: number | null } | null;
}

/**
 * A plan's limits: at most {@link MAX_LIMITS_PER_PLAN}, one per meter key, each with a whole
 * `included` amount (0 is fine: usage is all credits or overage), and a price exactly when its
 * overage is billed. Whether each meter exists is the use case's question.
 */
export function validateUsageLimits(input: readonly UsageLimitInput[]): Result<UsageLimit[], UsageLimitError> {
  if (input.length > MAX_LIMITS_PER_PLAN) return err('too_many_usage_limits');
  const limits: UsageLimit[] = [];
  for (const raw of input) {
    const limit = validateUsageLimit(raw);
    if (limit === null || limits.some((l) => l.meter === limit.meter)) return err('invalid_usage_limit');
    limits.push(limit);
  }
  return ok(limits);
}

function validateUsageLimit(raw: UsageLimitInput): UsageLimit | null {
  if (raw === null || typeof raw !== 'object' || typeof raw.meter !== 'string' || !METER_KEY.test(raw.meter)) return null;
  if (!Number.isSafeInteger(raw.included) || raw.included < 0 || raw.included > MAX_USAGE_VALUE) return null;
  const reset = raw.reset ?? 'period';
  const overage = raw.overage ?? 'refuse';
  if (!oneOf(USAGE_RESETS, reset) || !oneOf(OVERAGE_MODES, overage)) return null;
  if (overage !== 'bill')
    return raw.price === undefined || raw.price === null ? { meter: raw.meter, included: raw.included, reset, overage, price: null } : null;
  const price = raw.price;
  if (price === undefined || price === null || typeof price !== 'object') return null;
  const packageSize = price.packageSize ?? 1;
  if (!Number.isSafeInteger(price.unitAmount) || price.unitAmount <= 0 || price.unitAmount > MAX_AMOUNT) return null;
  if (!Number.isSafeInteger(packageSize) || packageSize < 1 || packageSize > MAX_PACKAGE_SIZE) return null;
  return { meter: raw.meter, included: raw.included, reset, overage, price: { unitAmount: price.unitAmount, packageSize } };
}

/** A stored limit list read back (jsonb): what does not validate is dropped, never trusted. */
export function readUsageLimits(value: unknown): UsageLimit[] {
  if (!Array.isArray(value)) return [];
  const limits: UsageLimit[] = [];
  for (const raw of value) {
    const limit = validateUsageLimit(raw as UsageLimitInput);
    if (limit !== null) limits.push(limit);
  }
  return limits;
}

/** The amount billed for `units` past the included amount and the credits: each started package at the unit amount. */
export function overageAmount(units: number, price: OveragePrice): number {
  if (units <= 0) return 0;
  return Math.ceil(units / price.packageSize) * price.unitAmount;
}
