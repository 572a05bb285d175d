import { type Result, err, ok } from '../result';
import { type Currency, parseCurrency, validateAmount } from './money';
import { type BillingInterval, MAX_TRIAL_DAYS, isBillingInterval } from './periods';
import { DEFAULT_SEAT_POLICY, SEAT_MODES, type SeatPolicy, type SeatPricing, type SeatPricingError, seatAmount, validateSeatPricing } from './seat-terms';
import { isPlanAudience, type PlanAudience } from './subject';
import { type UsageLimit, type UsageLimitError, type UsageLimitInput, validateUsageLimits } from '../usage/limits';

/**
 * A plan is what Stripe calls a Product. The order of plans is the plan hierarchy: ascending tiers,
 * lowest first. `position` orders them (0 is the lowest tier); "plan X or above" passes for X and
 * every plan after it. Hidden plans are left out of the public plan list but keep their place in
 * the hierarchy (a hidden legacy or enterprise plan still ranks where the dashboard put it).
 */
export interface Plan {
  id: string;
  name: string;
  description: string;
  /** Feature-flag strings granted by the plan: trimmed, non-empty, unique, in the order entered. */
  features: string[];
  hidden: boolean;
  recommended: boolean;
  trialsEnabled: boolean;
  /** Trial offered when a checkout names none; only with trials enabled. */
  defaultTrialDays: number | null;
  /** Whom the plan is sold to: users (personal plans), organizations (team plans) or both. */
  audience: PlanAudience;
  /** How an organization's seats move on the plan's per-seat prices (automatic by default). */
  seatPolicy: SeatPolicy;
  /** Metered features: how much of each meter the plan includes per window and what happens past it (docs/usage.md). */
  usageLimits: UsageLimit[];
  position: number;
}

/** A price of a plan (Stripe's Price): immutable amount, currency and interval; archived by `active: false`. */
export interface Price {
  id: string;
  planId: string;
  name: string;
  amount: number;
  currency: Currency;
  interval: BillingInterval;
  active: boolean;
  /** Per seat: `amount` is the base for the included seats, each further seat `seats.unitAmount` (domain/billing/seats.ts); null: flat. */
  seats: SeatPricing | null;
}

/**
 * What a subscription keeps of its price: enough to bill, renew and prorate without the catalog.
 * A per-seat price's snapshot holds the amount for its `quantity` of seats (absent: a flat price).
 */
export type PriceSnapshot = Pick<Price, 'id' | 'planId' | 'amount' | 'currency' | 'interval'> & { quantity?: number };

/** A line's price and, for a per-seat price, its seats. */
export const lineOfPrice = (price: PriceSnapshot): { priceId: string; quantity?: number } =>
  price.quantity === undefined ? { priceId: price.id } : { priceId: price.id, quantity: price.quantity };

/** A per-seat price's snapshot for `quantity` seats: the amount for them (a flat price: as {@link snapshotOf}). */
export const seatSnapshotOf = (price: Pick<Price, 'id' | 'planId' | 'amount' | 'currency' | 'interval' | 'seats'>, quantity: number): PriceSnapshot =>
  price.seats === null ? snapshotOf(price) : { ...snapshotOf(price), amount: seatAmount(price, quantity), quantity };

export const snapshotOf = (price: Pick<Price, 'id' | 'planId' | 'amount' | 'currency' | 'interval'>): PriceSnapshot => ({
  id: price.id,
  planId: price.planId,
  amount: price.amount,
  currency: price.currency,
  interval: price.interval,
});

export const PLAN_NAME_MAX_LENGTH = 100;
export const PLAN_DESCRIPTION_MAX_LENGTH = 1000;
export const FEATURE_MAX_LENGTH = 100;
export const MAX_FEATURES_PER_PLAN = 100;
export const PRICE_NAME_MAX_LENGTH = 100;

export type PlanError =
  | 'invalid_plan_name'
  | 'invalid_plan_description'
  | 'invalid_feature'
  | 'too_many_features'
  | 'invalid_trial_days'
  | 'trials_not_enabled'
  | 'invalid_plan_audience'
  | 'invalid_seat_policy'
  | UsageLimitError;

