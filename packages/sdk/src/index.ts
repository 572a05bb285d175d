/**
 * @tollgate/sdk: what a project's server needs of Tollgate.
 *
 *   import { createTollgate } from '@tollgate/sdk';
 *   const tollgate = createTollgate({ baseUrl: 'http://localhost:4000', apiKey: process.env.TOLLGATE_API_KEY! });
 *   const user = await tollgate.verifyToken(token);            // the user, or null
 *   if (await tollgate.has(token, { plan: 'pro' })) { ... }    // GET billing/entitlements, every time
 *   const auth = await tollgate.verify(token);                 // user, active organization, has({ role, permission })
 *   const ctx = await tollgate.verify(token, { include: ['entitlements'] }); // and the context's entitlements: ctx.has({ plan, permission })
 *   await tollgate.organizationBilling.subscription('acme');   // an organization's billing, with the API key
 *   await tollgate.organizationBilling.setSeats('acme', 5);    // its bought seats
 *   const { allowed } = await tollgate.usage.consume({ subject: { type: 'user', id }, feature: 'api_calls' }); // metered, atomic
 *   const event = await tollgate.verifyWebhook({ payload: rawBody, headers, secret });
 */
import { createClient, type TollgateClient } from '../../../contract';
import { verifyWebhook as verifyWebhookSignature, type WebhookEvent } from '../../../contract/webhook-signature';
import { satisfies, type EntitlementCheck, type Entitlements, type RankedPlan } from './entitlements';
import { errorOf, isTollgateError, TollgateError, unwrap } from './errors';
import { bearerOf, jsonResponse, sendJson, type NextFunction, type NodeRequestLike, type NodeResponseLike } from './http';
import {
  asksBilling,
  asksOrganization,
  billingPart,
  organizationOfToken,
  organizationPart,
  organizationRequirementText,
  organizationSatisfies,
  type AccessCheck,
  type OrganizationCheck,
} from './organizations';
import { makeSessionRoutes, type SessionRoutes, type SessionRoutesOptions } from './session-routes';
import type { ActiveOrganization, Invoice, Plan, Subscription, TollgateUser } from './types';
import { makeUsage, type Usage } from './usage';

export { createClient, contract, ERRORS, type Contract, type TollgateClient, type ClientOptions, type ErrorCode, type ErrorBody } from '../../../contract';
export {
  signWebhook,
  WebhookVerificationError,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_TOLERANCE_MS,
  type WebhookEvent,
  type WebhookRefusal,
} from '../../../contract/webhook-signature';
export { verifyWebhookSignature as verifyWebhook };
export { satisfies, planAtLeast, type EntitlementCheck, type Entitlements, type RankedPlan } from './entitlements';
export { amountForSeats, startingSeats, seatsAreBought } from './seats';
export { organizationSatisfies, type AccessCheck, type OrganizationCheck } from './organizations';
export { TollgateError, isTollgateError, unwrap, type TollgateErrorCode, type SdkErrorCode, type TollgateErrorBody } from './errors';
export type { SessionRoutes, SessionRoutesOptions } from './session-routes';
export {
  USAGE_BATCH_SIZE,
  type Usage,
  type UsageEvent,
  type UsageAmount,
  type UsageConsumption,
  type UsageRelease,
  type CreditGrantInput,
  type DateInput,
} from './usage';
export type { NodeRequestLike, NodeResponseLike, NextFunction } from './http';
export type {
  Plan,
  Price,
  SeatPolicy,
  SeatPricing,
  Subscription,
  Invoice,
  ChangePreview,
  TollgateUser,
  PublicUser,
  MfaChallenge,
  BrowserSession,
  ActiveOrganization,
  Organization,
  MyOrganization,
  OrganizationMember,
  OrganizationInvitation,
  MyInvitation,
  OrganizationDomain,
  OrganizationRole,
  Passkey,
  UsageSubject,
  UsageFeature,
  SubjectUsage,
  UsageCheckResult,
  CreditGrant,
  CreditPack,
} from './types';

