import { z } from 'zod';
import { c, consoleHeaders, shared } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';

/**
 * A project's billing as the console shows it: the connection (sandbox or Stripe), the catalog
 * (plans in hierarchy order with their prices), subscriptions, billing events and the sandbox's
 * clock. The same use cases as `tollgate billing ...`, `tollgate plan ...`, `tollgate price ...`
 * `tollgate subscription list` and `tollgate invoice list`. Money is an integer amount of minor units (cents for usd).
 */

export const BILLING_INTERVAL_NAMES = ['month', 'year'] as const;
/** Whom a plan is sold to: users (personal plans, the default), organizations (team plans) or both. */
export const PLAN_AUDIENCE_NAMES = ['users', 'organizations', 'both'] as const;
export const BILLING_EVENT_NAMES = [
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
  'invoice.paid',
  'payment.failed',
  'invoice.refunded',
] as const;
/** Every event type a webhook endpoint can select: the billing ones, the organization ones (docs/organizations.md) and usage (docs/usage.md). */
export const WEBHOOK_EVENT_NAMES = [
  ...BILLING_EVENT_NAMES,
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'organization.member.added',
  'organization.member.updated',
  'organization.member.removed',
  'organization.invitation.created',
  'organization.invitation.accepted',
  'organization.invitation.revoked',
  'usage.threshold',
  'credits.low',
  'credits.expired',
] as const;
export const INVOICE_STATUS_NAMES = ['open', 'paid', 'void', 'uncollectible'] as const;

const GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
const WRITE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'project_not_found'] as const;
/** What reaches the connected processor when the catalog changes (plans and prices are pushed to it). */
const PUSH = ['processor_rejected', 'processor_unavailable'] as const;
const PLAN_FIELDS = [
  'invalid_plan_name',
  'invalid_plan_description',
  'invalid_feature',
  'too_many_features',
  'invalid_trial_days',
  'trials_not_enabled',
  'invalid_plan_audience',
  'invalid_seat_policy',
  'seats_not_for_users',
  'plan_name_taken',
  'invalid_usage_limit',
  'too_many_usage_limits',
  'unknown_meter',
] as const;

/** The refusals of each route's use case (the handler answers only these). */
export const ADMIN_BILLING_REFUSALS = {
  connect: [
    'invalid_currency',
    'sandbox_unavailable',
    'invalid_secret_key',
    'invalid_publishable_key',
    'invalid_webhook_secret',
    'processor_rejected_key',
    ...PUSH,
  ],
  createPlan: [...PLAN_FIELDS, ...PUSH],
  updatePlan: [...PLAN_FIELDS, 'plan_not_found', ...PUSH],
  reorderPlans: ['plan_not_found', 'invalid_plan_order'],
  createPrice: [
    'plan_not_found',
    'invalid_price_name',
    'invalid_amount',
    'invalid_currency',
    'invalid_interval',
    'invalid_seat_pricing',
    'seats_not_for_users',
    ...PUSH,
  ],
  archivePrice: ['price_not_found', ...PUSH],
  createCreditPack: ['invalid_credit_pack', 'unknown_meter'],
  archiveCreditPack: ['credit_pack_not_found'],
  advanceSandbox: ['billing_not_connected', 'sandbox_unavailable', 'invalid_sandbox_days'],
  sandboxClock: ['sandbox_unavailable'],
  list: ['invalid_cursor'],
} as const;

/** `limit` and `cursor` of a paged list: the page after the previous one's `next_cursor`. */
const pageQuery = {
  limit: z.coerce.number().int().min(1).max(500).optional().describe('Rows per page (50 by default)'),
  cursor: z.string().max(100).optional().describe('next_cursor of the previous page'),
};
const NextCursor = z.string().nullable().describe('Pass as cursor for the next (older) page; null on the last page');

const projectParams = z.object({ projectId: z.string().max(100).describe('The project id') });
const planParams = projectParams.extend({ planId: z.string().min(1).max(100).describe('The plan id') });
const priceParams = projectParams.extend({ priceId: z.string().min(1).max(100).describe('The price id') });

