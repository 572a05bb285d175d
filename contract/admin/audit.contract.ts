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

/** The formats of an export: one JSON object a line, or CSV with a header row (RFC 4180). */
export const AUDIT_EXPORT_FORMATS = ['ndjson', 'csv'] as const;

/**
 * The columns of a CSV export, in this order: the fields of an entry as the list answers it, `actor`
 * and `target` split into kind and id, `details` as JSON text.
 */
export const AUDIT_EXPORT_CSV_COLUMNS = [
  'id',
  'at',
  'action',
  'outcome',
  'reason',
  'actor_kind',
  'actor_id',
  'actor_name',
  'target_kind',
  'target_id',
  'target_name',
  'user_id',
  'ip',
  'user_agent',
  'request_id',
  'details',
] as const;

export const ExportAuditQuerySchema = z.object({
  from: z
    .string()
    .max(40)
    .optional()
    .describe('From this time on (inclusive): ISO 8601 with a zone (2026-11-01T00:00:00Z) or a date (midnight UTC); default: 30 days before to'),
  to: z.string().max(40).optional().describe('Before this time (exclusive), same forms; default: now. At most 366 days after the start of the range'),
  action: z.string().max(100).optional().describe('An action or a prefix of one at a dot: user.sign_in, mfa, billing'),
  format: z
    .enum(AUDIT_EXPORT_FORMATS, { message: 'format: ndjson or csv' })
    .optional()
    .describe('ndjson (the default: one entry a line, as the list answers it) or csv (a header row, then one entry a row)'),
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
    export: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/audit/export',
      pathParams: projectParams,
      query: ExportAuditQuerySchema,
      responses: {
        // Streamed as it is read (docs/audit.md, "Export"): application/x-ndjson, or text/csv with format=csv.
        200: c.otherResponse({
          contentType: 'application/x-ndjson',
          body: z
            .string()
            .describe(
              'The entries of the range, oldest first, as an attachment: NDJSON (one entry a line, the fields of the list) or, with ' +
                `format=csv, text/csv with the header row ${AUDIT_EXPORT_CSV_COLUMNS.join(',')}`,
            ),
        }),
        ...errors(
          ...QUERY_ROUTE_ERRORS,
          ...AUTH_ERRORS.console,
          'project_not_found',
          'invalid_audit_filter',
          'invalid_audit_export_range',
          'audit_export_range_too_long',
        ),
      },
      summary: "Export the project's audit log of a time range as NDJSON or CSV, streamed; the export is itself recorded (audit.exported)",
    },
  }),
);
