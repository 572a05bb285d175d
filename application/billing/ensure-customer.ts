import type { EndUser } from '../../domain/user';
import type { BillingConnection, BillingCustomer } from './billing.store';
import type { BillingDeps } from './deps';
import type { PaymentProcessor, ProcessorResult } from './payment-processor';

/**
 * The user's customer at the project's processor, created on first need with the user's email and
 * metadata naming the project and user. The processor write's idempotency key is derived from the
 * project and user, so two first requests at once make one customer.
 */
export async function ensureCustomer(
  deps: Pick<BillingDeps, 'customers' | 'clock'>,
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
    trialUsed: false,
    createdAt: deps.clock.now(),
  });
  return { ok: true, value: customer };
}