export type PriceError = 'invalid_price_name' | 'invalid_amount' | 'invalid_currency' | 'invalid_interval';

export type PlanOrderError = 'invalid_plan_order';

export type TrialError = 'trials_not_enabled' | 'invalid_trial_days';

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Input for creating a plan, as the CLI, the dashboard and the API send it. */
export interface PlanInput {
  name: string;
  description?: string | null;
  /** A list, or the comma-separated form the dashboard enters (`"sso, audit-log"`). */
  features?: readonly string[] | string | null;
  hidden?: boolean;
  recommended?: boolean;
  trialsEnabled?: boolean;
  defaultTrialDays?: number | null;
  /** users (the default), organizations or both. */
  audience?: string;
  /** automatic (the default) or bought; invitations hold a seat (automatic mode); a freed seat's quantity drops at period_end (default) or immediately. */
  seatMode?: string;
  seatCountInvitations?: boolean;
  seatRemoval?: string;
  /** Limits on meters; the whole list (an update replaces it). */
  usageLimits?: readonly UsageLimitInput[];
}

export type PlanFields = Omit<Plan, 'id' | 'position'>;

/**
 * Splits the dashboard's comma-separated feature list: each entry trimmed, empty entries (from
 * `"a,,b"` or a trailing comma) dropped, duplicates dropped keeping the first. Entries are not
 * validated here; {@link normalizeFeatures} does that.
 */
export function parseFeatureList(text: string): string[] {
  return dedupe(
    text
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f.length > 0),
  );
}

/**
 * Features from either form: trimmed and de-duplicated (first occurrence kept, comparison exact, so
 * `SSO` and `sso` are two flags, as `hasFeature` compares exactly). In a list, an entry that is
 * empty after trimming is an error (in the comma form it is just a stray comma). Each flag is at
 * most 100 characters without commas or control characters (a comma could not round-trip through
 * the dashboard's form); at most 100 flags.
 */
export function normalizeFeatures(input: readonly string[] | string): Result<string[], 'invalid_feature' | 'too_many_features'> {
  const features = typeof input === 'string' ? parseFeatureList(input) : dedupe(input.map((f) => f.trim()));
  for (const f of features) {
    if (f.length === 0 || f.length > FEATURE_MAX_LENGTH || f.includes(',') || CONTROL_CHARS.test(f)) {
      return err('invalid_feature');
    }
  }
  if (features.length > MAX_FEATURES_PER_PLAN) return err('too_many_features');
  return ok(features);
}

/** A plan or price name: trimmed, 1 to `max` characters, no control characters. */
function normalizeName(name: string, max: number): string | null {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > max || CONTROL_CHARS.test(trimmed)) return null;
  return trimmed;
}

const isTrialDays = (days: number): boolean => Number.isInteger(days) && days >= 1 && days <= MAX_TRIAL_DAYS;

/**
 * Validates and normalizes a plan: name 1..100 characters (trimmed), description up to 1000
 * (trimmed, may be empty), features as {@link normalizeFeatures}, flags default to false, and a
 * default trial of 1..730 days only when trials are enabled. Name uniqueness needs the catalog:
 * see {@link isPlanNameTaken}.
 */
