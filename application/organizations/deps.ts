import type { AuditActor } from '../../domain/audit';
import type { OrganizationEventType } from '../../domain/organizations/events';
import type { Membership, Organization } from '../../domain/organizations/organization';
import { hasPermission, type OrgPermission, permissionsOf, type RoleSet } from '../../domain/organizations/roles';
import { err, ok, type Result } from '../../domain/result';
import { type AuditLog, userActor } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Outbox } from '../ports/outbox';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { UserStore } from '../stores/user.store';
import type { OrganizationStore } from './organization.store';
import type { SeatCapacity } from './seats';

/** A project event of an organization, recorded with the change and delivered to webhook endpoints. */
export interface OrganizationEvent {
  id: string;
  projectId: string;
  type: OrganizationEventType;
  /** The member or user concerned, if any. */
  userId: string | null;
  /** The whole event as delivered: id, type, created, organizationId, userId, data. */
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** Records events in the caller's transaction (the webhooks feature fans each out to endpoints). */
export interface OrganizationEvents {
  publish(event: OrganizationEvent): Promise<boolean>;
}

/** Reads the TXT records of a DNS name (a test double in tests). */
export interface DnsTxtResolver {
  /** Every TXT record's strings joined, one entry per record; empty when the name has none or does not exist. */
  txt(name: string): Promise<string[]>;
}

export interface OrganizationDeps {
  store: OrganizationStore;
  users: Pick<UserStore, 'findById'>;
  uow: UnitOfWork;
  events: OrganizationEvents;
  outbox: Outbox;
  audit: AuditLog;
  clock: Clock;
  crypto: TokenCrypto;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  notify: NotifySecurityEvent;
  /** The project's roles (cached, dropped when they change). */
  roles(projectId: string): Promise<RoleSet>;
  hasSecondFactor(projectId: string, userId: string): Promise<boolean>;
  dns: DnsTxtResolver;
  /** The seats an organization's subscription lets it hold (billing). */
  seats: SeatCapacity;
}

/**
 * Who acts: an end user with their access token (a member, whose role's permissions are checked;
 * a non-member sees no organization at all), or the project itself (its server with the API key,
 * or an operator in the console or CLI), who may do anything to any organization of the project.
 */
export type OrganizationActor = { kind: 'member'; userId: string } | { kind: 'project'; audit: AuditActor };

export const auditActorOf = (actor: OrganizationActor): AuditActor => (actor.kind === 'member' ? userActor(actor.userId) : actor.audit);

export interface Access {
  org: Organization;
  /** The acting member's membership (null for the project). */
  membership: Membership | null;
  roles: RoleSet;
}

export type AccessError = 'organization_not_found' | 'missing_permission';

/**
 * The organization as the actor may see it: 404 for a non-member (an organization of another
 * project, or one the user does not belong to, is the same as none); `missing_permission` naming
 * the permission when the member's role lacks it. The project sees every organization of its own,
 * by id or by slug.
 */
export async function access(
  deps: Pick<OrganizationDeps, 'store' | 'roles'>,
  projectId: string,
  organizationId: string,
  actor: OrganizationActor,
  permission?: OrgPermission,
): Promise<Result<Access, AccessError>> {
  let org = await deps.store.findById(projectId, organizationId);
  if (!org && actor.kind === 'project') org = await deps.store.findBySlug(projectId, organizationId);
  if (!org) return err('organization_not_found');
  const roles = await deps.roles(projectId);
  if (actor.kind === 'project') return ok({ org, membership: null, roles });
  const membership = await deps.store.findMembership(org.id, actor.userId);
  if (!membership) return err('organization_not_found');
  if (permission && !hasPermission(roles, membership.role, permission)) return err('missing_permission', missingPermission(permission));
  return ok({ org, membership, roles });
}

export const missingPermission = (permission: string) => `Your role in this organization lacks the permission ${permission}`;

/** The acting member is an owner (or the actor is the project). */
export const actsAsOwner = (a: Access): boolean => a.membership === null || a.membership.role === 'owner';

/**
 * Whether the acting member may hand out (or take away) `role`: owners and the project may hand out
 * any; another member only a role whose permissions they hold themselves, so an admin cannot make
 * someone (or themselves) more powerful than they are. Answers the permission they lack, if any.
 */
export function permissionBeyondActor(a: Access, role: string): string | null {
  if (actsAsOwner(a)) return null;
  const mine = new Set(permissionsOf(a.roles, a.membership!.role));
  return permissionsOf(a.roles, role).find((p) => !mine.has(p)) ?? null;
}

export const beyondActor = (permission: string) => `Your role lacks the permission ${permission}, which this role holds`;

/** The event as delivered to webhook endpoints: `data` is the organization, member or invitation. */
export function organizationEvent(
  deps: Pick<OrganizationDeps, 'crypto' | 'clock'>,
  type: OrganizationEventType,
  projectId: string,
  organizationId: string,
  userId: string | null,
  data: Record<string, unknown>,
): OrganizationEvent {
  const id = deps.crypto.uuid();
  const createdAt = deps.clock.now();
  return {
    id,
    projectId,
    type,
    userId,
    createdAt,
    payload: { id, type, created: createdAt.toISOString(), projectId, organizationId, userId, data },
  };
}

export const organizationData = (org: Organization): Record<string, unknown> => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
  image_url: org.imageUrl,
  public_metadata: org.publicMetadata,
  created_at: org.createdAt.toISOString(),
  updated_at: org.updatedAt.toISOString(),
});

export const memberData = (m: Membership): Record<string, unknown> => ({
  organization_id: m.organizationId,
  user_id: m.userId,
  role: m.role,
  joined_at: m.createdAt.toISOString(),
});
