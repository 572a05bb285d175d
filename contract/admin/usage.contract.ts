import { z } from 'zod';
import { c, consoleHeaders, shared } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';

/**
 * Usage in the console (docs/usage.md; the same use cases as `tollgate meter|credits|usage`): the
 * project's meters, a subject's usage per day with its limit, credits and grants, credits granted
 * by an operator, and the top consumers of a meter. Each route answers 404 `project_not_found`
 * for a project the account may not see.
 */
const GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const meterParams = projectParams.extend({ meterKey: z.string().min(1).max(64) });
const subjectParams = projectParams.extend({ subjectType: z.enum(['user', 'organization']), subjectId: z.string().min(1).max(100) });

export const AdminMeterSchema = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  unit: z.string(),
  aggregation: z.enum(['sum', 'count', 'max']),
  created_at: z.string(),
});

export const AdminUsageFeatureSchema = z.object({
  feature: z.string(),
  name: z.string(),
  unit: z.string(),
  included: z.number().int(),
  used: z.number().int(),
  credits: z.number().int(),
  remaining: z.number().int(),
  overage: z.number().int(),
  limit: z.enum(['refuse', 'bill', 'allow']),
  window_start: z.string(),
  resets_at: z.string(),
  daily: z.array(z.object({ date: z.string().describe('YYYY-MM-DD (UTC)'), used: z.number().int() })).describe('Usage per day of the window'),
});

export const AdminCreditGrantSchema = z.object({
  id: z.string(),
  feature: z.string(),
  amount: z.number().int(),
  remaining: z.number().int(),
  expires_at: z.string().nullable(),
  reason: z.string(),
  source: z.enum(['operator', 'api', 'purchase']),
  created_at: z.string(),
  expired: z.boolean(),
});

export const AdminSubjectUsageSchema = z.object({
  subject: z.object({
    type: z.enum(['user', 'organization']),
    id: z.string(),
    label: z.string().nullable().describe("The user's email or the organization's name"),
  }),
  plan: z.string().nullable().describe('The entitled plan, or null'),
  features: z.array(AdminUsageFeatureSchema),
  grants: z.array(AdminCreditGrantSchema).describe('Newest first'),
});

export const AdminTopConsumerSchema = z.object({
  subject_type: z.enum(['user', 'organization']),
  subject_id: z.string(),
  label: z.string().nullable(),
  used: z.number().int(),
  overage: z.number().int(),
});

export const ADMIN_USAGE_REFUSALS = {
  createMeter: ['invalid_meter_key', 'invalid_meter_name', 'invalid_meter_unit', 'invalid_meter_aggregation', 'meter_key_taken', 'too_many_meters'],
  updateMeter: ['meter_not_found', 'invalid_meter_name', 'invalid_meter_unit'],
  subjectUsage: ['unknown_subject'],
  grant: ['unknown_meter', 'unknown_subject', 'invalid_credit_amount', 'invalid_credit_expiry', 'invalid_credit_reason'],
  top: ['unknown_meter'],
} as const;

export const adminUsageContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    listMeters: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/meters',
      pathParams: projectParams,
      responses: { 200: z.object({ meters: z.array(AdminMeterSchema) }), ...errors(...GET) },
      summary: "The project's meters, by key",
    },
    createMeter: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/meters',
      pathParams: projectParams,
      body: z
        .object({
          key: z.string().max(100),
          name: z.string().max(400).optional(),
          unit: z.string().max(200).optional(),
          aggregation: z.string().max(20).optional().describe('sum (default), count or max'),
        })
        .strict(),
      responses: { 201: z.object({ meter: AdminMeterSchema }), ...errors(...WRITE, ...ADMIN_USAGE_REFUSALS.createMeter) },
      summary: 'Create a meter (its key and aggregation never change)',
    },
    updateMeter: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/meters/:meterKey',
      pathParams: meterParams,
      body: z.object({ name: z.string().max(400).optional(), unit: z.string().max(200).optional() }).strict(),
      responses: { 200: z.object({ meter: AdminMeterSchema }), ...errors(...WRITE, ...ADMIN_USAGE_REFUSALS.updateMeter) },
      summary: 'Rename a meter or change its unit label',
    },
    subjectUsage: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/usage/:subjectType/:subjectId',
      pathParams: subjectParams,
      responses: { 200: AdminSubjectUsageSchema, ...errors(...GET, ...ADMIN_USAGE_REFUSALS.subjectUsage) },
      summary: "A user's or an organization's usage of every metered feature, per day of the current window, and its credit grants",
    },
    grantCredits: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/usage/credits',
      pathParams: projectParams,
      body: z
        .object({
          subject_type: z.enum(['user', 'organization']),
          subject_id: z.string().min(1).max(100),
          feature: z.string().min(1).max(64),
          amount: z.number(),
          expires_at: z.string().datetime().nullable().optional(),
          reason: z.string().max(1000).optional(),
        })
        .strict(),
      responses: { 201: z.object({ grant: AdminCreditGrantSchema }), ...errors(...WRITE, ...ADMIN_USAGE_REFUSALS.grant) },
      summary: 'Grant credits to a user or an organization (audited)',
    },
    topConsumers: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/usage/top',
      pathParams: projectParams,
      query: z.object({
        feature: z.string().min(1).max(64),
        limit: z.coerce.number().int().min(1).max(100).optional().describe('Default 10'),
      }),
      responses: {
        200: z.object({
          feature: z.string(),
          since: z.string().describe('Usage counted from this time: the start of the current UTC month'),
          consumers: z.array(AdminTopConsumerSchema),
        }),
        ...errors(...GET, ...ADMIN_USAGE_REFUSALS.top),
      },
      summary: 'The subjects that used a meter most this calendar month',
    },
  }),
);
