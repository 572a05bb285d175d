import type { Invitation } from '../../domain/organizations/invitation';
import type { Membership, Organization } from '../../domain/organizations/organization';
import type { RoleDefinition } from '../../domain/organizations/roles';
import type { DomainEnrollment, VerifiedDomain } from '../../domain/organizations/verified-domain';

/** A project's organization settings (no row stored: the defaults). */
export interface OrganizationSettings {
  /** End users may create organizations themselves (with their access token). */
  allowUserCreation: boolean;
  /** Every user must belong to an organization (sign-up leads to creating or joining one). */
  required: boolean;
  /** Member limit of an organization that sets none (members plus pending invitations). */
  defaultMemberLimit: number;
  /** Admin, member and custom roles as the project stored them (owner is fixed); empty: the defaults. */
  roles: RoleDefinition[];
}

export interface MemberView extends Membership {
  user: { email: string | null; name: string | null; picture: string | null };
}

export interface OrganizationPageCursor {
  createdAt: Date;
  id: string;
}

export type OrganizationPatch = Partial<Pick<Organization, 'name' | 'slug' | 'imageUrl' | 'publicMetadata' | 'privateMetadata' | 'maxMembers' | 'requireMfa'>>;

/**
 * Organizations, memberships, invitations and verified domains of a project. Every method that
 * changes members runs in one transaction that locks the organization's row first (`for update`),
 * so concurrent adds, role changes, removals and accepts are serialized per organization: member
 * limits hold and the last owner cannot be removed or demoted by two requests that each see another
 * owner. Methods take part in the caller's transaction when there is one (UnitOfWork), so a use
 * case records its events in the same one.
 */
export interface OrganizationStore {
  /** Inserts the organization and its first owner. `slug_taken` when the project has that slug. */
  create(org: Organization, owner: Membership): Promise<'created' | 'slug_taken'>;
  findById(projectId: string, organizationId: string): Promise<Organization | null>;
  findBySlug(projectId: string, slug: string): Promise<Organization | null>;
  /** The organization after the change; null when it does not exist; `slug_taken` on a slug clash. */
  update(projectId: string, organizationId: string, patch: OrganizationPatch, at: Date): Promise<Organization | 'slug_taken' | null>;
  /** Deletes it with its members, invitations and domains (sessions acting for it act for none). */
  delete(projectId: string, organizationId: string): Promise<boolean>;
  /** Newest first; `search` matches a part of the name or slug, case-insensitive. At most `limit`. */
  listForProject(projectId: string, filter: { search?: string; limit: number; after?: OrganizationPageCursor }): Promise<Organization[]>;
  /** The user's organizations with their membership, oldest membership first. */
  listForUser(projectId: string, userId: string): Promise<Array<{ organization: Organization; membership: Membership }>>;

  findMembership(organizationId: string, userId: string): Promise<Membership | null>;
  /** Members with their user's email, name and picture, oldest first, at most `limit`, after the member id `after`. */
  listMembers(organizationId: string, page: { limit: number; after?: { createdAt: Date; id: string } }): Promise<MemberView[]>;
  countMembers(organizationId: string): Promise<number>;
  /** Members, and pending invitations not yet expired at `now` (the seats an organization's billing counts). */
  countSeats(organizationId: string, now: Date): Promise<{ members: number; pendingInvitations: number }>;
  /** How many owners it has. */
  countOwners(organizationId: string): Promise<number>;
  /**
   * Adds a member if members plus pending unexpired invitations stay within `limit`, atomically
   * with the organization locked (throws when the organization does not exist).
   */
  addMember(membership: Membership, limit: number, now: Date): Promise<'added' | 'already_member' | 'limit_reached'>;
  /** `last_owner` when it would demote the only owner. Answers the membership before the change. */
  setRole(
    organizationId: string,
    userId: string,
    role: string,
    at: Date,
  ): Promise<{ outcome: 'updated'; before: Membership; after: Membership } | 'not_found' | 'last_owner'>;
  /** `last_owner` when it is the only owner. Also clears it as the active organization of the user's sessions. */
  removeMember(organizationId: string, userId: string): Promise<{ outcome: 'removed'; before: Membership } | 'not_found' | 'last_owner'>;

  /**
   * Records an invitation (its token only as `tokenHash`). A pending invitation of the same email to
   * the same organization is revoked in the same transaction (the new one replaces it). Refused
   * when the email's user is already a member, or members plus pending invitations reach `limit`.
   */
  createInvitation(invitation: Invitation, tokenHash: string, limit: number, now: Date): Promise<'created' | 'already_member' | 'limit_reached'>;
  findInvitation(projectId: string, invitationId: string): Promise<Invitation | null>;
  findInvitationByTokenHash(tokenHash: string): Promise<Invitation | null>;
  /** Newest first, at most 200; with `pendingOnly`, pending ones not yet expired at `now`. */
  listInvitations(organizationId: string, filter: { pendingOnly: boolean; now: Date }): Promise<Invitation[]>;
  /** Pending, unexpired invitations to this email (by key) across the project's organizations, newest first. */
  listPendingForEmail(projectId: string, emailKey: string, now: Date): Promise<Array<{ invitation: Invitation; organization: Organization }>>;
  /**
   * Accepts a pending, unexpired invitation in one transaction: marks it accepted by the user and
   * inserts the membership with its role (the member limit counts it already, as a pending one).
   * Of concurrent accepts exactly one wins; the others get `not_pending`. `already_member` when
   * the user is one (the invitation is then accepted, the role unchanged).
   */
  acceptInvitation(invitationId: string, membership: Membership, at: Date): Promise<'accepted' | 'not_pending' | 'already_member'>;
  /** Revokes or declines a pending invitation; false when it was not pending. */
  endInvitation(invitationId: string, status: 'revoked' | 'declined', at: Date): Promise<boolean>;

  addDomain(domain: VerifiedDomain): Promise<'added' | 'exists'>;
  listDomains(organizationId: string): Promise<VerifiedDomain[]>;
  findDomain(organizationId: string, domainId: string): Promise<VerifiedDomain | null>;
  /** `taken` when another organization of the project verified it first. */
  markDomainVerified(domainId: string, at: Date): Promise<'verified' | 'taken'>;
  updateDomain(domainId: string, patch: { enrollment?: DomainEnrollment; defaultRole?: string }): Promise<VerifiedDomain | null>;
  deleteDomain(organizationId: string, domainId: string): Promise<boolean>;
  /** The verified domain entry of a domain in the project, if any organization verified it. */
  verifiedDomain(projectId: string, domain: string): Promise<VerifiedDomain | null>;

  settings(projectId: string): Promise<OrganizationSettings>;
  saveSettings(projectId: string, settings: OrganizationSettings, at: Date): Promise<void>;
  /** Whether any organization of the project has members holding `role`. */
  roleInUse(projectId: string, role: string): Promise<boolean>;

  /** Sets the session's active organization (null: none); false when the session is not the user's live one. */
  setActiveOrganization(projectId: string, userId: string, sessionId: string, organizationId: string | null): Promise<boolean>;
}
