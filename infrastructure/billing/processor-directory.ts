import type { BillingConnection } from '../../application/billing/billing.store';
import type { PaymentProcessor, ProcessorKind } from '../../application/billing/payment-processor';
import type { InboundWebhooks, ProcessorDirectory } from '../../application/billing/processors';
import type { ProcessorRegistration } from './processor-registration';
import { sandboxRegistration } from './sandbox/sandbox-registration';
import type { SandboxDependencies } from './sandbox/sandbox-engine';
import { type StripeSettings, stripeRegistration } from './stripe/stripe-registration';

/**
 * Every payment processor Tollgate bills through, by name (`ProcessorKind`): the processor of each
 * project's connection, and each processor's inbound webhooks. A processor is its folder's adapter
 * plus one registration here; a name without a registration fails to compile.
 */
export class ProcessorRegistry implements ProcessorDirectory {
  private readonly registrations: { readonly [K in ProcessorKind]: ProcessorRegistration<K> };

  constructor(deps: { sandbox: SandboxDependencies; stripe: StripeSettings }) {
    this.registrations = {
      sandbox: sandboxRegistration(deps.sandbox),
      stripe: stripeRegistration(deps.stripe),
    };
  }

  forConnection(connection: BillingConnection): PaymentProcessor {
    return this.registrations[connection.processor].forConnection(connection);
  }

  inboundWebhooks(processor: ProcessorKind): InboundWebhooks | null {
    return this.registrations[processor].webhooks;
  }
}
