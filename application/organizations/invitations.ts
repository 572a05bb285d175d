import { parseEmailAddress } from '../../domain/email-address';
import { type Locale, matchLocale } from '../../domain/locale';
import {
  INVITATION_TOKEN_PARAM,
  INVITATION_TOKEN_PREFIX,
  INVITATION_TTL_SECONDS,
  type Invitation,
  invitationStatus,
} from '../../domain/organizations/invitation';
import type { Membership, Organization } from '../../domain/organizations/organization';
import { findRole, OWNER_ROLE } from '../../domain/organizations/roles';
import { isCallbackUrlRegistered, type Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry } from '../audit/audit-log';
import { consumeLimits } from '../ports/rate-limiter';
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
import { ORGANIZATION_INVITATION_TOPIC } from './invitation-mail';
import { fullError, seatLimit, seatsChanged } from './seats';

/** Invitations one organization may send per hour (a member's and the project's alike). */
export const INVITATIONS_PER_HOUR = 100;

const invitationData = (inv: Invitation, now: Date): Record<string, unknown> => ({
  id: inv.id,
  organization_id: inv.organizationId,
  email: inv.email,
  role: inv.role,
  status: invitationStatus(inv, now),
  expires_at: inv.expiresAt.toISOString(),
});

export type InviteError =
  | AccessError
  | 'invalid_email'
  | 'invalid_role'
  | 'callback_url_not_registered'
  | 'already_member'
  | 'member_limit_reached'
  | 'seats_exhausted'
  | 'owner_required'
  | 'rate_limited'
  | 'unsupported_locale';

/**
 * Invites an address with a role (a member needs org:members:manage; inviting an owner: owners). The
 * invitee gets a localized email with a link to the callback URL carrying the invitation token
 * (single use, 7 days); a pending invitation of the same address is replaced. Members plus pending
 * invitations stay within the member limit. Event organization.invitation.created.
 */
export function makeInvite(deps: OrganizationDeps) {
  return async (input: {
    project: Project;
    organizationId: string;
    email: string;
    role: string;
    callbackUrl: string;
    locale: string | null;
    actor: OrganizationActor;
    origin: RequestOrigin;
  }): Promise<Result<Invitation, InviteError>> => {
    const a = await access(deps, input.project.id, input.organizationId, input.actor, 'org:members:manage');
    if (!a.ok) return a;
    const org = a.value.org;
    const role = findRole(a.value.roles, input.role);
    if (!role) return err('invalid_role');
    if (input.role === OWNER_ROLE && !actsAsOwner(a.value)) return err('owner_required');
    const beyond = permissionBeyondActor(a.value, role.key);
    if (beyond) return err('missing_permission', beyondActor(beyond));
    const email = parseEmailAddress(input.email);
    if (!email.ok) return email;
    if (!isCallbackUrlRegistered(input.project, input.callbackUrl)) return err('callback_url_not_registered');
    let locale: Locale = input.project.settings.defaultLocale;
    if (input.locale !== null) {
      const matched = matchLocale(input.locale);
      if (!matched) return err('unsupported_locale');
      locale = matched;
    }
    const limited = await consumeLimits(deps.rateLimiter, [`org-invite:${org.id}`], { points: INVITATIONS_PER_HOUR, windowMs: 3_600_000 });
    if (limited) return err('rate_limited');

    const now = deps.clock.now();
    const token = INVITATION_TOKEN_PREFIX + deps.crypto.randomToken(32);
    const invitation: Invitation = {
      id: deps.crypto.uuid(),
      organizationId: org.id,
      projectId: org.projectId,
      email: email.value.address,
      emailKey: email.value.key,
      role: role.key,
      inviterUserId: a.value.membership?.userId ?? null,
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_SECONDS * 1000),
      endedAt: null,
      acceptedBy: null,
    };
    const { limit, bySeats } = await seatLimit(deps, org);
    const inviter = a.value.membership ? await deps.users.findById(input.project.id, a.value.membership.userId) : null;
    const url = new URL(input.callbackUrl);
    url.searchParams.set(INVITATION_TOKEN_PARAM, token);
    const created = await deps.uow.transaction(async () => {
      const r = await deps.store.createInvitation(invitation, deps.crypto.hash(token), limit, now);
      if (r !== 'created') return r;
      await deps.outbox.enqueue(ORGANIZATION_INVITATION_TOPIC, {
        to: invitation.email,
        locale,
        projectName: input.project.name,
        organizationName: org.name,
        invitedBy: inviter ? (inviter.name ?? inviter.email) : null,
        roleName: role.name,
        url: url.toString(),
        expiresInDays: INVITATION_TTL_SECONDS / 86_400,
      });
      await seatsChanged(deps, org);
      await deps.events.publish(organizationEvent(deps, 'organization.invitation.created', org.projectId, org.id, null, invitationData(invitation, now)));
      return r;
    });
    if (created === 'already_member') return err('already_member');
    if (created === 'limit_reached') return err(fullError(bySeats));
    deps.audit.record(
      auditEntry(now, input.project.id, 'organization.invitation.created', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization_invitation', id: invitation.id },
        origin: input.origin,
        details: { organization_id: org.id, role: role.key },
      }),
    );
    return ok(invitation);
  };
}

