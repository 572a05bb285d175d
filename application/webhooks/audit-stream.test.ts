import { describe, expect, it } from 'vitest';
import type { StoredAuditEntry } from '../../domain/audit';
import { AUDIT_EVENTS, parseEventSelection, selects, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/endpoint';
import { CallLog, fakeOutbox, fakeUnitOfWork, strictFake } from '../testing/fakes';
import type { OutboxRetryNow } from '../ports/outbox';
import { makeAuditWebhookStream } from './audit-stream';
import type { WebhookDelivery, WebhookDeliveryStore, WebhookEndpointStore } from './webhook.store';

const P1 = '6f0c1d2e-0000-4000-8000-000000000001';
const P2 = '6f0c1d2e-0000-4000-8000-000000000002';

const entry = (id: string, projectId: string): StoredAuditEntry => ({
  id,
  at: new Date('2030-01-01T00:00:00.000Z'),
  projectId,
  actor: { kind: 'user', id: 'u1' },
  action: 'user.sign_in.failed',
  target: null,
  userId: 'u1',
  ip: '10.0.0.1',
  userAgent: null,
  requestId: 'req-1',
  outcome: 'failure',
  reason: 'invalid_credentials',
  details: { provider: 'email' },
});

describe('selecting the audit stream', () => {
  it('audit.* is named on its own or beside types, kept last, and never part of every type', () => {
    expect(parseEventSelection(['audit.*'])).toEqual([AUDIT_EVENTS]);
    expect(parseEventSelection(['audit.*', 'invoice.paid'])).toEqual(['invoice.paid', AUDIT_EVENTS]);
    expect(parseEventSelection([...WEBHOOK_EVENT_TYPES, 'audit.*'])).toEqual([...WEBHOOK_EVENT_TYPES, AUDIT_EVENTS]);
    expect(parseEventSelection(['audit.user.sign_in'])).toBeNull();
    expect(selects([], 'audit.user.sign_in')).toBe(false);
    expect(selects(['invoice.paid'], 'audit.user.sign_in')).toBe(false);
    expect(selects([AUDIT_EVENTS], 'audit.user.sign_in')).toBe(true);
    expect(selects([AUDIT_EVENTS], 'invoice.paid')).toBe(false);
    expect(selects([], 'invoice.paid')).toBe(true);
  });
});

describe('the audit stream', () => {
  it('groups receivers by project, and records one event per entry, one delivery and outbox message per receiver, in the transaction', async () => {
    const log = new CallLog();
    const inserted: WebhookDelivery[] = [];
    let n = 0;
    const outbox = fakeOutbox(log);
    const stream = makeAuditWebhookStream({
      endpoints: strictFake<WebhookEndpointStore>(
        'endpoints',
        {
          auditReceivers: async () => [
            { id: 'e1', projectId: P1 },
            { id: 'e2', projectId: P1 },
          ],
        },
        log,
      ),
      deliveries: strictFake<WebhookDeliveryStore>('deliveries', { insert: async (d: WebhookDelivery) => void inserted.push(d) }, log),
      outbox: outbox as typeof outbox & OutboxRetryNow,
      crypto: { uuid: () => `uuid-${++n}`, randomToken: () => 'x' },
    });
    const receivers = await stream.receivers([P1, P2]);
    expect([...receivers]).toEqual([[P1, ['e1', 'e2']]]);
    expect(log.of('endpoints.auditReceivers')[0]!.args).toEqual([[P1, P2]]);

    await fakeUnitOfWork(log).transaction(() => stream.deliver([entry('41', P1), entry('42', P2)], receivers));
    // The other project's entry has no receiver: nothing for it.
    expect(inserted.map((d) => [d.endpointId, d.eventId, d.eventType])).toEqual([
      ['e1', 'uuid-1', 'audit.user.sign_in.failed'],
      ['e2', 'uuid-1', 'audit.user.sign_in.failed'],
    ]);
    expect(inserted[0]!.payload).toEqual({
      id: 'uuid-1',
      type: 'audit.user.sign_in.failed',
      created: '2030-01-01T00:00:00.000Z',
      projectId: P1,
      userId: 'u1',
      data: {
        id: '41',
        at: '2030-01-01T00:00:00.000Z',
        action: 'user.sign_in.failed',
        outcome: 'failure',
        reason: 'invalid_credentials',
        actor: { kind: 'user', id: 'u1' },
        target: null,
        user_id: 'u1',
        ip: '10.0.0.1',
        user_agent: null,
        request_id: 'req-1',
        details: { provider: 'email' },
      },
    });
    expect(outbox.messages.map((m) => [m.payload, m.options])).toEqual([
      [{ deliveryId: inserted[0]!.id }, { subject: 'e1', dedupeKey: inserted[0]!.id }],
      [{ deliveryId: inserted[1]!.id }, { subject: 'e2', dedupeKey: inserted[1]!.id }],
    ]);
  });
});
