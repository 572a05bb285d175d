import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import type { ProjectServerUseCases } from '../../../application/billing/use-cases';
import type { InvoiceLineView, InvoiceView } from '../../../application/billing/views';
import type { OrganizationActor } from '../../../application/organizations/deps';
import { SYSTEM_ORIGIN, type RequestOrigin } from '../../../application/ports/request-origin';
import { contract } from '../../../contract';
import { parseEmailAddress } from '../../../domain/email-address';
import type { EndUser } from '../../../domain/user';
import { type ConsoleAccounts, consoleActor } from '../features/console';
import type { OrganizationUseCases } from '../features/organization-use-cases';
import { adminInvoiceView, adminSubscriptionView } from './admin-billing.routes';
import { errorResponse } from './errors';
import { domainBody, invitationBody, memberBody, roleBody, serverOrganizationBody } from './organization-views';
import { failureResponse } from './rate-limit';
import { authOf, originOf } from './request-context';

const s = initServer();

export interface AdminOrganizationRouteDeps {
  organizations: OrganizationUseCases;
  /** Billing's reads of an organization's subscription, seats and invoices (the project server's). */
  billing: Pick<ProjectServerUseCases, 'organizationBilling'>;
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  /** The end user of the project with this email (lower-cased key), if any. */
  findUserByEmail(projectId: string, emailKey: string): Promise<EndUser | null>;
  now(): Date;
}

const settingsBody = (v: Awaited<ReturnType<OrganizationUseCases['getSettings']>>) => ({
  settings: {
    allow_user_creation: v.settings.allowUserCreation,
    required: v.settings.required,
    default_member_limit: v.settings.defaultMemberLimit,
  },
  roles: v.roles.map(roleBody),
});

/** How many invoices the organization's page shows. */
const BILLING_INVOICES = 10;

const invoiceLineBody = (l: InvoiceLineView) => ({
  description: l.description,
  amount: l.amount,
  proration: l.proration,
  price_id: l.priceId,
  quantity: l.quantity,
  period_start: l.periodStart.toISOString(),
  period_end: l.periodEnd.toISOString(),
});

/** An organization's invoice as the admin invoice list shows one, with its lines. */
const invoiceBody = (v: InvoiceView, org: { id: string; name: string }) => ({
  ...adminInvoiceView({ ...v, userId: null, organizationId: org.id, userEmail: null, organizationName: org.name }),
  lines: v.lines.map(invoiceLineBody),
});

/**
 * The console's Organizations page: a project's organizations, one with its members, invitations
 * and domains, members added, removed and given roles, and the project's organization settings and
 * roles. The console account acts as the project (the audit log names the account); each route first
 * asks whether the account may see the project (404 `project_not_found` if not).
 */
