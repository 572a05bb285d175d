import { z } from 'zod';
import { c, consoleHeaders, shared, SuccessSchema } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import { WEBHOOK_EVENT_NAMES } from './billing.contract';

/**
 * A project's webhook endpoints as the console shows them: the same use cases as
 * `tollgate webhook ...`. A signing secret is answered once, at creation and when rolled.
 */
const GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const URL_RULES = ['invalid_webhook_url', 'webhook_url_not_https', 'webhook_url_private', 'webhook_url_unresolvable'] as const;

/** The refusals of each route's use case (application/webhooks/use-cases.ts): a handler answering a code not listed fails to compile. */
export const ADMIN_WEBHOOK_REFUSALS = {
  create: [...URL_RULES, 'invalid_webhook_events', 'invalid_webhook_description'],
  update: [...URL_RULES, 'invalid_webhook_events', 'invalid_webhook_description', 'webhook_endpoint_not_found'],
  endpoint: ['webhook_endpoint_not_found'],
  resend: ['webhook_delivery_not_found', 'webhook_endpoint_disabled'],
  retryNow: ['webhook_delivery_not_found', 'webhook_endpoint_disabled', 'webhook_delivery_not_waiting'],
} as const;

/** What an endpoint may select: every event type, and `audit.*` (the audit log as it is written, named on its own). */
export const WEBHOOK_SELECTABLE_NAMES = [...WEBHOOK_EVENT_NAMES, 'audit.*'] as const;

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const endpointParams = projectParams.extend({ endpointId: z.string().min(1).max(100).describe('The endpoint id') });

export const AdminWebhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  event_types: z.array(z.enum(WEBHOOK_SELECTABLE_NAMES)).describe('The selected event types; empty: every type (audit.* only when named)'),
  description: z.string(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  secret_prefix: z.string().describe('The first characters of the signing secret, to recognise it'),
  failing_since: z.string().nullable(),
  last_success_at: z.string().nullable(),
  created_at: z.string(),
});

export const AdminWebhookAttemptSchema = z.object({
  attempt: z.number().int(),
  started_at: z.string(),
  duration_ms: z.number().int().nullable(),
  status_code: z.number().int().nullable(),
  response_excerpt: z.string().nullable().describe('The first 1 KB of the answer'),
  error: z.string().nullable(),
});

export const AdminWebhookDeliverySchema = z.object({
  id: z.string(),
  event_id: z.string().nullable(),
  event_type: z.string(),
  status: z.string(),
  attempt_count: z.number().int(),
  last_status_code: z.number().int().nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  attempts: z.array(AdminWebhookAttemptSchema),
});

const WebhookUrl = z.string().trim().min(1, 'Enter the endpoint URL, e.g. https://my.app/webhooks').max(2048, 'A URL has at most 2048 characters');
const Events = z.array(z.enum(WEBHOOK_SELECTABLE_NAMES)).max(WEBHOOK_SELECTABLE_NAMES.length);
const Description = z.string().max(500, 'A description has at most 500 characters');

export const CreateWebhookBodySchema = z.object({ url: WebhookUrl, event_types: Events.optional(), description: Description.optional() }).strict();
export const UpdateWebhookBodySchema = z
  .object({ url: WebhookUrl.optional(), event_types: Events.optional(), description: Description.optional(), enabled: z.boolean().optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'Nothing to update: give at least one field');

const Secret = z.string().describe('The signing secret: shown now and never again');

export const adminWebhooksContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    list: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/webhooks',
      pathParams: projectParams,
      responses: { 200: z.object({ endpoints: z.array(AdminWebhookEndpointSchema) }), ...errors(...GET) },
      summary: "The project's webhook endpoints (never their secrets)",
    },
    create: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/webhooks',
      pathParams: projectParams,
      body: CreateWebhookBodySchema,
      responses: { 201: z.object({ endpoint: AdminWebhookEndpointSchema, secret: Secret }), ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.create) },
      summary: 'Register an endpoint; its signing secret is shown once',
    },
    update: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/webhooks/:endpointId',
      pathParams: endpointParams,
      body: UpdateWebhookBodySchema,
      responses: { 200: z.object({ endpoint: AdminWebhookEndpointSchema }), ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.update) },
      summary: 'Change the URL, events, description, or enable/disable the endpoint',
    },
    remove: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/webhooks/:endpointId',
      pathParams: endpointParams,
      responses: { 200: SuccessSchema, ...errors(...GET, ...ADMIN_WEBHOOK_REFUSALS.endpoint) },
      summary: 'Delete the endpoint and its delivery log',
    },
    rollSecret: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/webhooks/:endpointId/roll-secret',
      pathParams: endpointParams,
      body: c.noBody(),
      responses: {
        200: z.object({ endpoint: AdminWebhookEndpointSchema, secret: Secret, previous_secret_valid_until: z.string() }),
        ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.endpoint),
      },
      summary: 'A new signing secret, shown once; the old one keeps signing beside it for a day',
    },
    test: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/webhooks/:endpointId/test',
      pathParams: endpointParams,
      body: c.noBody(),
      responses: {
        200: z.object({
          ok: z.boolean().describe('The receiver answered 200'),
          status: z.number().int().nullable().describe('Its status; null when nothing answered'),
          duration_ms: z.number().int(),
          error: z.string().nullable(),
          delivery_id: z.string(),
        }),
        ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.endpoint),
      },
      summary: 'Send a signed test event now and say how the receiver answered',
    },
    deliveries: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/webhooks/:endpointId/deliveries',
      pathParams: endpointParams,
      query: z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }),
      responses: { 200: z.object({ deliveries: z.array(AdminWebhookDeliverySchema) }), ...errors(...GET, ...ADMIN_WEBHOOK_REFUSALS.endpoint) },
      summary: "The endpoint's delivery log, newest first, with each attempt",
    },
    resend: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/webhook-deliveries/:deliveryId/resend',
      pathParams: projectParams.extend({ deliveryId: z.string().min(1).max(100) }),
      body: c.noBody(),
      responses: { 200: z.object({ delivery_id: z.string(), queued: z.boolean() }), ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.resend) },
      summary: 'Send a delivery again (same event id and payload)',
    },
    retryNow: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/webhook-deliveries/:deliveryId/retry-now',
      pathParams: projectParams.extend({ deliveryId: z.string().min(1).max(100) }),
      body: c.noBody(),
      responses: {
        200: z.object({ delivery_id: z.string(), was_due_at: z.string().describe('When its next attempt was due before') }),
        ...errors(...WRITE, ...ADMIN_WEBHOOK_REFUSALS.retryNow),
      },
      summary: 'Run now the next attempt of a delivery waiting for a retry',
    },
  }),
);
