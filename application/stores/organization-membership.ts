import type { ActiveOrganization } from '../../domain/organizations/claims';

/**
 * The membership of a user in an organization as it is now (the organization's slug, the member's
 * role and that role's permissions), asked by token verification and refresh. Answers at once from
 * a per-process cache when it can (dropped in every process when the membership, the organization or
 * the project's roles change), so the hot path awaits nothing extra.
 */
export interface MembershipLookup {
  current(projectId: string, organizationId: string, userId: string): CurrentMembership | null | Promise<CurrentMembership | null>;
}

export interface CurrentMembership extends ActiveOrganization {
  /** The organization requires its members to have a second factor enrolled. */
  requireMfa: boolean;
}

/** The active organization as answered (without the policy flag). */
export const activeOrganizationOf = (m: CurrentMembership): ActiveOrganization => ({ id: m.id, slug: m.slug, role: m.role, permissions: m.permissions });
