import { z } from 'zod';
import { apiKeyHeaders, c, idempotentUserHeaders, meta, shared, userOrApiKeyHeaders, userTokenHeaders } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from './errors';
import { UsageFeatureSchema } from './usage.contract';

/**
 * Billing: the catalog (plans = products, with prices), checkout, subscribing with a card, the
 * subscription and its changes, invoices, entitlements, and the payment processor's inbound
 * webhooks. JSON bodies are camelCase (except `new_price_id` and `at_period_end`, named so by the
 * spec and kept for symmetry), money is an integer amount of minor units (cents for usd) with its
 * lower-case ISO 4217 currency, and every date is an ISO 8601 string in UTC.
 */

// ---------------------------------------------------------------------------------------------
// Refusals: what each route can answer, beyond the edge (request shape, credential). A handler
// answers its use case's refusal with failureResponse, whose type carries the use case's codes
// (apps/server/http/billing.routes.ts): each must be in its route's list, or the server does not
// compile.
// ---------------------------------------------------------------------------------------------

/** `Idempotency-Key` on the POST routes of a signed-in user. */
export const IDEMPOTENCY_ERRORS = ['invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_key_in_progress'] as const;
/** Whatever reaches the payment processor: no connection, the sandbox switched off, a refusal, an outage. */
const PROCESSOR = ['billing_not_connected', 'sandbox_unavailable', 'processor_rejected', 'processor_unavailable'] as const;
/** A charge or a card the processor refused. */
const CARD = ['card_declined', 'invalid_payment_method'] as const;
/** No live subscription, or another change of the user's subscription running. */
const SUBSCRIPTION = ['subscription_not_found', 'subscription_busy'] as const;
/** A price that can be subscribed to (by this kind of customer: the plan's audience). */
const PRICE = ['price_not_found', 'price_inactive', 'plan_audience_mismatch'] as const;
/** `?for=organization`: the token's active organization, of which the caller is a member... */
const FOR_READ = ['no_active_organization', 'organization_not_found'] as const;
/** ...and for a change, a member whose role holds org:billing:manage. */
const FOR_WRITE = [...FOR_READ, 'missing_permission'] as const;
/** The domain's rules for moving to another price. */
const CHANGE = ['subscription_paused', 'subscription_past_due', 'cancellation_scheduled', 'same_price', 'currency_mismatch'] as const;

/** A quantity of seats the price sells, and one the plan lets the caller choose (bought seats). */
const QUANTITY = [
  'invalid_quantity',
  'quantity_below_minimum',
  'quantity_above_maximum',
  'quantity_below_seats_in_use',
  'seats_managed_automatically',
] as const;
/** Buying seats: a per-seat subscription that can change (not paused, not past due), to another quantity. */
const SEATS = [...QUANTITY, 'not_per_seat', 'same_quantity', 'subscription_paused', 'subscription_past_due'] as const;

/** The refusals of each billing route's use case (its handler answers only these). */
export const BILLING_REFUSALS = {
  plans: [],
  products: [],
  checkout: [
    ...FOR_WRITE,
    ...PRICE,
    ...PROCESSOR,
    'invalid_redirect_url',
    'redirect_url_not_allowed',
    'promotion_code_not_found',
    'trials_not_enabled',
    'invalid_trial_days',
    'trial_not_eligible',
    'subscription_exists',
    ...QUANTITY,
  ],
  setupIntent: [...FOR_WRITE, ...PROCESSOR],
  subscribe: [...FOR_WRITE, ...PRICE, ...PROCESSOR, ...CARD, ...QUANTITY, 'subscription_exists', 'subscription_busy'],
  seatsPreview: [...FOR_READ, ...PROCESSOR, ...SEATS, 'subscription_not_found'],
  seats: [...FOR_WRITE, ...PROCESSOR, ...CARD, ...SEATS, ...SUBSCRIPTION],
  subscription: [...FOR_READ],
  invoices: [...FOR_READ],
  entitlements: [...FOR_READ],
  changePreview: [...FOR_READ, ...PRICE, ...PROCESSOR, ...CHANGE, 'subscription_not_found'],
  change: [...FOR_WRITE, ...PRICE, ...PROCESSOR, ...CARD, ...CHANGE, ...SUBSCRIPTION],
  cancel: [...FOR_WRITE, ...SUBSCRIPTION, ...PROCESSOR, 'cancellation_scheduled', 'subscription_paused'],
  pause: [...FOR_WRITE, ...SUBSCRIPTION, ...PROCESSOR, 'subscription_paused', 'subscription_past_due', 'subscription_trialing', 'cancellation_scheduled'],
  resume: [...FOR_WRITE, ...SUBSCRIPTION, ...PROCESSOR, ...CARD, 'subscription_not_resumable'],
  stripeWebhook: ['invalid_webhook_signature', 'webhook_project_unknown', 'processor_rejected', 'processor_unavailable'],
  organizationRead: ['organization_not_found'],
  organizationCancel: ['organization_not_found', ...SUBSCRIPTION, ...PROCESSOR, 'cancellation_scheduled', 'subscription_paused'],
  organizationSeats: ['organization_not_found', ...PROCESSOR, ...CARD, ...SEATS, ...SUBSCRIPTION],
  creditPacks: [],
  buyCreditPack: [...FOR_WRITE, ...PROCESSOR, 'credit_pack_not_found', 'invalid_redirect_url', 'redirect_url_not_allowed'],
} as const;