export interface TollgateOptions {
  /** Where Tollgate serves, e.g. http://localhost:4000. */
  baseUrl: string;
  /** The project's API key (tg_...). Keep it on the server. */
  apiKey: string;
  /** The signing secret of your webhook endpoint (whsec_...), for `verifyWebhook` without `secret`. */
  webhookSecret?: string;
  /** A fetch implementation (tests, proxies); the global fetch by default. */
  fetch?: typeof fetch;
}

/** A verified access token: what `verify` answers and a request that passed `requireUser` carries. */
export interface Authenticated {
  user: TollgateUser;
  /**
   * The token's active organization as Tollgate answered it (the membership as it is now: role and
   * permissions current), or null: none, or the user left it, or it was deleted.
   */
  organization: ActiveOrganization | null;
  /** The access token it was sent with (for calls on the user's behalf, such as `entitlements`). */
  token: string;
  expiresAt: string;
  /**
   * The user's role or permission in the active organization, from this answer (no call):
   * `auth.has({ permission: 'reports:read' })`, `auth.has({ role: 'admin' })`; both must pass when
   * both are given; false without an active organization. Billing is `tollgate.has(token, { feature })`.
   */
  has(check: OrganizationCheck): boolean;
}

/**
 * A token verified with `verify(token, { include: ['entitlements'] })`: also the entitlements of
 * the token's context and the plan order, so that `has` checks every part without another call.
 */
export interface AuthenticatedWithEntitlements extends Authenticated {
  /**
   * The entitlements of the token's context: its active organization's when it names one (and the
   * user is still a member: a member is entitled to the organization's plan), else the user's own;
   * null when that context has no entitled subscription.
   */
  entitlements: Entitlements | null;
  /** The plans in the project's order, hidden ones included: what plan checks rank by. */
  plans: RankedPlan[];
  /**
   * `{ role, permission }` on the active organization, `{ plan, feature }` on `entitlements`;
   * every part given must pass: `auth.has({ plan: 'pro', permission: 'reports:read' })`.
   */
  has(check: AccessCheck): boolean;
}

/** What `verify` may add to its answer: `include: ['entitlements']`. */
export interface VerifyOptions {
  include?: ReadonlyArray<'entitlements'>;
}

/** Whose entitlements `entitlements(token, { for })` reads: the user's own, or the token's active organization's. */
export type EntitlementsFor = 'user' | 'organization';

/**
 * An organization's billing, read, canceled and its seats set by your server with the API key (any organization
 * of the project, named by its id or its slug; 404 `organization_not_found` otherwise).
 */
export interface OrganizationBilling {
  /** Its live subscription, or null (GET /api/v1/organizations/:org/billing/subscription). */
  subscription(organization: string): Promise<Subscription | null>;
  /** `{plan, status, features}` of its entitled subscription, or null: what every member is entitled to. Read on every call. */
  entitlements(organization: string): Promise<Entitlements | null>;
  /** Its invoices, newest first (`limit` 1 to 100, 10 by default). */
  invoices(organization: string, options?: { limit?: number }): Promise<Invoice[]>;
  /** Cancels its subscription at the period end (the default) or now (`{ atPeriodEnd: false }`, nothing refunded). */
  cancel(organization: string, options?: { atPeriodEnd?: boolean }): Promise<Subscription>;
  /**
   * Sets the seats of its per-seat subscription on a plan whose seats are bought, as a member with
   * org:billing:manage would: more seats charged now, prorated (402 `card_declined` changes
   * nothing); fewer released as the plan says, never below the seats in use. Answers the
   * subscription with its new `quantity`. Automatic seats follow the members: 409 `seats_managed_automatically`.
   */
  setSeats(organization: string, quantity: number): Promise<Subscription>;
  /** Whether its plan passes `{ plan, feature }` (the spec's rules; reads the entitlements and, for a plan, the order). */
  has(organization: string, check: EntitlementCheck): Promise<boolean>;
}

/** A request after `requireUser()`: `req.user`, `req.organization` and `req.tollgate`. */
export type AuthenticatedRequest<R extends NodeRequestLike = NodeRequestLike> = R & {
  user: TollgateUser;
  organization: ActiveOrganization | null;
  tollgate: Authenticated;
};

