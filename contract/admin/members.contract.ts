import { z } from 'zod';
import { c, consoleHeaders, meta, shared, SuccessSchema } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import { ConsoleSessionSchema, TotpCodeSchema } from './schemas';

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });

export const ConsoleMemberSchema = z.object({
  account_id: z.string(),
  email: z.string(),
  role: z.enum(['operator', 'member']).describe('operator: sees every project (not removable here); member: by its membership'),
  since: z.string().describe('When the membership began (an operator: when its account was created)'),
});

export const ConsoleInvitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  invited_by: z.string().nullable().describe("The inviter's email (null once that account is gone)"),
  created_at: z.string(),
  expires_at: z.string().describe('The link works once, until then (7 days)'),
});

export const InviteMemberBodySchema = z.object({
  email: z.string().trim().min(1, 'Enter an email address').max(320, 'An email address has at most 320 characters'),
});

export const AcceptInvitationBodySchema = z.object({
  token: z.string().min(1).max(200),
  code: TotpCodeSchema.optional().describe('The authenticator app code, when the invited address already has an account with one'),
});

export const ConsoleAccountListItemSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(['operator', 'member']),
  projects: z.array(z.object({ id: z.string(), name: z.string() })).describe('Its memberships (an operator sees every project besides)'),
  totp_enabled: z.boolean().describe('Whether it signs in with a code from an authenticator app too'),
  created_at: z.string(),
});

/**
 * A project's console members and invitations (anyone who sees the project), accepting an
 * invitation (no session yet: the one-time token is the credential), and the deployment's console
 * accounts (operators only).
 */
export const adminMembersContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/members',
      pathParams: projectParams,
      responses: {
        200: z.object({ members: z.array(ConsoleMemberSchema), invitations: z.array(ConsoleInvitationSchema) }),
        ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'),
      },
      summary: 'Who sees the project (its members, then the operators) and its pending invitations',
    },
    invite: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/invitations',
      pathParams: projectParams,
      body: InviteMemberBodySchema,
      responses: {
        201: z.object({ invitation: ConsoleInvitationSchema }),
        ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'invalid_email', 'console_already_member', 'rate_limited'),
      },
      summary: 'Invite someone by email: they receive a one-time link (7 days); a pending invitation to the same address is replaced',
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/invitations/:invitationId',
      pathParams: projectParams.extend({ invitationId: z.string().max(100) }),
      responses: { 200: SuccessSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'console_invitation_not_found') },
      summary: 'Revoke a pending invitation: its link stops working',
    },
    remove: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/members/:accountId',
      pathParams: projectParams.extend({ accountId: z.string().max(100) }),
      responses: {
        200: SuccessSchema,
        ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'console_member_not_found', 'console_last_member'),
      },
      summary: 'Remove a member from the project (a member may leave, unless it is the last one)',
    },
    acceptInvitation: {
      method: 'POST',
      path: '/api/admin/invitations/accept',
      body: AcceptInvitationBodySchema,
      responses: {
        200: ConsoleSessionSchema,
        ...errors(...BODY_ROUTE_ERRORS, 'console_invitation_invalid', 'console_totp_required', 'console_totp_invalid', 'rate_limited'),
      },
      metadata: meta({ auth: 'none' }),
      summary: 'Accept an invitation with its one-time token: creates the member account (or adds the membership) and signs in',
    },
    listAccounts: {
      method: 'GET',
      path: '/api/admin/accounts',
      responses: {
        200: z.object({ accounts: z.array(ConsoleAccountListItemSchema) }),
        ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'console_operator_only'),
      },
      summary: 'Every console account of the deployment, with its projects (operators only)',
    },
    accountSignInLink: {
      method: 'POST',
      path: '/api/admin/accounts/:accountId/sign-in-link',
      pathParams: z.object({ accountId: z.string().max(100) }),
      body: c.noBody(),
      responses: {
        201: z.object({ url: z.string().describe('Shown once'), expires_at: z.string() }),
        ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'console_operator_only', 'console_account_id_not_found'),
      },
      summary: 'A one-time sign-in link for an account, as `tollgate admin link` makes (single use, one hour; operators only)',
    },
  }),
);
