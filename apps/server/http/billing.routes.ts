import { randomUUID } from 'node:crypto';
import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import { apiKeyActor } from '../../../application/audit/audit-log';
import type { ProjectAction } from '../../../application/billing/organization-billing';
import { billingContract } from '../../../contract/billing.contract';
import type { BillingActor, OperatorUseCases, ProcessorUseCases, ProjectServerUseCases, UserUseCases } from '../../../application/billing/use-cases';
import {
  type ChangePreviewView,
  type Entitlements,
  type InvoiceLineView,
  type InvoiceView,
  type PlanView,
  planView,
  type SubscriptionView,
} from '../../../application/billing/views';
import { readClaim } from '../../../domain/organizations/claims';
import type { CreditPack } from '../../../domain/usage/credit-pack';
import { requestKeyOf } from './idempotency';
import { renderUsageFeature } from './usage.routes';
import { failureResponse } from './rate-limit';
import { authOf, originOf, projectOf, rawBodyOf } from './request-context';

const s = initServer();

/** What the billing routes call: the end user's use cases and the processor's inbound ones. */
export type BillingRouteUseCases = UserUseCases &
  Pick<ProcessorUseCases, 'receiveProcessorWebhook'> &
  Pick<ProjectServerUseCases, 'organizationBilling'> &
  Pick<OperatorUseCases, 'listCreditPacks'>;

/**
 * The signed-in user of a `user` route and the project of the token; with `?for=organization`,
 * acting for the token's active organization (claim `org`; null when it names none).
 */
function actorOf(res: Response, query?: { for?: 'user' | 'organization' }): BillingActor {
  const auth = authOf(res);
  if (!auth.project || !auth.user) throw new Error('route has no authenticated user');
  if (query?.for !== 'organization') return { project: auth.project, user: auth.user };
  return { project: auth.project, user: auth.user, organizationId: readClaim(auth.claims?.org)?.id ?? null };
}

/** The project server of an `apiKey` route, named by its key in the audit log, and where it called from. */
function projectActionOf(req: Request, res: Response): ProjectAction {
  const keyId = authOf(res).apiKeyId;
  if (!keyId) throw new Error('route has no API key');
  return { actor: apiKeyActor(keyId), origin: originOf(req, res) };
}

const iso = (date: Date): string => date.toISOString();
const isoOrNull = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** A plan as the API shows it: its view's fields only (never an operator view's processor ids). */
export const renderPlan = (plan: PlanView): PlanView => planView(plan, plan.prices);

/** A subscription as the API shows it: without the user id (the caller's own) and the processor. */
export const renderSubscription = (v: SubscriptionView) => ({
  id: v.id,
  status: v.status,
  plan: { id: v.plan.id, name: v.plan.name },
  price: { id: v.price.id, name: v.price.name, amount: v.price.amount, currency: v.price.currency, interval: v.price.interval },
  quantity: v.quantity,
  currentPeriodStart: iso(v.currentPeriodStart),
  currentPeriodEnd: iso(v.currentPeriodEnd),
  cancelAtPeriodEnd: v.cancelAtPeriodEnd,
  canceledAt: isoOrNull(v.canceledAt),
  endedAt: isoOrNull(v.endedAt),
  trialStart: isoOrNull(v.trialStart),
  trialEnd: isoOrNull(v.trialEnd),
  pausedAt: isoOrNull(v.pausedAt),
  nextInvoice: v.nextInvoice && { amount: v.nextInvoice.amount, currency: v.nextInvoice.currency, date: iso(v.nextInvoice.date) },
  paymentMethod: v.paymentMethod && {
    brand: v.paymentMethod.brand,
    last4: v.paymentMethod.last4,
    expMonth: v.paymentMethod.expMonth,
    expYear: v.paymentMethod.expYear,
  },
  createdAt: iso(v.createdAt),
});

const renderLine = (l: InvoiceLineView) => ({
  description: l.description,
  amount: l.amount,
  proration: l.proration,
  priceId: l.priceId,
  quantity: l.quantity,
  periodStart: iso(l.periodStart),
  periodEnd: iso(l.periodEnd),
});

