import { type Result, err, ok } from '../../domain/result';
import type { BillingConnection } from './billing.store';
import type { BillingDeps } from './deps';
import type { PaymentProcessor } from './payment-processor';

/** Why billing cannot run for a project: no connection, or the sandbox switched off. */
export type ConnectedError = 'billing_not_connected' | 'sandbox_unavailable';

/** The project's connection and its processor, or the refusal when billing cannot run. */
export async function connectedProcessor(
  deps: Pick<BillingDeps, 'connections' | 'processors' | 'settings'>,
  projectId: string,
): Promise<Result<{ connection: BillingConnection; processor: PaymentProcessor }, ConnectedError>> {
  const connection = await deps.connections.get(projectId);
  if (connection === null) return err('billing_not_connected');
  if (connection.processor === 'sandbox' && !deps.settings.sandboxAllowed) return err('sandbox_unavailable');
  return ok({ connection, processor: deps.processors.forConnection(connection) });
}
