import type { Membership } from '../../domain/organizations/organization';
import { findRole, OWNER_ROLE } from '../../domain/organizations/roles';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry } from '../audit/audit-log';
import { decodeCursor, encodeCursor } from './cursor';
import type { RequestOrigin } from '../ports/request-origin';
import {
  access,
  type AccessError,
  actsAsOwner,
  auditActorOf,
  beyondActor,
  permissionBeyondActor,
  memberData,
  type OrganizationActor,
  type OrganizationDeps,
  organizationEvent,
} from './deps';
import type { MemberView } from './organization.store';
import { fullError, seatLimit, seatsChanged } from './seats';

export type MemberPage = { members: MemberView[]; nextCursor: string | null };

/** Members, oldest first (any member may list them). */
export function makeListMembers(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    organizationId: string;
    actor: OrganizationActor;
    limit?: number;
    cursor?: string;
  }): Promise<Result<MemberPage, AccessError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor);
    if (!a.ok) return a;
    const limit = input.limit ?? 50;
    const after = input.cursor ? decodeCursor(input.cursor) : undefined;
    const page = await deps.store.listMembers(a.value.org.id, { limit: limit + 1, ...(after ? { after } : {}) });
    const shown = page.slice(0, limit);
    const last = shown[shown.length - 1];
    return ok({ members: shown, nextCursor: page.length > limit && last ? encodeCursor(last) : null });
  };
}

async function memberView(deps: Pick<OrganizationDeps, 'users'>, m: Membership): Promise<MemberView> {
  const u = await deps.users.findById(m.projectId, m.userId);
  return { ...m, user: { email: u?.email ?? null, name: u?.name ?? null, picture: u?.picture ?? null } };
}

export type AddMemberError = AccessError | 'user_not_found' | 'invalid_role' | 'already_member' | 'member_limit_reached' | 'seats_exhausted';

/** The project adds a user directly (no invitation), within the member limit. Event organization.member.added. */
export function makeAddMember(deps: OrganizationDeps) {
  return async (input: {
    project: Project;
    organizationId: string;
    userId: string;
    role: string;
    actor: Extract<OrganizationActor, { kind: 'project' }>;
    origin: RequestOrigin;
  }): Promise<Result<MemberView, AddMemberError>> => {
    const a = await access(deps, input.project.id, input.organizationId, input.actor);
    if (!a.ok) return a;
    if (!findRole(a.value.roles, input.role)) return err('invalid_role');
    const user = await deps.users.findById(input.project.id, input.userId);
    if (!user) return err('user_not_found');
    const now = deps.clock.now();
    const org = a.value.org;
    const membership: Membership = {
      id: deps.crypto.uuid(),
      organizationId: org.id,
      projectId: org.projectId,
      userId: user.id,
      role: input.role,
      createdAt: now,
      updatedAt: now,
    };
    const { limit, bySeats } = await seatLimit(deps, org);
    const added = await deps.uow.transaction(async () => {
      const r = await deps.store.addMember(membership, limit, now);
      if (r === 'added') {
        await deps.events.publish(organizationEvent(deps, 'organization.member.added', org.projectId, org.id, user.id, memberData(membership)));
        await seatsChanged(deps, org);
      }
      return r;
    });
    if (added === 'already_member') return err('already_member');
    if (added === 'limit_reached') return err(fullError(bySeats));
    deps.audit.record(
      auditEntry(now, input.project.id, 'organization.member.added', {
        actor: input.actor.audit,
        target: { kind: 'organization', id: org.id },
        user: user.id,
        origin: input.origin,
        details: { role: input.role },
      }),
    );
    return ok(await memberView(deps, membership));
  };
}

export type SetRoleError = AccessError | 'member_not_found' | 'invalid_role' | 'owner_required' | 'last_owner';

/**
 * Gives a member another role. A member needs org:members:manage, and granting or taking away owner
 * is for owners only; the last owner cannot be demoted. The member is told by a security notice.
 * Takes effect at token verification at once. Event organization.member.updated.
 */