/** The organization's invitations, newest first (a member needs org:members:manage). */
export function makeListInvitations(deps: OrganizationDeps) {
  return async (input: { projectId: string; organizationId: string; actor: OrganizationActor }): Promise<Result<Invitation[], AccessError>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:members:manage');
    if (!a.ok) return a;
    return ok(await deps.store.listInvitations(a.value.org.id, { pendingOnly: false, now: deps.clock.now() }));
  };
}

/** Revokes a pending invitation (a member needs org:members:manage). Event organization.invitation.revoked. */
export function makeRevokeInvitation(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    organizationId: string;
    invitationId: string;
    actor: OrganizationActor;
    origin: RequestOrigin;
  }): Promise<Result<void, AccessError | 'invitation_not_found' | 'invitation_not_pending'>> => {
    const a = await access(deps, input.projectId, input.organizationId, input.actor, 'org:members:manage');
    if (!a.ok) return a;
    const inv = await deps.store.findInvitation(input.projectId, input.invitationId);
    if (!inv || inv.organizationId !== a.value.org.id) return err('invitation_not_found');
    const now = deps.clock.now();
    if (invitationStatus(inv, now) !== 'pending') return err('invitation_not_pending');
    const ended = await deps.uow.transaction(async () => {
      const r = await deps.store.endInvitation(inv.id, 'revoked', now);
      if (r) {
        await seatsChanged(deps, { projectId: inv.projectId, id: inv.organizationId });
        await deps.events.publish(
          organizationEvent(deps, 'organization.invitation.revoked', inv.projectId, inv.organizationId, null, {
            ...invitationData(inv, now),
            status: 'revoked',
          }),
        );
      }
      return r;
    });
    if (!ended) return err('invitation_not_pending');
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.invitation.revoked', {
        actor: auditActorOf(input.actor),
        target: { kind: 'organization_invitation', id: inv.id },
        origin: input.origin,
        details: { organization_id: inv.organizationId },
      }),
    );
    return ok(undefined);
  };
}

/** The signed-in user's pending invitations: to their verified email address only. */
export function makeListMyInvitations(deps: OrganizationDeps) {
  return async (input: { projectId: string; userId: string }): Promise<Array<{ invitation: Invitation; organization: Organization }>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user?.email || !user.emailVerified) return [];
    return deps.store.listPendingForEmail(input.projectId, user.email.toLowerCase(), deps.clock.now());
  };
}

export type AcceptError =
  | 'invitation_not_found'
  | 'invitation_not_pending'
  | 'invitation_expired'
  | 'invitation_email_mismatch'
  | 'email_not_verified'
  | 'already_member'
  | 'member_limit_reached';

