import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { apiKeyActor } from '../../../application/audit/audit-log';
import type { OrganizationActor } from '../../../application/organizations/deps';
import type { Clock } from '../../../application/ports/clock';
import { organizationsContract, serverOrganizationsContract } from '../../../contract/organizations.contract';
import type { OrganizationUseCases } from '../features/organization-use-cases';
import { errorResponse } from './errors';
import { domainBody, invitationBody, memberBody, myOrganizationBody, organizationSummary, roleBody, serverOrganizationBody } from './organization-views';
import { failureResponse } from './rate-limit';
import { authOf, originOf, projectOf } from './request-context';

const s = initServer();

/** The signed-in end user of a `user` route: project, user, and the session and provider of their token. */
function signedInOf(res: Response) {
  const auth = authOf(res);
  if (!auth.project || !auth.user) throw new Error('route has no authenticated user');
  const sid = auth.claims?.sid;
  const provider = auth.claims?.provider;
  return {
    project: auth.project,
    userId: auth.user.id,
    actor: { kind: 'member', userId: auth.user.id } as OrganizationActor,
    sessionId: typeof sid === 'string' ? sid : null,
    provider: typeof provider === 'string' ? provider : auth.user.provider,
  };
}

/** The project server of an `apiKey` route, named by its key in the audit log. */
function projectActorOf(res: Response): Extract<OrganizationActor, { kind: 'project' }> {
  const keyId = authOf(res).apiKeyId;
  if (!keyId) throw new Error('route has no API key');
  return { kind: 'project', audit: apiKeyActor(keyId) };
}

const ok200 = { status: 200 as const, body: { success: true as const } };