export function makeSetMemberRole(deps: OrganizationDeps) {
  return async (input: {
    project: Project;
    organizationId: string;
    userId: string;
    role: string;
    actor: OrganizationActor;
    origin: RequestOrigin;
  }): Promise<Result<MemberView, SetRoleError>> => {
    const a = await access(deps, input.project.id, input.organizationId, input.actor, 'org:members:manage');
    if (!a.ok) return a;
    const role = findRole(a.value.roles, input.role);
    if (!role) return err('invalid_role');
    const org = a.value.org;
    const target = await deps.store.findMembership(org.id, input.userId);
    if (!target) return err('member_not_found');
    if ((target.role === OWNER_ROLE || input.role === OWNER_ROLE) && !actsAsOwner(a.value)) return err('owner_required');
    for (const r of [target.role, input.role]) {
      const beyond = permissionBeyondActor(a.value, r);
      if (beyond) return err('missing_permission', beyondActor(beyond));
    }
    if (target.role === input.role) return ok(await memberView(deps, target));
    const now = deps.clock.now();
    const changed = await deps.uow.transaction(async () => {
      const r = await deps.store.setRole(org.id, input.userId, input.role, now);
      if (typeof r === 'object') {
        await deps.events.publish(
          organizationEvent(deps, 'organization.member.updated', org.projectId, org.id, input.userId, {
            ...memberData(r.after),
            previous_role: r.before.role,
          }),
        );
        await deps.notify({
          project: input.project,
          userId: input.userId,
          kind: 'organization_role_changed',
          origin: input.origin,
          organization: { name: org.name, role: role.name },
        });
      }
      return r;
    });
    if (changed === 'not_found') return err('member_not_found');
    if (changed === 'last_owner') return err('last_owner');
    deps.audit.record(
      auditEntry(now, input.project.id, 'organization.member.role_changed', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: org.id },
        user: input.userId,
        origin: input.origin,
        details: { role: input.role, previous_role: changed.before.role },
      }),
    );
    return ok(await memberView(deps, changed.after));
  };
}

export type RemoveMemberError = AccessError | 'member_not_found' | 'owner_required' | 'last_owner';

/**
 * Removes a member (a member needs org:members:manage; removing an owner: owners), or the member
 * themselves (`leave`). The last owner can neither be removed nor leave. Sessions acting for the
 * organization act for none; token verification answers organization null at once. The removed
 * member is told by a security notice (not when they left). Event organization.member.removed.
 */
export function makeRemoveMember(deps: OrganizationDeps) {
  return async (input: {
    project: Project;
    organizationId: string;
    userId: string;
    actor: OrganizationActor;
    origin: RequestOrigin;
  }): Promise<Result<void, RemoveMemberError>> => {
    const leaving = input.actor.kind === 'member' && input.actor.userId === input.userId;
    const a = await access(deps, input.project.id, input.organizationId, input.actor, leaving ? undefined : 'org:members:manage');
    if (!a.ok) return a;
    const org = a.value.org;
    const target = leaving ? a.value.membership : await deps.store.findMembership(org.id, input.userId);
    if (!target) return err('member_not_found');
    if (!leaving && target.role === OWNER_ROLE && !actsAsOwner(a.value)) return err('owner_required');
    const beyond = leaving ? null : permissionBeyondActor(a.value, target.role);
    if (beyond) return err('missing_permission', beyondActor(beyond));
    const removed = await deps.uow.transaction(async () => {
      const r = await deps.store.removeMember(org.id, input.userId);
      if (typeof r === 'object') {
        await seatsChanged(deps, org);
        await deps.events.publish(
          organizationEvent(deps, 'organization.member.removed', org.projectId, org.id, input.userId, { ...memberData(r.before), left: leaving }),
        );
        if (!leaving) {
          await deps.notify({
            project: input.project,
            userId: input.userId,
            kind: 'organization_removed',
            origin: input.origin,
            organization: { name: org.name, role: null },
          });
        }
      }
      return r;
    });
    if (removed === 'not_found') return err('member_not_found');
    if (removed === 'last_owner') return err('last_owner');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.project.id, leaving ? 'organization.member.left' : 'organization.member.removed', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization', id: org.id },
        user: input.userId,
        origin: input.origin,
        details: { role: removed.before.role },
      }),
    );
    return ok(undefined);
  };
}
