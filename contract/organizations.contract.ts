import { z } from 'zod';
import { apiKeyHeaders, c, LocaleSchema, shared, SuccessSchema, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';

/**
 * Organizations (docs/organizations.md): teams of a project's end users with roles and
 * permissions, invitations, verified domains and an active organization in every token. The end
 * user acts with their access token under /api/proxy/organizations (each action checks their
 * role's permissions); the project server acts with its API key under /api/v1/organizations for
 * any organization of the project. A member of one organization gets 404 for everything of another.
 */

const Id = z.string().min(1).max(100);
const OrgParams = z.object({ orgId: Id.describe('The organization id') });
const MemberParams = OrgParams.extend({ userId: Id.describe('The member: an end user id') });
const InvitationParams = OrgParams.extend({ invitationId: Id.describe('The invitation id') });
const DomainParams = OrgParams.extend({ domainId: Id.describe('The domain id') });

const Metadata = z.record(z.unknown()).describe('A JSON object, nested at most 5 levels');
const Name = z.string().max(400).describe('1 to 100 characters');
const Slug = z.string().max(100).describe('2 to 48 of a-z, 0-9 and single hyphens; unique in the project; some words are reserved');
const RoleKey = z.string().min(1).max(64).describe('A role key of the project: owner, admin, member or a custom one');
const MemberLimit = z.number().int().min(1).max(100_000);

export const OrganizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  image_url: z.string().nullable(),
  public_metadata: z.record(z.unknown()).describe('Visible to members, the project server and webhook events (not in the token or the verify answer)'),
  max_members: z.number().int().nullable().describe("Member limit; null: the project's default"),
  require_mfa: z.boolean().describe('Members need a second factor to activate it'),
  members_count: z.number().int(),
  created_at: z.string().describe('ISO 8601'),
  updated_at: z.string().describe('ISO 8601'),
});

/** What the project server (and the console) see of an organization: private metadata too. */
export const ServerOrganizationSchema = OrganizationSchema.extend({
  private_metadata: z.record(z.unknown()).describe('Only the project server and the console see it'),
});

export const MyOrganizationSchema = OrganizationSchema.extend({
  role: z.string().describe('Your role in it'),
  permissions: z.array(z.string()).describe("Your role's permissions"),
});

export const MemberSchema = z.object({
  user_id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  picture: z.string().nullable(),
  role: z.string(),
  joined_at: z.string().describe('ISO 8601'),
});

export const InvitationSchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.enum(['pending', 'accepted', 'declined', 'revoked', 'expired']),
  inviter_user_id: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
});

/** A pending invitation as its invitee sees it. */
export const MyInvitationSchema = InvitationSchema.extend({
  organization: z.object({ id: z.string(), name: z.string(), slug: z.string(), image_url: z.string().nullable() }),
});

export const DomainSchema = z.object({
  id: z.string(),
  domain: z.string(),
  verified: z.boolean(),
  verified_at: z.string().nullable(),
  enrollment: z.enum(['none', 'suggest', 'automatic']).describe('What happens to users who sign in with an address of the domain'),
  default_role: z.string().describe('The role of members who join through the domain'),
  verification: z.object({
    record_type: z.literal('TXT'),
    name: z.string().describe('_tollgate-verification.<domain>'),
    value: z.string().describe('tollgate-verification=<token>'),
  }),
  created_at: z.string(),
});

export const RoleSchema = z.object({
  key: z.string(),
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  built_in: z.boolean(),
});

/** The active organization of a token, as `POST /api/v1/token/verify` and the switch answer it. */
export const ActiveOrganizationSchema = z.object({
  id: z.string(),
  slug: z.string(),
  role: z.string(),
  permissions: z.array(z.string()),
});

const CreateBody = z
  .object({
    name: Name,
    slug: Slug.optional().describe('Made from the name when omitted'),
    image_url: z.string().max(4096).nullish(),
    public_metadata: Metadata.optional(),
  })
  .strict();
const ServerCreateBody = CreateBody.extend({
  owner_user_id: Id.describe('The end user who becomes its first owner'),
  private_metadata: Metadata.optional(),
  max_members: MemberLimit.nullish(),
  require_mfa: z.boolean().optional(),
}).strict();