/**
 * Express's Request (4 and 5, through its global `Express` namespace) with what `requireUser()`
 * sets: `req.user` is Tollgate's user, `req.organization` the token's active organization (null:
 * none) and `req.tollgate` the verified token with `has({ role, permission })`. All are optional
 * (a handler's type cannot say which middleware ran before it): after `requireUser()`, `req.user!`.
 * `user` is declared as passport declares it (`Express.User`), so that both can be installed.
 */
declare global {
  namespace Express {
    interface User extends TollgateUser {}
    interface Request {
      user?: User | undefined;
      organization?: ActiveOrganization | null | undefined;
      tollgate?: Authenticated | undefined;
    }
  }
}

/** Why a request was refused: what `check` answers instead of a user. */
export interface Refusal {
  status: 401 | 403;
  body: { error: string; code: 'invalid_access_token' | 'entitlement_required' | 'missing_permission'; required?: AccessCheck };
}

export type CheckResult = ({ ok: true } & Authenticated) | ({ ok: false } & Refusal);

export interface Tollgate {
  /** The typed contract client with the API key: every route, `{status, body}` typed per status. */
  readonly client: TollgateClient;
  /** The typed contract client acting for a user (their access token), e.g. `asUser(token).billing.subscription()`. */
  asUser(accessToken: string): TollgateClient;
  /** The user of an access token (POST /api/v1/token/verify), or null when Tollgate does not accept it. */
  verifyToken(token: string): Promise<TollgateUser | null>;
  /**
   * The whole verify answer: the user, the active organization as it is now, the expiry, and
   * `has({ role, permission })` on it; null when Tollgate does not accept the token. With
   * `{ include: ['entitlements'] }` also the entitlements of the token's context (the active
   * organization's, else the user's) and the plan order, and `has({ plan, feature, role, permission })`
   * on all of it (the plan order is read beside the verification, at the same time).
   */
  verify(token: string): Promise<Authenticated | null>;
  verify(token: string, options: { include: readonly ['entitlements'] }): Promise<AuthenticatedWithEntitlements | null>;
  verify(token: string, options?: VerifyOptions): Promise<Authenticated | null>;
  /**
   * The entitlements of the token's context, or null: no entitled subscription. The context is the
   * active organization when the token names one (and the user is still a member), else the user:
   * a member is entitled to the organization's plan. `{ for: 'user' }` reads the user's own,
   * `{ for: 'organization' }` the active organization's (400 `no_active_organization` without one).
   * Asked on every call (GET billing/entitlements; token/verify when the token names an organization).
   */
  entitlements(userToken: string, options?: { for?: EntitlementsFor }): Promise<Entitlements | null>;
  /**
   * Whether the user may: `{ plan }` passes for that plan or any above it in the project's order,
   * `{ feature }` when the plan grants the flag, `{ role }` / `{ permission }` for the user's role
   * in the token's active organization (as it is now); every part given must pass, e.g.
   * `{ permission: 'reports:read', feature: 'export' }`. The plan and feature are the token's
   * context's (see `entitlements`). Asks Tollgate on every call (the entitlements and the plan order
   * for the billing part, token/verify for the organization part); nothing is cached. False for a
   * token Tollgate does not accept when a role or permission is asked.
   */
  has(userToken: string, check: AccessCheck): Promise<boolean>;
  /** Any organization's subscription, entitlements and invoices, and canceling its subscription, with the API key. */
  readonly organizationBilling: OrganizationBilling;
  /**
   * Usage-based billing with the API key: `track` usage (batches of 1,000), `check`, `consume`
   * (check and record atomically; past a hard limit `allowed: false`), `release`, `get` a subject's
   * usage, `grantCredits` and `credits`.
   */
  readonly usage: Usage;
  /** The plans in the project's order, hidden ones included (GET billing/products). */
  products(): Promise<Plan[]>;
  /**
   * Checks a webhook delivery (signature, timestamp within 5 minutes) and answers its event;
   * throws WebhookVerificationError with the status to answer (400 or 401). `payload` is the raw body.
   */
  verifyWebhook(options: {
    payload: string | Uint8Array | ArrayBuffer;
    headers: Headers | Record<string, string | string[] | undefined>;
    secret?: string;
    now?: number;
  }): Promise<WebhookEvent>;
  /**
   * Framework-neutral check of a request (fetch `Request` or Node request): its Bearer access token,
   * and when `requirement` is given the role/permission in the active organization and the
   * entitlement. Answers the user or the refusal to send.
   */
  check(request: Request | NodeRequestLike, requirement?: AccessCheck): Promise<CheckResult>;
  /** `check` for fetch-based servers: the user, or the 401/403 Response to return. */
  authorize(request: Request, requirement?: AccessCheck): Promise<Authenticated | Response>;
  /**
   * Express/Connect middleware: a valid Bearer access token sets `req.user`, `req.organization`
   * and `req.tollgate`; otherwise 401.
   */
  requireUser(): (req: NodeRequestLike, res: NodeResponseLike, next: NextFunction) => void;
  /** Express/Connect middleware: 403 `entitlement_required` unless the user has the plan (or above) and/or feature; 401 without a valid token. */
  requireEntitlement(requirement: EntitlementCheck): (req: NodeRequestLike, res: NodeResponseLike, next: NextFunction) => void;
  /**
   * Express/Connect middleware for any mix of `{ role, permission, plan, feature }`: 403
   * `missing_permission` unless the user's role in the token's active organization is `role` and
   * grants `permission`, 403 `entitlement_required` unless the billing part passes, 401 without a
   * valid token. Sets what `requireUser()` sets.
   */
  requireAccess(requirement: AccessCheck): (req: NodeRequestLike, res: NodeResponseLike, next: NextFunction) => void;
  /** The routes the browser client (`@tollgate/sdk/browser`, `@tollgate/react`) talks to on your server. */
  sessionRoutes(options: SessionRoutesOptions): SessionRoutes;
}

