import type { UsageFeature } from './types';

/**
 * The spec's entitlement rules, in one place for the server SDK and the browser:
 *
 * - a plan check passes when the user's plan is the named plan or any plan above it in the
 *   project's order (the plan hierarchy: GET billing/products, by `position`, hidden plans
 *   included, since they keep their place);
 * - a feature check passes when the entitlements' `features` list contains the flag;
 * - a check with both requires both;
 * - no entitlements (null: no entitled subscription) pass nothing.
 *
 * A plan is named by its id or its name (names are compared case-insensitively, as Tollgate
 * compares them: `plan: 'pro'` names the plan "Pro"). A plan the catalog does not know passes
 * nothing, so a misspelt name denies rather than allows.
 */

export interface Entitlements {
  /** The plan's name. */
  plan: string;
  status: 'active' | 'trialing' | 'past_due' | 'pending_cancellation';
  features: string[];
  /**
   * An organization's seats on a per-seat price: `used` (members, and pending invitations when the
   * plan counts them) of `total` (the seats billed); null or absent otherwise.
   */
  seats?: { used: number; total: number } | null;
  /** Each metered feature of the plan (and meters with credits): included, used, remaining, resetsAt; absent when none. */
  usage?: UsageFeature[];
}

export interface EntitlementCheck {
  /** This plan or any plan above it in the hierarchy (its id or its name). */
  plan?: string;
  /** A feature flag the plan grants. */
  feature?: string;
}

/** What the rules need to know of a plan: the catalog of GET billing/products. */
export interface RankedPlan {
  id: string;
  name: string;
  position: number;
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function findPlan(plans: readonly RankedPlan[], ref: string): RankedPlan | undefined {
  return plans.find((p) => p.id === ref) ?? plans.find((p) => sameName(p.name, ref));
}

/** Whether the user's plan is `plan` or above it in `plans` (the project's order). */
export function planAtLeast(userPlan: string, plan: string, plans: readonly RankedPlan[]): boolean {
  const required = findPlan(plans, plan);
  if (!required) return false;
  const held = findPlan(plans, userPlan);
  if (!held) return false;
  return held.position >= required.position;
}

/** Whether `entitlements` pass `check` under the spec's rules (see above). */
export function satisfies(entitlements: Entitlements | null, check: EntitlementCheck, plans: readonly RankedPlan[]): boolean {
  if (entitlements === null) return false;
  if (check.feature !== undefined && !entitlements.features.includes(check.feature)) return false;
  if (check.plan !== undefined && !planAtLeast(entitlements.plan, check.plan, plans)) return false;
  return true;
}
