import { type BillingSubject, organizationSubject, userSubject } from '../../domain/billing/subject';
import { err, ok, type Result } from '../../domain/result';
import type { OrganizationStore } from '../organizations/organization.store';
import { missingPermission } from '../organizations/deps';
import type { MembershipLookup } from '../stores/organization-membership';
import type { BillingActor } from './requests';

/** The permission a member needs to subscribe, change, cancel, pause, resume or buy seats for their organization. */
export const BILLING_PERMISSION = 'org:billing:manage';

/** What a request needs of the organization it acts for: membership (`read`) or the billing permission (`manage`). */
export type SubjectNeed = 'read' | 'manage';

/** Why a request cannot act for the organization it asks for (a read cannot lack the permission). */
export type SubjectError<N extends SubjectNeed = 'manage'> =
  | 'no_active_organization'
  | 'organization_not_found'
  | (N extends 'manage' ? 'missing_permission' : never);

/** What billing needs of organizations: the caller's membership as it is now, and an organization's name. */
export interface BillingOrganizations {
  memberships: MembershipLookup;
  store: Pick<OrganizationStore, 'findById' | 'findBySlug' | 'countSeats'>;
}

/** Whom a request acts for, and who asks. */
export interface Payer {
  subject: BillingSubject;
  /**
   * What the processor's idempotency keys and request-scoped ids are derived from: the user's id
   * for a personal subject (as before organizations could pay), the organization's and the acting
   * member's ids for a team, so two admins' requests under the same Idempotency-Key stay apart.
   */
  key: string;
}

/**
 * The subject of a user billing request: the signed-in user, or with `?for=organization` the
 * access token's active organization, checked against the membership as it is now (a member who
 * left, or an organization deleted, is 404 however recent the token). Reads need membership;
 * writes (`manage`) need `org:billing:manage`.
 */
export async function payerOf<N extends SubjectNeed>(
  deps: { organizations: BillingOrganizations },
  actor: BillingActor,
  need: N,
): Promise<Result<Payer, SubjectError<N>>> {
  if (actor.organizationId === undefined) return ok({ subject: userSubject(actor.user.id), key: actor.user.id });
  if (actor.organizationId === null) return err('no_active_organization');
  const membership = await deps.organizations.memberships.current(actor.project.id, actor.organizationId, actor.user.id);
  if (membership === null) return err('organization_not_found');
  if (need === 'manage' && !membership.permissions.includes(BILLING_PERMISSION)) {
    return err('missing_permission' as SubjectError<N>, missingPermission(BILLING_PERMISSION));
  }
  return ok({ subject: organizationSubject(membership.id), key: `${membership.id}-${actor.user.id}` });
}
