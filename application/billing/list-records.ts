import type { BillingEventType } from '../../domain/billing/events';
import type { InvoiceStatus } from '../../domain/billing/invoice';
import type { BillingEvent } from './billing.store';
import { type BillingDeps, catalogNames, operatorInvoiceView, subscriptionView } from './deps';
import { type BillingOutcome, refuse } from './errors';
import type { OperatorInvoiceView, OperatorSubscriptionView } from './views';

const MAX_LIMIT = 500;
const limitOf = (limit: number | undefined, fallback: number) =>
  limit === undefined || !Number.isInteger(limit) || limit < 1 ? fallback : Math.min(limit, MAX_LIMIT);

/** `tollgate subscription list`: a project's subscriptions, newest first, by user and state, each with the user's email. */
export function makeListSubscriptions(deps: Pick<BillingDeps, 'subscriptions' | 'catalog' | 'projects' | 'directory'>) {
  return async function listSubscriptions(
    projectId: string,
    filter: { userId?: string; status?: string; limit?: number },
  ): Promise<BillingOutcome<OperatorSubscriptionView[]>> {
    if ((await deps.projects.findById(projectId)) === null) return refuse('project_not_found');
    const rows = await deps.subscriptions.list(projectId, { userId: filter.userId, status: filter.status, limit: limitOf(filter.limit, 50) });
    const [names, emails] = await Promise.all([catalogNames(deps.catalog, projectId), deps.directory.emails(projectId, rows.map((s) => s.userId))]);
    return { ok: true, value: rows.map((s) => ({ ...subscriptionView(s, names), userEmail: emails.get(s.userId) ?? null })) };
  };
}

/**
 * `tollgate invoice list` and the console's Invoices: a project's invoices, newest first, by user
 * and status (50 by default, at most 500), each with the user it bills and the user's email.
 */
export function makeListProjectInvoices(deps: Pick<BillingDeps, 'invoices' | 'projects' | 'directory'>) {
  return async function listProjectInvoices(
    projectId: string,
    filter: { userId?: string; status?: InvoiceStatus; limit?: number },
  ): Promise<BillingOutcome<OperatorInvoiceView[]>> {
    if ((await deps.projects.findById(projectId)) === null) return refuse('project_not_found');
    const rows = await deps.invoices.list(projectId, { userId: filter.userId, status: filter.status, limit: limitOf(filter.limit, 50) });
    const emails = await deps.directory.emails(projectId, rows.map((i) => i.userId));
    return { ok: true, value: rows.map((i) => operatorInvoiceView(i, emails.get(i.userId) ?? null)) };
  };
}

/** `tollgate billing events`: the project events recorded, newest first. */
export function makeListEvents(deps: Pick<BillingDeps, 'eventLog' | 'projects'>) {
  return async function listEvents(projectId: string, filter: { type?: BillingEventType; limit?: number }): Promise<BillingOutcome<BillingEvent[]>> {
    if ((await deps.projects.findById(projectId)) === null) return refuse('project_not_found');
    return { ok: true, value: await deps.eventLog.list(projectId, { type: filter.type, limit: limitOf(filter.limit, 50) }) };
  };
}
