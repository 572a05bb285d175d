import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/endpoint';
import type { BillingEvent, EventPublisher } from '../billing/billing.store';
import type { OutboxRetryNow } from '../ports/outbox';
import type { ProjectStore } from '../stores/project.store';
import { aProject, aWebhookEndpoint, CallLog, fakeCrypto, fakeOutbox, fakeUnitOfWork, FixedClock, strictFake, strictFn } from '../testing/fakes';
import { makeCreateEndpoint, makeUpdateEndpoint } from './manage-endpoints';
import type { WebhookTransport } from './ports';
import { WebhookFanOut } from './publish-event';
import type { WebhookDeliveryStore, WebhookEndpoint, WebhookEndpointStore } from './webhook.store';

const PROJECT = '00000000-0000-4000-8000-00000000000a';
const ENDPOINT = '00000000-0000-4000-8000-00000000000b';
/** Every type an endpoint can select: the six billing ones and the nine organization ones. */
const ALL_TYPES = [...WEBHOOK_EVENT_TYPES];

const anEvent = (): BillingEvent => ({
  id: 'event-1',
  projectId: PROJECT,
  type: 'invoice.paid',
  userId: 'user-1',
  organizationId: null,
  subscriptionId: 'subscription-1',
  dedupeKey: null,
  payload: { id: 'event-1', type: 'invoice.paid' },
  createdAt: new Date('2030-01-01T00:00:00.000Z'),
});

describe('publishing a billing event to the endpoints that select it', () => {
  function setup(options: { isNew: boolean; subscribed?: string[] }) {
    const log = new CallLog();
    // The fan-out only enqueues: running a message now (OutboxRetryNow) is not expected of it.
    const outbox = Object.assign(fakeOutbox(log), { runNow: strictFn<OutboxRetryNow['runNow']>('outbox.runNow', log) });
    const inner = strictFake<EventPublisher>('events', { publish: async () => options.isNew }, log);
    const endpoints = strictFake<WebhookEndpointStore>(
      'endpoints',
      options.subscribed ? { subscribedTo: async () => options.subscribed!.map((id) => ({ id })) } : {},
      log,
    );
    const deliveries = strictFake<WebhookDeliveryStore>('deliveries', { insert: async () => undefined }, log);
    const fanOut = new WebhookFanOut(inner, { endpoints, deliveries, outbox, uow: fakeUnitOfWork(log), crypto: fakeCrypto(log) });
    return { fanOut, log, outbox };
  }

  it('a new event: one pending delivery and one outbox message per selecting endpoint, in the transaction that records the event', async () => {
    const { fanOut, log, outbox } = setup({ isNew: true, subscribed: ['endpoint-a', 'endpoint-b'] });
    expect(await fanOut.publish(anEvent())).toBe(true);
    expect(log.of('endpoints.subscribedTo').map((c) => c.args)).toEqual([[PROJECT, 'invoice.paid']]);
    const inserted = log.of('deliveries.insert').map((c) => c.args[0]);
    expect(inserted).toEqual([
      expect.objectContaining({ endpointId: 'endpoint-a', eventId: 'event-1', status: 'pending', attemptCount: 0, nextAttemptAt: anEvent().createdAt }),
      expect.objectContaining({ endpointId: 'endpoint-b', eventId: 'event-1', status: 'pending', attemptCount: 0 }),
    ]);
    // Each message is keyed by its endpoint (one endpoint's backlog does not hold the others up) and deduplicated by its delivery.
    const ids = inserted.map((d) => (d as { id: string }).id);
    expect(outbox.messages.map((m) => [m.topic.name, m.payload, m.options])).toEqual([
      ['webhooks.deliver', { deliveryId: ids[0] }, { subject: 'endpoint-a', dedupeKey: ids[0] }],
      ['webhooks.deliver', { deliveryId: ids[1] }, { subject: 'endpoint-b', dedupeKey: ids[1] }],
    ]);
    expect(log.calls.filter((c) => c.call !== 'uow.transaction' && !c.call.startsWith('crypto')).every((c) => c.inTransaction)).toBe(true);
  });

  it('an event already recorded (a duplicate) is delivered to nobody again', async () => {
    const { fanOut, log, outbox } = setup({ isNew: false });
    expect(await fanOut.publish(anEvent())).toBe(false);
    expect(log.names('endpoints')).toEqual([]);
    expect(outbox.messages).toEqual([]);
  });
});