export const renderInvoice = (v: InvoiceView) => ({
  id: v.id,
  subscriptionId: v.subscriptionId,
  status: v.status,
  reason: v.reason,
  currency: v.currency,
  subtotal: v.subtotal,
  amountDue: v.amountDue,
  amountPaid: v.amountPaid,
  amountRefunded: v.amountRefunded,
  lines: v.lines.map(renderLine),
  periodStart: iso(v.periodStart),
  periodEnd: iso(v.periodEnd),
  hostedUrl: v.hostedUrl,
  createdAt: iso(v.createdAt),
  paidAt: isoOrNull(v.paidAt),
});

const renderPreview = (v: ChangePreviewView) => ({
  amountDue: v.amountDue,
  currency: v.currency,
  subtotal: v.subtotal,
  lines: v.lines.map(renderLine),
  periodStart: iso(v.periodStart),
  periodEnd: iso(v.periodEnd),
});

/** Entitlements as the API shows them: an organization's seats only where it has them (a personal plan's answer stays {plan, status, features}). */
export const renderEntitlements = (e: Entitlements) => ({
  plan: e.plan,
  status: e.status,
  features: [...e.features],
  ...(e.seats ? { seats: { used: e.seats.used, total: e.seats.total } } : {}),
  ...(e.usage ? { usage: e.usage.map(renderUsageFeature) } : {}),
});

/** A credit pack as the API renders it. */
export const renderCreditPack = (p: CreditPack) => ({
  id: p.id,
  feature: p.meterKey,
  name: p.name,
  units: p.units,
  amount: p.amount,
  currency: p.currency,
  expiresInDays: p.expiresInDays,
  active: p.active,
  createdAt: p.createdAt.toISOString(),
});

const DEFAULT_INVOICE_LIMIT = 10;

/**
 * The billing endpoints: each hands the request's fields to its use case and renders the answer
 * (camelCase, ISO 8601 dates, integer minor units); the use cases check and do everything else. A
 * refusal is answered by `failureResponse` (its `detail`, a processor's reason or a decline's
 * message, replacing the table's message), whose type carries the use case's codes: each must be
 * one its route declares (BILLING_REFUSALS in the contract), or the route does not compile.
 * The POST routes of a signed-in user are `idempotent` in the contract: the edge runs them once
 * per Idempotency-Key and `requestKeyOf(res)` is the key the use case writes under.
 */
