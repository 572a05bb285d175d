import type { BillingConnection } from '../../application/billing/billing.store';
import type { PaymentProcessor, ProcessorKind } from '../../application/billing/payment-processor';
import type { InboundWebhooks } from '../../application/billing/processors';

/**
 * One payment processor as Tollgate knows it, under its name: the client of a project's connection
 * to it, and its inbound webhooks (null when it sends none). Each processor's folder makes its own
 * (stripe/stripe-registration.ts, sandbox/sandbox-registration.ts); `ProcessorRegistry` holds one
 * per name.
 */
export interface ProcessorRegistration<K extends ProcessorKind = ProcessorKind> {
  readonly processor: K;
  /** The processor's client for a connection whose `processor` is this one. */
  forConnection(connection: BillingConnection): PaymentProcessor;
  readonly webhooks: InboundWebhooks | null;
}
