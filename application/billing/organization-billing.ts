import { INVOICE_LIST_DEFAULT_LIMIT, invoiceListLimit } from '../../domain/billing/invoice';
import { type BillingSubject, organizationSubject } from '../../domain/billing/subject';
import { err, ok, type Result } from '../../domain/result';
import type { AuditActor } from '../../domain/audit';
import { auditEntry } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import type { BillingDeps } from './deps';

/** Who changes an organization's billing for the project (its server's API key, an operator's CLI) and from where. */
export interface ProjectAction {
  actor: AuditActor;
  origin: RequestOrigin;
}
import { makeSetSeats, type SeatsError } from './organization-seats';
import { makeSubjectEntitlements } from './read-subscription';
import { type CancelError, makeCancelActions } from './manage-subscription';
import { catalogNames, type Entitlements, invoiceView, type InvoiceView, subscriptionView, type SubscriptionView } from './views';

/** The organization a project server names, by id or slug: only one of its own project. */
async function organizationOf(
  deps: Pick<BillingDeps, 'organizations'>,
  projectId: string,
  ref: string,
): Promise<Result<BillingSubject, 'organization_not_found'>> {
  const org = (await deps.organizations.store.findById(projectId, ref)) ?? (await deps.organizations.store.findBySlug(projectId, ref));
  return org === null ? err('organization_not_found') : ok(organizationSubject(org.id));
}

/**
 * An organization's billing as the project's server sees it (the API key: any organization of the
 * project, by id or slug): its live subscription, its entitlements, its invoices, and cancelling.
 * What a member does for their organization goes through the user routes with `?for=organization`.
 */
export function makeOrganizationBilling(deps: BillingDeps) {
  const entitlements = makeSubjectEntitlements(deps);
  const cancel = makeCancelActions(deps).forSubject;
  const setSeats = makeSetSeats(deps).forSubject;
  /** A project's change of an organization's billing in the audit log, as a member's is (audited-actions.ts). */
  const audited = (projectId: string, what: 'seats' | 'cancel', organizationId: string | null, r: Result<SubscriptionView, string>, by: ProjectAction) =>
    deps.audit.record(
      r.ok
        ? auditEntry(deps.clock.now(), projectId, `billing.${what}`, {
            actor: by.actor,
            origin: by.origin,
            target: { kind: 'subscription', id: r.value.id },
            details: {
              status: r.value.status,
              price_id: r.value.price.id,
              plan: r.value.plan.name,
              organization_id: r.value.organizationId,
              quantity: r.value.quantity,
            },
          })
        : auditEntry(deps.clock.now(), projectId, `billing.${what}.failed`, {
            actor: by.actor,
            origin: by.origin,
            reason: r.error,
            ...(organizationId !== null ? { details: { organization_id: organizationId } } : {}),
          }),
    );
  return {
    async subscription(projectId: string, organization: string): Promise<Result<SubscriptionView | null, 'organization_not_found'>> {
      const subject = await organizationOf(deps, projectId, organization);
      if (!subject.ok) return subject;
      const live = await deps.subscriptions.findLive(projectId, subject.value);
      return ok(live === null ? null : subscriptionView(live, await catalogNames(deps.catalog, projectId)));
    },
    async entitlements(projectId: string, organization: string): Promise<Result<Entitlements | null, 'organization_not_found'>> {
      const subject = await organizationOf(deps, projectId, organization);
      return subject.ok ? ok(await entitlements(projectId, subject.value)) : subject;
    },
    async invoices(projectId: string, organization: string, limit: number | undefined): Promise<Result<InvoiceView[], 'organization_not_found'>> {
      const subject = await organizationOf(deps, projectId, organization);
      if (!subject.ok) return subject;
      const n = (limit === undefined ? null : invoiceListLimit(limit)) ?? INVOICE_LIST_DEFAULT_LIMIT;
      return ok((await deps.invoices.listForSubject(projectId, subject.value, n)).map(invoiceView));
    },
    /** The organization's bought seats, as a member with org:billing:manage sets them; audited as `billing.seats` by `by`. */
    async seats(
      projectId: string,
      organization: string,
      quantity: unknown,
      by: ProjectAction,
    ): Promise<Result<SubscriptionView, 'organization_not_found' | SeatsError>> {
      const subject = await organizationOf(deps, projectId, organization);
      const r = subject.ok ? await setSeats(projectId, subject.value, quantity) : subject;
      audited(projectId, 'seats', subject.ok ? subject.value.id : null, r, by);
      return r;
    },
    /** Cancels it (at period end, or now); audited as `billing.cancel` by `by`. */
    async cancel(
      projectId: string,
      organization: string,
      input: { atPeriodEnd: boolean; requestKey: string },
      by: ProjectAction,
    ): Promise<Result<SubscriptionView, 'organization_not_found' | CancelError>> {
      const subject = await organizationOf(deps, projectId, organization);
      const r = subject.ok ? await cancel(projectId, subject.value, input) : subject;
      audited(projectId, 'cancel', subject.ok ? subject.value.id : null, r, by);
      return r;
    },
  };
}

/**
 * After an organization is deleted (ORGANIZATION_DELETED_TOPIC): its live subscription is
 * canceled at the end of the period already paid (a paused one, which cannot wait for a period
 * end, at once), so nothing is charged again; its invoices stay. Nothing live: nothing to do. A
 * refusal that a retry can clear (the subscription busy, the processor unreachable) throws, so the
 * job is tried again.
 */
export function makeWindDownOrganization(deps: BillingDeps) {
  const cancel = makeCancelActions(deps).forSubject;
  return async function windDownOrganization(input: { projectId: string; organizationId: string; messageId: string }): Promise<'canceled' | 'nothing_live'> {
    const subject = organizationSubject(input.organizationId);
    const requestKey = `organization-deleted-${input.messageId}`;
    let r = await cancel(input.projectId, subject, { atPeriodEnd: true, requestKey });
    if (!r.ok && (r.error === 'subscription_paused' || r.error === 'cancellation_scheduled')) {
      if (r.error === 'cancellation_scheduled') return 'canceled';
      r = await cancel(input.projectId, subject, { atPeriodEnd: false, requestKey });
    }
    if (r.ok) return 'canceled';
    if (r.error === 'subscription_not_found') return 'nothing_live';
    throw new Error(`the deleted organization's subscription could not be canceled yet: ${r.error}`);
  };
}