export function makeBillingRoutes(billing: BillingRouteUseCases) {
  return s.router(billingContract, {
    plans: async ({ query, res }) => {
      const plans = await billing.listVisiblePlans(projectOf(res), query.for === 'organization' ? 'organization' : 'user');
      return { status: 200, body: { plans: plans.map(renderPlan) } };
    },

    products: async ({ res }) => {
      const products = await billing.listProducts(projectOf(res));
      return { status: 200, body: { products: products.map(renderPlan) } };
    },

    creditPacks: async ({ res }) => {
      const auth = authOf(res);
      if (!auth.project) throw new Error('route has no authenticated project');
      return { status: 200, body: { packs: (await billing.listCreditPacks(auth.project.id, { activeOnly: true })).map(renderCreditPack) } };
    },

    buyCreditPack: async ({ params, body, query, res }) => {
      const r = await billing.buyCreditPack(actorOf(res, query), params.packId, {
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
        requestKey: requestKeyOf(res),
      });
      return r.ok ? { status: 200, body: { id: r.value.id, url: r.value.url } } : failureResponse(res, r);
    },

    checkout: async ({ body, query, res }) => {
      const r = await billing.startCheckout(actorOf(res, query), {
        priceId: body.priceId,
        successUrl: body.successUrl,
        cancelUrl: body.cancelUrl,
        ...(body.promotionCode !== undefined ? { promotionCode: body.promotionCode } : {}),
        ...(body.trialDays !== undefined ? { trialDays: body.trialDays } : {}),
        ...(body.quantity !== undefined ? { quantity: body.quantity } : {}),
        requestKey: requestKeyOf(res),
      });
      return r.ok ? { status: 200, body: { id: r.value.id, url: r.value.url } } : failureResponse(res, r);
    },

    setupIntent: async ({ query, res }) => {
      const r = await billing.createSetupIntent(actorOf(res, query), requestKeyOf(res));
      return r.ok ? { status: 200, body: { clientSecret: r.value.clientSecret, publishableKey: r.value.publishableKey } } : failureResponse(res, r);
    },

    subscribe: async ({ body, query, req, res }) => {
      const r = await billing.subscribe(
        { ...actorOf(res, query), origin: originOf(req, res) },
        {
          priceId: body.priceId,
          paymentMethodId: body.paymentMethodId,
          ...(body.quantity !== undefined ? { quantity: body.quantity } : {}),
          requestKey: requestKeyOf(res),
        },
      );
      return r.ok ? { status: 201, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    subscription: async ({ query, res }) => {
      const r = await billing.currentSubscription(actorOf(res, query));
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: r.value === null ? null : renderSubscription(r.value) };
    },

    invoices: async ({ query, res }) => {
      const r = await billing.listInvoices(actorOf(res, query), query.limit ?? DEFAULT_INVOICE_LIMIT);
      return r.ok ? { status: 200, body: { invoices: r.value.map(renderInvoice) } } : failureResponse(res, r);
    },

    entitlements: async ({ query, res }) => {
      const r = await billing.entitlements(actorOf(res, query));
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: r.value === null ? null : renderEntitlements(r.value) };
    },

    changePreview: async ({ body, query, res }) => {
      const r = await billing.previewChange(actorOf(res, query), body.new_price_id);
      return r.ok ? { status: 200, body: renderPreview(r.value) } : failureResponse(res, r);
    },

    seatsPreview: async ({ body, query, res }) => {
      const r = await billing.previewSeats(actorOf(res, query), body.quantity);
      return r.ok ? { status: 200, body: renderPreview(r.value) } : failureResponse(res, r);
    },

    seats: async ({ body, query, req, res }) => {
      const r = await billing.setSeats({ ...actorOf(res, query), origin: originOf(req, res) }, body.quantity);
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    change: async ({ body, query, req, res }) => {
      const r = await billing.changeSubscription(
        { ...actorOf(res, query), origin: originOf(req, res) },
        { newPriceId: body.new_price_id, requestKey: requestKeyOf(res) },
      );
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    cancel: async ({ body, query, req, res }) => {
      const r = await billing.cancelSubscription(
        { ...actorOf(res, query), origin: originOf(req, res) },
        { atPeriodEnd: body.at_period_end ?? true, requestKey: requestKeyOf(res) },
      );
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    pause: async ({ query, req, res }) => {
      const r = await billing.pauseSubscription({ ...actorOf(res, query), origin: originOf(req, res) }, { requestKey: requestKeyOf(res) });
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    resume: async ({ query, req, res }) => {
      const r = await billing.resumeSubscription({ ...actorOf(res, query), origin: originOf(req, res) }, { requestKey: requestKeyOf(res) });
      // A resume once a period began while paused charges the new period: a decline answers 402.
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    organizationSubscription: async ({ params, res }) => {
      const r = await billing.organizationBilling.subscription(projectOf(res).id, params.orgId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: r.value === null ? null : renderSubscription(r.value) };
    },

    organizationEntitlements: async ({ params, res }) => {
      const r = await billing.organizationBilling.entitlements(projectOf(res).id, params.orgId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: r.value === null ? null : renderEntitlements(r.value) };
    },

    organizationInvoices: async ({ params, query, res }) => {
      const r = await billing.organizationBilling.invoices(projectOf(res).id, params.orgId, query.limit);
      return r.ok ? { status: 200, body: { invoices: r.value.map(renderInvoice) } } : failureResponse(res, r);
    },

    organizationSeats: async ({ params, body, req, res }) => {
      const r = await billing.organizationBilling.seats(projectOf(res).id, params.orgId, body.quantity, projectActionOf(req, res));
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    organizationCancel: async ({ params, body, req, res }) => {
      const r = await billing.organizationBilling.cancel(
        projectOf(res).id,
        params.orgId,
        { atPeriodEnd: body.at_period_end ?? true, requestKey: randomUUID() },
        projectActionOf(req, res),
      );
      return r.ok ? { status: 200, body: renderSubscription(r.value) } : failureResponse(res, r);
    },

    stripeWebhook: async ({ req, res }) => {
      const r = await billing.receiveProcessorWebhook({ processor: 'stripe', rawBody: rawBodyOf(req), headers: req.headers, projectId: null });
      return r.ok ? { status: 200, body: { received: true as const } } : failureResponse(res, r);
    },

    stripeWebhookForProject: async ({ params, req, res }) => {
      const r = await billing.receiveProcessorWebhook({ processor: 'stripe', rawBody: rawBodyOf(req), headers: req.headers, projectId: params.projectId });
      return r.ok ? { status: 200, body: { received: true as const } } : failureResponse(res, r);
    },
  });
}