/** What a user-scoped route answers before its handler runs. */
const USER_GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.user] as const;
const USER_POST = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.user, ...IDEMPOTENCY_ERRORS] as const;
const CATALOG = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.userOrApiKey] as const;
/** What a project server's route answers before its handler runs. */
const SERVER_GET = [...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const SERVER_POST = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;
const OrgPath = z.object({ orgId: z.string().min(1).max(255).describe('The organization id or slug') });

// ---------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------

const DateTime = z.string().datetime().describe('ISO 8601, UTC');
const Amount = z.number().int().describe('Integer minor units of the currency (cents for usd)');
const Currency = z.string().describe('Lower-case ISO 4217 code, e.g. usd');
const Interval = z.enum(['month', 'year']);

export const PriceSchema = z.object({
  id: z.string().describe('The price id to subscribe with (priceId, new_price_id)'),
  planId: z.string(),
  name: z.string(),
  amount: Amount,
  currency: Currency,
  interval: Interval,
  active: z.boolean().describe('Archived prices (false) cannot be subscribed to; lists show active prices only'),
  seats: z
    .object({
      unitAmount: Amount.describe('Charged per seat beyond the included ones, per interval'),
      included: z.number().int().describe('Seats the base `amount` covers (0: none)'),
      minimum: z.number().int().describe('The fewest seats sold'),
      maximum: z.number().int().nullable().describe('The most seats sold; null: no limit'),
    })
    .nullable()
    .describe('A per-seat price (organizations): amount + unitAmount x (seats - included); null: a flat price'),
});

export const SeatPolicySchema = z.object({
  mode: z.enum(['automatic', 'bought']).describe("automatic: the seats follow the organization's members; bought: an admin buys them"),
  countInvitations: z.boolean().describe('Automatic mode: pending invitations hold a seat too'),
  removal: z.enum(['period_end', 'immediately']).describe('A freed seat: paid until the period ends (default), or credited at once'),
});

export const PlanSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  features: z.array(z.string()).describe('Feature flags the plan grants (GET billing/entitlements lists them)'),
  hidden: z.boolean().describe('Hidden plans are not in GET billing/plans, but keep their place in the hierarchy'),
  recommended: z.boolean(),
  trialsEnabled: z.boolean().describe('checkout accepts trialDays only when true'),
  defaultTrialDays: z.number().int().nullable().describe('The trial a checkout without trialDays gets (null: none)'),
  audience: z
    .enum(['users', 'organizations', 'both'])
    .describe('Whom the plan is sold to: users (personal plans), organizations (team plans, with ?for=organization) or both'),
  position: z.number().int().describe('Place in the plan hierarchy, ascending tiers: 0 is the lowest'),
  seatPolicy: SeatPolicySchema.describe('How the seats of its per-seat prices move'),
  usageLimits: z
    .array(
      z.object({
        meter: z.string().describe('The meter key (the feature of usage checks)'),
        included: z.number().int().describe('Units included per window'),
        reset: z.enum(['period', 'day', 'month']).describe('The window: each billing period, UTC day or UTC calendar month'),
        overage: z.enum(['refuse', 'bill', 'allow']).describe('Past the included amount and the credits: refused, billed, or allowed'),
        price: z
          .object({ unitAmount: Amount.describe('Per started package'), packageSize: z.number().int().describe('Units per package (1: per unit)') })
          .nullable()
          .describe('The overage price, in the currency of the subscription (overage bill only)'),
      }),
    )
    .describe('Metered features (docs/usage.md)'),
  prices: z.array(PriceSchema).describe('Active prices'),
});