/**
 * Accepts an invitation, named by its token (the email's link) or its id: the signed-in user's
 * email must be verified and be the invited one. Single use: of concurrent accepts exactly one
 * makes the membership. An invitation of another project is unknown here. Events
 * organization.invitation.accepted and organization.member.added.
 */
export function makeAcceptInvitation(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    userId: string;
    token?: string;
    invitationId?: string;
    origin: RequestOrigin;
  }): Promise<Result<{ organization: Organization; membership: Membership }, AcceptError>> => {
    let inv: Invitation | null = null;
    if (input.token !== undefined) {
      if (input.token.startsWith(INVITATION_TOKEN_PREFIX) && input.token.length < 200)
        inv = await deps.store.findInvitationByTokenHash(deps.crypto.hash(input.token));
    } else if (input.invitationId !== undefined) inv = await deps.store.findInvitation(input.projectId, input.invitationId);
    if (!inv || inv.projectId !== input.projectId) return err('invitation_not_found');
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('invitation_not_found');
    const now = deps.clock.now();
    const status = invitationStatus(inv, now);
    if (status === 'expired') return err('invitation_expired');
    if (status !== 'pending') return err('invitation_not_pending');
    if (!user.email || user.email.toLowerCase() !== inv.emailKey) return err('invitation_email_mismatch');
    if (!user.emailVerified) return err('email_not_verified');
    const org = await deps.store.findById(input.projectId, inv.organizationId);
    if (!org) return err('invitation_not_found');
    const membership: Membership = {
      id: deps.crypto.uuid(),
      organizationId: org.id,
      projectId: org.projectId,
      userId: user.id,
      role: inv.role,
      createdAt: now,
      updatedAt: now,
    };
    const invitation = inv;
    const accepted = await deps.uow.transaction(async () => {
      const r = await deps.store.acceptInvitation(invitation.id, membership, now);
      if (r === 'not_pending') return r;
      await seatsChanged(deps, org);
      await deps.events.publish(
        organizationEvent(deps, 'organization.invitation.accepted', org.projectId, org.id, user.id, {
          ...invitationData(invitation, now),
          status: 'accepted',
        }),
      );
      if (r === 'accepted')
        await deps.events.publish(organizationEvent(deps, 'organization.member.added', org.projectId, org.id, user.id, memberData(membership)));
      return r;
    });
    if (accepted === 'not_pending') return err('invitation_not_pending');
    if (accepted === 'already_member') return err('already_member');
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.invitation.accepted', {
        actor: auditActorOf({ kind: 'member', userId: user.id }),
        target: { kind: 'organization_invitation', id: invitation.id },
        origin: input.origin,
        details: { organization_id: org.id, role: invitation.role },
      }),
    );
    return ok({ organization: org, membership });
  };
}

/** Declines one of the signed-in user's pending invitations (to their verified address). */
export function makeDeclineInvitation(deps: OrganizationDeps) {
  return async (input: {
    projectId: string;
    userId: string;
    invitationId: string;
    origin: RequestOrigin;
  }): Promise<Result<void, 'invitation_not_found' | 'invitation_not_pending'>> => {
    const inv = await deps.store.findInvitation(input.projectId, input.invitationId);
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!inv || !user?.email || !user.emailVerified || user.email.toLowerCase() !== inv.emailKey) return err('invitation_not_found');
    const now = deps.clock.now();
    if (invitationStatus(inv, now) !== 'pending') return err('invitation_not_pending');
    const declined = await deps.uow.transaction(async () => {
      if (!(await deps.store.endInvitation(inv.id, 'declined', now))) return false;
      await seatsChanged(deps, { projectId: inv.projectId, id: inv.organizationId });
      return true;
    });
    if (!declined) return err('invitation_not_pending');
    deps.audit.record(
      auditEntry(now, input.projectId, 'organization.invitation.declined', {
        actor: auditActorOf({ kind: 'member', userId: user.id }),
        target: { kind: 'organization_invitation', id: inv.id },
        origin: input.origin,
        details: { organization_id: inv.organizationId },
      }),
    );
    return ok(undefined);
  };
}