const UpdateBody = z
  .object({
    name: Name.optional(),
    slug: Slug.optional(),
    image_url: z.string().max(4096).nullish(),
    public_metadata: Metadata.optional(),
    require_mfa: z.boolean().optional().describe('Needs org:settings:manage'),
  })
  .strict();
const ServerUpdateBody = UpdateBody.extend({ private_metadata: Metadata.optional(), max_members: MemberLimit.nullish() }).strict();

const InviteBody = z
  .object({
    email: z.string().max(320),
    role: RoleKey.default('member'),
    callback_url: z.string().max(2048).describe("Where the email's link leads (a registered callback URL), with ?tollgate_invitation=<token>"),
    locale: LocaleSchema.optional().describe("The email's language (default: the project's)"),
  })
  .strict();
const RoleBody = z.object({ role: RoleKey }).strict();
const DomainBody = z.object({ domain: z.string().max(300) }).strict();
const DomainUpdateBody = z.object({ enrollment: z.enum(['none', 'suggest', 'automatic']).optional(), default_role: RoleKey.optional() }).strict();
const AcceptBody = z
  .object({
    token: z.string().max(200).optional().describe("The invitation link's tollgate_invitation parameter"),
    invitation_id: Id.optional().describe('An id from GET /api/proxy/invitations'),
  })
  .strict();

const OrgPage = z.object({ organizations: z.array(ServerOrganizationSchema), next_cursor: z.string().nullable() });
const MemberPage = z.object({ members: z.array(MemberSchema), next_cursor: z.string().nullable() });
const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional().describe('1 to 100 (default 50)'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
});

const USER_GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.user] as const;
const USER_WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user] as const;
const KEY_GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const KEY_WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const FIELDS = [
  'invalid_organization_name',
  'invalid_organization_slug',
  'reserved_organization_slug',
  'organization_slug_taken',
  'invalid_image_url',
  'invalid_metadata',
] as const;
const INVITE = [
  'invalid_email',
  'invalid_role',
  'callback_url_not_registered',
  'unsupported_locale',
  'already_member',
  'member_limit_reached',
  'seats_exhausted',
  'rate_limited',
] as const;