export const SUBSCRIPTION_STATES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'paused',
  'pending_cancellation',
  'canceled',
] as const;
export const ENTITLED_STATES = ['active', 'trialing', 'past_due', 'pending_cancellation'] as const;

const PaymentMethodSchema = z.object({
  brand: z.string().describe('visa, mastercard, amex, ...'),
  last4: z.string(),
  expMonth: z.number().int(),
  expYear: z.number().int(),
});

export const SubscriptionSchema = z.object({
  id: z.string(),
  status: z.enum(SUBSCRIPTION_STATES).describe('See the statuses in the description of GET billing/subscription'),
  plan: z.object({ id: z.string(), name: z.string() }),
  price: z.object({ id: z.string(), name: z.string(), amount: Amount, currency: Currency, interval: Interval }),
  quantity: z.number().int().describe('Seats billed (a per-seat price); 1 for a flat price'),
  currentPeriodStart: DateTime,
  currentPeriodEnd: DateTime,
  cancelAtPeriodEnd: z.boolean().describe('True while pending cancellation: it ends at currentPeriodEnd'),
  canceledAt: DateTime.nullable(),
  endedAt: DateTime.nullable(),
  trialStart: DateTime.nullable(),
  trialEnd: DateTime.nullable(),
  pausedAt: DateTime.nullable(),
  nextInvoice: z
    .object({ amount: Amount, currency: Currency, date: DateTime })
    .nullable()
    .describe('The next charge; null when none will come (canceled, pending cancellation, paused)'),
  paymentMethod: PaymentMethodSchema.nullable().describe('The card renewals are charged to'),
  createdAt: DateTime,
});

const InvoiceLineSchema = z.object({
  description: z.string(),
  amount: Amount.describe('Negative for a proration credit'),
  proration: z.boolean(),
  priceId: z.string().nullable(),
  quantity: z.number().int().nullable().describe('The seats of a per-seat line; null for a flat price'),
  periodStart: DateTime,
  periodEnd: DateTime,
});

export const InvoiceSchema = z.object({
  id: z.string(),
  subscriptionId: z.string().nullable(),
  status: z.enum(['open', 'paid', 'void', 'uncollectible']),
  reason: z.string().describe('subscription_create, subscription_cycle, subscription_update, ...'),
  currency: Currency,
  subtotal: Amount,
  amountDue: Amount,
  amountPaid: Amount,
  amountRefunded: Amount.describe("What Tollgate refunded of the payment (a duplicate subscription's charge); 0 when none"),
  lines: z.array(InvoiceLineSchema),
  periodStart: DateTime,
  periodEnd: DateTime,
  hostedUrl: z.string().nullable(),
  createdAt: DateTime,
  paidAt: DateTime.nullable(),
});

export const EntitlementsSchema = z.object({
  plan: z.string().describe('Plan name'),
  status: z.enum(ENTITLED_STATES),
  features: z.array(z.string()),
  seats: z
    .object({
      used: z.number().int().describe('Members (and pending invitations when the plan counts them)'),
      total: z.number().int().describe('Seats billed'),
    })
    .nullable()
    .optional()
    .describe("An organization's seats on a per-seat price; null otherwise"),
  usage: z
    .array(UsageFeatureSchema)
    .optional()
    .describe('Each metered feature of the plan (and meters with credits): included, used, remaining, resetsAt (docs/usage.md); absent when none'),
});

