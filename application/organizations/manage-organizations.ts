import { ORGANIZATION_DELETED_TOPIC } from './organization-deleted';
import { fullError, seatLimit, seatsChanged } from './seats';
import type { Membership, Organization } from '../../domain/organizations/organization';
import {
  isMemberLimit,
  type OrganizationFieldError,
  parseImageUrl,
  parseMetadata,
  parseOrganizationName,
  parseOrganizationSlug,
  PRIVATE_METADATA_MAX_BYTES,
  PUBLIC_METADATA_MAX_BYTES,
  slugFromName,
} from '../../domain/organizations/organization';
import { OWNER_ROLE, permissionsOf } from '../../domain/organizations/roles';
import { domainOfEmail } from '../../domain/organizations/verified-domain';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry } from '../audit/audit-log';
import { decodeCursor, encodeCursor } from './cursor';
import type { RequestOrigin } from '../ports/request-origin';
import { access, type AccessError, auditActorOf, memberData, type OrganizationActor, type OrganizationDeps, organizationData, organizationEvent } from './deps';
import type { OrganizationPatch } from './organization.store';

/** An organization with what the caller sees of it: members count, and the acting member's role. */
export interface OrganizationView {
  org: Organization;
  membersCount: number;
  /** The member's role and permissions (null when the project asks). */
  role: string | null;
  permissions: string[];
}

export interface OrganizationFields {
  name?: string;
  slug?: string;
  imageUrl?: string | null;
  publicMetadata?: Record<string, unknown>;
  privateMetadata?: Record<string, unknown>;
  maxMembers?: number | null;
  requireMfa?: boolean;
}

/** Checks the fields given and answers them as stored. */
function parseFields(input: OrganizationFields): Result<OrganizationPatch, OrganizationFieldError> {
  const patch: OrganizationPatch = {};
  if (input.name !== undefined) {
    const r = parseOrganizationName(input.name);
    if (!r.ok) return r;
    patch.name = r.value;
  }
  if (input.slug !== undefined) {
    const r = parseOrganizationSlug(input.slug);
    if (!r.ok) return r;
    patch.slug = r.value;
  }
  if (input.imageUrl !== undefined) {
    if (input.imageUrl === null) patch.imageUrl = null;
    else {
      const r = parseImageUrl(input.imageUrl);
      if (!r.ok) return r;
      patch.imageUrl = r.value;
    }
  }
  if (input.publicMetadata !== undefined) {
    const r = parseMetadata(input.publicMetadata, PUBLIC_METADATA_MAX_BYTES);
    if (!r.ok) return err(r.error, `Invalid public metadata: a JSON object nested at most 5 levels, at most ${PUBLIC_METADATA_MAX_BYTES} bytes`);
    patch.publicMetadata = r.value;
  }
  if (input.privateMetadata !== undefined) {
    const r = parseMetadata(input.privateMetadata, PRIVATE_METADATA_MAX_BYTES);
    if (!r.ok) return err(r.error, `Invalid private metadata: a JSON object nested at most 5 levels, at most ${PRIVATE_METADATA_MAX_BYTES} bytes`);
    patch.privateMetadata = r.value;
  }
  if (input.maxMembers !== undefined) {
    if (input.maxMembers !== null && !isMemberLimit(input.maxMembers)) return err('invalid_metadata', 'A member limit is 1 to 100000');
    patch.maxMembers = input.maxMembers;
  }
  if (input.requireMfa !== undefined) patch.requireMfa = input.requireMfa;
  return ok(patch);
}

async function viewOf(deps: Pick<OrganizationDeps, 'store' | 'roles'>, org: Organization, role: string | null): Promise<OrganizationView> {
  const roles = await deps.roles(org.projectId);
  return { org, membersCount: await deps.store.countMembers(org.id), role, permissions: role === null ? [] : permissionsOf(roles, role) };
}

