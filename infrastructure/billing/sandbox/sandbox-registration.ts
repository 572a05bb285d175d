import type { BillingConnection } from '../../../application/billing/billing.store';
import type { ProcessorRegistration } from '../processor-registration';
import type { SandboxDependencies } from './sandbox-engine';
import { SandboxProcessor } from './sandbox-processor';

/**
 * The sandbox: a processor scoped to the connection's project. It sends no webhooks: Tollgate
 * records what it changes as it changes it (application/billing/sandbox-operations.ts).
 */
export function sandboxRegistration(deps: SandboxDependencies): ProcessorRegistration<'sandbox'> {
  return {
    processor: 'sandbox',
    webhooks: null,
    forConnection: (connection: BillingConnection) => new SandboxProcessor({ ...deps, projectId: connection.projectId }),
  };
}