export const CreditPackSchema = z.object({
  id: z.string(),
  feature: z.string().describe('The meter key whose credits it grants'),
  name: z.string(),
  units: z.number().int().describe('Credits granted'),
  amount: Amount.describe('Paid once'),
  currency: Currency,
  expiresInDays: z.number().int().nullable().describe('The credits expire this many days after the purchase; null: never'),
  active: z.boolean(),
  createdAt: DateTime,
});

export const ChangePreviewSchema = z.object({
  amountDue: Amount.describe('Charged now if the change is confirmed; 0 for a downgrade (credited to the next invoices) or during a trial'),
  currency: Currency,
  subtotal: Amount,
  lines: z.array(InvoiceLineSchema).describe('The proration: credit for the unused time on the old price, charge for the rest of the period on the new one'),
  periodStart: DateTime,
  periodEnd: DateTime,
});

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

const PriceId = z.string().min(1).max(255).describe('A price id from GET billing/plans');

/** Whom a user billing route acts for: the signed-in user (the default), or the access token's active organization. */
export const BillingFor = z
  .enum(['user', 'organization'])
  .optional()
  .describe(
    '`organization`: act for the active organization of the access token (POST organizations/active) instead of the user. Reads need ' +
      'membership; subscribing, changing, canceling, pausing and resuming need a role with org:billing:manage. Default: the user.',
  );
const ForQuery = z.object({ for: BillingFor });
const NewPriceBody = z.object({ new_price_id: PriceId });
const Quantity = z.number().describe("Seats: a whole number within the price's minimum and maximum");
const QuantityBody = z.object({ quantity: Quantity });

const STATUSES =
  'Statuses: `trialing` (in a trial, nothing charged yet; the card is charged when it ends), `active` (paid up), ' +
  '`past_due` (a renewal failed; retried for 14 days, then canceled), `paused` (no service and no charges until resumed), ' +
  '`pending_cancellation` (canceled at period end: stays usable until `currentPeriodEnd`, then `canceled`), `canceled` (over), ' +
  '`incomplete` (the first payment failed; not live, the user may try another card) and `incomplete_expired`. ' +
  'Entitled (GET billing/entitlements answers the plan): active, trialing, past_due during its 14-day grace, and pending_cancellation until the ' +
  'period ends; never paused, incomplete or canceled.';

const IDEMPOTENCY_DOC =
  ' Send an `Idempotency-Key` header to retry safely: the same key and body within 24 hours answer the first answer again (with ' +
  '`Idempotent-Replayed: true`), the same key with another body 422 `idempotency_key_reused`, and while the first request runs 409 ' +
  '`idempotency_key_in_progress`. Answers of 5xx are not kept, so a retry after an outage runs again.';

