import { type BillingSubject, organizationSubject, userSubject } from '../../domain/billing/subject';
import type { InvoiceStatus } from '../../domain/billing/invoice';
import { isUuid } from '../../domain/ids';
import { type Result, err, ok } from '../../domain/result';
import type { BillingEvent } from './billing.store';
import type { BillingDeps } from './deps';
import { catalogNames, operatorInvoiceView, type OperatorInvoiceView, type OperatorSubscriptionView, subscriptionView } from './views';

const MAX_LIMIT = 500;
const limitOf = (limit: number | undefined, fallback: number) =>
  limit === undefined || !Number.isInteger(limit) || limit < 1 ? fallback : Math.min(limit, MAX_LIMIT);

/** Which rows of a list: one user's or one organization's, `limit` of them (50 by default, at most 500), after the previous page's `cursor`. */
export interface ListFilter {
  userId?: string;
  organizationId?: string;
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** A page of a list, newest first, and the cursor of the next (older) page: null on the last one. */
export interface RecordPage<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * One page of rows read with `read(limit + 1, after)`: the extra row only says whether a next page
 * exists. The cursor is the id of the page's last row (the store finds its place in the order); a
 * cursor that is not an id is `invalid_cursor`.
 */
async function page<R extends { id: string }, T>(
  filter: ListFilter,
  read: (limit: number, after: string | undefined) => Promise<R[]>,
  view: (rows: R[]) => Promise<T[]>,
): Promise<Result<RecordPage<T>, 'invalid_cursor'>> {
  if (filter.cursor !== undefined && !isUuid(filter.cursor)) return err('invalid_cursor');
  const limit = limitOf(filter.limit, 50);
  const rows = await read(limit + 1, filter.cursor);
  const shown = rows.slice(0, limit);
  return ok({ items: await view(shown), nextCursor: rows.length > limit ? shown[shown.length - 1]!.id : null });
}

/**
 * `tollgate subscription list` and the console's Subscriptions: a project's subscriptions, newest
 * first, by user and state, a page at a time, each with the user's email.
 */
export function makeListSubscriptions(deps: Pick<BillingDeps, 'subscriptions' | 'catalog' | 'projects' | 'directory' | 'organizations'>) {
  return async function listSubscriptions(
    projectId: string,
    filter: ListFilter & { status?: string },
  ): Promise<Result<RecordPage<OperatorSubscriptionView>, 'project_not_found' | 'invalid_cursor'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    return page(
      filter,
      (limit, after) => deps.subscriptions.list(projectId, { ...subjectFilter(filter), status: filter.status, limit, ...(after ? { after } : {}) }),
      async (rows) => {
        const [names, owners] = await Promise.all([catalogNames(deps.catalog, projectId), ownerNames(deps, projectId, rows)]);
        return rows.map((s) => ({ ...subscriptionView(s, names), ...owners(s.subject) }));
      },
    );
  };
}

/**
 * `tollgate invoice list` and the console's Invoices: a project's invoices, newest first, by user
 * and status, a page at a time, each with the user it bills and the user's email.
 */
export function makeListProjectInvoices(deps: Pick<BillingDeps, 'invoices' | 'projects' | 'directory' | 'organizations'>) {
  return async function listProjectInvoices(
    projectId: string,
    filter: ListFilter & { status?: InvoiceStatus },
  ): Promise<Result<RecordPage<OperatorInvoiceView>, 'project_not_found' | 'invalid_cursor'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    return page(
      filter,
      (limit, after) => deps.invoices.list(projectId, { ...subjectFilter(filter), status: filter.status, limit, ...(after ? { after } : {}) }),
      async (rows) => {
        const owners = await ownerNames(deps, projectId, rows);
        return rows.map((i) => operatorInvoiceView(i, owners(i.subject)));
      },
    );
  };
}

/** The one user's or organization's rows a filter asks for (a user when both are given), or every row. */
function subjectFilter(filter: ListFilter): { subject?: BillingSubject } {
  if (filter.userId !== undefined) return { subject: userSubject(filter.userId) };
  if (filter.organizationId !== undefined) return { subject: organizationSubject(filter.organizationId) };
  return {};
}

/** Who each row of a page belongs to, by name: users by email (one query), organizations by name (one read each, few on a page). */
async function ownerNames(
  deps: Pick<BillingDeps, 'directory' | 'organizations'>,
  projectId: string,
  rows: ReadonlyArray<{ subject: BillingSubject }>,
): Promise<(subject: BillingSubject) => { userEmail: string | null; organizationName: string | null }> {
  const userIds = [...new Set(rows.filter((r) => r.subject.kind === 'user').map((r) => r.subject.id))];
  const orgIds = [...new Set(rows.filter((r) => r.subject.kind === 'organization').map((r) => r.subject.id))];
  const [emails, orgs] = await Promise.all([
    userIds.length > 0 ? deps.directory.emails(projectId, userIds) : Promise.resolve(new Map<string, string>()),
    Promise.all(orgIds.map((id) => deps.organizations.store.findById(projectId, id))),
  ]);
  const orgNames = new Map(orgs.flatMap((o) => (o === null ? [] : [[o.id, o.name] as const])));
  return (subject) =>
    subject.kind === 'user'
      ? { userEmail: emails.get(subject.id) ?? null, organizationName: null }
      : { userEmail: null, organizationName: orgNames.get(subject.id) ?? null };
}

/** `tollgate billing events`: the project events recorded, newest first. */
export function makeListEvents(deps: Pick<BillingDeps, 'eventLog' | 'projects'>) {
  return async function listEvents(
    projectId: string,
    filter: { type?: BillingEvent['type']; limit?: number },
  ): Promise<Result<BillingEvent[], 'project_not_found'>> {
    if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
    return ok(await deps.eventLog.list(projectId, { type: filter.type, limit: limitOf(filter.limit, 50) }));
  };
}