export const AdminBillingConnectionSchema = z.object({
  processor: z.enum(['stripe', 'sandbox']),
  mode: z.enum(['test', 'live', 'sandbox']),
  key_last4: z.string().nullable().describe("The last 4 characters of Stripe's secret key; null for the sandbox"),
  account_id: z.string().nullable(),
  currency: z.string().describe('Lower-case ISO 4217 code: the currency prices are entered in'),
  connected_at: z.string(),
  webhook_url: z.string().nullable().describe('Where Stripe sends its webhooks (Stripe only)'),
});

export const AdminPriceSchema = z.object({
  id: z.string(),
  plan_id: z.string(),
  name: z.string(),
  amount: z.number().int().describe('Integer minor units of the currency'),
  currency: z.string(),
  interval: z.enum(BILLING_INTERVAL_NAMES),
  active: z.boolean(),
  seats: z
    .object({
      unit_amount: z.number().int().describe('Minor units per seat beyond the included ones'),
      included: z.number().int().describe('Seats the base amount covers'),
      minimum: z.number().int(),
      maximum: z.number().int().nullable().describe('null: no limit'),
    })
    .nullable()
    .describe('A per-seat price: amount + unit_amount x (seats - included); null: flat'),
});

const SeatPolicySchema = z.object({
  mode: z.enum(['automatic', 'bought']).describe("automatic: the seats follow the organization's members; bought: an admin buys them"),
  count_invitations: z.boolean().describe('Automatic mode: pending invitations hold a seat'),
  removal: z.enum(['period_end', 'immediately']).describe('A freed seat: billed until the period ends, or credited at once'),
});

/** A plan's limit on a meter (docs/usage.md). */
export const AdminUsageLimitSchema = z.object({
  meter: z.string().describe('The meter key'),
  included: z.number().int().describe('Units included per window'),
  reset: z.enum(['period', 'day', 'month']).describe('The window: each billing period, UTC day or UTC calendar month'),
  overage: z.enum(['refuse', 'bill', 'allow']).describe('Past the included amount and the credits: refuse (hard limit), bill, or allow (soft limit)'),
  price: z
    .object({
      unit_amount: z.number().int().describe('Minor units of the subscription currency per package'),
      package_size: z.number().int().describe('Units per package (1: per unit); a started package is billed whole'),
    })
    .nullable()
    .describe('With overage bill only'),
});

const UsageLimitsBody = z
  .array(
    z.object({
      meter: z.string().max(64),
      included: z.number(),
      reset: z.string().max(20).optional(),
      overage: z.string().max(20).optional(),
      price: z.object({ unit_amount: z.number(), package_size: z.number().optional() }).nullable().optional(),
    }),
  )
  .max(100)
  .describe('At most 20, one per meter; replaces the whole list');

export const AdminPlanSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  features: z.array(z.string()),
  hidden: z.boolean(),
  recommended: z.boolean(),
  trials_enabled: z.boolean(),
  default_trial_days: z.number().int().nullable(),
  audience: z.enum(PLAN_AUDIENCE_NAMES).describe('Whom the plan is sold to: users, organizations or both'),
  seat_policy: SeatPolicySchema,
  usage_limits: z.array(AdminUsageLimitSchema).describe('Metered features: how much of each meter the plan includes and what happens past it'),
  position: z.number().int().describe('Place in the hierarchy, 0 = lowest tier'),
  prices: z.array(AdminPriceSchema),
});

export const AdminCreditPackSchema = z.object({
  id: z.string(),
  feature: z.string().describe('The meter key'),
  name: z.string(),
  units: z.number().int(),
  amount: z.number().int().describe('Integer minor units'),
  currency: z.string(),
  expires_in_days: z.number().int().nullable(),
  active: z.boolean(),
  created_at: z.string(),
});

export const AdminSubscriptionSchema = z.object({
  id: z.string(),
  user_id: z.string().nullable().describe("The user's id for a personal subscription; null for an organization's"),
  organization_id: z.string().nullable().describe("The organization's id for a team subscription; null for a user's"),
  status: z.string(),
  plan: z.object({ id: z.string(), name: z.string() }),
  price: z.object({ id: z.string(), name: z.string(), amount: z.number().int(), currency: z.string(), interval: z.enum(BILLING_INTERVAL_NAMES) }),
  quantity: z.number().int().describe('Seats billed; 1 for a flat price'),
  current_period_end: z.string(),
  cancel_at_period_end: z.boolean(),
  created_at: z.string(),
});

const UserEmail = z.string().nullable().describe("The user's email; null when the user has none (or was deleted)");

