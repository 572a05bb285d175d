import type { CreditPack } from '../../../domain/usage/credit-pack';
import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { adminBillingContract } from '../../../contract/admin/billing.contract';
import type { BillingEvent } from '../../../application/billing/billing.store';
import type { OperatorUseCases } from '../../../application/billing/use-cases';
import type { ConnectionView, OperatorInvoiceView, OperatorPlanView, OperatorSubscriptionView, SubscriptionView } from '../../../application/billing/views';
import { DEFAULT_CURRENCY } from '../../../domain/billing/money';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf } from './request-context';

const s = initServer();

export interface AdminBillingRouteDeps {
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  /** The operator's billing use cases: the ones `tollgate billing|plan|price|subscription|invoice` calls. */
  billing: OperatorUseCases;
}

const connectionView = (c: ConnectionView) => ({
  processor: c.processor,
  mode: c.mode,
  key_last4: c.keyLast4,
  account_id: c.accountId,
  currency: c.currency,
  connected_at: c.connectedAt.toISOString(),
  webhook_url: c.webhookUrl,
});

type Price = OperatorPlanView['prices'][number];
const priceView = (p: Price) => ({
  id: p.id,
  plan_id: p.planId,
  name: p.name,
  amount: p.amount,
  currency: p.currency,
  interval: p.interval,
  active: p.active,
  seats: p.seats && { unit_amount: p.seats.unitAmount, included: p.seats.included, minimum: p.seats.minimum, maximum: p.seats.maximum },
});

const packView = (p: CreditPack) => ({
  id: p.id,
  feature: p.meterKey,
  name: p.name,
  units: p.units,
  amount: p.amount,
  currency: p.currency,
  expires_in_days: p.expiresInDays,
  active: p.active,
  created_at: p.createdAt.toISOString(),
});

const planView = (p: OperatorPlanView) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  features: [...p.features],
  hidden: p.hidden,
  recommended: p.recommended,
  trials_enabled: p.trialsEnabled,
  default_trial_days: p.defaultTrialDays,
  audience: p.audience,
  seat_policy: { mode: p.seatPolicy.mode, count_invitations: p.seatPolicy.countInvitations, removal: p.seatPolicy.removal },
  usage_limits: p.usageLimits.map((l) => ({
    meter: l.meter,
    included: l.included,
    reset: l.reset,
    overage: l.overage,
    price: l.price && { unit_amount: l.price.unitAmount, package_size: l.price.packageSize },
  })),
  position: p.position,
  prices: p.prices.map(priceView),
});

/** A subscription as the admin API shows it (the Billing page's rows, a user's detail). */
export const adminSubscriptionView = (v: SubscriptionView) => ({
  id: v.id,
  user_id: v.userId,
  organization_id: v.organizationId,
  status: v.status,
  plan: { id: v.plan.id, name: v.plan.name },
  price: { id: v.price.id, name: v.price.name, amount: v.price.amount, currency: v.price.currency, interval: v.price.interval },
  quantity: v.quantity,
  current_period_end: v.currentPeriodEnd.toISOString(),
  cancel_at_period_end: v.cancelAtPeriodEnd,
  created_at: v.createdAt.toISOString(),
});

const subscriptionRowView = (v: OperatorSubscriptionView) => ({ ...adminSubscriptionView(v), user_email: v.userEmail, organization_name: v.organizationName });

/** An invoice as the admin API lists it: whose it is (a user's email or an organization's name) and its amounts. */
export const adminInvoiceView = (v: Omit<OperatorInvoiceView, 'processor' | 'processorInvoiceId'>) => ({
  id: v.id,
  user_id: v.userId,
  organization_id: v.organizationId,
  user_email: v.userEmail,
  organization_name: v.organizationName,
  subscription_id: v.subscriptionId,
  status: v.status,
  reason: v.reason,
  currency: v.currency,
  subtotal: v.subtotal,
  amount_due: v.amountDue,
  amount_paid: v.amountPaid,
  amount_refunded: v.amountRefunded,
  period_start: v.periodStart.toISOString(),
  period_end: v.periodEnd.toISOString(),
  created_at: v.createdAt.toISOString(),
  paid_at: v.paidAt ? v.paidAt.toISOString() : null,
});

const eventView = (e: BillingEvent) => ({
  id: e.id,
  type: e.type,
  user_id: e.userId,
  organization_id: e.organizationId,
  subscription_id: e.subscriptionId,
  amount: typeof e.payload.amount === 'number' ? e.payload.amount : null,
  currency: typeof e.payload.currency === 'string' ? e.payload.currency : null,
  created_at: e.createdAt.toISOString(),
});

/** Plan fields from the console's names to the use case's (features stay comma-separated: the domain splits them). */
const planInput = (b: {
  name?: string;
  description?: string;
  features?: string;
  hidden?: boolean;
  recommended?: boolean;
  trials_enabled?: boolean;
  default_trial_days?: number | null;
  audience?: string;
  seat_policy?: { mode?: string; count_invitations?: boolean; removal?: string };
  usage_limits?: Array<{ meter: string; included: number; reset?: string; overage?: string; price?: { unit_amount: number; package_size?: number } | null }>;
}) => {
  const input: Record<string, unknown> = {};
  if (b.name !== undefined) input.name = b.name;
  if (b.description !== undefined) input.description = b.description;
  if (b.features !== undefined) input.features = b.features;
  if (b.hidden !== undefined) input.hidden = b.hidden;
  if (b.recommended !== undefined) input.recommended = b.recommended;
  if (b.trials_enabled !== undefined) input.trialsEnabled = b.trials_enabled;
  if (b.default_trial_days !== undefined) input.defaultTrialDays = b.default_trial_days;
  if (b.audience !== undefined) input.audience = b.audience;
  if (b.seat_policy?.mode !== undefined) input.seatMode = b.seat_policy.mode;
  if (b.seat_policy?.count_invitations !== undefined) input.seatCountInvitations = b.seat_policy.count_invitations;
  if (b.seat_policy?.removal !== undefined) input.seatRemoval = b.seat_policy.removal;
  if (b.usage_limits !== undefined) {
    input.usageLimits = b.usage_limits.map((l) => ({
      meter: l.meter,
      included: l.included,
      reset: l.reset,
      overage: l.overage,
      price: l.price && { unitAmount: l.price.unit_amount, packageSize: l.price.package_size },
    }));
  }
  return input;
};