/** The routes of the end user (access token). */
export const organizationsContract = c.router(
  shared({ auth: 'user' }, userTokenHeaders, {
    create: {
      method: 'POST',
      path: '/api/proxy/organizations',
      summary: 'Create an organization (you become its owner)',
      description: 'Refused with 403 organization_creation_disabled when the project does not let users create organizations.',
      body: CreateBody,
      responses: { 201: MyOrganizationSchema, ...errors(...USER_WRITE, ...FIELDS, 'organization_creation_disabled') },
    },
    listMine: {
      method: 'GET',
      path: '/api/proxy/organizations',
      summary: 'Your organizations, with your role in each',
      description:
        '`required`: the project wants every user in an organization (create or join one); `can_create`: you may create one; `suggestions`: ' +
        'organizations that verified the domain of your verified email and suggest joining them.',
      responses: {
        200: z.object({
          organizations: z.array(MyOrganizationSchema),
          required: z.boolean(),
          can_create: z.boolean(),
          suggestions: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string(), image_url: z.string().nullable() })),
        }),
        ...errors(...USER_GET),
      },
    },
    setActive: {
      method: 'POST',
      path: '/api/proxy/organizations/active',
      summary: 'Switch the active organization of this session',
      description:
        'Names an organization you belong to (or null for none) and answers a new access token for it; the session and its refresh token stay ' +
        'as they are, and refreshing keeps the organization. 403 organization_mfa_required when the organization requires a second factor ' +
        'you have not enrolled.',
      body: z.object({ organization_id: Id.nullable() }).strict(),
      responses: {
        200: z.object({ token: z.string(), organization: ActiveOrganizationSchema.nullable() }),
        ...errors(...USER_WRITE, 'organization_not_found', 'organization_mfa_required'),
      },
    },
    get: {
      method: 'GET',
      path: '/api/proxy/organizations/:orgId',
      pathParams: OrgParams,
      summary: 'One of your organizations',
      responses: { 200: MyOrganizationSchema, ...errors(...USER_GET, 'organization_not_found') },
    },
    update: {
      method: 'PATCH',
      path: '/api/proxy/organizations/:orgId',
      pathParams: OrgParams,
      summary: 'Change name, slug, image, public metadata or the MFA requirement (org:settings:manage)',
      body: UpdateBody,
      responses: { 200: MyOrganizationSchema, ...errors(...USER_WRITE, ...FIELDS, 'organization_not_found', 'missing_permission') },
    },
    delete: {
      method: 'DELETE',
      path: '/api/proxy/organizations/:orgId',
      pathParams: OrgParams,
      summary: 'Delete the organization (org:delete: owners)',
      description: 'Its members, invitations and domains go with it; tokens that name it verify with organization null at once.',
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER_WRITE, 'organization_not_found', 'missing_permission') },
    },
    listMembers: {
      method: 'GET',
      path: '/api/proxy/organizations/:orgId/members',
      pathParams: OrgParams,
      query: PageQuery,
      summary: 'Members, oldest first (any member)',
      responses: { 200: MemberPage, ...errors(...USER_GET, 'organization_not_found') },
    },
    setRole: {
      method: 'PATCH',
      path: '/api/proxy/organizations/:orgId/members/:userId',
      pathParams: MemberParams,
      summary: "Change a member's role (org:members:manage; granting or taking owner: owners)",
      body: RoleBody,
      responses: {
        200: MemberSchema,
        ...errors(...USER_WRITE, 'organization_not_found', 'member_not_found', 'invalid_role', 'missing_permission', 'owner_required', 'last_owner'),
      },
    },
    removeMember: {
      method: 'DELETE',
      path: '/api/proxy/organizations/:orgId/members/:userId',
      pathParams: MemberParams,
      summary: 'Remove a member (org:members:manage; removing an owner: owners)',
      body: c.noBody(),
      responses: {
        200: SuccessSchema,
        ...errors(...USER_WRITE, 'organization_not_found', 'member_not_found', 'missing_permission', 'owner_required', 'last_owner'),
      },
    },
    join: {
      method: 'POST',
      path: '/api/proxy/organizations/:orgId/join',
      pathParams: OrgParams,
      summary: 'Join an organization that verified the domain of your verified email (a suggestion)',
      description:
        'Allowed when the organization verified the domain of your verified email address with enrollment suggest or automatic; you join with ' +
        "the domain's default role. 404 for any other organization.",
      body: c.noBody(),
      responses: { 200: MyOrganizationSchema, ...errors(...USER_WRITE, 'organization_not_found', 'already_member', 'member_limit_reached', 'seats_exhausted') },
    },
    leave: {
      method: 'POST',
      path: '/api/proxy/organizations/:orgId/leave',
      pathParams: OrgParams,
      summary: 'Leave the organization (the last owner cannot)',
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER_WRITE, 'organization_not_found', 'last_owner') },
    },
    invite: {
      method: 'POST',
      path: '/api/proxy/organizations/:orgId/invitations',
      pathParams: OrgParams,
      summary: 'Invite someone by email with a role (org:members:manage; inviting an owner: owners)',
      description:
        'Sends a localized email with a link to callback_url?tollgate_invitation=<token>, valid 7 days, single use. A pending invitation of the ' +
        'same address is replaced. Members plus pending invitations count against the member limit.',
      body: InviteBody,
      responses: { 201: InvitationSchema, ...errors(...USER_WRITE, ...INVITE, 'organization_not_found', 'missing_permission', 'owner_required') },
    },
    listInvitations: {
      method: 'GET',
      path: '/api/proxy/organizations/:orgId/invitations',
      pathParams: OrgParams,
      summary: "The organization's invitations, newest first (org:members:manage)",
      responses: { 200: z.object({ invitations: z.array(InvitationSchema) }), ...errors(...USER_GET, 'organization_not_found', 'missing_permission') },
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/proxy/organizations/:orgId/invitations/:invitationId',
      pathParams: InvitationParams,
      summary: 'Revoke a pending invitation (org:members:manage)',
      body: c.noBody(),
      responses: {
        200: SuccessSchema,
        ...errors(...USER_WRITE, 'organization_not_found', 'invitation_not_found', 'invitation_not_pending', 'missing_permission'),
      },
    },
    listDomains: {
      method: 'GET',
      path: '/api/proxy/organizations/:orgId/domains',
      pathParams: OrgParams,
      summary: "The organization's domains (org:settings:manage)",
      responses: { 200: z.object({ domains: z.array(DomainSchema) }), ...errors(...USER_GET, 'organization_not_found', 'missing_permission') },
    },
    addDomain: {
      method: 'POST',
      path: '/api/proxy/organizations/:orgId/domains',
      pathParams: OrgParams,
      summary: 'Add a domain to verify (org:settings:manage); answers the TXT record to publish',
      body: DomainBody,
      responses: { 201: DomainSchema, ...errors(...USER_WRITE, 'organization_not_found', 'missing_permission', 'invalid_domain', 'domain_exists') },
    },
    verifyDomain: {
      method: 'POST',
      path: '/api/proxy/organizations/:orgId/domains/:domainId/verify',
      pathParams: DomainParams,
      summary: 'Check the TXT record and mark the domain verified (org:settings:manage)',
      body: c.noBody(),
      responses: {
        200: DomainSchema,
        ...errors(...USER_WRITE, 'organization_not_found', 'domain_not_found', 'missing_permission', 'domain_verification_failed', 'domain_taken'),
      },
    },
    updateDomain: {
      method: 'PATCH',
      path: '/api/proxy/organizations/:orgId/domains/:domainId',
      pathParams: DomainParams,
      summary: 'Choose what happens to users of a verified domain (org:settings:manage)',
      body: DomainUpdateBody,
      responses: {
        200: DomainSchema,
        ...errors(...USER_WRITE, 'organization_not_found', 'domain_not_found', 'missing_permission', 'invalid_role', 'owner_required'),
      },
    },
    removeDomain: {
      method: 'DELETE',
      path: '/api/proxy/organizations/:orgId/domains/:domainId',
      pathParams: DomainParams,
      summary: 'Remove a domain (org:settings:manage)',
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER_WRITE, 'organization_not_found', 'domain_not_found', 'missing_permission') },
    },
    roles: {
      method: 'GET',
      path: '/api/proxy/organization-roles',
      summary: "The project's roles and their permissions (for a role picker)",
      responses: { 200: z.object({ roles: z.array(RoleSchema) }), ...errors(...USER_GET) },
    },
    myInvitations: {
      method: 'GET',
      path: '/api/proxy/invitations',
      summary: 'Your pending invitations (to your verified email address)',
      responses: { 200: z.object({ invitations: z.array(MyInvitationSchema) }), ...errors(...USER_GET) },
    },
    accept: {
      method: 'POST',
      path: '/api/proxy/invitations/accept',
      summary: 'Accept an invitation: by its token (the link) or its id',
      description:
        'Your email address must be verified and be the invited one. Single use: of concurrent accepts one wins. Answers the organization ' +
        '(activate it with POST /api/proxy/organizations/active).',
      body: AcceptBody,
      responses: {
        200: MyOrganizationSchema,
        ...errors(
          ...USER_WRITE,
          'invitation_not_found',
          'invitation_not_pending',
          'invitation_expired',
          'invitation_email_mismatch',
          'email_not_verified',
          'already_member',
          'member_limit_reached',
        ),
      },
    },
    decline: {
      method: 'POST',
      path: '/api/proxy/invitations/:invitationId/decline',
      pathParams: z.object({ invitationId: Id }),
      summary: 'Decline one of your pending invitations',
      body: c.noBody(),
      responses: { 200: SuccessSchema, ...errors(...USER_WRITE, 'invitation_not_found', 'invitation_not_pending') },
    },
  }),
  { strictStatusCodes: true },
);

