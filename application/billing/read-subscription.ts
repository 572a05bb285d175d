import { entitlementsOf } from '../../domain/billing/entitlements';
import { INVOICE_LIST_DEFAULT_LIMIT, invoiceListLimit } from '../../domain/billing/invoice';
import type { BillingSubject } from '../../domain/billing/subject';
import { type Result, ok } from '../../domain/result';
import { payerOf, type SubjectError } from './billing-subject';
import type { BillingDeps } from './deps';
import { seatsHeldOf } from './organization-seats';
import type { BillingActor } from './requests';
import { catalogNames, type Entitlements, invoiceView, type InvoiceView, subscriptionView, type SubscriptionView } from './views';

/** GET billing/subscription: the subject's live subscription (trialing, active, past due, paused), or null. */
export function makeCurrentSubscription(deps: Pick<BillingDeps, 'subscriptions' | 'catalog' | 'organizations'>) {
  return async function currentSubscription(actor: BillingActor): Promise<Result<SubscriptionView | null, SubjectError<'read'>>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    const live = await deps.subscriptions.findLive(actor.project.id, payer.value.subject);
    if (live === null) return ok(null);
    return ok(subscriptionView(live, await catalogNames(deps.catalog, actor.project.id)));
  };
}

/** GET billing/invoices: the subject's invoices, newest first (limit 1..100, default 10). */
export function makeListInvoices(deps: Pick<BillingDeps, 'invoices' | 'organizations'>) {
  return async function listInvoices(actor: BillingActor, limit: number): Promise<Result<InvoiceView[], SubjectError<'read'>>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    // The contract bounds the limit; anything else falls back to the default.
    const n = invoiceListLimit(limit) ?? INVOICE_LIST_DEFAULT_LIMIT;
    const invoices = await deps.invoices.listForSubject(actor.project.id, payer.value.subject, n);
    return ok(invoices.map(invoiceView));
  };
}

/**
 * GET billing/entitlements: {plan, status, features} of the subject's subscription while it
 * entitles (active, trialing, past due within its grace period, pending cancellation until the
 * period ends), else null. One query, not cached: a server-side check sees a change at once. For an
 * organization (`?for=organization`) any member may read them: they are what membership grants.
 */
export function makeEntitlements(deps: Pick<BillingDeps, 'entitlementsReader' | 'clock' | 'organizations' | 'usage'>) {
  const subjectEntitlements = makeSubjectEntitlements(deps);
  return async function entitlements(actor: BillingActor): Promise<Result<Entitlements | null, SubjectError<'read'>>> {
    const payer = await payerOf(deps, actor, 'read');
    if (!payer.ok) return payer;
    return ok(await subjectEntitlements(actor.project.id, payer.value.subject));
  };
}

/**
 * The entitlements of a subject now: {plan, status, features} while its subscription entitles, else
 * null; an organization's on a per-seat price with its seats {used, total}. What GET
 * billing/entitlements answers, and what token verification adds when asked (`include:
 * ["entitlements"]`) for the token's context: its active organization, else its user.
 */
export function makeSubjectEntitlements(deps: Pick<BillingDeps, 'entitlementsReader' | 'clock' | 'usage'>) {
  return async function subjectEntitlements(projectId: string, subject: BillingSubject): Promise<Entitlements | null> {
    const now = deps.clock.now();
    const current = await deps.entitlementsReader.current(projectId, subject, now);
    if (current === null) return null;
    const granted = entitlementsOf(current.subscription, current.plan, now);
    if (granted === null) return null;
    const seated =
      subject.kind !== 'organization' || current.quantity === null || current.seatsHeld === null
        ? granted
        : { ...granted, seats: { used: seatsHeldOf(current.plan.seatPolicy, current.seatsHeld), total: current.quantity } };
    // A plan with metered features adds their standing (one more read); a plan without any costs nothing more.
    if (deps.usage === undefined || current.plan.usageLimits.length === 0) return seated;
    return { ...seated, usage: await deps.usage(projectId, subject, current) };
  };
}
