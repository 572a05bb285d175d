import type { BillingConnection } from './billing.store';
import type { BillingDeps } from './deps';
import { type BillingOutcome, refuse } from './errors';
import type { PaymentProcessor } from './payment-processor';

/** The project's connection and its processor, or the refusal when billing cannot run. */
export async function connectedProcessor(
  deps: Pick<BillingDeps, 'connections' | 'processors' | 'settings'>,
  projectId: string,
): Promise<BillingOutcome<{ connection: BillingConnection; processor: PaymentProcessor }>> {
  const connection = await deps.connections.get(projectId);
  if (connection === null) return refuse('billing_not_connected');
  if (connection.processor === 'sandbox' && !deps.settings.sandboxAllowed) return refuse('sandbox_unavailable');
  return { ok: true, value: { connection, processor: deps.processors.forConnection(connection) } };
}
