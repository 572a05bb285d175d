import { z } from 'zod';
import { c, consoleHeaders, shared } from '../common';
import { AUTH_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';

/** A project's audit log as the console shows it: the use case of `tollgate audit list`. */
const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });

export const AdminAuditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  action: z.string(),
  outcome: z.enum(['success', 'failure']),
  reason: z.string().nullable().describe('The reason code of a failure'),
  actor: z.object({ kind: z.enum(['user', 'admin', 'system']), id: z.string().nullable() }).describe('admin: a console account id, cli, or api_key:<id>'),
  target: z.object({ kind: z.string(), id: z.string() }).nullable(),
  user_id: z.string().nullable(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  request_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  actor_name: z
    .string()
    .nullable()
    .optional()
    .describe(
      "The actor as the console names it: an end user's or console account's email, an API key's label and prefix; null when it has none (the CLI, " +
        'Tollgate itself, a deleted record)',
    ),
  target_name: z
    .string()
    .nullable()
    .optional()
    .describe(
      "The target as the console names it: an end user's or console account's email, the project's name, an API key's label and prefix, an " +
        "invitation's address; null otherwise",
    ),
});

export const ListAuditQuerySchema = z.object({
  user: z.string().max(100).optional().describe('Only entries about this end user id (as actor or target)'),
  action: z.string().max(100).optional().describe('An action or a prefix of one at a dot: user.sign_in, mfa, billing'),
  outcome: z.enum(['success', 'failure']).optional(),
  since: z
    .string()
    .datetime({ offset: true, message: 'since: an ISO 8601 time, e.g. 2026-11-27T10:00:00Z' })
    .optional()
    .describe('From this time on (inclusive)'),
  until: z.string().datetime({ offset: true, message: 'until: an ISO 8601 time, e.g. 2026-11-27T10:00:00Z' }).optional().describe('Before this time'),
  limit: z.coerce.number().int().min(1).max(1000).optional().describe('Entries per page, 1 to 1000 (default 50)'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
});

export const adminAuditContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/audit',
      pathParams: projectParams,
      query: ListAuditQuerySchema,
      responses: {
        200: z.object({ entries: z.array(AdminAuditEntrySchema), next_cursor: z.string().nullable() }),
        ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found', 'invalid_audit_filter'),
      },
      summary: "The project's audit log, newest first, filtered by user, action prefix, outcome and time range",
    },
  }),
);
