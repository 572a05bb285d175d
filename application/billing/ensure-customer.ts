import type { EndUser } from '../../domain/user';
import type { BillingConnection, BillingCustomer } from './billing.store';
import type { BillingDeps } from './deps';
import type { PaymentProcessor, ProcessorKind, ProcessorResult } from './payment-processor';

/** Enough of a user's subscriptions to find an earlier trial. */
const TRIAL_HISTORY_LIMIT = 500;

/**
 * The user's customer at the project's processor, created on first need with the user's email and
 * metadata naming the project and user. The processor write's idempotency key is derived from the
 * project and user, so two first requests at once make one customer. A new customer record knows
 * whether the user already had a trial in the project (one per user and project, whichever
 * processor or account it was on): from the user's recorded subscriptions.
 */
export async function ensureCustomer(
  deps: Pick<BillingDeps, 'customers' | 'subscriptions' | 'clock'>,
  connection: BillingConnection,
  processor: PaymentProcessor,
  user: EndUser,
): Promise<ProcessorResult<BillingCustomer>> {
  const existing = await deps.customers.find(connection.projectId, user.id, processor.kind);
  if (existing !== null) return { ok: true, value: existing };
  const created = await processor.createCustomer({
    email: user.email,
    name: user.name,
    metadata: { projectId: connection.projectId, userId: user.id },
    idempotencyKey: `tollgate-customer-${connection.projectId}-${user.id}`,
  });
  if (!created.ok) return created;
  const customer = await deps.customers.insert({
    projectId: connection.projectId,
    userId: user.id,
    processor: processor.kind,
    customerId: created.value,
    trialUsed: await hadTrial(deps, connection.projectId, user.id),
    createdAt: deps.clock.now(),
  });
  return { ok: true, value: customer };
}

/** Whether one of the user's recorded subscriptions of the project (on any processor) had a trial. */
export async function hadTrial(deps: Pick<BillingDeps, 'subscriptions'>, projectId: string, userId: string): Promise<boolean> {
  const history = await deps.subscriptions.list(projectId, { userId, limit: TRIAL_HISTORY_LIMIT });
  return history.some((s) => s.trialStart !== null);
}

/**
 * Whether the user already had their one trial of the project: the customer's mark at this
 * processor, or a recorded subscription with a trial on any processor.
 */
export async function trialUsed(
  deps: Pick<BillingDeps, 'customers' | 'subscriptions'>,
  projectId: string,
  userId: string,
  processor: ProcessorKind,
): Promise<boolean> {
  return (await deps.customers.find(projectId, userId, processor))?.trialUsed === true || (await hadTrial(deps, projectId, userId));
}