const requirementText = (r: EntitlementCheck) =>
  [r.plan !== undefined ? `the ${r.plan} plan or above` : null, r.feature !== undefined ? `the ${r.feature} feature` : null].filter(Boolean).join(' and ');

/** The server SDK for a project: the typed client plus the helpers that read naturally. */
export function createTollgate(options: TollgateOptions): Tollgate {
  if (!options.baseUrl) throw new TypeError('createTollgate: baseUrl is required (where Tollgate serves)');
  if (!options.apiKey) throw new TypeError('createTollgate: apiKey is required (the project API key, tg_...)');
  const baseUrl = options.baseUrl.replace(/\/$/, '');
  const fetchFn = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const client = createClient({ baseUrl, apiKey: options.apiKey });
  const asUser = (accessToken: string) => createClient({ baseUrl, accessToken });

  const call = async <R extends { status: number; body: unknown }>(run: () => Promise<R>): Promise<R> => {
    try {
      return await run();
    } catch (cause) {
      if (isTollgateError(cause)) throw cause;
      throw new TollgateError({ code: 'network_error', message: `Could not reach Tollgate at ${baseUrl}: ${(cause as Error).message}`, status: 0 });
    }
  };

  /** POST token/verify; with `entitlements`, the token's context's entitlements too (undefined from a Tollgate that does not answer them). */
  async function verifyAnswer(token: string, withEntitlements: boolean): Promise<(Authenticated & { entitlements?: Entitlements | null }) | null> {
    const res = await call(() => client.token.verify({ body: withEntitlements ? { token, include: ['entitlements'] } : { token } }));
    if (res.status !== 200) throw errorOf(res.status, res.body);
    if (!res.body.valid) return null;
    // A Tollgate from before organizations answers no `organization`.
    const organization = res.body.organization ?? null;
    return {
      user: res.body.user,
      organization,
      token,
      expiresAt: res.body.expiresAt,
      has: (check: OrganizationCheck) => organizationSatisfies(organization, check),
      ...(res.body.entitlements !== undefined ? { entitlements: res.body.entitlements } : {}),
    };
  }

  /** The verify answer with the context's entitlements; the plan order too when `rank` (plan checks need it). */
  async function verifyWithEntitlements(token: string, rank: boolean): Promise<AuthenticatedWithEntitlements | null> {
    const [answer, plans] = await Promise.all([verifyAnswer(token, true), rank ? products() : Promise.resolve([] as RankedPlan[])]);
    if (!answer) return null;
    const { entitlements: answered, ...verified } = answer;
    // A Tollgate from before organization billing answers no entitlements: the user's, read as before.
    const entitlements = answered !== undefined ? answered : await userEntitlements(token).catch(nullOn401);
    return {
      ...verified,
      entitlements,
      plans,
      has: (check: AccessCheck) =>
        (!asksOrganization(check) || organizationSatisfies(verified.organization, check)) &&
        (!asksBilling(check) || satisfies(entitlements, billingPart(check), plans)),
    };
  }

  async function verify(token: string, options?: VerifyOptions): Promise<Authenticated | AuthenticatedWithEntitlements | null> {
    if (options?.include?.includes('entitlements')) return verifyWithEntitlements(token, true);
    const answer = await verifyAnswer(token, false);
    if (!answer) return null;
    const { entitlements: _ignored, ...verified } = answer;
    return verified;
  }

  /** GET billing/entitlements as the user: their own, or with `for` organization the active organization's. */
  async function userEntitlements(userToken: string, target: EntitlementsFor = 'user'): Promise<Entitlements | null> {
    const res = await call(() => asUser(userToken).billing.entitlements(target === 'organization' ? { query: { for: 'organization' } } : {}));
    if (res.status !== 200) throw errorOf(res.status, res.body);
    return res.body;
  }

  /**
   * The entitlements of the token's context. A token that names no organization is the user's
   * context: one GET, as before organizations. One that names one is verified with its entitlements,
   * which Tollgate answers for the organization while the user is a member of it, else for the user.
   */
  async function contextEntitlements(userToken: string): Promise<Entitlements | null> {
    if (!organizationOfToken(userToken)) return userEntitlements(userToken);
    const verified = await verifyWithEntitlements(userToken, false);
    if (!verified) throw new TollgateError({ code: 'invalid_access_token', message: 'Invalid or expired access token', status: 401 });
    return verified.entitlements;
  }

  async function entitlements(userToken: string, options: { for?: EntitlementsFor } = {}): Promise<Entitlements | null> {
    return options.for ? userEntitlements(userToken, options.for) : contextEntitlements(userToken);
  }

  async function products(): Promise<Plan[]> {
    const res = await call(() => client.billing.products());
    if (res.status !== 200) throw errorOf(res.status, res.body);
    return res.body.products;
  }

  async function hasEntitlement(userToken: string, requirement: EntitlementCheck): Promise<boolean> {
    const [granted, plans] = await Promise.all([
      contextEntitlements(userToken),
      requirement.plan !== undefined ? products() : Promise.resolve([] as RankedPlan[]),
    ]);
    return satisfies(granted, requirement, plans);
  }

  async function has(userToken: string, requirement: AccessCheck): Promise<boolean> {
    if (!asksOrganization(requirement)) return hasEntitlement(userToken, requirement);
    // One verification answers both parts: the role as it is now, and the context's entitlements.
    const verified = asksBilling(requirement) ? await verifyWithEntitlements(userToken, requirement.plan !== undefined) : await verifyAnswer(userToken, false);
    return verified ? verified.has(requirement) : false;
  }

  /** A billing call of a token that was valid a moment ago answers 401 (it expired, its user was disabled): that is none, not an error. */
  const nullOn401 = (error: unknown): null => {
    if (isTollgateError(error) && error.status === 401) return null;
    throw error;
  };

  const organizationBilling: OrganizationBilling = {
    async subscription(organization) {
      return unwrap(await call(() => client.billing.organizationSubscription({ params: { orgId: organization } })));
    },
    async entitlements(organization) {
      return unwrap(await call(() => client.billing.organizationEntitlements({ params: { orgId: organization } })));
    },
    async invoices(organization, options = {}) {
      const query = options.limit !== undefined ? { limit: options.limit } : {};
      return unwrap(await call(() => client.billing.organizationInvoices({ params: { orgId: organization }, query }))).invoices;
    },
    async cancel(organization, options = {}) {
      const body = options.atPeriodEnd === undefined ? {} : { at_period_end: options.atPeriodEnd };
      return unwrap(await call(() => client.billing.organizationCancel({ params: { orgId: organization }, body })));
    },
    async setSeats(organization, quantity) {
      return unwrap(await call(() => client.billing.organizationSeats({ params: { orgId: organization }, body: { quantity } })));
    },
    async has(organization, check) {
      const [granted, plans] = await Promise.all([
        organizationBilling.entitlements(organization),
        check.plan !== undefined ? products() : Promise.resolve([] as RankedPlan[]),
      ]);
      return satisfies(granted, billingPart(check), plans);
    },
  };

  const unauthorized = (error: string): CheckResult => ({ ok: false, status: 401, body: { error, code: 'invalid_access_token' } });

  async function check(request: Request | NodeRequestLike, requirement?: AccessCheck): Promise<CheckResult> {
    const token = bearerOf(request.headers);
    if (!token) return unauthorized('Sign in first: send Authorization: Bearer <ACCESS_TOKEN>');
    // A billing requirement: one verification with the context's entitlements (and the plan order for a plan).
    const billing = requirement && asksBilling(requirement) ? billingPart(requirement) : null;
    const entitled = billing ? await verifyWithEntitlements(token, billing.plan !== undefined) : null;
    const verified = billing ? entitled : await verifyAnswer(token, false);
    if (!verified) return unauthorized('Invalid or expired access token');
    // The organization part first.
    if (requirement && asksOrganization(requirement) && !verified.has(organizationPart(requirement))) {
      const needs = organizationRequirementText(requirement);
      const error = verified.organization ? `This needs ${needs} in the active organization` : `This needs an active organization, with ${needs}`;
      return { ok: false, status: 403, body: { error, code: 'missing_permission', required: requirement } };
    }
    if (billing && !entitled?.has(billing)) {
      return { ok: false, status: 403, body: { error: `This needs ${requirementText(billing)}`, code: 'entitlement_required', required: requirement } };
    }
    return { ok: true, ...authenticated(verified) };
  }

  /** What a request that passed carries: the verified token, and `has({ role, permission })` on its organization. */
  const authenticated = ({ user, organization, token, expiresAt }: Authenticated): Authenticated => ({
    user,
    organization,
    token,
    expiresAt,
    has: (check: OrganizationCheck) => organizationSatisfies(organization, check),
  });

  const middleware =
    (requirement?: AccessCheck) =>
    (req: NodeRequestLike, res: NodeResponseLike, next: NextFunction): void => {
      check(req, requirement).then((result) => {
        if (!result.ok) return sendJson(res, result.status, result.body, result.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
        const authed = req as AuthenticatedRequest;
        authed.user = result.user;
        authed.organization = result.organization;
        authed.tollgate = authenticated(result);
        next();
      }, next);
    };

  return {
    client,
    asUser,
    verifyToken: async (token) => (await verify(token))?.user ?? null,
    verify: verify as Tollgate['verify'],
    entitlements,
    has,
    products,
    organizationBilling,
    usage: makeUsage(client, call),
    verifyWebhook: ({ secret, ...rest }) => {
      const key = secret ?? options.webhookSecret;
      if (!key) throw new TypeError('verifyWebhook: pass secret, or webhookSecret to createTollgate');
      return verifyWebhookSignature({ ...rest, secret: key });
    },
    check,
    async authorize(request, requirement) {
      const result = await check(request, requirement);
      if (result.ok) return authenticated(result);
      return jsonResponse(result.status, result.body, result.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
    },
    requireUser: () => middleware(),
    requireEntitlement: (requirement) => middleware(billingPart(requirement)),
    requireAccess: (requirement) => middleware(requirement),
    sessionRoutes: (routeOptions) => makeSessionRoutes({ baseUrl, apiKey: options.apiKey, client, fetch: fetchFn, verify }, routeOptions),
  };
}
