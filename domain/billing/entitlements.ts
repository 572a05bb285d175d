import type { UsageFeatureView } from '../usage/feature';
import { type Plan, findPlan, planRank } from './catalog';
import { type Subscription, type SubscriptionState, graceEndsAt, subscriptionState } from './subscription';

/**
 * The spec's entitlements object: `plan` (plan name), `status` (subscription state), `features`
 * (the plan's feature flags). GET billing/entitlements answers it, or null "when there is no active
 * subscription".
 */
export interface Entitlements {
  plan: string;
  status: EntitledState;
  features: string[];
  /** An organization's seats on a per-seat price: held (members, and pending invitations where they count) and billed. */
  seats?: { used: number; total: number } | null;
  /** Each metered feature of the plan: included, used, remaining and when it resets (docs/usage.md). */
  usage?: UsageFeatureView[];
}

/**
 * Which subscriptions entitle their user, and why:
 * - `active`: paid up (Stripe: "safe to provision your product").
 * - `trialing`: Stripe: "safe to provision"; a trial exists to use the product.
 * - `past_due`: entitled during a grace period of {@link PAST_DUE_GRACE_DAYS} days from the first
 *   failed payment, while the processor retries (Stripe's Smart Retries default is 2 weeks). A
 *   failed renewal is usually an expired card, and cutting a paying customer off at the first
 *   decline punishes them for their bank; projects that want to nag can read `status`. After the
 *   grace period the subscription is no longer entitled, even before it is canceled.
 * - `pending_cancellation`: entitled until the current period ends, which was paid for (Stripe
 *   keeps such a subscription active until then; Clerk moves a canceled paid subscription to the
 *   free plan at the end of the period). Checked against the clock, so a late end-of-period job
 *   does not extend access.
 * - `paused`: not entitled; a pause stops the service and the billing together.
 * - `incomplete`, `incomplete_expired`, `canceled`: not entitled; nothing was paid or it ended.
 *
 * Active, trialing and past-due subscriptions are not cut at `currentPeriodEnd` by the clock: their
 * renewal moves them (to the next period, past_due or canceled), and a renewal processed a little
 * late must not lock a paying customer out in between.
 */
export type EntitledState = Extract<SubscriptionState, 'active' | 'trialing' | 'past_due' | 'pending_cancellation'>;

export const ENTITLED_STATES = ['active', 'trialing', 'past_due', 'pending_cancellation'] as const satisfies readonly EntitledState[];

/** What the entitlement rules read of a subscription. */
export type EntitlementFacts = Pick<Subscription, 'id' | 'status' | 'cancelAtPeriodEnd' | 'currentPeriodEnd' | 'pastDueAt'> & {
  price: Pick<Subscription['price'], 'planId'>;
};

export function isEntitled(subscription: EntitlementFacts, now: Date): boolean {
  const { status } = subscription;
  if (status !== 'active' && status !== 'trialing' && status !== 'past_due') return false;
  if (status === 'past_due' && (subscription.pastDueAt === null || now.getTime() >= graceEndsAt(subscription.pastDueAt).getTime())) {
    return false;
  }
  if (subscription.cancelAtPeriodEnd && now.getTime() >= subscription.currentPeriodEnd.getTime()) return false;
  return true;
}

/**
 * The entitlements of a user's current subscription on `plan` (the subscription's plan) at `now`,
 * or null when the subscription is missing or does not entitle (see {@link EntitledState}).
 */
export function entitlementsOf(subscription: EntitlementFacts | null, plan: Pick<Plan, 'id' | 'name' | 'features'> | null, now: Date): Entitlements | null {
  if (subscription === null || plan === null || !isEntitled(subscription, now)) return null;
  if (plan.id !== subscription.price.planId) throw new Error(`Plan ${plan.id} is not the plan of subscription ${subscription.id}`);
  return { plan: plan.name, status: subscriptionState(subscription) as EntitledState, features: [...plan.features] };
}

/**
 * Plan check (spec: "passes when the user's plan is the named plan or any plan above it in the
 * dashboard order"): true when the user's plan ranks at or above `planName` in the catalog's
 * hierarchy (all plans, hidden ones included). The plan is named by name (trimmed,
 * case-insensitive) or id. An unknown plan name never passes; nor does a user without entitlements.
 */
export function hasPlan(entitlements: Entitlements | null, planName: string, catalog: readonly Pick<Plan, 'id' | 'name' | 'position'>[]): boolean {
  if (entitlements === null) return false;
  const required = findPlan(catalog, planName);
  const held = findPlan(catalog, entitlements.plan);
  if (required === null || held === null) return false;
  return planRank(catalog, held.id)! >= planRank(catalog, required.id)!;
}

/** Feature check (spec: "passes when the features list contains the flag"): exact, case-sensitive. */
export function hasFeature(entitlements: Entitlements | null, feature: string): boolean {
  return entitlements?.features.includes(feature) ?? false;
}

export interface EntitlementCheck {
  plan?: string | null;
  feature?: string | null;
}

/**
 * The check a project asks for: with both a plan and a feature, both must pass (spec: "a check with
 * both requires both"); with one, that one; with neither, it passes when the user has any entitled
 * subscription at all (the plainest "is a subscriber" question). Empty strings count as absent.
 */
export function check(entitlements: Entitlements | null, query: EntitlementCheck, catalog: readonly Pick<Plan, 'id' | 'name' | 'position'>[]): boolean {
  if (entitlements === null) return false;
  const plan = query.plan ? query.plan : null;
  const feature = query.feature ? query.feature : null;
  if (plan !== null && !hasPlan(entitlements, plan, catalog)) return false;
  if (feature !== null && !hasFeature(entitlements, feature)) return false;
  return true;
}