/** The routes of the project server (API key): any organization of the project. */
export const serverOrganizationsContract = c.router(
  shared({ auth: 'apiKey' }, apiKeyHeaders, {
    create: {
      method: 'POST',
      path: '/api/v1/organizations',
      summary: 'Create an organization with its first owner',
      body: ServerCreateBody,
      responses: { 201: ServerOrganizationSchema, ...errors(...KEY_WRITE, ...FIELDS, 'user_not_found') },
    },
    list: {
      method: 'GET',
      path: '/api/v1/organizations',
      query: PageQuery.extend({ search: z.string().max(100).optional().describe('A part of the name or slug') }),
      summary: "The project's organizations, newest first",
      responses: { 200: OrgPage, ...errors(...KEY_GET) },
    },
    get: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId',
      pathParams: OrgParams,
      summary: 'One organization (by id, or by slug)',
      responses: { 200: ServerOrganizationSchema, ...errors(...KEY_GET, 'organization_not_found') },
    },
    update: {
      method: 'PATCH',
      path: '/api/v1/organizations/:orgId',
      pathParams: OrgParams,
      body: ServerUpdateBody,
      summary: 'Change any field, private metadata and the member limit included',
      responses: { 200: ServerOrganizationSchema, ...errors(...KEY_WRITE, ...FIELDS, 'organization_not_found') },
    },
    delete: {
      method: 'DELETE',
      path: '/api/v1/organizations/:orgId',
      pathParams: OrgParams,
      body: c.noBody(),
      summary: 'Delete an organization',
      responses: { 200: SuccessSchema, ...errors(...KEY_WRITE, 'organization_not_found') },
    },
    listMembers: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId/members',
      pathParams: OrgParams,
      query: PageQuery,
      summary: 'Members, oldest first',
      responses: { 200: MemberPage, ...errors(...KEY_GET, 'organization_not_found') },
    },
    addMember: {
      method: 'POST',
      path: '/api/v1/organizations/:orgId/members',
      pathParams: OrgParams,
      body: z.object({ user_id: Id, role: RoleKey.default('member') }).strict(),
      summary: 'Add a user of the project directly, without an invitation',
      responses: {
        201: MemberSchema,
        ...errors(...KEY_WRITE, 'organization_not_found', 'user_not_found', 'invalid_role', 'already_member', 'member_limit_reached', 'seats_exhausted'),
      },
    },
    setRole: {
      method: 'PATCH',
      path: '/api/v1/organizations/:orgId/members/:userId',
      pathParams: MemberParams,
      body: RoleBody,
      summary: "Change a member's role",
      responses: { 200: MemberSchema, ...errors(...KEY_WRITE, 'organization_not_found', 'member_not_found', 'invalid_role', 'last_owner') },
    },
    removeMember: {
      method: 'DELETE',
      path: '/api/v1/organizations/:orgId/members/:userId',
      pathParams: MemberParams,
      body: c.noBody(),
      summary: 'Remove a member',
      responses: { 200: SuccessSchema, ...errors(...KEY_WRITE, 'organization_not_found', 'member_not_found', 'last_owner') },
    },
    invite: {
      method: 'POST',
      path: '/api/v1/organizations/:orgId/invitations',
      pathParams: OrgParams,
      body: InviteBody,
      summary: 'Invite someone by email with a role',
      responses: { 201: InvitationSchema, ...errors(...KEY_WRITE, ...INVITE, 'organization_not_found') },
    },
    listInvitations: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId/invitations',
      pathParams: OrgParams,
      summary: "The organization's invitations, newest first",
      responses: { 200: z.object({ invitations: z.array(InvitationSchema) }), ...errors(...KEY_GET, 'organization_not_found') },
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/v1/organizations/:orgId/invitations/:invitationId',
      pathParams: InvitationParams,
      body: c.noBody(),
      summary: 'Revoke a pending invitation',
      responses: { 200: SuccessSchema, ...errors(...KEY_WRITE, 'organization_not_found', 'invitation_not_found', 'invitation_not_pending') },
    },
    listUserOrganizations: {
      method: 'GET',
      path: '/api/v1/users/:userId/organizations',
      pathParams: z.object({ userId: Id }),
      summary: "A user's organizations with their role in each",
      responses: { 200: z.object({ organizations: z.array(MyOrganizationSchema) }), ...errors(...KEY_GET, 'user_not_found') },
    },
    roles: {
      method: 'GET',
      path: '/api/v1/organization-roles',
      summary: "The project's roles and their permissions",
      responses: { 200: z.object({ roles: z.array(RoleSchema) }), ...errors(...KEY_GET) },
    },
  }),
  { strictStatusCodes: true },
);

/** Re-exported for the admin contract and the SDK's helpers. */
export const OrganizationBodies = { CreateBody, ServerCreateBody, UpdateBody, ServerUpdateBody, InviteBody, RoleBody, DomainBody, DomainUpdateBody };
export const ORGANIZATION_FIELD_ERRORS = FIELDS;
