import type { StoredAuditEntry } from '../../domain/audit';
import { auditEventType } from '../../domain/webhooks/endpoint';
import type { AuditStream } from '../audit/audit-log';
import type { WebhookDeps } from './deps';
import { WEBHOOK_DELIVERY_TOPIC } from './ports';

/**
 * The event of an audit entry, as a SIEM receives it: `type` is `audit.<action>`
 * (`audit.user.sign_in.failed`), `data` the entry with the fields of the admin API's list (no
 * names: they are read for people, and may change). Entries hold no secret (domain/audit.ts).
 */
export function auditEvent(eventId: string, e: StoredAuditEntry): Record<string, unknown> {
  return {
    id: eventId,
    type: auditEventType(e.action),
    created: e.at.toISOString(),
    projectId: e.projectId,
    userId: e.userId,
    data: {
      id: e.id,
      at: e.at.toISOString(),
      action: e.action,
      outcome: e.outcome,
      reason: e.reason,
      actor: { kind: e.actor.kind, id: e.actor.id },
      target: e.target ? { kind: e.target.kind, id: e.target.id } : null,
      user_id: e.userId,
      ip: e.ip,
      user_agent: e.userAgent,
      request_id: e.requestId,
      details: e.details,
    },
  };
}

/**
 * The audit log streamed to the webhook endpoints that select `audit.*`: each entry written becomes
 * one event, delivered to each such endpoint of its project like any event (signed, retried, in the
 * delivery log), recorded in the transaction that writes the entries.
 */
export function makeAuditWebhookStream(deps: Pick<WebhookDeps, 'endpoints' | 'deliveries' | 'outbox' | 'crypto'>): AuditStream {
  return {
    async receivers(projectIds) {
      const byProject = new Map<string, string[]>();
      for (const r of await deps.endpoints.auditReceivers(projectIds)) byProject.set(r.projectId, [...(byProject.get(r.projectId) ?? []), r.id]);
      return byProject;
    },
    async deliver(entries, receivers) {
      for (const entry of entries) {
        const endpoints = receivers.get(entry.projectId);
        if (!endpoints) continue;
        const eventId = deps.crypto.uuid();
        const payload = auditEvent(eventId, entry);
        for (const endpointId of endpoints) {
          const id = deps.crypto.uuid();
          await deps.deliveries.insert({
            id,
            projectId: entry.projectId,
            endpointId,
            eventId,
            eventType: payload.type as string,
            payload,
            status: 'pending',
            attemptCount: 0,
            lastStatusCode: null,
            createdAt: entry.at,
            completedAt: null,
            nextAttemptAt: entry.at,
          });
          await deps.outbox.enqueue(WEBHOOK_DELIVERY_TOPIC, { deliveryId: id }, { subject: endpointId, dedupeKey: id });
        }
      }
    },
  };
}
