import { type Result, ok } from '../../domain/result';
import { type ConnectedError, connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';
import { ensureCustomer } from './ensure-customer';
import { payerOf, type SubjectError } from './billing-subject';
import { type RequestFailureCode, refuseFailure } from './errors';
import type { BillingActor } from './requests';

/** The publishable key shown for the sandbox: Stripe.js is never loaded with it. */
export const SANDBOX_PUBLISHABLE_KEY = 'pk_sandbox_tollgate';

/**
 * POST billing/setup-intent: a client secret for collecting a card with Stripe Elements (or the
 * sandbox's equivalent), on the user's customer, with the publishable key the page needs.
 */
export function makeCreateSetupIntent(deps: BillingDeps) {
  return async function createSetupIntent(
    actor: BillingActor,
    requestKey: string,
  ): Promise<Result<{ clientSecret: string; publishableKey: string }, ConnectedError | RequestFailureCode | SubjectError>> {
    const payer = await payerOf(deps, actor, 'manage');
    if (!payer.ok) return payer;
    const connected = await connectedProcessor(deps, actor.project.id);
    if (!connected.ok) return connected;
    const { connection, processor } = connected.value;
    const customer = await ensureCustomer(deps, connection, processor, payer.value.subject, actor.user);
    if (!customer.ok) return refuseFailure(customer.failure);
    const intent = await processor.createSetupIntent(customer.value.customerId, `tollgate-setup-${actor.project.id}-${payer.value.key}-${requestKey}`);
    if (!intent.ok) return refuseFailure(intent.failure);
    return ok({ clientSecret: intent.value.clientSecret, publishableKey: connection.publishableKey ?? SANDBOX_PUBLISHABLE_KEY });
  };
}
