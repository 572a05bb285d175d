import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTraceparent } from '../../domain/trace-context';
import { StripeProcessor } from '../../infrastructure/billing/stripe/stripe-processor';
import { RequestTrace, requestScope } from '../../infrastructure/tracing/request-scope';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';

/**
 * Calls to Stripe carry the W3C trace context (docs/operations.md, Tracing): a child span of the
 * request being served, in its trace; outside a request, a new trace. Against the Stripe-shaped
 * server, through stripe-node.
 */
describe('trace context on Stripe calls', () => {
  let fake: FakeStripe;
  beforeAll(async () => {
    fake = await startFakeStripe({ startTime: Date.UTC(2026, 10, 29) / 1000 });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('sends a traceparent in the trace of the request being served, a new span of its own', async () => {
    const keys = fake.createAccount();
    const processor = new StripeProcessor({ secretKey: keys.secretKey, apiUrl: fake.url, maxNetworkRetries: 0 });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const before = fake.requests.length;
    const answer = await requestScope.run(new RequestTrace('req-stripe', `00-${traceId}-00f067aa0ba902b7-01`), () => processor.verifyCredentials());
    expect(answer.ok).toBe(true);
    const sent = fake.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) {
      const trace = parseTraceparent(request.traceparent ?? undefined);
      expect(trace).toMatchObject({ traceId, flags: '01' });
      expect(trace!.parentId).not.toBe('00f067aa0ba902b7');
    }

    const outside = fake.requests.length;
    expect((await processor.verifyCredentials()).ok).toBe(true);
    const fresh = parseTraceparent(fake.requests[outside]!.traceparent ?? undefined);
    expect(fresh).not.toBeNull();
    expect(fresh!.traceId).not.toBe(traceId);
  });
});
