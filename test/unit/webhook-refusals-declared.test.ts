import type { ServerInferResponses } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { contract } from '../../contract';
import { errorResponse } from '../../apps/server/http/errors';
import type { Err } from '../../domain/result';
import type { WebhookErrorCode } from '../../application/webhooks/errors';
import type { WebhookUseCases } from '../../application/webhooks/use-cases';

/**
 * A console webhook route answers its use case's refusal with the answer for its code
 * (`failureResponse`, apps/server/http/admin-webhooks.routes.ts), whose type carries the code: a
 * route that does not declare every code its use case can refuse with fails to compile, instead
 * of answering a 500 at run time.
 *
 * The compile-time half of this file is checked by the type-check (`npx tsc -p tsconfig.json
 * --noEmit`, which includes test files), not by vitest, which runs with type-checking off: each
 * `@ts-expect-error` below must meet a type error, or the type-check fails ("unused directive").
 * The run-time half checks the same answers against the contract's response schemas.
 */

const routes = contract.admin.webhooks;

/** What a use case refuses with. */
type Refusal<K extends keyof WebhookUseCases> = Extract<Awaited<ReturnType<WebhookUseCases[K]>>, { ok: false }>;
/** What a handler of the route may answer. */
type Answer<R extends (typeof routes)[keyof typeof routes]> = ServerInferResponses<R>;

/** The handlers' shape: a refusal in, the route's answer out. */
const answer = <E extends WebhookErrorCode>(r: Err<E>) => errorResponse(r.error, r.detail);

// Each route declares what its own use case refuses with: these compile.
const resend = (r: Refusal<'resendDelivery'>): Answer<typeof routes.resend> => answer(r);
const retryNow = (r: Refusal<'retryDeliveryNow'>): Answer<typeof routes.retryNow> => answer(r);
const remove = (r: Refusal<'deleteEndpoint'>): Answer<typeof routes.remove> => answer(r);
const create = (r: Refusal<'createEndpoint'>): Answer<typeof routes.create> => answer(r);

// Retry-now's `webhook_delivery_not_waiting` (409) on the resend route, which declares another 409 only.
// @ts-expect-error webhook_delivery_not_waiting is not a code the resend route declares
const resendAnsweringRetryNow = (r: Refusal<'retryDeliveryNow'>): Answer<typeof routes.resend> => answer(r);

// Resend's `webhook_endpoint_disabled` (409) on the delete route, which declares no 409 at all (strictStatusCodes).
// @ts-expect-error the delete route declares no 409
const removeAnsweringResend = (r: Refusal<'resendDelivery'>): Answer<typeof routes.remove> => answer(r);

// A URL refusal (400) on the list route, whose 400 is the edge's request errors only.
// @ts-expect-error the list route declares no webhook URL refusal
const listAnsweringCreate = (r: Refusal<'createEndpoint'>): Answer<typeof routes.list> => answer(r);

/** Whether the route's contract declares this answer: its status, and a body its schema for that status accepts. */
function declares(route: { responses: Record<number, unknown> }, response: { status: number; body: unknown }): boolean {
  const schema = route.responses[response.status] as { safeParse(body: unknown): { success: boolean } } | undefined;
  return schema?.safeParse(response.body).success === true;
}

describe('the console webhook routes answer only the refusals they declare', () => {
  it('a route answers its own use case’s refusals, with the use case’s words', () => {
    expect(resend({ ok: false, error: 'webhook_endpoint_disabled' })).toEqual({
      status: 409,
      body: { error: 'The webhook endpoint is disabled: enable it first', code: 'webhook_endpoint_disabled' },
    });
    expect(create({ ok: false, error: 'webhook_url_private', detail: 'Webhook URL not allowed: 10.0.0.5 is private' })).toEqual({
      status: 400,
      body: { error: 'Webhook URL not allowed: 10.0.0.5 is private', code: 'webhook_url_private' },
    });
    expect(declares(routes.resend, resend({ ok: false, error: 'webhook_delivery_not_found' }))).toBe(true);
    expect(declares(routes.retryNow, retryNow({ ok: false, error: 'webhook_delivery_not_waiting' }))).toBe(true);
    expect(declares(routes.remove, remove({ ok: false, error: 'webhook_endpoint_not_found' }))).toBe(true);
  });

  it('the answers the type-check refuses above are ones the contract does not declare', () => {
    expect(declares(routes.resend, resendAnsweringRetryNow({ ok: false, error: 'webhook_delivery_not_waiting' }))).toBe(false);
    expect(declares(routes.remove, removeAnsweringResend({ ok: false, error: 'webhook_endpoint_disabled' }))).toBe(false);
    expect(declares(routes.list, listAnsweringCreate({ ok: false, error: 'webhook_url_private', detail: 'private' }))).toBe(false);
  });
});
