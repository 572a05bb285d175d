import { userSubject } from '../../domain/billing/subject';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEvent } from '../../application/billing/record-snapshot';
import type { WebhookUseCases } from '../../application/webhooks/use-cases';
import { webhookEventPublisher } from '../../apps/server/features/webhooks';
import { PostgresEventPublisher } from '../../infrastructure/persistence/postgres-billing-event.store';
import { startTestApp, type TestApp } from '../support/app';
import { waitFor } from '../support/tollgate-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Endpoint isolation: receivers that never answer must not hold back anyone else's deliveries.
 * With WEBHOOK_TIMEOUT_MS at its 60 s maximum, ten endpoints in two projects hang on 50 attempts
 * (5 each; the receiver takes the request and never answers). Events are recorded as billing
 * records them (the webhook fan-out in the event's transaction). While all 50 are in flight, two
 * healthy endpoints, one in the same project as half of the hung ones and one in a third project,
 * receive their events: each must arrive within a second of its commit (p99 of the 25 deliveries,
 * from the event's commit to the request reaching the real HTTP receiver on 127.0.0.1).
 */

const TIMEOUT_MS = 60_000;
const HUNG_ENDPOINTS_PER_PROJECT = 5;
/** Subscriptions per project of hung endpoints: one subscription.created each, to each hung endpoint. */
const HUNG_EVENTS_PER_ENDPOINT = 5;
const HUNG_ATTEMPTS = 2 * HUNG_ENDPOINTS_PER_PROJECT * HUNG_EVENTS_PER_ENDPOINT;

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };
const ok = <T>(outcome: Outcome<T>): T => {
  if (!outcome.ok) throw new Error(`refused: ${outcome.error}`);
  return outcome.value;
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** A project with endpoints on the test receiver, and its events recorded as billing records them. */
async function project(app: TestApp, receiver: WebhookReceiver, name: string) {
  const { core } = app.tollgate;
  const webhooks: WebhookUseCases = app.tollgate.webhooks;
  const run = <T>(fn: () => Promise<T>) => app.inContext(fn);
  const publisher = webhookEventPublisher({ core, config: app.config }, new PostgresEventPublisher(core.db));
  const { id } = await app.createProject({ name });
  return {
    id,
    endpoint: async (path: string, eventTypes: string[] | undefined, answer: 'hang' | 200) => {
      const created = ok(await run(() => webhooks.createEndpoint(id, { url: receiver.url(path), ...(eventTypes ? { eventTypes } : {}) })));
      receiver.route(path, created.secret, answer);
      return created.endpoint;
    },
    deliveries: async (endpointId: string) => ok(await run(() => webhooks.listDeliveries(id, endpointId, { limit: 100 }))),
    /** Records one event (committed when this returns) and answers its id. */
    event: async (type: 'invoice.paid' | 'subscription.updated') => {
      const event = buildEvent(core, {
        projectId: id,
        type,
        subject: userSubject(core.crypto.uuid()),
        subscriptionId: core.crypto.uuid(),
        dedupeKey: null,
        amount: null,
        currency: null,
        data: {},
      });
      await run(() => publisher.publish(event));
      return event.id;
    },
  };
}

/** The app (its job worker in this process) with WEBHOOK_TIMEOUT_MS, and a receiver on 127.0.0.1. */
function setUp(timeoutMs: number) {
  const ctx = {} as { app: TestApp; receiver: WebhookReceiver };
  beforeAll(async () => {
    ctx.app = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: String(timeoutMs) } });
    ctx.receiver = new WebhookReceiver(() => ctx.app.clock.now().getTime());
    await ctx.receiver.start();
  });
  afterAll(async () => {
    // Stopping the receiver ends the hung requests (their connections close), so the app stops at once.
    await ctx.receiver?.stop();
    await ctx.app?.close();
  });
  return ctx;
}

