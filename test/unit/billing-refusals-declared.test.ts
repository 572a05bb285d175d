import type { ServerInferResponses } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { contract } from '../../contract';
import { errorResponse } from '../../apps/server/http/errors';
import type { Err } from '../../domain/result';
import { type BillingErrorCode, processorError, refuseFailure } from '../../application/billing/errors';
import type { RequestFailure } from '../../application/billing/payment-processor';
import type { OperatorUseCases, ProcessorUseCases, UserUseCases } from '../../application/billing/use-cases';

/**
 * A billing route answers its use case's refusal with the answer for its code (`failureResponse`,
 * apps/server/http/billing.routes.ts and admin-billing.routes.ts), whose type carries the codes the
 * use case can answer (`Result<T, E>`, E the narrow union): a route that does not declare every one
 * of them (BILLING_REFUSALS, ADMIN_BILLING_REFUSALS) fails to compile, instead of answering a 500 at
 * run time.
 *
 * The compile-time half of this file is checked by the type-check (`npx tsc -p tsconfig.json
 * --noEmit`, which includes test files), not by vitest, which runs with type-checking off: each
 * `@ts-expect-error` below must meet a type error, or the type-check fails ("unused directive").
 * The run-time half checks the same answers against the contract's response schemas.
 */

const routes = contract.billing;
const adminRoutes = contract.admin.billing;
type UseCases = UserUseCases & OperatorUseCases & ProcessorUseCases;

/** What a use case refuses with. */
type Refusal<K extends keyof UseCases> = Extract<Awaited<ReturnType<UseCases[K]>>, { ok: false }>;
/** What a handler of the route may answer. */
type Answer<R extends (typeof routes)[keyof typeof routes]> = ServerInferResponses<R>;
type AdminAnswer<R extends (typeof adminRoutes)[keyof typeof adminRoutes]> = ServerInferResponses<R>;

/** The handlers' shape: a refusal in, the route's answer out. */
const answer = <E extends BillingErrorCode>(r: Err<E>) => errorResponse(r.error, r.detail);

// Each route declares what its own use case refuses with: these compile.
const checkout = (r: Refusal<'startCheckout'>): Answer<typeof routes.checkout> => answer(r);
const subscribe = (r: Refusal<'subscribe'>): Answer<typeof routes.subscribe> => answer(r);
const change = (r: Refusal<'changeSubscription'>): Answer<typeof routes.change> => answer(r);
const cancel = (r: Refusal<'cancelSubscription'>): Answer<typeof routes.cancel> => answer(r);
const webhook = (r: Refusal<'receiveProcessorWebhook'>): Answer<typeof routes.stripeWebhook> => answer(r);
const connect = (r: Refusal<'connectBilling'>): AdminAnswer<typeof adminRoutes.connect> => answer(r);

// A change's decline (`card_declined`, 402) on the cancel route, which declares no 402 (strictStatusCodes).
// @ts-expect-error the cancel route declares no card refusal
const cancelAnsweringChange = (r: Refusal<'changeSubscription'>): Answer<typeof routes.cancel> => answer(r);

// A resume once a period began while paused charges it, so its route declares the card refusals.
const resume = (r: Refusal<'resumeSubscription'>): Answer<typeof routes.resume> => answer(r);

// A Stripe key refusal (`invalid_secret_key`, 400) on the console's create-plan route.
// @ts-expect-error the create-plan route declares no key refusal
const createPlanAnsweringConnect = (r: Refusal<'connectBilling'>): AdminAnswer<typeof adminRoutes.createPlan> => answer(r);

// A checkout refusal (`redirect_url_not_allowed`, 400) on the webhook route.
// @ts-expect-error the webhook route declares no checkout refusal
const webhookAnsweringCheckout = (r: Refusal<'startCheckout'>): Answer<typeof routes.stripeWebhook> => answer(r);

// A call that charges no card fails with a request failure only, which never answers a decline.
const requestFailed: RequestFailure = { kind: 'invalid_request', message: 'No such price' };
// @ts-expect-error a request failure answers processor_rejected or processor_unavailable only
const declined: 'card_declined' = processorError(requestFailed);

/** Whether the route's contract declares this answer: its status, and a body its schema for that status accepts. */
function declares(route: { responses: Record<number, unknown> }, response: { status: number; body: unknown }): boolean {
  const schema = route.responses[response.status] as { safeParse(body: unknown): { success: boolean } } | undefined;
  return schema?.safeParse(response.body).success === true;
}

describe('the billing routes answer only the refusals they declare', () => {
  it('a route answers its own use case’s refusals, with the use case’s words', () => {
    expect(subscribe({ ok: false, error: 'card_declined', detail: 'Your card has insufficient funds.' })).toEqual({
      status: 402,
      body: { error: 'Your card has insufficient funds.', code: 'card_declined' },
    });
    expect(declares(routes.checkout, checkout({ ok: false, error: 'redirect_url_not_allowed' }))).toBe(true);
    expect(declares(routes.change, change({ ok: false, error: 'card_declined' }))).toBe(true);
    expect(declares(routes.cancel, cancel({ ok: false, error: 'cancellation_scheduled' }))).toBe(true);
    expect(declares(routes.resume, resume({ ok: false, error: 'card_declined' }))).toBe(true);
    expect(declares(routes.stripeWebhook, webhook({ ok: false, error: 'webhook_project_unknown' }))).toBe(true);
    expect(declares(adminRoutes.connect, connect({ ok: false, error: 'processor_rejected_key', detail: 'Stripe refused the secret key: expired' }))).toBe(true);
  });

  it('the answers the type-check refuses above are ones the contract does not declare', () => {
    expect(declares(routes.cancel, cancelAnsweringChange({ ok: false, error: 'card_declined' }))).toBe(false);
    expect(declares(adminRoutes.createPlan, createPlanAnsweringConnect({ ok: false, error: 'invalid_secret_key' }))).toBe(false);
    expect(declares(routes.stripeWebhook, webhookAnsweringCheckout({ ok: false, error: 'redirect_url_not_allowed' }))).toBe(false);
  });

  it('a request that charges no card is refused as processor_rejected or processor_unavailable, with the processor’s words', () => {
    expect(declined).toBe('processor_rejected');
    expect(refuseFailure({ kind: 'unavailable', message: 'Stripe did not answer' })).toEqual({
      ok: false,
      error: 'processor_unavailable',
      detail: 'Stripe did not answer',
    });
    expect(refuseFailure({ kind: 'card_declined', message: 'Your card was declined.', declineCode: 'generic_decline' })).toEqual({
      ok: false,
      error: 'card_declined',
      detail: 'Your card was declined.',
    });
  });
});
