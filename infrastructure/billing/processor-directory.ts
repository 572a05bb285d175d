import type { BillingConnection } from '../../application/billing/billing.store';
import type { PaymentProcessor } from '../../application/billing/payment-processor';
import type { ProcessorDirectory } from '../../application/billing/processors';
import { type SandboxDependencies } from './sandbox/sandbox-engine';
import { SandboxProcessor } from './sandbox/sandbox-processor';
import { StripeProcessor } from './stripe/stripe-processor';

export interface StripeSettings {
  apiUrl: string;
  timeoutMs: number;
  maxNetworkRetries: number;
}

/** Stripe clients kept per (project, key); a changed key makes a new one. */
const MAX_STRIPE_CLIENTS = 1000;

/**
 * The processor of each project's connection: a Stripe client for its key (reused: a client keeps
 * its HTTP agent and connections warm), or the sandbox scoped to the project.
 */
export class ProcessorRegistry implements ProcessorDirectory {
  private readonly stripeClients = new Map<string, { key: string; processor: StripeProcessor }>();

  constructor(private readonly deps: { sandbox: SandboxDependencies; stripe: StripeSettings }) {}

  forConnection(connection: BillingConnection): PaymentProcessor {
    if (connection.processor === 'sandbox') return new SandboxProcessor({ ...this.deps.sandbox, projectId: connection.projectId });
    const key = connection.secretKey;
    if (key === null) throw new Error(`Stripe connection of project ${connection.projectId} has no secret key`);
    const cached = this.stripeClients.get(connection.projectId);
    if (cached && cached.key === key) return cached.processor;
    const processor = new StripeProcessor({ secretKey: key, ...this.deps.stripe });
    if (this.stripeClients.size >= MAX_STRIPE_CLIENTS) this.stripeClients.delete(this.stripeClients.keys().next().value!);
    this.stripeClients.set(connection.projectId, { key, processor });
    return processor;
  }
}