export function validatePlanInput(input: PlanInput): Result<PlanFields, PlanError> {
  const name = normalizeName(input.name, PLAN_NAME_MAX_LENGTH);
  if (name === null) return err('invalid_plan_name');
  const description = (input.description ?? '').trim();
  if (description.length > PLAN_DESCRIPTION_MAX_LENGTH) return err('invalid_plan_description');
  const features = normalizeFeatures(input.features ?? []);
  if (!features.ok) return features;
  const trialsEnabled = input.trialsEnabled ?? false;
  const defaultTrialDays = input.defaultTrialDays ?? null;
  if (defaultTrialDays !== null) {
    if (!isTrialDays(defaultTrialDays)) return err('invalid_trial_days');
    if (!trialsEnabled) return err('trials_not_enabled');
  }
  const audience = input.audience ?? 'users';
  if (!isPlanAudience(audience)) return err('invalid_plan_audience');
  const seatMode = input.seatMode ?? DEFAULT_SEAT_POLICY.mode;
  const seatRemoval = input.seatRemoval ?? DEFAULT_SEAT_POLICY.removal;
  if (!(SEAT_MODES as readonly string[]).includes(seatMode) || (seatRemoval !== 'period_end' && seatRemoval !== 'immediately')) {
    return err('invalid_seat_policy');
  }
  const seatPolicy: SeatPolicy = {
    mode: seatMode as SeatPolicy['mode'],
    countInvitations: input.seatCountInvitations ?? DEFAULT_SEAT_POLICY.countInvitations,
    removal: seatRemoval,
  };
  const usageLimits = validateUsageLimits(input.usageLimits ?? []);
  if (!usageLimits.ok) return usageLimits;
  return ok({
    name,
    description,
    features: features.value,
    hidden: input.hidden ?? false,
    recommended: input.recommended ?? false,
    trialsEnabled,
    defaultTrialDays,
    audience,
    seatPolicy,
    usageLimits: usageLimits.value,
  });
}

/**
 * An update merges the given fields into the plan and validates the result as a whole. Turning
 * trials off clears the default trial length instead of refusing the update.
 */
export function applyPlanUpdate(plan: Plan, patch: Partial<PlanInput>): Result<Plan, PlanError> {
  const trialsEnabled = patch.trialsEnabled ?? plan.trialsEnabled;
  const defaultTrialDays = patch.defaultTrialDays !== undefined ? patch.defaultTrialDays : trialsEnabled ? plan.defaultTrialDays : null;
  const merged = validatePlanInput({
    name: patch.name ?? plan.name,
    description: patch.description !== undefined ? patch.description : plan.description,
    features: patch.features !== undefined ? patch.features : plan.features,
    hidden: patch.hidden ?? plan.hidden,
    recommended: patch.recommended ?? plan.recommended,
    trialsEnabled,
    defaultTrialDays,
    audience: patch.audience ?? plan.audience,
    seatMode: patch.seatMode ?? plan.seatPolicy.mode,
    seatCountInvitations: patch.seatCountInvitations ?? plan.seatPolicy.countInvitations,
    seatRemoval: patch.seatRemoval ?? plan.seatPolicy.removal,
    usageLimits: patch.usageLimits ?? plan.usageLimits,
  });
  if (!merged.ok) return merged;
  return ok({ ...plan, ...merged.value });
}

/** Plan names are unique in a project, compared trimmed and case-insensitively. */
export function isPlanNameTaken(plans: readonly Plan[], name: string, exceptPlanId?: string): boolean {
  const key = nameKey(name);
  return plans.some((p) => p.id !== exceptPlanId && nameKey(p.name) === key);
}

/** A plan by id, or else by name (trimmed, case-insensitive); null when neither matches. */
export function findPlan<P extends Pick<Plan, 'id' | 'name'>>(plans: readonly P[], idOrName: string): P | null {
  return plans.find((p) => p.id === idOrName) ?? plans.find((p) => nameKey(p.name) === nameKey(idOrName)) ?? null;
}

