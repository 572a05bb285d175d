import { z } from 'zod';
import { apiKeyHeaders, c, meta, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';

/**
 * Usage-based billing (docs/usage.md): meters, plan limits, credits, and the project server's
 * calls that report usage (track), check it and consume it atomically, and give back what a
 * reservation did not use (release). Amounts of usage are whole units of the meter; money is an
 * integer amount of minor units. Dates are ISO 8601 in UTC.
 */

const DateTime = z.string().datetime().describe('ISO 8601, UTC');
const MeterKey = z.string().min(1).max(64).describe('A meter key of the project: [a-z][a-z0-9_]*, at most 64 characters');
const Units = z.number().describe('Whole units of the meter, 0 to 10^12');

export const UsageSubjectSchema = z
  .object({
    type: z.enum(['user', 'organization']).describe('Whose usage: an end user, or an organization (its members share it)'),
    id: z.string().min(1).max(100).describe('The user id or the organization id'),
  })
  .describe('The subject the usage belongs to');

export const USAGE_LIMIT_MODES = ['refuse', 'bill', 'allow'] as const;

/** A subject's standing on one metered feature now. */
export const UsageFeatureSchema = z.object({
  feature: z.string().describe('The meter key'),
  name: z.string(),
  unit: z.string(),
  included: z.number().int().describe('Included per window by the plan (0 without a plan limit)'),
  used: z.number().int().describe('Used in the current window'),
  credits: z.number().int().describe('Credit balance left (unexpired grants)'),
  remaining: z.number().int().describe('What may still be used before the limit: the included amount left plus the credits'),
  overage: z.number().int().describe('Units past the included amount and the credits in this window'),
  limit: z.enum(USAGE_LIMIT_MODES).describe('Past the limit: refuse (hard limit), bill (overage), allow (soft limit)'),
  resetsAt: DateTime.describe('When the window ends and usage starts again from 0'),
});

export const UsageSchema = z.object({
  subject: UsageSubjectSchema,
  features: z.array(UsageFeatureSchema).describe("Every meter the subject's plan limits or has credits for"),
});

export const CheckResultSchema = UsageFeatureSchema.extend({
  allowed: z.boolean().describe('Whether `amount` fits (always true past the limit when overage is billed or allowed)'),
  consumed: z.number().int().describe('Units recorded by this call (consume: true and allowed), else 0'),
  eventId: z.string().nullable().describe('The usage event a consumption recorded (release names it), else null'),
});

export const CreditGrantSchema = z.object({
  id: z.string(),
  subject: UsageSubjectSchema,
  feature: z.string().describe('The meter key'),
  amount: z.number().int(),
  remaining: z.number().int(),
  expiresAt: DateTime.nullable(),
  reason: z.string(),
  source: z.enum(['operator', 'api', 'purchase']),
  createdAt: DateTime,
  expired: z.boolean().describe('Past its expiry (what was left is gone)'),
});

const TrackEvent = z.object({
  id: z.string().min(1).max(255).describe('Your id of the event, unique in the project: a retry with the same id and values is ignored'),
  subject: UsageSubjectSchema,
  meter: MeterKey,
  value: Units.optional().describe('Default 1; a count meter counts each event as 1'),
  timestamp: DateTime.optional().describe('When it happened (default now); at most 24 hours ago and 5 minutes ahead'),
});

export const USAGE_REFUSALS = {
  track: ['unknown_meter', 'unknown_subject', 'invalid_usage_value', 'usage_event_too_old', 'usage_event_in_future', 'usage_event_conflict'],
  check: ['unknown_meter', 'unknown_subject', 'invalid_usage_value', 'usage_event_conflict'],
  release: ['unknown_subject', 'invalid_usage_value', 'usage_event_not_found', 'release_not_supported'],
  usage: ['unknown_subject'],
  grant: ['unknown_meter', 'unknown_subject', 'invalid_credit_amount', 'invalid_credit_expiry', 'invalid_credit_reason'],
  credits: ['unknown_meter', 'unknown_subject'],
  mine: ['no_active_organization', 'organization_not_found'],
} as const;

const SERVER_POST = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const SERVER_GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const SubjectQuery = z.object({
  subjectType: z.enum(['user', 'organization']),
  subjectId: z.string().min(1).max(100),
});

export const usageContract = c.router({
  track: {
    method: 'POST',
    path: '/api/v1/usage/events',
    summary: 'Report usage events (project server)',
    description:
      'Records up to 1,000 events at once, all or none: one invalid event refuses the batch with a 400 naming it (`events[3].value`). Each event ' +
      'counts in the window holding its timestamp, drawing on the included amount, then credits, then overage; tracked usage is never refused ' +
      '(it happened), so past a hard limit it is recorded as unbilled overage. An event id already recorded with the same subject, meter, ' +
      'value and timestamp is a duplicate and is skipped; with anything different it is refused (usage_event_conflict), never overwritten. ' +
      'An answer of 200 means every accepted event is durable. The body may be up to BULK_BODY_LIMIT (1 MB by default).',
    headers: apiKeyHeaders,
    body: z.object({ events: z.array(TrackEvent).min(1).max(1000) }),
    responses: {
      200: z.object({ accepted: z.number().int().describe('Events recorded now'), duplicates: z.number().int().describe('Events already recorded') }),
      ...errors(...SERVER_POST, ...USAGE_REFUSALS.track),
    },
    metadata: meta({ auth: 'apiKey', bulkBody: true }),
  },
  check: {
    method: 'POST',
    path: '/api/v1/usage/check',
    summary: 'Check, or check and consume, a metered feature (project server)',
    description:
      "Whether `amount` (default 1) of the feature fits the subject's limit now, with its balance. With `consume: true` it checks and records " +
      'in one atomic step: concurrent consumers of the last units never overspend, and a refused consumption records nothing. A hard limit ' +
      '(`limit: refuse`) allows at most `remaining`; billed and soft limits always allow and count the excess as overage. Send `id` to make a ' +
      'consumption safe to retry: the same id answers the first consumption again. A subject without a plan limit on the meter has an ' +
      'included amount of 0 and a hard limit, so only its credits can be used.',
    headers: apiKeyHeaders,
    body: z.object({
      subject: UsageSubjectSchema,
      feature: MeterKey.describe('The meter key'),
      amount: Units.optional().describe('Default 1; at least 1'),
      consume: z.boolean().optional().describe('Record the amount when allowed, atomically with the check (default false)'),
      id: z.string().min(1).max(255).optional().describe('With consume: the usage event id, unique in the project (default: a new one)'),
    }),
    responses: { 200: CheckResultSchema, ...errors(...SERVER_POST, ...USAGE_REFUSALS.check) },
    metadata: meta({ auth: 'apiKey' }),
  },
  release: {
    method: 'POST',
    path: '/api/v1/usage/release',
    summary: 'Give back unused units of a consumption (project server)',
    description:
      'Reserve then settle: consume an estimate, then release what was not used. Returns up to `amount` units of the consumption `id` to the ' +
      'balance (overage first, then credits, then the included amount); never more than it still holds, and a release repeated with the ' +
      'same amount after it succeeded releases again only what is left. Not for `max` meters, whose usage is a level.',
    headers: apiKeyHeaders,
    body: z.object({
      subject: UsageSubjectSchema,
      id: z.string().min(1).max(255).describe('The event id of the consumption'),
      amount: Units.describe('Units to give back, at least 1'),
    }),
    responses: {
      200: UsageFeatureSchema.extend({ released: z.number().int().describe('Units given back by this call') }),
      ...errors(...SERVER_POST, ...USAGE_REFUSALS.release),
    },
    metadata: meta({ auth: 'apiKey' }),
  },
  usage: {
    method: 'GET',
    path: '/api/v1/usage',
    summary: "A subject's usage of every metered feature (project server)",
    headers: apiKeyHeaders,
    query: SubjectQuery,
    responses: { 200: UsageSchema, ...errors(...SERVER_GET, ...USAGE_REFUSALS.usage) },
    metadata: meta({ auth: 'apiKey' }),
  },
  grantCredits: {
    method: 'POST',
    path: '/api/v1/usage/credits',
    summary: 'Grant credits to a subject (project server)',
    description:
      "Gives `amount` units of a meter, drawn after the plan's included amount and before overage, soonest expiring first. `expiresAt` " +
      '(optional) must be in the future; what is left then expires (credits.expired). Send `id` to retry safely: a grant with an id the ' +
      'project already granted answers that grant (201 again) and grants nothing more.',
    headers: apiKeyHeaders,
    body: z.object({
      id: z.string().min(1).max(255).optional().describe('Your id of the grant, unique in the project'),
      subject: UsageSubjectSchema,
      feature: MeterKey.describe('The meter key'),
      amount: Units.describe('1 to 10^12'),
      expiresAt: DateTime.nullable().optional(),
      reason: z.string().max(1000).optional().describe('At most 200 characters, shown in the console'),
    }),
    responses: { 201: CreditGrantSchema, ...errors(...SERVER_POST, ...USAGE_REFUSALS.grant) },
    metadata: meta({ auth: 'apiKey' }),
  },
  credits: {
    method: 'GET',
    path: '/api/v1/usage/credits',
    summary: "A subject's credit grants (project server)",
    description: 'Newest first, expired ones included; `feature` narrows them to one meter.',
    headers: apiKeyHeaders,
    query: SubjectQuery.extend({ feature: MeterKey.optional() }),
    responses: { 200: z.object({ grants: z.array(CreditGrantSchema) }), ...errors(...SERVER_GET, ...USAGE_REFUSALS.credits) },
    metadata: meta({ auth: 'apiKey' }),
  },
  mine: {
    method: 'GET',
    path: '/api/proxy/usage',
    summary: "The signed-in user's usage (or their active organization's)",
    description:
      'Every metered feature of the subject with its included amount, usage, credits and reset: what a usage bar shows. `for=organization` ' +
      "reads the access token's active organization (any member may).",
    headers: userTokenHeaders,
    query: z.object({ for: z.enum(['user', 'organization']).optional() }),
    responses: { 200: UsageSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.user, ...USAGE_REFUSALS.mine) },
    metadata: meta({ auth: 'user' }),
  },
});
