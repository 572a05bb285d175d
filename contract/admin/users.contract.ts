import { z } from 'zod';
import { PasskeySchema } from '../passkeys.contract';
import { c, consoleHeaders, shared } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import { AdminSubscriptionSchema } from './billing.contract';

/**
 * A project's end users as the console shows them: the same use cases as `tollgate user ...`
 * (list, show, disable, enable, sign-out, mfa-remove). Each route answers 404 `project_not_found`
 * for a project the account may not see.
 */
const GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;

export const MFA_FACTOR_NAMES = ['totp', 'sms', 'backup_codes'] as const;

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const userParams = projectParams.extend({ userId: z.string().min(1).max(100).describe('The end user id') });

export const AdminUserSchema = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  provider: z.string().describe('Provider of the latest sign-in'),
  email_verified: z.boolean(),
  disabled: z.boolean(),
  created_at: z.string(),
});

export const AdminUserSessionSchema = z.object({
  id: z.string(),
  provider: z.string(),
  created_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
});

export const AdminUserDetailSchema = z.object({
  user: AdminUserSchema,
  identities: z.array(z.object({ provider: z.string(), email: z.string().nullable(), created_at: z.string() })),
  mfa_factors: z
    .array(
      z.object({
        kind: z.enum(MFA_FACTOR_NAMES),
        created_at: z.string(),
        remaining: z.number().int().nullable().describe('Backup codes: how many are unused; null for the others'),
      }),
    )
    .describe('Enrolled factors: kind and date, never a secret'),
  sessions: z.array(AdminUserSessionSchema).describe('Live sessions, most recently used first'),
  subscription: AdminSubscriptionSchema.nullable().describe('The live subscription, or null'),
});

export const ListUsersQuerySchema = z.object({
  search: z.string().max(320, 'A search has at most 320 characters').optional().describe('A part of the email address, case-insensitive'),
  limit: z.coerce.number().int().min(1).max(100).optional().describe('Users per page, 1 to 100 (default 25)'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
});

export const SetUserDisabledBodySchema = z.object({ disabled: z.boolean() }).strict();

export const adminUsersContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/users',
      pathParams: projectParams,
      query: ListUsersQuerySchema,
      responses: { 200: z.object({ users: z.array(AdminUserSchema), next_cursor: z.string().nullable() }), ...errors(...GET, 'invalid_user_query') },
      summary: "The project's end users, newest first, optionally those whose email contains the search text",
    },
    get: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/users/:userId',
      pathParams: userParams,
      responses: { 200: AdminUserDetailSchema, ...errors(...GET, 'user_not_found') },
      summary: 'One end user: identities, MFA factors, live sessions and subscription',
    },
    setDisabled: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/users/:userId',
      pathParams: userParams,
      body: SetUserDisabledBodySchema,
      responses: { 200: z.object({ user: AdminUserSchema }), ...errors(...WRITE, 'user_not_found') },
      summary: 'Disable (sign-ins refused, every session ended) or enable the user',
    },
    signOutEverywhere: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/users/:userId/sign-out',
      pathParams: userParams,
      body: c.noBody(),
      responses: { 200: z.object({ sessions_ended: z.number().int() }), ...errors(...WRITE, 'user_not_found') },
      summary: 'End every session of the user: its refresh and access tokens stop working',
    },
    endSession: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/users/:userId/sessions/:sessionId',
      pathParams: userParams.extend({ sessionId: z.string().min(1).max(100) }),
      responses: { 200: z.object({ success: z.literal(true) }), ...errors(...GET, 'user_not_found', 'session_not_found') },
      summary: 'End one session of the user',
    },
    removeMfaFactor: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/users/:userId/mfa/:factor',
      pathParams: userParams.extend({ factor: z.enum(MFA_FACTOR_NAMES).describe('totp, sms or backup_codes') }),
      responses: {
        200: z.object({
          factor: z.enum(MFA_FACTOR_NAMES),
          sessions_ended: z.number().int().nullable().describe("Sessions ended (null when the project's MFA policy is off: none end)"),
        }),
        ...errors(...GET, 'user_not_found', 'mfa_method_not_enrolled'),
      },
      summary: "Remove one MFA factor of the user (no code asked); the user's sessions end unless the MFA policy is off",
    },
    listPasskeys: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/users/:userId/passkeys',
      pathParams: userParams,
      responses: { 200: z.object({ passkeys: z.array(PasskeySchema) }), ...errors(...GET, 'user_not_found') },
      summary: "The user's passkeys: names, authenticators, when created and last used",
    },
    removePasskey: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/users/:userId/passkeys/:passkeyId',
      pathParams: userParams.extend({ passkeyId: z.string().min(1).max(100) }),
      responses: { 200: z.object({ success: z.literal(true) }), ...errors(...GET, 'passkey_not_found') },
      summary: 'Remove one passkey of the user; the user gets a security notification',
    },
  }),
);
