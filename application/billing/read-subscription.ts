import { entitlementsOf } from '../../domain/billing/entitlements';
import { INVOICE_LIST_DEFAULT_LIMIT, invoiceListLimit } from '../../domain/billing/invoice';
import type { BillingDeps } from './deps';
import type { BillingOutcome } from './errors';
import type { BillingActor } from './use-cases';
import { catalogNames, type Entitlements, invoiceView, type InvoiceView, subscriptionView, type SubscriptionView } from './views';

/** GET billing/subscription: the user's live subscription (trialing, active, past due, paused), or null. */
export function makeCurrentSubscription(deps: Pick<BillingDeps, 'subscriptions' | 'catalog'>) {
  return async function currentSubscription(actor: BillingActor): Promise<BillingOutcome<SubscriptionView | null>> {
    const live = await deps.subscriptions.findLive(actor.project.id, actor.user.id);
    if (live === null) return { ok: true, value: null };
    return { ok: true, value: subscriptionView(live, await catalogNames(deps.catalog, actor.project.id)) };
  };
}

/** GET billing/invoices: the user's invoices, newest first (limit 1..100, default 10). */
export function makeListInvoices(deps: Pick<BillingDeps, 'invoices'>) {
  return async function listInvoices(actor: BillingActor, limit: number): Promise<BillingOutcome<InvoiceView[]>> {
    // The contract bounds the limit; anything else falls back to the default.
    const n = invoiceListLimit(limit) ?? INVOICE_LIST_DEFAULT_LIMIT;
    const invoices = await deps.invoices.listForUser(actor.project.id, actor.user.id, n);
    return { ok: true, value: invoices.map(invoiceView) };
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