describe('webhook endpoint isolation', { timeout: 90_000 }, () => {
  const ctx = setUp(TIMEOUT_MS);

  it('keeps a healthy endpoint p99 under 1 s while 50 attempts hang on receivers that never answer, in its project and in another', async () => {
    const { app, receiver } = ctx;
    /** When each request reached the receiver (performance.now()). */
    const arrivals = new Map<object, number>();
    receiver.onRequest = (request) => arrivals.set(request, performance.now());
    const a = await project(app, receiver, 'Hung and healthy');
    const b = await project(app, receiver, 'Hung only');
    const c = await project(app, receiver, 'Healthy only');
    const hung: Array<{ project: typeof a; id: string }> = [];
    for (const p of [a, b]) {
      for (let i = 0; i < HUNG_ENDPOINTS_PER_PROJECT; i++) hung.push({ project: p, id: (await p.endpoint(`/hang-${p.id}-${i}`, ['invoice.paid'], 'hang')).id });
    }
    const healthyA = await a.endpoint('/healthy-a', ['subscription.updated'], 200);
    const healthyC = await c.endpoint('/healthy-c', undefined, 200);

    // 50 attempts that hang: 5 invoice.paid events in each of projects A and B, each to 5 hung endpoints.
    for (let i = 0; i < HUNG_EVENTS_PER_ENDPOINT; i++) {
      await a.event('invoice.paid');
      await b.event('invoice.paid');
    }
    const hungRequests = () => receiver.received.filter((r) => r.path.startsWith('/hang-'));
    await waitFor(() => hungRequests().length >= HUNG_ATTEMPTS, `${HUNG_ATTEMPTS} hung attempts in flight (${hungRequests().length} so far)`, 30_000);
    expect(new Set(hungRequests().map((r) => r.path)).size).toBe(2 * HUNG_ENDPOINTS_PER_PROJECT);

    // The healthy endpoints' events, one at a time, each timed from its commit: 10 in project A
    // (beside its hung endpoints, which did not select the type), 15 in project C.
    const committed = new Map<string, number>();
    const expected: string[] = [];
    for (let i = 0; i < 25; i++) {
      const inA = i % 5 < 2;
      const eventId = inA ? await a.event('subscription.updated') : await c.event(i % 2 ? 'invoice.paid' : 'subscription.updated');
      const path = inA ? '/healthy-a' : '/healthy-c';
      committed.set(eventId, performance.now());
      expected.push(`${path} ${eventId}`);
    }
    const healthy = () => receiver.received.filter((r) => r.path.startsWith('/healthy-'));
    await waitFor(() => healthy().length >= expected.length, `${expected.length} healthy deliveries (${healthy().length} arrived)`, 20_000);
    expect(
      healthy()
        .map((r) => `${r.path} ${r.event.id}`)
        .sort(),
    ).toEqual(expected.sort());
    const latencies = healthy()
      .map((r) => arrivals.get(r)! - committed.get(r.event.id)!)
      .sort((x, y) => x - y);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(
      `healthy deliveries with ${HUNG_ATTEMPTS} hung attempts in flight: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ` +
        `${latencies.at(-1)!.toFixed(0)} ms`,
    );
    expect(p99).toBeLessThan(1000);

    // The hung attempts were in flight the whole time: none has ended, none was sent twice.
    expect(hungRequests()).toHaveLength(HUNG_ATTEMPTS);
    for (const { project: p, id } of hung) {
      const deliveries = await p.deliveries(id);
      expect(deliveries).toHaveLength(HUNG_EVENTS_PER_ENDPOINT);
      for (const d of deliveries) expect(d).toMatchObject({ status: 'pending', attempts: [{ durationMs: null, statusCode: null }] });
    }
    for (const d of [...(await a.deliveries(healthyA.id)), ...(await c.deliveries(healthyC.id))]) expect(d).toMatchObject({ status: 'succeeded' });
  });
});

describe('an endpoint that never answers, with a backlog', { timeout: 60_000 }, () => {
  const ctx = setUp(5_000);

  it('holds at most 10 slow attempts in flight; the rest wait, uncounted, and are delivered once it answers again', async () => {
    const { app, receiver } = ctx;
    const shop = await project(app, receiver, 'Backlog');
    const endpoint = await shop.endpoint('/stuck', undefined, 'hang');
    for (let i = 0; i < 10; i++) await shop.event('invoice.paid');
    await waitFor(() => receiver.at('/stuck').length >= 10, 'the first 10 attempts in flight', 10_000);
    // A second later they are slow: the endpoint is at its limit, and 30 more events wait their turn.
    await new Promise((r) => setTimeout(r, 1_100));
    for (let i = 0; i < 30; i++) await shop.event('invoice.paid');
    await waitFor(async () => (await shop.deliveries(endpoint.id)).length >= 40, 'the 40 deliveries recorded', 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/stuck')).toHaveLength(10);
    const waiting = (await shop.deliveries(endpoint.id)).filter((d) => d.attempts.length === 0);
    expect(waiting).toHaveLength(30);
    for (const d of waiting) expect(d).toMatchObject({ status: 'pending', attemptCount: 0 });

    // It answers again: the 10 hung attempts time out (and are retried on the schedule, 5 s
    // later), and the 30 that waited go out once the first of those times out, as first attempts.
    receiver.answerWith('/stuck', 200);
    await waitFor(async () => (await shop.deliveries(endpoint.id)).every((d) => d.status === 'succeeded'), 'every delivery succeeded', 30_000);
    const deliveries = await shop.deliveries(endpoint.id);
    const attempts = deliveries.map((d) => d.attempts.length).sort();
    expect(attempts).toEqual([...Array<number>(30).fill(1), ...Array<number>(10).fill(2)]);
    expect(
      new Set(
        receiver
          .at('/stuck')
          .filter((r) => r.answered === 200)
          .map((r) => r.event.id),
      ).size,
    ).toBe(40);
  });
});