/** The end user's organization routes (access token) and the project server's (API key). */
export function makeOrganizationRoutes(uc: OrganizationUseCases, clock: Clock) {
  const user = s.router(organizationsContract, {
    create: async ({ body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.createOrganization({
        projectId: me.project.id,
        actor: me.actor,
        ownerUserId: me.userId,
        fields: { name: body.name, slug: body.slug, imageUrl: body.image_url, publicMetadata: body.public_metadata },
        origin: originOf(req, res),
      });
      if (!r.ok) return r.error === 'user_not_found' ? errorResponse('invalid_access_token') : failureResponse(res, { ...r, error: r.error });
      return { status: 201, body: myOrganizationBody(r.value) };
    },
    listMine: async ({ req, res }) => {
      const me = signedInOf(res);
      const r = await uc.listMyOrganizations({ projectId: me.project.id, userId: me.userId, origin: originOf(req, res) });
      if (!r.ok) return errorResponse('invalid_access_token');
      return {
        status: 200,
        body: {
          organizations: r.value.organizations.map(myOrganizationBody),
          required: r.value.required,
          can_create: r.value.canCreate,
          suggestions: r.value.suggestions.map(organizationSummary),
        },
      };
    },
    setActive: async ({ body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.switchOrganization({
        project: me.project,
        userId: me.userId,
        sessionId: me.sessionId,
        provider: me.provider,
        organizationId: body.organization_id,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: { token: r.value.token, organization: r.value.organization } } : failureResponse(res, r);
    },
    get: async ({ params, res }) => {
      const me = signedInOf(res);
      const r = await uc.getOrganization({ projectId: me.project.id, organizationId: params.orgId, actor: me.actor });
      return r.ok ? { status: 200, body: myOrganizationBody(r.value) } : errorResponse('organization_not_found');
    },
    update: async ({ params, body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.updateOrganization({
        projectId: me.project.id,
        organizationId: params.orgId,
        actor: me.actor,
        fields: { name: body.name, slug: body.slug, imageUrl: body.image_url, publicMetadata: body.public_metadata, requireMfa: body.require_mfa },
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: myOrganizationBody(r.value) } : failureResponse(res, r);
    },
    delete: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.deleteOrganization({ projectId: me.project.id, organizationId: params.orgId, actor: me.actor, origin: originOf(req, res) });
      return r.ok ? ok200 : failureResponse(res, r);
    },
    listMembers: async ({ params, query, res }) => {
      const me = signedInOf(res);
      const r = await uc.listMembers({ projectId: me.project.id, organizationId: params.orgId, actor: me.actor, limit: query.limit, cursor: query.cursor });
      return r.ok
        ? { status: 200, body: { members: r.value.members.map(memberBody), next_cursor: r.value.nextCursor } }
        : errorResponse('organization_not_found');
    },
    setRole: async ({ params, body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.setMemberRole({
        project: me.project,
        organizationId: params.orgId,
        userId: params.userId,
        role: body.role,
        actor: me.actor,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: memberBody(r.value) } : failureResponse(res, r);
    },
    removeMember: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.removeMember({
        project: me.project,
        organizationId: params.orgId,
        userId: params.userId,
        actor: me.actor,
        origin: originOf(req, res),
      });
      return r.ok ? ok200 : failureResponse(res, r);
    },
    join: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.joinThroughDomain({ projectId: me.project.id, userId: me.userId, organizationId: params.orgId, origin: originOf(req, res) });
      return r.ok ? { status: 200, body: myOrganizationBody(r.value) } : failureResponse(res, r);
    },
    leave: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.removeMember({ project: me.project, organizationId: params.orgId, userId: me.userId, actor: me.actor, origin: originOf(req, res) });
      if (r.ok) return ok200;
      // Leaving checks no permission; a membership that vanished meanwhile is no organization of theirs.
      return r.error === 'last_owner' ? failureResponse(res, { ok: false, error: 'last_owner' }) : errorResponse('organization_not_found');
    },
    invite: async ({ params, body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.invite({
        project: me.project,
        organizationId: params.orgId,
        email: body.email,
        role: body.role,
        callbackUrl: body.callback_url,
        locale: body.locale ?? null,
        actor: me.actor,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 201, body: invitationBody(r.value, clock.now()) } : failureResponse(res, r);
    },
    listInvitations: async ({ params, res }) => {
      const me = signedInOf(res);
      const r = await uc.listInvitations({ projectId: me.project.id, organizationId: params.orgId, actor: me.actor });
      const now = clock.now();
      return r.ok ? { status: 200, body: { invitations: r.value.map((i) => invitationBody(i, now)) } } : failureResponse(res, r);
    },
    revokeInvitation: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.revokeInvitation({
        projectId: me.project.id,
        organizationId: params.orgId,
        invitationId: params.invitationId,
        actor: me.actor,
        origin: originOf(req, res),
      });
      return r.ok ? ok200 : failureResponse(res, r);
    },
    listDomains: async ({ params, res }) => {
      const me = signedInOf(res);
      const r = await uc.listDomains({ projectId: me.project.id, organizationId: params.orgId, actor: me.actor });
      return r.ok ? { status: 200, body: { domains: r.value.map(domainBody) } } : failureResponse(res, r);
    },
    addDomain: async ({ params, body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.addDomain({
        projectId: me.project.id,
        organizationId: params.orgId,
        actor: me.actor,
        domain: body.domain,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 201, body: domainBody(r.value) } : failureResponse(res, r);
    },
    verifyDomain: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.verifyDomain({
        projectId: me.project.id,
        organizationId: params.orgId,
        actor: me.actor,
        domainId: params.domainId,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: domainBody(r.value) } : failureResponse(res, r);
    },
    updateDomain: async ({ params, body, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.updateDomain({
        projectId: me.project.id,
        organizationId: params.orgId,
        actor: me.actor,
        domainId: params.domainId,
        enrollment: body.enrollment,
        defaultRole: body.default_role,
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: domainBody(r.value) } : failureResponse(res, r);
    },
    removeDomain: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.removeDomain({
        projectId: me.project.id,
        organizationId: params.orgId,
        actor: me.actor,
        domainId: params.domainId,
        origin: originOf(req, res),
      });
      return r.ok ? ok200 : failureResponse(res, r);
    },
    roles: async ({ res }) => ({ status: 200, body: { roles: (await uc.listRoles(signedInOf(res).project.id)).map(roleBody) } }),
    myInvitations: async ({ res }) => {
      const me = signedInOf(res);
      const found = await uc.listMyInvitations({ projectId: me.project.id, userId: me.userId });
      const now = clock.now();
      return {
        status: 200,
        body: { invitations: found.map((f) => ({ ...invitationBody(f.invitation, now), organization: organizationSummary(f.organization) })) },
      };
    },
    accept: async ({ body, req, res }) => {
      const me = signedInOf(res);
      if ((body.token === undefined) === (body.invitation_id === undefined)) {
        return errorResponse('invalid_request', 'Give either token or invitation_id');
      }
      const r = await uc.acceptInvitation({
        projectId: me.project.id,
        userId: me.userId,
        ...(body.token !== undefined ? { token: body.token } : {}),
        ...(body.invitation_id !== undefined ? { invitationId: body.invitation_id } : {}),
        origin: originOf(req, res),
      });
      if (!r.ok) return failureResponse(res, r);
      const view = await uc.getOrganization({ projectId: me.project.id, organizationId: r.value.organization.id, actor: me.actor });
      return view.ok ? { status: 200, body: myOrganizationBody(view.value) } : errorResponse('invitation_not_found');
    },
    decline: async ({ params, req, res }) => {
      const me = signedInOf(res);
      const r = await uc.declineInvitation({ projectId: me.project.id, userId: me.userId, invitationId: params.invitationId, origin: originOf(req, res) });
      return r.ok ? ok200 : failureResponse(res, r);
    },
  });

  const server = s.router(serverOrganizationsContract, {
    create: async ({ body, req, res }) => {
      const r = await uc.createOrganization({
        projectId: projectOf(res).id,
        actor: projectActorOf(res),
        ownerUserId: body.owner_user_id,
        fields: {
          name: body.name,
          slug: body.slug,
          imageUrl: body.image_url,
          publicMetadata: body.public_metadata,
          privateMetadata: body.private_metadata,
          maxMembers: body.max_members,
          requireMfa: body.require_mfa,
        },
        origin: originOf(req, res),
      });
      if (!r.ok) return r.error === 'organization_creation_disabled' ? errorResponse('invalid_request') : failureResponse(res, { ...r, error: r.error });
      return { status: 201, body: serverOrganizationBody(r.value) };
    },
    list: async ({ query, res }) => {
      const r = await uc.listOrganizations({ projectId: projectOf(res).id, search: query.search, limit: query.limit, cursor: query.cursor });
      return {
        status: 200,
        body: { organizations: r.ok ? r.value.organizations.map(serverOrganizationBody) : [], next_cursor: r.ok ? r.value.nextCursor : null },
      };
    },
    get: async ({ params, res }) => {
      const r = await uc.getOrganization({ projectId: projectOf(res).id, organizationId: params.orgId, actor: projectActorOf(res) });
      if (!r.ok) return errorResponse('organization_not_found');
      return { status: 200, body: serverOrganizationBody(r.value) };
    },
    update: async ({ params, body, req, res }) => {
      const r = await uc.updateOrganization({
        projectId: projectOf(res).id,
        organizationId: params.orgId,
        actor: projectActorOf(res),
        fields: {
          name: body.name,
          slug: body.slug,
          imageUrl: body.image_url,
          publicMetadata: body.public_metadata,
          privateMetadata: body.private_metadata,
          maxMembers: body.max_members,
          requireMfa: body.require_mfa,
        },
        origin: originOf(req, res),
      });
      if (!r.ok) return r.error === 'missing_permission' ? errorResponse('organization_not_found') : failureResponse(res, { ...r, error: r.error });
      return { status: 200, body: serverOrganizationBody(r.value) };
    },
    delete: async ({ params, req, res }) => {
      const r = await uc.deleteOrganization({
        projectId: projectOf(res).id,
        organizationId: params.orgId,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      return r.ok ? ok200 : errorResponse('organization_not_found');
    },
    listMembers: async ({ params, query, res }) => {
      const r = await uc.listMembers({
        projectId: projectOf(res).id,
        organizationId: params.orgId,
        actor: projectActorOf(res),
        limit: query.limit,
        cursor: query.cursor,
      });
      return r.ok
        ? { status: 200, body: { members: r.value.members.map(memberBody), next_cursor: r.value.nextCursor } }
        : errorResponse('organization_not_found');
    },
    addMember: async ({ params, body, req, res }) => {
      const r = await uc.addMember({
        project: projectOf(res),
        organizationId: params.orgId,
        userId: body.user_id,
        role: body.role,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      if (r.ok) return { status: 201, body: memberBody(r.value) };
      return r.error === 'missing_permission' ? errorResponse('organization_not_found') : failureResponse(res, { ...r, error: r.error });
    },
    setRole: async ({ params, body, req, res }) => {
      const r = await uc.setMemberRole({
        project: projectOf(res),
        organizationId: params.orgId,
        userId: params.userId,
        role: body.role,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      if (r.ok) return { status: 200, body: memberBody(r.value) };
      return r.error === 'missing_permission' || r.error === 'owner_required'
        ? errorResponse('organization_not_found')
        : failureResponse(res, { ...r, error: r.error });
    },
    removeMember: async ({ params, req, res }) => {
      const r = await uc.removeMember({
        project: projectOf(res),
        organizationId: params.orgId,
        userId: params.userId,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      if (r.ok) return ok200;
      return r.error === 'missing_permission' || r.error === 'owner_required'
        ? errorResponse('organization_not_found')
        : failureResponse(res, { ...r, error: r.error });
    },
    invite: async ({ params, body, req, res }) => {
      const r = await uc.invite({
        project: projectOf(res),
        organizationId: params.orgId,
        email: body.email,
        role: body.role,
        callbackUrl: body.callback_url,
        locale: body.locale ?? null,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      if (r.ok) return { status: 201, body: invitationBody(r.value, clock.now()) };
      return r.error === 'missing_permission' || r.error === 'owner_required'
        ? errorResponse('organization_not_found')
        : failureResponse(res, { ...r, error: r.error });
    },
    listInvitations: async ({ params, res }) => {
      const r = await uc.listInvitations({ projectId: projectOf(res).id, organizationId: params.orgId, actor: projectActorOf(res) });
      const now = clock.now();
      return r.ok ? { status: 200, body: { invitations: r.value.map((i) => invitationBody(i, now)) } } : errorResponse('organization_not_found');
    },
    revokeInvitation: async ({ params, req, res }) => {
      const r = await uc.revokeInvitation({
        projectId: projectOf(res).id,
        organizationId: params.orgId,
        invitationId: params.invitationId,
        actor: projectActorOf(res),
        origin: originOf(req, res),
      });
      if (r.ok) return ok200;
      return r.error === 'missing_permission' ? errorResponse('organization_not_found') : failureResponse(res, { ...r, error: r.error });
    },
    listUserOrganizations: async ({ params, res }) => {
      const r = await uc.listUserOrganizations({ projectId: projectOf(res).id, userId: params.userId });
      return r.ok ? { status: 200, body: { organizations: r.value.map(myOrganizationBody) } } : failureResponse(res, r);
    },
    roles: async ({ res }) => ({ status: 200, body: { roles: (await uc.listRoles(projectOf(res).id)).map(roleBody) } }),
  });

  return { organizations: user, serverOrganizations: server };
}