/** The hierarchy order: by position, ties (which reorder never produces) broken by id. */
export function sortPlans<P extends Pick<Plan, 'id' | 'position'>>(plans: readonly P[]): P[] {
  return [...plans].sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The public plan list: hierarchy order, hidden plans omitted. */
export function visiblePlans<P extends Pick<Plan, 'id' | 'position' | 'hidden'>>(plans: readonly P[]): P[] {
  return sortPlans(plans).filter((p) => !p.hidden);
}

/** Tier of a plan in the full hierarchy (hidden plans included): 0 is the lowest; null if unknown. */
export function planRank(plans: readonly Pick<Plan, 'id' | 'position'>[], planId: string): number | null {
  const index = sortPlans(plans).findIndex((p) => p.id === planId);
  return index === -1 ? null : index;
}

/** Position for a new plan: above every existing one (a new plan starts as the top tier). */
export function nextPlanPosition(plans: readonly Pick<Plan, 'position'>[]): number {
  return plans.reduce((max, p) => Math.max(max, p.position + 1), 0);
}

/**
 * A new hierarchy given as plan ids from lowest to highest. It must name every existing plan exactly
 * once (a permutation); the plans come back in that order with positions 0, 1, 2, ...
 */
export function reorderPlans<P extends Pick<Plan, 'id' | 'position'>>(plans: readonly P[], orderedIds: readonly string[]): Result<P[], PlanOrderError> {
  const byId = new Map(plans.map((p) => [p.id, p]));
  if (orderedIds.length !== plans.length || new Set(orderedIds).size !== orderedIds.length) {
    return err('invalid_plan_order');
  }
  const reordered: P[] = [];
  for (const [position, id] of orderedIds.entries()) {
    const plan = byId.get(id);
    if (!plan) return err('invalid_plan_order');
    reordered.push({ ...plan, position });
  }
  return ok(reordered);
}

export interface PriceInput {
  name: string;
  amount: number;
  currency: string;
  interval: string;
  /** Per seat (organizations only): minor units per seat beyond `included`, within `minimum` and `maximum`. */
  seats?: { unitAmount: unknown; included?: unknown; minimum?: unknown; maximum?: unknown } | null;
}

export type PriceFields = Pick<Price, 'name' | 'amount' | 'currency' | 'interval' | 'seats'>;

/**
 * A price: name 1..100 characters, amount as {@link validateAmount} (0 allowed: a free tier),
 * currency a known ISO code in any case (stored lower-case), interval `month` or `year`.
 */
export function validatePriceInput(input: PriceInput): Result<PriceFields, PriceError | SeatPricingError> {
  const name = normalizeName(input.name, PRICE_NAME_MAX_LENGTH);
  if (name === null) return err('invalid_price_name');
  const currency = parseCurrency(input.currency);
  if (currency === null) return err('invalid_currency');
  if (!isBillingInterval(input.interval)) return err('invalid_interval');
  const amount = validateAmount(input.amount, currency);
  if (!amount.ok) return amount;
  if (input.seats === undefined || input.seats === null) return ok({ name, amount: amount.value, currency, interval: input.interval, seats: null });
  const seats = validateSeatPricing(input.seats, { amount: amount.value, currency });
  if (!seats.ok) return seats;
  return ok({ name, amount: amount.value, currency, interval: input.interval, seats: seats.value });
}

/** A per-seat price is sold to organizations only: a plan sold to users alone cannot have one. */
export const seatsFitAudience = (audience: PlanAudience, prices: readonly Pick<Price, 'seats' | 'active'>[]): boolean =>
  audience !== 'users' || prices.every((p) => p.seats === null);

/** A plan's prices for display: monthly before yearly, then cheapest first, then by id. */
export function pricesOfPlan(prices: readonly Price[], planId: string, options: { activeOnly: boolean }): Price[] {
  return prices
    .filter((p) => p.planId === planId && (!options.activeOnly || p.active))
    .sort((a, b) => (a.interval === b.interval ? 0 : a.interval === 'month' ? -1 : 1) || a.amount - b.amount || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** GET plans: the visible plans in hierarchy order, each with its active prices. */
export function publicCatalog(plans: readonly Plan[], prices: readonly Price[]): Array<Plan & { prices: Price[] }> {
  return visiblePlans(plans).map((plan) => ({ ...plan, prices: pricesOfPlan(prices, plan.id, { activeOnly: true }) }));
}

/**
 * The trial a checkout or subscribe gets: the requested days (1..730) only when the plan has trials
 * enabled (else `trials_not_enabled`, a 400), or the plan's default when none is requested, or no
 * trial (null).
 */
export function resolveTrialDays(
  plan: Pick<Plan, 'trialsEnabled' | 'defaultTrialDays'>,
  requested: number | null | undefined,
): Result<number | null, TrialError> {
  if (requested === null || requested === undefined) return ok(plan.trialsEnabled ? plan.defaultTrialDays : null);
  if (!plan.trialsEnabled) return err('trials_not_enabled');
  if (!isTrialDays(requested)) return err('invalid_trial_days');
  return ok(requested);
}

const nameKey = (name: string): string => name.trim().toLowerCase();

function dedupe(values: readonly string[]): string[] {
  return [...new Set(values)];
}
