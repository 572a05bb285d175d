/**
 * Who pays: a billing subject is an end user (a personal subscription, as the spec's billing
 * routes have always sold) or an organization of the project (a team's subscription, which its
 * members share). A subject has at most one live subscription; its customer at the processor, its
 * invoices and its trial are its own. User and organization ids are both UUIDs, so a subject's id
 * alone keys a lease or a lookup; the kind says which table it names.
 */
export type BillingSubject = { kind: 'user'; id: string } | { kind: 'organization'; id: string };

export type SubjectKind = BillingSubject['kind'];

export const userSubject = (id: string): BillingSubject => ({ kind: 'user', id });
export const organizationSubject = (id: string): BillingSubject => ({ kind: 'organization', id });

export const sameSubject = (a: BillingSubject, b: BillingSubject): boolean => a.kind === b.kind && a.id === b.id;

/** The user id of a personal subject; null for an organization. */
export const userIdOf = (s: BillingSubject): string | null => (s.kind === 'user' ? s.id : null);
/** The organization id of a team subject; null for a user. */
export const organizationIdOf = (s: BillingSubject): string | null => (s.kind === 'organization' ? s.id : null);

/**
 * Whom a plan is sold to: `users` (personal plans, the default, as every plan was before
 * organizations could pay), `organizations` (team plans), or `both`.
 */
export const PLAN_AUDIENCES = ['users', 'organizations', 'both'] as const;
export type PlanAudience = (typeof PLAN_AUDIENCES)[number];

export const isPlanAudience = (value: unknown): value is PlanAudience => typeof value === 'string' && (PLAN_AUDIENCES as readonly string[]).includes(value);

/** Whether a plan for `audience` may be sold to a subject of `kind`. */
export function soldTo(audience: PlanAudience, kind: SubjectKind): boolean {
  return audience === 'both' || (kind === 'user' ? audience === 'users' : audience === 'organizations');
}