export type CreateOrganizationError = OrganizationFieldError | 'organization_slug_taken' | 'organization_creation_disabled' | 'user_not_found';

/**
 * Creates an organization with its first owner: the end user who asks (when the project lets users
 * create organizations), or the user the project names. Without a slug, one is made from the name
 * (with a short suffix when that one is taken). Event organization.created and
 * organization.member.added, in the transaction of the change.
 */
export function makeCreateOrganization(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    actor: OrganizationActor;
    ownerUserId: string;
    fields: OrganizationFields & { name: string };
    origin: RequestOrigin;
  }): Promise<Result<OrganizationView, CreateOrganizationError>> => {
    if (input.actor.kind === 'member' && !(await deps.store.settings(input.projectId)).allowUserCreation) return err('organization_creation_disabled');
    const fields = parseFields(input.fields);
    if (!fields.ok) return fields;
    const owner = await deps.users.findById(input.projectId, input.ownerUserId);
    if (!owner) return err('user_not_found');
    const now = deps.clock.now();
    const explicit = fields.value.slug;
    const base = explicit ?? slugFromName(fields.value.name!) ?? `org-${deps.crypto.randomDigits(6)}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const slug = attempt === 0 ? base : `${base.slice(0, 41).replace(/-+$/, '')}-${deps.crypto.randomDigits(6)}`;
      const org: Organization = {
        id: deps.crypto.uuid(),
        projectId: input.projectId,
        name: fields.value.name!,
        slug,
        imageUrl: fields.value.imageUrl ?? null,
        publicMetadata: fields.value.publicMetadata ?? {},
        privateMetadata: fields.value.privateMetadata ?? {},
        maxMembers: fields.value.maxMembers ?? null,
        requireMfa: fields.value.requireMfa ?? false,
        createdAt: now,
        updatedAt: now,
      };
      const membership: Membership = {
        id: deps.crypto.uuid(),
        organizationId: org.id,
        projectId: input.projectId,
        userId: owner.id,
        role: OWNER_ROLE,
        createdAt: now,
        updatedAt: now,
      };
      const created = await deps.uow.transaction(async () => {
        const r = await deps.store.create(org, membership);
        if (r !== 'created') return r;
        await deps.events.publish(organizationEvent(deps, 'organization.created', org.projectId, org.id, owner.id, organizationData(org)));
        await deps.events.publish(organizationEvent(deps, 'organization.member.added', org.projectId, org.id, owner.id, memberData(membership)));
        return r;
      });
      if (created === 'slug_taken') {
        if (explicit !== undefined) return err('organization_slug_taken');
        continue;
      }
      deps.audit.record(
        auditEntry(now, input.projectId, 'organization.created', {
          actor: auditActorOf(input.actor),
          target: { kind: 'organization', id: org.id },
          user: owner.id,
          origin: input.origin,
          details: { slug: org.slug },
        }),
      );
      return ok(await viewOf(deps, org, input.actor.kind === 'member' ? OWNER_ROLE : null));
    }
    return err('organization_slug_taken');
  };
}

/** One organization as the actor sees it (a member: with their role). */
export function makeGetOrganization(deps: OrganizationDeps) {
  return async (input: { projectId: string; organizationId: string; actor: OrganizationActor }): Promise<Result<OrganizationView, AccessError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor);
    if (!a.ok) return a;
    return ok(await viewOf(deps, a.value.org, a.value.membership?.role ?? null));
  };
}

export interface MyOrganizations {
  organizations: OrganizationView[];
  required: boolean;
  canCreate: boolean;
  /** Organizations that verified the domain of the user's verified email and suggest joining. */
  suggestions: Organization[];
}

/**
 * A user's organizations with their role in each. First, when the user's verified email is of a
 * domain an organization verified with automatic enrollment, the user joins it (default role of the
 * domain, within the member limit), so a new colleague finds their company's organization at once.
 */
export function makeListMyOrganizations(deps: OrganizationDeps) {
  return async (input: { projectId: string; userId: string; origin: RequestOrigin }): Promise<Result<MyOrganizations, 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    const settings = await deps.store.settings(input.projectId);
    const suggestions: Organization[] = [];
    if (user.email && user.emailVerified) {
      const domain = await deps.store.verifiedDomain(input.projectId, domainOfEmail(user.email.toLowerCase()));
      if (domain && domain.enrollment !== 'none' && !(await deps.store.findMembership(domain.organizationId, user.id))) {
        const org = await deps.store.findById(input.projectId, domain.organizationId);
        if (org && domain.enrollment === 'suggest') suggestions.push(org);
        if (org && domain.enrollment === 'automatic') {
          const added = await joinThroughDomain(deps, {
            org,
            userId: user.id,
            role: domain.defaultRole,
            limit: (await seatLimit(deps, org, org.maxMembers ?? settings.defaultMemberLimit)).limit,
            origin: input.origin,
          });
          if (added === 'limit_reached') suggestions.push(org);
        }
      }
    }
    const rows = await deps.store.listForUser(input.projectId, user.id);
    const organizations = await Promise.all(rows.map((r) => viewOf(deps, r.organization, r.membership.role)));
    return ok({ organizations, required: settings.required, canCreate: settings.allowUserCreation, suggestions });
  };
}

/** A user joins through a verified domain of the organization, with the domain's default role, within the member limit. */
async function joinThroughDomain(
  deps: OrganizationDeps,
  input: { org: Organization; userId: string; role: string; limit: number; origin: RequestOrigin },
): Promise<'added' | 'already_member' | 'limit_reached'> {
  const now = deps.clock.now();
  const { org } = input;
  const membership: Membership = {
    id: deps.crypto.uuid(),
    organizationId: org.id,
    projectId: org.projectId,
    userId: input.userId,
    role: input.role,
    createdAt: now,
    updatedAt: now,
  };
  const added = await deps.uow.transaction(async () => {
    const r = await deps.store.addMember(membership, input.limit, now);
    if (r === 'added') {
      await deps.events.publish(organizationEvent(deps, 'organization.member.added', org.projectId, org.id, input.userId, memberData(membership)));
      await seatsChanged(deps, org);
    }
    return r;
  });
  if (added === 'added') {
    deps.audit.record(
      auditEntry(now, org.projectId, 'organization.member.added', {
        actor: { kind: 'user', id: input.userId },
        target: { kind: 'organization', id: org.id },
        user: input.userId,
        origin: input.origin,
        details: { role: input.role, via: 'verified_domain' },
      }),
    );
  }
  return added;
}

/**
 * Joins an organization that verified the domain of the user's verified email with enrollment
 * `suggest` or `automatic` (the one-click answer to a suggestion), with the domain's default role.
 * Any other organization is `organization_not_found`.
 */
export function makeJoinThroughDomain(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    userId: string;
    organizationId: string;
    origin: RequestOrigin;
  }): Promise<Result<OrganizationView, 'organization_not_found' | 'already_member' | 'member_limit_reached' | 'seats_exhausted'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user?.email || !user.emailVerified) return err('organization_not_found');
    const domain = await deps.store.verifiedDomain(input.projectId, domainOfEmail(user.email.toLowerCase()));
    if (!domain || domain.enrollment === 'none' || domain.organizationId !== input.organizationId) return err('organization_not_found');
    const org = await deps.store.findById(input.projectId, domain.organizationId);
    if (!org) return err('organization_not_found');
    const { limit, bySeats } = await seatLimit(deps, org);
    const added = await joinThroughDomain(deps, { org, userId: user.id, role: domain.defaultRole, limit, origin: input.origin });
    if (added === 'already_member') return err('already_member');
    if (added === 'limit_reached') return err(fullError(bySeats));
    return ok(await viewOf(deps, org, domain.defaultRole));
  };
}

/** A user's organizations, as the project server sees them. */
export function makeListUserOrganizations(deps: OrganizationDeps) {
  return async (input: { projectId: string; userId: string }): Promise<Result<OrganizationView[], 'user_not_found'>> => {
    if (!(await deps.users.findById(input.projectId, input.userId))) return err('user_not_found');
    const rows = await deps.store.listForUser(input.projectId, input.userId);
    return ok(await Promise.all(rows.map((r) => viewOf(deps, r.organization, r.membership.role))));
  };
}

/** A page of the project's organizations, newest first; the cursor is opaque to callers. */
export function makeListOrganizations(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    search?: string;
    limit?: number;
    cursor?: string;
  }): Promise<Result<{ organizations: OrganizationView[]; nextCursor: string | null }, never>> => {
    const limit = input.limit ?? 50;
    const after = input.cursor ? decodeCursor(input.cursor) : undefined;
    const search = input.search?.trim();
    const page = await deps.store.listForProject(input.projectId, { ...(search ? { search } : {}), limit: limit + 1, ...(after ? { after } : {}) });
    const shown = page.slice(0, limit);
    const last = shown[shown.length - 1];
    return ok({
      organizations: await Promise.all(shown.map((o) => viewOf(deps, o, null))),
      nextCursor: page.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
    });
  };
}

export type UpdateOrganizationError = AccessError | OrganizationFieldError | 'organization_slug_taken';

/**
 * Changes an organization's fields. A member needs org:settings:manage, and cannot change private
 * metadata or the member limit (the project can). Event organization.updated.
 */
export function makeUpdateOrganization(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    organizationId: string;
    actor: OrganizationActor;
    fields: OrganizationFields;
    origin: RequestOrigin;
  }): Promise<Result<OrganizationView, UpdateOrganizationError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:settings:manage');
    if (!a.ok) return a;
    const fields = parseFields(input.actor.kind === 'member' ? { ...input.fields, privateMetadata: undefined, maxMembers: undefined } : input.fields);
    if (!fields.ok) return fields;
    const now = deps.clock.now();
    const updated = await deps.uow.transaction(async () => {
      const r = await deps.store.update(input.projectId, a.value.org.id, fields.value, now);
      if (r && r !== 'slug_taken') {
        await deps.events.publish(organizationEvent(deps, 'organization.updated', r.projectId, r.id, null, organizationData(r)));
      }
      return r;
    });
    if (updated === null) return err('organization_not_found');
    if (updated === 'slug_taken') return err('organization_slug_taken');
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.updated', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: updated.id },
        origin: input.origin,
        details: { fields: Object.keys(fields.value).sort() },
      }),
    );
    return ok(await viewOf(deps, updated, a.value.membership?.role ?? null));
  };
}

/**
 * Deletes an organization with its members, invitations and domains (a member needs org:delete).
 * Tokens that name it verify with organization null at once. Event organization.deleted; its
 * subscription is canceled at period end by the job enqueued with the deletion
 * (ORGANIZATION_DELETED_TOPIC), so nothing is charged again.
 */
export function makeDeleteOrganization(deps: OrganizationDeps) {
  return async (input: { projectId: string; organizationId: string; actor: OrganizationActor; origin: RequestOrigin }): Promise<Result<void, AccessError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:delete');
    if (!a.ok) return a;
    const org = a.value.org;
    const deleted = await deps.uow.transaction(async () => {
      const r = await deps.store.delete(input.projectId, org.id);
      if (r) {
        await deps.events.publish(organizationEvent(deps, 'organization.deleted', org.projectId, org.id, null, organizationData(org)));
        await deps.outbox.enqueue(ORGANIZATION_DELETED_TOPIC, { projectId: org.projectId, organizationId: org.id });
      }
      return r;
    });
    if (!deleted) return err('organization_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'organization.deleted', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: org.id },
        origin: input.origin,
        details: { slug: org.slug },
      }),
    );
    return ok(undefined);
  };
}
