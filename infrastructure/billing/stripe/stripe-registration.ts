import type { BillingConnection } from '../../../application/billing/billing.store';
import type { ProcessorRegistration } from '../processor-registration';
import { StripeProcessor } from './stripe-processor';
import { StripeWebhooks } from './stripe-webhooks';

export interface StripeSettings {
  apiUrl: string;
  timeoutMs: number;
  maxNetworkRetries: number;
}

/** Stripe clients kept per (project, key); a changed key makes a new one. */
const MAX_STRIPE_CLIENTS = 1000;

/**
 * Stripe: a client for each connection's key (reused: a client keeps its HTTP agent and connections
 * warm), and its webhooks signed with the connection's webhook secret.
 */
export function stripeRegistration(settings: StripeSettings): ProcessorRegistration<'stripe'> {
  const clients = new Map<string, { key: string; processor: StripeProcessor }>();
  return {
    processor: 'stripe',
    webhooks: new StripeWebhooks(),
    forConnection(connection: BillingConnection): StripeProcessor {
      const key = connection.secretKey;
      if (key === null) throw new Error(`Stripe connection of project ${connection.projectId} has no secret key`);
      const cached = clients.get(connection.projectId);
      if (cached && cached.key === key) return cached.processor;
      const processor = new StripeProcessor({ secretKey: key, ...settings });
      if (clients.size >= MAX_STRIPE_CLIENTS) clients.delete(clients.keys().next().value!);
      clients.set(connection.projectId, { key, processor });
      return processor;
    },
  };
}