const OrganizationName = z.string().nullable().describe("The organization's name; null for a user's (or a deleted organization's)");

/** A row of the project's subscriptions: the subscription and its user's email or its organization's name. */
export const AdminSubscriptionRowSchema = AdminSubscriptionSchema.extend({ user_email: UserEmail, organization_name: OrganizationName });

export const AdminInvoiceSchema = z.object({
  id: z.string(),
  user_id: z.string().nullable(),
  organization_id: z.string().nullable(),
  user_email: UserEmail,
  organization_name: OrganizationName,
  subscription_id: z.string().nullable(),
  status: z.enum(INVOICE_STATUS_NAMES),
  reason: z.string().describe('subscription_create, subscription_cycle, subscription_update or manual'),
  currency: z.string().describe('Lower-case ISO 4217 code'),
  subtotal: z.number().int().describe('Sum of the lines, in integer minor units; negative when a downgrade credits more than it charges'),
  amount_due: z.number().int().describe('What the invoice charges (after discounts and credit), in integer minor units'),
  amount_paid: z.number().int().describe('What was paid, in integer minor units'),
  amount_refunded: z.number().int().describe("What Tollgate refunded of it (a duplicate subscription's charge), in integer minor units; 0 when none"),
  period_start: z.string(),
  period_end: z.string(),
  created_at: z.string(),
  paid_at: z.string().nullable(),
});

export const AdminBillingEventSchema = z.object({
  id: z.string(),
  type: z.enum(WEBHOOK_EVENT_NAMES),
  user_id: z.string().nullable(),
  organization_id: z.string().nullable(),
  subscription_id: z.string().nullable(),
  amount: z.number().int().nullable(),
  currency: z.string().nullable(),
  created_at: z.string(),
});

export const ConnectBillingBodySchema = z.discriminatedUnion('processor', [
  z.object({ processor: z.literal('sandbox'), currency: z.string().max(10).optional() }).strict(),
  z
    .object({
      processor: z.literal('stripe'),
      secret_key: z.string().trim().min(1, 'Enter the secret key (sk_test_... or sk_live_...)').max(300),
      publishable_key: z.string().trim().min(1, 'Enter the publishable key (pk_test_... or pk_live_...)').max(300),
      webhook_secret: z.string().trim().min(1, 'Enter the webhook signing secret (whsec_...)').max(300),
      currency: z.string().max(10).optional(),
    })
    .strict(),
]);

const PlanName = z.string().trim().min(1, 'Enter a name (1 to 100 characters)').max(100, 'A name has at most 100 characters');
const Description = z.string().max(1000, 'A description has at most 1000 characters');
const Features = z.string().max(20_000).describe('Feature flags, comma-separated ("sso, audit-log")');
const TrialDays = z.number().int().min(1, 'A trial lasts 1 to 730 days').max(730, 'A trial lasts 1 to 730 days').nullable();
const Audience = z
  .enum(PLAN_AUDIENCE_NAMES, { errorMap: () => ({ message: 'Choose users, organizations or both' }) })
  .describe('Whom the plan is sold to: users (the default), organizations or both');

const SeatPolicyBody = z
  .object({
    mode: z.enum(['automatic', 'bought'], { errorMap: () => ({ message: 'Choose automatic or bought' }) }).optional(),
    count_invitations: z.boolean().optional(),
    removal: z.enum(['period_end', 'immediately'], { errorMap: () => ({ message: 'Choose period_end or immediately' }) }).optional(),
  })
  .strict()
  .describe(
    'How the seats of its per-seat prices move: automatic (default, following the members) or bought; a freed seat at period_end (default) or immediately',
  );

export const CreatePlanBodySchema = z
  .object({
    name: PlanName,
    description: Description.optional(),
    features: Features.optional(),
    hidden: z.boolean().optional(),
    recommended: z.boolean().optional(),
    trials_enabled: z.boolean().optional(),
    default_trial_days: TrialDays.optional(),
    audience: Audience.optional(),
    seat_policy: SeatPolicyBody.optional(),
    usage_limits: UsageLimitsBody.optional(),
  })
  .strict();

