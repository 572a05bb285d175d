import { entitlementsOf } from '../../domain/billing/entitlements';
import { INVOICE_LIST_DEFAULT_LIMIT, invoiceListLimit } from '../../domain/billing/invoice';
import { type Result, ok } from '../../domain/result';
import type { BillingDeps } from './deps';
import type { BillingActor } from './requests';
import { catalogNames, type Entitlements, invoiceView, type InvoiceView, subscriptionView, type SubscriptionView } from './views';

/** GET billing/subscription: the user's live subscription (trialing, active, past due, paused), or null. */
export function makeCurrentSubscription(deps: Pick<BillingDeps, 'subscriptions' | 'catalog'>) {
  return async function currentSubscription(actor: BillingActor): Promise<Result<SubscriptionView | null, never>> {
    const live = await deps.subscriptions.findLive(actor.project.id, actor.user.id);
    if (live === null) return ok(null);
    return ok(subscriptionView(live, await catalogNames(deps.catalog, actor.project.id)));
  };
}

/** GET billing/invoices: the user's invoices, newest first (limit 1..100, default 10). */
export function makeListInvoices(deps: Pick<BillingDeps, 'invoices'>) {
  return async function listInvoices(actor: BillingActor, limit: number): Promise<Result<InvoiceView[], never>> {
    // The contract bounds the limit; anything else falls back to the default.
    const n = invoiceListLimit(limit) ?? INVOICE_LIST_DEFAULT_LIMIT;
    const invoices = await deps.invoices.listForUser(actor.project.id, actor.user.id, n);
    return ok(invoices.map(invoiceView));
  };
}

/**
 * GET billing/entitlements: {plan, status, features} of the user's subscription while it entitles
 * (active, trialing, past due within its grace period, pending cancellation until the period
 * ends), else null. One query, not cached: a server-side check sees a change at once.
 */
export function makeEntitlements(deps: Pick<BillingDeps, 'entitlementsReader' | 'clock'>) {
  return async function entitlements(actor: BillingActor): Promise<Entitlements | null> {
    const current = await deps.entitlementsReader.current(actor.project.id, actor.user.id);
    if (current === null) return null;
    return entitlementsOf(current.subscription, current.plan, deps.clock.now());
  };
}
