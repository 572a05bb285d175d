import { z } from 'zod';
import { c, consoleHeaders, shared, SuccessSchema } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import { DomainSchema, InvitationSchema, MemberSchema, RoleSchema, ServerOrganizationSchema } from '../organizations.contract';
import { AdminInvoiceSchema, AdminSubscriptionSchema } from './billing.contract';

/**
 * A project's organizations as the console shows them (the same use cases as `tollgate org ...`):
 * search, one organization with its members, invitations and domains, members added, removed and
 * given roles; and the project's organization settings and roles editor. Each route answers 404
 * `project_not_found` for a project the account may not see.
 */
const GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const orgParams = projectParams.extend({ orgId: z.string().min(1).max(100) });
const memberParams = orgParams.extend({ userId: z.string().min(1).max(100) });
const RoleKey = z.string().min(1).max(64);

export const OrganizationSettingsSchema = z.object({
  allow_user_creation: z.boolean().describe('End users may create organizations'),
  required: z.boolean().describe('Every user must belong to an organization'),
  default_member_limit: z.number().int().min(1).max(100_000),
});

export const AdminOrganizationDetailSchema = z.object({
  organization: ServerOrganizationSchema,
  members: z.array(MemberSchema).describe('The first 200 members, oldest first'),
  invitations: z.array(InvitationSchema).describe('The latest 200 invitations'),
  domains: z.array(DomainSchema),
});

/** An invoice line as the console shows it: a per-seat line names its seats. */
export const AdminInvoiceLineSchema = z.object({
  description: z.string(),
  amount: z.number().int().describe('Integer minor units; negative for a proration credit'),
  proration: z.boolean(),
  price_id: z.string().nullable(),
  quantity: z.number().int().nullable().describe('The seats of a per-seat line; null for a flat price'),
  period_start: z.string(),
  period_end: z.string(),
});

export const AdminOrganizationBillingSchema = z.object({
  subscription: AdminSubscriptionSchema.extend({
    next_invoice: z
      .object({ amount: z.number().int(), currency: z.string(), date: z.string() })
      .nullable()
      .describe('The next charge; null when none will come (canceled, pending cancellation, paused)'),
  })
    .nullable()
    .describe("The organization's live subscription; null when it has none"),
  seats: z
    .object({
      used: z.number().int().describe('Members (and pending invitations when the plan counts them)'),
      total: z.number().int().describe('Seats billed'),
    })
    .nullable()
    .describe('The seats of a per-seat subscription; null otherwise'),
  invoices: z.array(AdminInvoiceSchema.extend({ lines: z.array(AdminInvoiceLineSchema) })).describe('The latest 10 invoices, newest first'),
  members_count: z.number().int(),
});

export const adminOrganizationsContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/organizations',
      pathParams: projectParams,
      query: z.object({
        search: z.string().max(100).optional().describe('A part of the name or slug'),
        limit: z.coerce.number().int().min(1).max(100).optional(),
        cursor: z.string().max(200).optional(),
      }),
      responses: { 200: z.object({ organizations: z.array(ServerOrganizationSchema), next_cursor: z.string().nullable() }), ...errors(...GET) },
      summary: "The project's organizations, newest first, optionally those whose name or slug contains the search text",
    },
    get: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/organizations/:orgId',
      pathParams: orgParams,
      responses: { 200: AdminOrganizationDetailSchema, ...errors(...GET, 'organization_not_found') },
      summary: 'One organization with its members, invitations, domains and metadata',
    },
    billing: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/organizations/:orgId/billing',
      pathParams: orgParams,
      responses: { 200: AdminOrganizationBillingSchema, ...errors(...GET, 'organization_not_found') },
      summary: "An organization's billing: its live subscription (with the seats billed), its seats used and billed, its latest 10 invoices",
    },
    addMember: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/organizations/:orgId/members',
      pathParams: orgParams,
      body: z.object({ email: z.string().max(320).describe("An end user's email address"), role: RoleKey.default('member') }).strict(),
      responses: {
        201: MemberSchema,
        ...errors(
          ...WRITE,
          'organization_not_found',
          'user_not_found',
          'invalid_role',
          'already_member',
          'member_limit_reached',
          'seats_exhausted',
          'invalid_email',
        ),
      },
      summary: 'Add an end user of the project (by email) as a member',
    },
    setRole: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/organizations/:orgId/members/:userId',
      pathParams: memberParams,
      body: z.object({ role: RoleKey }).strict(),
      responses: { 200: MemberSchema, ...errors(...WRITE, 'organization_not_found', 'member_not_found', 'invalid_role', 'last_owner') },
      summary: "Change a member's role",
    },
    removeMember: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/organizations/:orgId/members/:userId',
      pathParams: memberParams,
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...WRITE, 'organization_not_found', 'member_not_found', 'last_owner') },
      summary: 'Remove a member',
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/organizations/:orgId/invitations/:invitationId',
      pathParams: orgParams.extend({ invitationId: z.string().min(1).max(100) }),
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...WRITE, 'organization_not_found', 'invitation_not_found', 'invitation_not_pending') },
      summary: 'Revoke a pending invitation',
    },
    settings: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/organization-settings',
      pathParams: projectParams,
      responses: { 200: z.object({ settings: OrganizationSettingsSchema, roles: z.array(RoleSchema) }), ...errors(...GET) },
      summary: "The project's organization settings and roles",
    },
    updateSettings: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/organization-settings',
      pathParams: projectParams,
      body: OrganizationSettingsSchema.partial().strict(),
      responses: { 200: z.object({ settings: OrganizationSettingsSchema, roles: z.array(RoleSchema) }), ...errors(...WRITE) },
      summary: 'Change who may create organizations, whether one is required, and the default member limit',
    },
    putRole: {
      method: 'PUT',
      path: '/api/admin/projects/:projectId/organization-roles/:roleKey',
      pathParams: projectParams.extend({ roleKey: RoleKey }),
      body: z
        .object({
          name: z.string().max(200),
          description: z.string().max(1000).optional(),
          permissions: z.array(z.string().max(200)).max(200),
        })
        .strict(),
      responses: { 200: z.object({ roles: z.array(RoleSchema) }), ...errors(...WRITE, 'invalid_role', 'invalid_permission', 'role_not_editable') },
      summary: 'Create or change a role (admin, member or a custom one): its name, description and permissions',
    },
    deleteRole: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/organization-roles/:roleKey',
      pathParams: projectParams.extend({ roleKey: RoleKey }),
      body: c.noBody(),
      responses: { 200: z.object({ roles: z.array(RoleSchema) }), ...errors(...WRITE, 'invalid_role', 'role_not_editable', 'role_in_use') },
      summary: 'Delete a custom role no member holds (built-in roles stay)',
    },
  }),
  { strictStatusCodes: true },
);