/**
 * The console's billing routes over the operator's billing use cases (the CLI's). Each first asks
 * whether the signed-in account may see the project (404 `project_not_found` if not). A refusal is
 * answered by `failureResponse`, with the processor's own words when it gave some (Stripe's reason
 * for refusing a key); its type carries the use case's codes, so each must be one its route
 * declares (ADMIN_BILLING_REFUSALS in the contract) or the route does not compile.
 */
export function makeAdminBillingRoutes(deps: AdminBillingRouteDeps) {
  const { billing } = deps;
  /** The project id of the route, when the signed-in account may see it. */
  const access = async (res: Response, projectId: string) => {
    const actor = authOf(res).console;
    if (!actor) throw new Error('route has no console session');
    const found = await deps.accounts.projectAccess(actor.account, projectId);
    return found.ok ? { ok: true as const, id: found.value.id } : { ok: false as const, response: errorResponse(found.error) };
  };

  return s.router(adminBillingContract, {
    get: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.billingStatus(p.id);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { connection: r.value ? connectionView(r.value) : null } };
    },
    connect: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const currency = body.currency ? { currency: body.currency } : {};
      const r = await billing.connectBilling(
        p.id,
        body.processor === 'sandbox'
          ? { processor: 'sandbox', ...currency }
          : { processor: 'stripe', secretKey: body.secret_key, publishableKey: body.publishable_key, webhookSecret: body.webhook_secret, ...currency },
      );
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { connection: connectionView(r.value) } };
    },
    disconnect: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.disconnectBilling(p.id);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { disconnected: r.value.disconnected } };
    },
    listPlans: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.listPlans(p.id);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { plans: r.value.map(planView) } };
    },
    createPlan: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.createPlan(p.id, { ...planInput(body), name: body.name });
      if (!r.ok) return failureResponse(res, r);
      return { status: 201, body: { plan: planView(r.value) } };
    },
    updatePlan: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.updatePlan(p.id, params.planId, planInput(body));
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { plan: planView(r.value) } };
    },
    reorderPlans: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.reorderPlans(p.id, body.plans);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { plans: r.value.map(planView) } };
    },
    createPrice: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      let currency = body.currency;
      if (currency === undefined) {
        const status = await billing.billingStatus(p.id);
        currency = status.ok && status.value ? status.value.currency : DEFAULT_CURRENCY;
      }
      const seats = body.seats && {
        unitAmount: body.seats.unit_amount,
        ...(body.seats.included !== undefined ? { included: body.seats.included } : {}),
        ...(body.seats.minimum !== undefined ? { minimum: body.seats.minimum } : {}),
        ...(body.seats.maximum !== undefined ? { maximum: body.seats.maximum } : {}),
      };
      const r = await billing.createPrice(p.id, params.planId, {
        name: body.name,
        amount: body.amount,
        currency,
        interval: body.interval,
        ...(seats ? { seats } : {}),
      });
      if (!r.ok) return failureResponse(res, r);
      return { status: 201, body: { price: priceView(r.value) } };
    },
    archivePrice: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.archivePrice(p.id, params.priceId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { price: priceView(r.value) } };
    },
    listCreditPacks: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      return { status: 200, body: { packs: (await billing.listCreditPacks(p.id, { activeOnly: false })).map(packView) } };
    },
    createCreditPack: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const status = await billing.billingStatus(p.id);
      const currency = body.currency ?? (status.ok && status.value ? status.value.currency : 'usd');
      const r = await billing.createCreditPack(p.id, {
        meter: body.feature,
        name: body.name,
        units: body.units,
        amount: body.amount,
        currency,
        expiresInDays: body.expires_in_days ?? null,
      });
      if (!r.ok) return failureResponse(res, r);
      return { status: 201, body: { pack: packView(r.value) } };
    },
    archiveCreditPack: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.archiveCreditPack(p.id, params.packId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { pack: packView(r.value) } };
    },
    listSubscriptions: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.listSubscriptions(p.id, { status: query.status, limit: query.limit, cursor: query.cursor });
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { subscriptions: r.value.items.map(subscriptionRowView), next_cursor: r.value.nextCursor } };
    },
    listInvoices: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.listProjectInvoices(p.id, { userId: query.user, status: query.status, limit: query.limit, cursor: query.cursor });
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { invoices: r.value.items.map(adminInvoiceView), next_cursor: r.value.nextCursor } };
    },
    listEvents: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.listEvents(p.id, { type: query.type, limit: query.limit });
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { events: r.value.map(eventView) } };
    },
    sandboxClock: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.sandboxClock(p.id);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { now: r.value.now.toISOString(), real_now: r.value.realNow.toISOString(), ahead_seconds: r.value.aheadSeconds } };
    },
    advanceSandbox: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await billing.advanceSandbox(p.id, body.days);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { now: r.value.now.toISOString(), changed: r.value.changed } };
    },
  });
}