export const UpdatePlanBodySchema = z
  .object({
    name: PlanName.optional(),
    description: Description.optional(),
    features: Features.optional(),
    hidden: z.boolean().optional(),
    recommended: z.boolean().optional(),
    trials_enabled: z.boolean().optional(),
    default_trial_days: TrialDays.optional(),
    audience: Audience.optional(),
    seat_policy: SeatPolicyBody.optional(),
    usage_limits: UsageLimitsBody.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'Nothing to update: give at least one field');

export const ReorderPlansBodySchema = z.object({
  plans: z.array(z.string().min(1).max(100)).min(1).max(1000).describe('Every plan id of the project, lowest tier first'),
});

export const CreatePriceBodySchema = z
  .object({
    name: z.string().trim().min(1, 'Enter a name (1 to 100 characters)').max(100, 'A name has at most 100 characters'),
    amount: z
      .number({ invalid_type_error: 'Enter an amount' })
      .int('Enter an amount in integer minor units')
      .min(0, 'An amount is 0 or more')
      .describe('Integer minor units of the currency: 1000 is $10.00 in usd, ¥1,000 in jpy'),
    currency: z.string().min(3).max(3).optional().describe("Default: the connection's currency, else usd"),
    interval: z.enum(BILLING_INTERVAL_NAMES, { errorMap: () => ({ message: 'Choose month or year' }) }),
    seats: z
      .object({
        unit_amount: z
          .number({ invalid_type_error: 'Enter an amount per seat' })
          .int('Enter an amount in integer minor units')
          .min(1, 'A seat costs more than 0'),
        included: z.number().int('Enter a whole number of seats').min(0, 'Included seats: 0 or more').optional(),
        minimum: z.number().int('Enter a whole number of seats').min(1, 'At least 1 seat').optional(),
        maximum: z.number().int('Enter a whole number of seats').min(1, 'At least 1 seat').nullable().optional(),
      })
      .strict()
      .optional()
      .describe('Per seat (plans sold to organizations): the amount covers `included` seats, each further one costs unit_amount (minor units)'),
  })
  .strict();

export const AdvanceSandboxBodySchema = z.object({
  days: z.number({ invalid_type_error: 'Enter a number of days' }).min(0.001, 'Advance by more than 0 days').max(3660, 'Advance by at most 3660 days'),
});

export const adminBillingContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    get: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/billing',
      pathParams: projectParams,
      responses: { 200: z.object({ connection: AdminBillingConnectionSchema.nullable() }), ...errors(...GET) },
      summary: "The project's billing connection (null when not connected)",
    },
    connect: {
      method: 'PUT',
      path: '/api/admin/projects/:projectId/billing',
      pathParams: projectParams,
      body: ConnectBillingBodySchema,
      responses: { 200: z.object({ connection: AdminBillingConnectionSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.connect) },
      summary: "Connect billing to the sandbox or to Stripe (the keys are checked by a call to Stripe; a refusal answers Stripe's reason)",
    },
    disconnect: {
      method: 'DELETE',
      path: '/api/admin/projects/:projectId/billing',
      pathParams: projectParams,
      responses: { 200: z.object({ disconnected: z.boolean() }), ...errors(...GET) },
      summary: 'Disconnect billing: the keys are forgotten; plans, prices, subscriptions and invoices stay',
    },
    listPlans: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/plans',
      pathParams: projectParams,
      responses: { 200: z.object({ plans: z.array(AdminPlanSchema) }), ...errors(...GET) },
      summary: 'Every plan, lowest tier first, with every price (archived ones too)',
    },
    createPlan: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/plans',
      pathParams: projectParams,
      body: CreatePlanBodySchema,
      responses: { 201: z.object({ plan: AdminPlanSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.createPlan) },
      summary: 'Create a plan, as the top tier',
    },
    updatePlan: {
      method: 'PATCH',
      path: '/api/admin/projects/:projectId/plans/:planId',
      pathParams: planParams,
      body: UpdatePlanBodySchema,
      responses: { 200: z.object({ plan: AdminPlanSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.updatePlan) },
      summary: 'Change a plan: name, description, features, hidden, recommended, trials, audience',
    },
    reorderPlans: {
      method: 'PUT',
      path: '/api/admin/projects/:projectId/plans/order',
      pathParams: projectParams,
      body: ReorderPlansBodySchema,
      responses: { 200: z.object({ plans: z.array(AdminPlanSchema) }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.reorderPlans) },
      summary: 'Set the plan hierarchy: every plan once, lowest tier first',
    },
    createPrice: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/plans/:planId/prices',
      pathParams: planParams,
      body: CreatePriceBodySchema,
      responses: { 201: z.object({ price: AdminPriceSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.createPrice) },
      summary: 'Add a price to a plan',
    },
    archivePrice: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/prices/:priceId/archive',
      pathParams: priceParams,
      body: c.noBody(),
      responses: { 200: z.object({ price: AdminPriceSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.archivePrice) },
      summary: 'Archive a price: subscriptions on it keep renewing; nobody new can choose it',
    },
    listCreditPacks: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/credit-packs',
      pathParams: projectParams,
      responses: { 200: z.object({ packs: z.array(AdminCreditPackSchema) }), ...errors(...GET) },
      summary: 'The credit packs, newest first, archived ones too (docs/usage.md)',
    },
    createCreditPack: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/credit-packs',
      pathParams: projectParams,
      body: z
        .object({
          feature: z.string().max(64).describe('The meter key'),
          name: z.string().max(400),
          units: z.number(),
          amount: z.number().describe('Integer minor units'),
          currency: z.string().max(10).optional().describe("Default: the billing connection's currency, else usd"),
          expires_in_days: z.number().nullable().optional(),
        })
        .strict(),
      responses: { 201: z.object({ pack: AdminCreditPackSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.createCreditPack) },
      summary: 'Create a credit pack: units of a meter sold for a one-off amount',
    },
    archiveCreditPack: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/credit-packs/:packId/archive',
      pathParams: projectParams.extend({ packId: z.string().min(1).max(100) }),
      body: c.noBody(),
      responses: { 200: z.object({ pack: AdminCreditPackSchema }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.archiveCreditPack) },
      summary: 'Stop selling a credit pack (checkouts already open still grant when paid)',
    },
    listSubscriptions: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/subscriptions',
      pathParams: projectParams,
      query: z.object({
        status: z.string().max(40).optional(),
        ...pageQuery,
      }),
      responses: {
        200: z.object({ subscriptions: z.array(AdminSubscriptionRowSchema), next_cursor: NextCursor }),
        ...errors(...GET, ...ADMIN_BILLING_REFUSALS.list),
      },
      summary: "The project's subscriptions, newest first, a page at a time (50 by default)",
    },
    listInvoices: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/billing/invoices',
      pathParams: projectParams,
      query: z.object({
        user: z.string().max(100).optional().describe("Only this end user's invoices (a user id)"),
        status: z.enum(INVOICE_STATUS_NAMES).optional(),
        ...pageQuery,
      }),
      responses: { 200: z.object({ invoices: z.array(AdminInvoiceSchema), next_cursor: NextCursor }), ...errors(...GET, ...ADMIN_BILLING_REFUSALS.list) },
      summary: "The project's invoices of every user, newest first, a page at a time (50 by default)",
    },
    listEvents: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/billing/events',
      pathParams: projectParams,
      query: z.object({
        type: z.enum(WEBHOOK_EVENT_NAMES).optional(),
        limit: z.coerce.number().int().min(1).max(500).optional(),
      }),
      responses: { 200: z.object({ events: z.array(AdminBillingEventSchema) }), ...errors(...GET) },
      summary: "The project's billing events, newest first (50 by default)",
    },
    sandboxClock: {
      method: 'GET',
      path: '/api/admin/projects/:projectId/billing/sandbox/clock',
      pathParams: projectParams,
      responses: {
        200: z.object({
          now: z.string().describe("The project's sandbox time: the time its invoices, renewals and trial ends are dated by"),
          real_now: z.string().describe('The real time it was read at'),
          ahead_seconds: z.number().int().describe('How far the sandbox is ahead of real time, in seconds (0 until its clock is moved)'),
        }),
        ...errors(...GET, ...ADMIN_BILLING_REFUSALS.sandboxClock),
      },
      summary: "The sandbox's clock: its time, and how far ahead of real time it is",
    },
    advanceSandbox: {
      method: 'POST',
      path: '/api/admin/projects/:projectId/billing/sandbox/advance',
      pathParams: projectParams,
      body: AdvanceSandboxBodySchema,
      responses: { 200: z.object({ now: z.string(), changed: z.number().int() }), ...errors(...WRITE, ...ADMIN_BILLING_REFUSALS.advanceSandbox) },
      summary: "Move the sandbox's clock forward and apply what falls due (renewals, trial ends, cancellations)",
    },
  }),
);