export function makeAdminOrganizationRoutes(deps: AdminOrganizationRouteDeps) {
  const uc = deps.organizations;
  /** `origin`: where a change came from (reads record nothing). */
  const access = async (res: Response, projectId: string, origin: RequestOrigin = SYSTEM_ORIGIN) => {
    const session = authOf(res).console;
    if (!session) throw new Error('route has no console session');
    const found = await deps.accounts.projectAccess(session.account, projectId);
    if (!found.ok) return { ok: false as const, response: errorResponse(found.error) };
    const actor: Extract<OrganizationActor, { kind: 'project' }> = { kind: 'project', audit: consoleActor(session.account) };
    return { ok: true as const, project: found.value, actor, origin };
  };

  return s.router(contract.admin.organizations, {
    list: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await uc.listOrganizations({ projectId: p.project.id, search: query.search, limit: query.limit, cursor: query.cursor });
      return {
        status: 200,
        body: { organizations: r.ok ? r.value.organizations.map(serverOrganizationBody) : [], next_cursor: r.ok ? r.value.nextCursor : null },
      };
    },
    get: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const org = await uc.getOrganization({ projectId: p.project.id, organizationId: params.orgId, actor: p.actor });
      if (!org.ok) return errorResponse('organization_not_found');
      const id = org.value.org.id;
      const members = await uc.listMembers({ projectId: p.project.id, organizationId: id, actor: p.actor, limit: 200 });
      const invitations = await uc.listInvitations({ projectId: p.project.id, organizationId: id, actor: p.actor });
      const domains = await uc.listDomains({ projectId: p.project.id, organizationId: id, actor: p.actor });
      const now = deps.now();
      return {
        status: 200,
        body: {
          organization: serverOrganizationBody(org.value),
          members: members.ok ? members.value.members.map(memberBody) : [],
          invitations: invitations.ok ? invitations.value.slice(0, 200).map((i) => invitationBody(i, now)) : [],
          domains: domains.ok ? domains.value.map(domainBody) : [],
        },
      };
    },
    billing: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const org = await uc.getOrganization({ projectId: p.project.id, organizationId: params.orgId, actor: p.actor });
      if (!org.ok) return errorResponse('organization_not_found');
      const { id, name } = org.value.org;
      const billing = deps.billing.organizationBilling;
      const [subscription, entitlements, invoices] = await Promise.all([
        billing.subscription(p.project.id, id),
        billing.entitlements(p.project.id, id),
        billing.invoices(p.project.id, id, BILLING_INVOICES),
      ]);
      if (!subscription.ok || !entitlements.ok || !invoices.ok) return errorResponse('organization_not_found');
      const sub = subscription.value;
      return {
        status: 200,
        body: {
          subscription: sub && {
            ...adminSubscriptionView(sub),
            next_invoice: sub.nextInvoice && { amount: sub.nextInvoice.amount, currency: sub.nextInvoice.currency, date: sub.nextInvoice.date.toISOString() },
          },
          seats: entitlements.value?.seats ?? null,
          invoices: invoices.value.map((i) => invoiceBody(i, { id, name })),
          members_count: org.value.membersCount,
        },
      };
    },
    addMember: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const email = parseEmailAddress(body.email);
      if (!email.ok) return failureResponse(res, email);
      const user = await deps.findUserByEmail(p.project.id, email.value.key);
      if (!user) return errorResponse('user_not_found');
      const r = await uc.addMember({ project: p.project, organizationId: params.orgId, userId: user.id, role: body.role, actor: p.actor, origin: p.origin });
      if (r.ok) return { status: 201, body: memberBody(r.value) };
      return r.error === 'missing_permission' ? errorResponse('organization_not_found') : failureResponse(res, { ...r, error: r.error });
    },
    setRole: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.setMemberRole({
        project: p.project,
        organizationId: params.orgId,
        userId: params.userId,
        role: body.role,
        actor: p.actor,
        origin: p.origin,
      });
      if (r.ok) return { status: 200, body: memberBody(r.value) };
      return r.error === 'missing_permission' || r.error === 'owner_required'
        ? errorResponse('organization_not_found')
        : failureResponse(res, { ...r, error: r.error });
    },
    removeMember: async ({ req, res, params }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.removeMember({ project: p.project, organizationId: params.orgId, userId: params.userId, actor: p.actor, origin: p.origin });
      if (r.ok) return { status: 200, body: { success: true as const } };
      return r.error === 'missing_permission' || r.error === 'owner_required'
        ? errorResponse('organization_not_found')
        : failureResponse(res, { ...r, error: r.error });
    },
    revokeInvitation: async ({ req, res, params }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.revokeInvitation({
        projectId: p.project.id,
        organizationId: params.orgId,
        invitationId: params.invitationId,
        actor: p.actor,
        origin: p.origin,
      });
      if (r.ok) return { status: 200, body: { success: true as const } };
      return r.error === 'missing_permission' ? errorResponse('organization_not_found') : failureResponse(res, { ...r, error: r.error });
    },
    settings: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      return { status: 200, body: settingsBody(await uc.getSettings(p.project.id)) };
    },
    updateSettings: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.updateSettings({
        projectId: p.project.id,
        changes: {
          ...(body.allow_user_creation !== undefined ? { allowUserCreation: body.allow_user_creation } : {}),
          ...(body.required !== undefined ? { required: body.required } : {}),
          ...(body.default_member_limit !== undefined ? { defaultMemberLimit: body.default_member_limit } : {}),
        },
        actor: p.actor.audit,
        origin: p.origin,
      });
      return r.ok ? { status: 200, body: settingsBody(r.value) } : failureResponse(res, r);
    },
    putRole: async ({ req, res, params, body }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.putRole({
        projectId: p.project.id,
        role: { key: params.roleKey, name: body.name, description: body.description, permissions: body.permissions },
        actor: p.actor.audit,
        origin: p.origin,
      });
      return r.ok ? { status: 200, body: { roles: r.value.map(roleBody) } } : failureResponse(res, r);
    },
    deleteRole: async ({ req, res, params }) => {
      const p = await access(res, params.projectId, originOf(req, res));
      if (!p.ok) return p.response;
      const r = await uc.deleteRole({ projectId: p.project.id, key: params.roleKey, actor: p.actor.audit, origin: p.origin });
      return r.ok ? { status: 200, body: { roles: r.value.map(roleBody) } } : failureResponse(res, r);
    },
  });
}
