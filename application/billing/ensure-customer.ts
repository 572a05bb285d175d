import type { BillingSubject } from '../../domain/billing/subject';
import type { EndUser } from '../../domain/user';
import type { BillingConnection, BillingCustomer } from './billing.store';
import type { BillingDeps } from './deps';
import type { PaymentProcessor, ProcessorKind, ProcessorMetadata, ProcessorResult } from './payment-processor';

/** Enough of a subject's subscriptions to find an earlier trial. */
const TRIAL_HISTORY_LIMIT = 500;

/** Who a subject is at the processor: Tollgate's ids as metadata. */
export const subjectMetadata = (projectId: string, subject: BillingSubject): ProcessorMetadata =>
  subject.kind === 'user' ? { projectId, userId: subject.id } : { projectId, organizationId: subject.id };

/**
 * The subject's customer at the project's processor, created on first need: a user's with their
 * email and name; an organization's with its name and the email of the member who first pays
 * (the processor mails receipts there). Metadata names the project and the user or organization.
 * The processor write's idempotency key is derived from the project and subject, so two first
 * requests at once make one customer. A new customer record knows whether the subject already had
 * a trial in the project (one per subject and project, whichever processor or account it was on):
 * from the subject's recorded subscriptions.
 */
export async function ensureCustomer(
  deps: Pick<BillingDeps, 'customers' | 'subscriptions' | 'clock' | 'organizations'>,
  connection: BillingConnection,
  processor: PaymentProcessor,
  subject: BillingSubject,
  user: EndUser,
): Promise<ProcessorResult<BillingCustomer>> {
  const existing = await deps.customers.find(connection.projectId, subject, processor.kind);
  if (existing !== null) return { ok: true, value: existing };
  const name = subject.kind === 'user' ? user.name : ((await deps.organizations.store.findById(connection.projectId, subject.id))?.name ?? null);
  const created = await processor.createCustomer({
    email: user.email,
    name,
    metadata: subjectMetadata(connection.projectId, subject),
    idempotencyKey: `tollgate-customer-${connection.projectId}-${subject.id}`,
  });
  if (!created.ok) return created;
  const customer = await deps.customers.insert({
    projectId: connection.projectId,
    subject,
    processor: processor.kind,
    customerId: created.value,
    trialUsed: await hadTrial(deps, connection.projectId, subject),
    createdAt: deps.clock.now(),
  });
  return { ok: true, value: customer };
}

/** Whether one of the subject's recorded subscriptions of the project (on any processor) had a trial. */
export async function hadTrial(deps: Pick<BillingDeps, 'subscriptions'>, projectId: string, subject: BillingSubject): Promise<boolean> {
  const history = await deps.subscriptions.list(projectId, { subject, limit: TRIAL_HISTORY_LIMIT });
  return history.some((s) => s.trialStart !== null);
}

/**
 * Whether the subject already had its one trial of the project: the customer's mark at this
 * processor, or a recorded subscription with a trial on any processor.
 */
export async function trialUsed(
  deps: Pick<BillingDeps, 'customers' | 'subscriptions'>,
  projectId: string,
  subject: BillingSubject,
  processor: ProcessorKind,
): Promise<boolean> {
  return (await deps.customers.find(projectId, subject, processor))?.trialUsed === true || (await hadTrial(deps, projectId, subject));
}