describe("an endpoint's event selection", () => {
  function setup(existing?: Partial<WebhookEndpoint>) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T00:00:00.000Z');
    const stored: WebhookEndpoint[] = [];
    const endpoints = strictFake<WebhookEndpointStore>(
      'endpoints',
      {
        insert: async (endpoint) => void stored.push(endpoint),
        get: async () => (existing ? aWebhookEndpoint({ id: ENDPOINT, projectId: PROJECT, ...existing }) : null),
        update: async (endpoint) => {
          stored.push(endpoint);
          return true;
        },
      },
      log,
    );
    const deps = {
      endpoints,
      projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async (id: string) => aProject({ id }) }, log),
      transport: strictFake<WebhookTransport>('transport', { check: async () => ({ ok: true, addresses: ['93.184.216.34'] }) }, log),
      clock,
      crypto: fakeCrypto(log),
      settings: { allowPrivateUrls: false, timeoutMs: 10_000 },
    };
    return { create: makeCreateEndpoint(deps), update: makeUpdateEndpoint(deps), stored, log, clock };
  }

  it('is kept without repeats, in the documented order', async () => {
    const { create, stored } = setup();
    const created = await create(PROJECT, { url: 'https://hooks.example.com/t', eventTypes: ['payment.failed', 'subscription.created', 'payment.failed'] });
    expect(created).toMatchObject({ ok: true, value: { endpoint: { eventTypes: ['subscription.created', 'payment.failed'] } } });
    expect(stored[0]!.eventTypes).toEqual(['subscription.created', 'payment.failed']);
  });

  it('none, or every type, is stored as every type (empty), so types added later reach it too', async () => {
    for (const eventTypes of [undefined, [], ALL_TYPES]) {
      const { create, stored } = setup();
      await create(PROJECT, { url: 'https://hooks.example.com/t', ...(eventTypes ? { eventTypes } : {}) });
      expect(stored[0]!.eventTypes).toEqual([]);
    }
  });

  it('an unknown type is refused before the URL is resolved or anything is stored', async () => {
    const { create, log, stored } = setup();
    expect(await create(PROJECT, { url: 'https://hooks.example.com/t', eventTypes: ['invoice.paid', 'invoice.created'] })).toEqual({
      ok: false,
      error: 'invalid_webhook_events',
    });
    expect(log.names('transport')).toEqual([]);
    expect(stored).toEqual([]);
  });

  it('a change of selection replaces it; an unknown type leaves the endpoint as it was', async () => {
    const { update, stored } = setup({ eventTypes: ['invoice.paid'] });
    expect(await update(PROJECT, ENDPOINT, { eventTypes: ['invoice.refunded'] })).toMatchObject({ ok: true, value: { eventTypes: ['invoice.refunded'] } });
    expect(await update(PROJECT, ENDPOINT, { eventTypes: ['refund.created'] })).toEqual({ ok: false, error: 'invalid_webhook_events' });
    expect(stored.map((e) => e.eventTypes)).toEqual([['invoice.refunded']]);
  });

  it('enabling an endpoint Tollgate disabled clears its reason and starts a new failing streak', async () => {
    const failingSince = new Date('2029-12-20T00:00:00.000Z');
    const { update, stored, clock } = setup({ enabled: false, disabledReason: 'failing for 5 days without a successful delivery', failingSince });
    expect(await update(PROJECT, ENDPOINT, { enabled: true })).toMatchObject({ ok: true, value: { enabled: true, disabledReason: null, failingSince: null } });
    expect(stored[0]).toMatchObject({ enabled: true, disabledReason: null, failingSince: null, updatedAt: clock.now() });
  });

  it('a person disabling an endpoint leaves no reason and keeps its failing streak', async () => {
    const failingSince = new Date('2029-12-31T00:00:00.000Z');
    const { update, stored } = setup({ failingSince });
    await update(PROJECT, ENDPOINT, { enabled: false });
    expect(stored[0]).toMatchObject({ enabled: false, disabledReason: null, failingSince });
  });
});