/** The routes share the headers and metadata of a signed-in user's idempotent routes; the catalog, the reads and Stripe's webhooks name their own. */
export const billingContract = c.router(
  shared({ auth: 'user', idempotent: true }, idempotentUserHeaders, {
    plans: {
      method: 'GET',
      path: '/api/proxy/billing/plans',
      query: z.object({
        for: z
          .enum(['user', 'organization'])
          .optional()
          .describe('`organization`: the plans sold to organizations (audience organizations or both). Default: to users'),
      }),
      summary: 'List the plans',
      description:
        "The project's visible plans (hidden plans omitted) in hierarchy order, lowest tier first, each with its active prices. Takes an end " +
        "user's access token or the project API key.",
      headers: userOrApiKeyHeaders,
      responses: { 200: z.object({ plans: z.array(PlanSchema) }), ...errors(...CATALOG) },
      metadata: meta({ auth: 'userOrApiKey' }),
    },
    products: {
      method: 'GET',
      path: '/api/proxy/billing/products',
      summary: 'List the products with their prices',
      description:
        'Every plan (= product) of the project, hidden ones included (a project may sell them by link), in hierarchy order with its active prices. ' +
        "Takes an end user's access token or the project API key.",
      headers: userOrApiKeyHeaders,
      responses: { 200: z.object({ products: z.array(PlanSchema) }), ...errors(...CATALOG) },
      metadata: meta({ auth: 'userOrApiKey' }),
    },
    checkout: {
      method: 'POST',
      path: '/api/proxy/billing/checkout',
      query: ForQuery,
      summary: 'Start a checkout',
      description:
        'Answers a hosted checkout page for the price: send the browser to `url`. With Stripe, a Checkout Session (mode subscription), recorded ' +
        "when Stripe reports it completed; with the sandbox, Tollgate's own page at /sandbox/checkout/{id}, where a test card is entered. " +
        "The browser returns to successUrl after paying, or to cancelUrl; both must be one of the project's registered callback URLs or on the " +
        'origin of one (400 `redirect_url_not_allowed`). ' +
        'trialDays (1 to 730) only when the plan has trials enabled (400 `trials_not_enabled`), and once per user; an unknown promotionCode ' +
        'answers 400. A user who already has a live subscription answers 409 `subscription_exists` (change it instead).' +
        IDEMPOTENCY_DOC,
      body: z.object({
        priceId: PriceId,
        successUrl: z.string().describe('Absolute http(s) URL: a registered callback URL or on its origin'),
        cancelUrl: z.string().describe('Absolute http(s) URL: a registered callback URL or on its origin'),
        promotionCode: z.string().max(255).optional().describe('A promotion code the customer entered'),
        trialDays: z.number().optional().describe('Whole days of trial, 1 to 730, when the plan has trials enabled'),
        quantity: Quantity.optional().describe(
          'A per-seat price on a plan whose seats are bought: the seats to buy (default: the seats in use, at least the minimum). ' +
            'Automatic seats follow the members.',
        ),
      }),
      responses: {
        200: z.object({ id: z.string().describe('The checkout session id'), url: z.string().describe('Send the browser there') }),
        ...errors(...USER_POST, ...BILLING_REFUSALS.checkout),
      },
    },
    setupIntent: {
      method: 'POST',
      path: '/api/proxy/billing/setup-intent',
      query: ForQuery,
      summary: 'Start collecting a card',
      description:
        'A setup intent for collecting a card with Stripe Elements (`stripe.confirmCardSetup(clientSecret)` with `publishableKey`); the confirmed ' +
        'payment method id then goes to POST billing/subscribe. With the sandbox, a sandbox secret: subscribe with a Stripe test payment method id ' +
        '(pm_card_visa) instead.' +
        IDEMPOTENCY_DOC,
      body: c.noBody(),
      responses: {
        200: z.object({ clientSecret: z.string(), publishableKey: z.string() }),
        ...errors(...USER_POST, ...BILLING_REFUSALS.setupIntent),
      },
    },
    subscribe: {
      method: 'POST',
      path: '/api/proxy/billing/subscribe',
      query: ForQuery,
      summary: 'Subscribe with a card',
      description:
        'Attaches the payment method to the user, makes it the default for renewals, creates the subscription and charges the first invoice (or ' +
        'starts the trial the plan offers by default): 201 with the subscription, `active` or `trialing`; event subscription.created (and ' +
        'invoice.paid). ' +
        'A declined card answers 402 `card_declined` with the reason, records payment.failed and leaves no live subscription. Stripe test payment ' +
        'methods work the same on the sandbox: pm_card_visa succeeds, pm_card_chargeDeclined is declined, pm_card_chargeCustomerFail attaches but ' +
        'every charge fails. ' +
        'One live subscription per user: a second answers 409 `subscription_exists` (a request that arrives while another one for the user runs ' +
        'waits for it, up to 5 s; then 409 `subscription_busy`).' +
        IDEMPOTENCY_DOC,
      body: z.object({
        priceId: PriceId,
        paymentMethodId: z.string().min(1).max(255).describe('A confirmed payment method (pm_...), e.g. from a setup intent'),
        quantity: Quantity.optional().describe(
          'A per-seat price on a plan whose seats are bought: the seats to buy (default: the seats in use, at least the minimum). ' +
            'Automatic seats follow the members.',
        ),
      }),
      responses: { 201: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.subscribe) },
    },
    subscription: {
      method: 'GET',
      path: '/api/proxy/billing/subscription',
      query: ForQuery,
      summary: 'The current subscription',
      description: `The user's live subscription (trialing, active, past_due or paused, pending cancellation included), or null. ${STATUSES}`,
      headers: userTokenHeaders,
      responses: { 200: SubscriptionSchema.nullable(), ...errors(...USER_GET, ...BILLING_REFUSALS.subscription) },
      metadata: meta({ auth: 'user' }),
    },
    invoices: {
      method: 'GET',
      path: '/api/proxy/billing/invoices',
      summary: 'Recent invoices',
      description:
        "The user's invoices, newest first: one for the first charge, a prorated one on a plan change, one per renewal. `limit` 1 to 100, 10 by default.",
      headers: userTokenHeaders,
      query: z.object({
        limit: z.coerce.number().int().min(1).max(100).optional().describe('1 to 100, default 10'),
        for: BillingFor,
      }),
      responses: { 200: z.object({ invoices: z.array(InvoiceSchema) }), ...errors(...USER_GET, ...BILLING_REFUSALS.invoices) },
      metadata: meta({ auth: 'user' }),
    },
    entitlements: {
      method: 'GET',
      path: '/api/proxy/billing/entitlements',
      query: ForQuery,
      summary: "The user's entitlements",
      description:
        '{plan, status, features} of the entitled subscription, or null when there is none. Read on every call, never cached: a server-side check ' +
        'calls it each time. ' +
        'Entitled statuses: active, trialing, past_due (during its 14-day grace period) and pending_cancellation (until the paid period ends). ' +
        'Paused, incomplete and canceled subscriptions entitle nothing. ' +
        'A plan check passes for the named plan and every plan above it in the hierarchy (GET billing/products, by position); a feature check ' +
        'passes when `features` contains the flag.',
      headers: userTokenHeaders,
      responses: { 200: EntitlementsSchema.nullable(), ...errors(...USER_GET, ...BILLING_REFUSALS.entitlements) },
      metadata: meta({ auth: 'user' }),
    },
    changePreview: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/change/preview',
      query: ForQuery,
      summary: 'Preview a plan change',
      description:
        'What POST billing/subscription/change with this price would charge now: the prorated difference for the rest of the current period (0 for ' +
        'a downgrade, whose credit goes to the next invoices, and during a trial). Changes nothing.' +
        IDEMPOTENCY_DOC,
      body: NewPriceBody,
      responses: { 200: ChangePreviewSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.changePreview) },
    },
    change: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/change',
      query: ForQuery,
      summary: 'Change the plan (with proration)',
      description:
        'Moves the same subscription to the new price (another plan, or another interval of the same plan) in the same currency. An upgrade is ' +
        'charged now: a prorated invoice for the difference over the rest of the period; a downgrade is credited to the next invoices. Event ' +
        'subscription.updated (and invoice.paid). ' +
        'Allowed while active or trialing; a paused, past-due or pending-cancellation subscription answers 409 (resume or pay first). A declined ' +
        'charge answers 402 and changes nothing.' +
        IDEMPOTENCY_DOC,
      body: NewPriceBody,
      responses: { 200: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.change) },
    },
    cancel: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/cancel',
      query: ForQuery,
      summary: 'Cancel the subscription',
      description:
        '`at_period_end` true (the default): pending cancellation, still usable and not charged again; it becomes canceled at currentPeriodEnd ' +
        '(subscription.updated now, subscription.canceled then), and POST billing/subscription/resume undoes it until then. ' +
        'false: canceled now, nothing refunded (subscription.canceled). A paused subscription can only be canceled now.' +
        IDEMPOTENCY_DOC,
      body: z.object({ at_period_end: z.boolean().optional().describe('Default true') }),
      responses: { 200: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.cancel) },
    },
    pause: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/pause',
      query: ForQuery,
      summary: 'Pause the subscription',
      description:
        'An active subscription becomes paused: no entitlements and no charges until resumed; billing dates keep running (periods that end while ' +
        'paused are not charged). Event subscription.updated.' +
        IDEMPOTENCY_DOC,
      body: c.noBody(),
      responses: { 200: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.pause) },
    },
    resume: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/resume',
      query: ForQuery,
      summary: 'Resume the subscription',
      description:
        'From paused (active again, entitled at once; the next charge at the current period end) or from pending cancellation (the cancellation is ' +
        'withdrawn). Event subscription.updated. Any other status answers 409 `subscription_not_resumable`. ' +
        'When a period began while paused, the resume charges it; a declined card answers 402 `card_declined` and the subscription stays paused.' +
        IDEMPOTENCY_DOC,
      body: c.noBody(),
      responses: { 200: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.resume) },
    },
    seatsPreview: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/seats/preview',
      query: ForQuery,
      summary: 'Preview buying or releasing seats',
      description:
        'With ?for=organization: what POST billing/subscription/seats with this quantity would charge now (added seats, prorated for the rest of ' +
        'the period) or credit (seats released at once on a plan that credits them). Changes nothing.' +
        IDEMPOTENCY_DOC,
      body: QuantityBody,
      responses: { 200: ChangePreviewSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.seatsPreview) },
    },
    seats: {
      method: 'POST',
      path: '/api/proxy/billing/subscription/seats',
      query: ForQuery,
      summary: 'Buy or release seats',
      description:
        "With ?for=organization, a member with org:billing:manage sets the seats of the organization's per-seat subscription on a plan whose seats " +
        'are bought: more seats are charged now, prorated (402 `card_declined` changes nothing); fewer are released as the plan says (at the period ' +
        'end, or at once with a credit), never below the seats in use (400 `quantity_below_seats_in_use`). A plan whose seats follow its members ' +
        'answers 409 `seats_managed_automatically`. Event subscription.updated with the new quantity.' +
        IDEMPOTENCY_DOC,
      body: QuantityBody,
      responses: { 200: SubscriptionSchema, ...errors(...USER_POST, ...BILLING_REFUSALS.seats) },
    },
    organizationSeats: {
      method: 'POST',
      path: '/api/v1/organizations/:orgId/billing/subscription/seats',
      summary: "Set an organization's bought seats (project server)",
      description: 'As POST billing/subscription/seats?for=organization for a member with org:billing:manage.',
      pathParams: OrgPath,
      headers: apiKeyHeaders,
      body: QuantityBody,
      responses: { 200: SubscriptionSchema, ...errors(...SERVER_POST, ...BILLING_REFUSALS.organizationSeats) },
      metadata: meta({ auth: 'apiKey' }),
    },
    organizationSubscription: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId/billing/subscription',
      summary: "An organization's subscription (project server)",
      description:
        "The organization's live subscription, or null, as GET billing/subscription?for=organization answers a member. The project API key " +
        'may read any organization of the project, named by id or slug.',
      pathParams: OrgPath,
      headers: apiKeyHeaders,
      responses: { 200: SubscriptionSchema.nullable(), ...errors(...SERVER_GET, ...BILLING_REFUSALS.organizationRead) },
      metadata: meta({ auth: 'apiKey' }),
    },
    organizationEntitlements: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId/billing/entitlements',
      summary: "An organization's entitlements (project server)",
      description:
        "{plan, status, features} of the organization's entitled subscription, or null: what every member of it is entitled to. Read on every " +
        'call, never cached.',
      pathParams: OrgPath,
      headers: apiKeyHeaders,
      responses: { 200: EntitlementsSchema.nullable(), ...errors(...SERVER_GET, ...BILLING_REFUSALS.organizationRead) },
      metadata: meta({ auth: 'apiKey' }),
    },
    organizationInvoices: {
      method: 'GET',
      path: '/api/v1/organizations/:orgId/billing/invoices',
      summary: "An organization's invoices (project server)",
      description: "The organization's invoices, newest first. `limit` 1 to 100, 10 by default.",
      pathParams: OrgPath,
      headers: apiKeyHeaders,
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).optional().describe('1 to 100, default 10') }),
      responses: { 200: z.object({ invoices: z.array(InvoiceSchema) }), ...errors(...SERVER_GET, ...BILLING_REFUSALS.organizationRead) },
      metadata: meta({ auth: 'apiKey' }),
    },
    organizationCancel: {
      method: 'POST',
      path: '/api/v1/organizations/:orgId/billing/subscription/cancel',
      summary: "Cancel an organization's subscription (project server)",
      description:
        'As POST billing/subscription/cancel for a member with org:billing:manage: `at_period_end` true (the default) ends it at the period end, ' +
        'false now without a refund.',
      pathParams: OrgPath,
      headers: apiKeyHeaders,
      body: z.object({ at_period_end: z.boolean().optional().describe('Default true') }),
      responses: { 200: SubscriptionSchema, ...errors(...SERVER_POST, ...BILLING_REFUSALS.organizationCancel) },
      metadata: meta({ auth: 'apiKey' }),
    },
    creditPacks: {
      method: 'GET',
      path: '/api/proxy/billing/credit-packs',
      summary: 'List the credit packs for sale',
      description: "The project's active credit packs (docs/usage.md): credits of a meter sold for a one-off amount, newest first.",
      headers: userTokenHeaders,
      responses: { 200: z.object({ packs: z.array(CreditPackSchema) }), ...errors(...USER_GET, ...BILLING_REFUSALS.creditPacks) },
      metadata: meta({ auth: 'user' }),
    },
    buyCreditPack: {
      method: 'POST',
      path: '/api/proxy/billing/credit-packs/:packId/checkout',
      pathParams: z.object({ packId: z.string().min(1).max(100) }),
      query: ForQuery,
      summary: 'Buy a credit pack',
      description:
        'Answers a hosted checkout page for a one-off payment of the pack (Stripe: a Checkout Session in payment mode; the sandbox: its own ' +
        "page): send the browser to `url`. Once paid, the pack's credits are granted to the user, or with `for=organization` to the active " +
        'organization (org:billing:manage), once. successUrl and cancelUrl as for checkout.' +
        IDEMPOTENCY_DOC,
      body: z.object({
        successUrl: z.string().describe('Absolute http(s) URL: a registered callback URL or on its origin'),
        cancelUrl: z.string().describe('Absolute http(s) URL: a registered callback URL or on its origin'),
      }),
      responses: {
        200: z.object({ id: z.string().describe('The checkout session id'), url: z.string().describe('Send the browser there') }),
        ...errors(...USER_POST, ...BILLING_REFUSALS.buyCreditPack),
      },
    },
    stripeWebhook: {
      method: 'POST',
      path: '/api/webhooks/stripe',
      summary: "Receive Stripe's events",
      description:
        "Stripe's webhook endpoint. The project is read from the event (the metadata Tollgate puts on what it creates, or the customer), then the " +
        "Stripe-Signature header is checked with that project's webhook signing secret (5-minute tolerance) before anything is trusted; each event " +
        'id is applied once. ' +
        'Unknown event types and duplicates answer 200 and change nothing; a bad signature, or an event of no project connected to Stripe, answers ' +
        '400; when Stripe refuses or cannot be reached while the object is re-read, the event is not marked applied and the answer (400, 502) ' +
        'makes Stripe retry. ' +
        'Prefer the per-project URL /api/webhooks/stripe/{projectId}.',
      headers: z.object({ 'stripe-signature': z.string().optional().describe('t=<unix seconds>,v1=<hex HMAC-SHA256>') }),
      body: z.object({}).passthrough().describe('A Stripe event, byte for byte as Stripe signed it'),
      responses: { 200: z.object({ received: z.literal(true) }), ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.none, ...BILLING_REFUSALS.stripeWebhook) },
      metadata: meta({ auth: 'none', rawBody: true }),
    },
    stripeWebhookForProject: {
      method: 'POST',
      path: '/api/webhooks/stripe/:projectId',
      summary: "Receive Stripe's events for one project",
      description:
        'The webhook URL to register in the Stripe dashboard (`tollgate billing status` shows it): the same as POST /api/webhooks/stripe, with the ' +
        "project named by the path. The signature is checked with that project's webhook signing secret.",
      pathParams: z.object({ projectId: z.string().uuid().describe('The project id') }),
      headers: z.object({ 'stripe-signature': z.string().optional().describe('t=<unix seconds>,v1=<hex HMAC-SHA256>') }),
      body: z.object({}).passthrough().describe('A Stripe event, byte for byte as Stripe signed it'),
      responses: { 200: z.object({ received: z.literal(true) }), ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.none, ...BILLING_REFUSALS.stripeWebhook) },
      metadata: meta({ auth: 'none', rawBody: true }),
    },
  }),
  { strictStatusCodes: true },
);
