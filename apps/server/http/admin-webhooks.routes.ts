import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { contract } from '../../../contract';
import { WEBHOOK_SELECTABLE_NAMES } from '../../../contract/admin';
import type { DeliveryView, EndpointView } from '../../../application/webhooks/views';
import type { WebhookUseCases } from '../../../application/webhooks/use-cases';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf } from './request-context';

const s = initServer();

export interface AdminWebhookRouteDeps {
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  /** The webhook use cases `tollgate webhook ...` calls. */
  webhooks: WebhookUseCases;
}

type EventName = (typeof WEBHOOK_SELECTABLE_NAMES)[number];
const isEventName = (t: string): t is EventName => (WEBHOOK_SELECTABLE_NAMES as readonly string[]).includes(t);
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

const endpointView = (e: EndpointView) => ({
  id: e.id,
  url: e.url,
  event_types: e.eventTypes.filter(isEventName),
  description: e.description,
  enabled: e.enabled,
  disabled_reason: e.disabledReason,
  secret_prefix: e.secretPrefix,
  failing_since: isoOrNull(e.failingSince),
  last_success_at: isoOrNull(e.lastSuccessAt),
  created_at: e.createdAt.toISOString(),
});

const deliveryView = (d: DeliveryView) => ({
  id: d.id,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempt_count: d.attemptCount,
  last_status_code: d.lastStatusCode,
  created_at: d.createdAt.toISOString(),
  completed_at: isoOrNull(d.completedAt),
  next_attempt_at: isoOrNull(d.nextAttemptAt),
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    started_at: a.startedAt.toISOString(),
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    response_excerpt: a.responseExcerpt,
    error: a.error,
  })),
});

/**
 * The console's webhook routes over the webhook use cases (the CLI's). Each first asks whether the
 * signed-in account may see the project (404 `project_not_found` if not). A use case's refusal is
 * answered with its code and its own words (which address a host resolved to): the answer's type
 * carries the use case's codes, so a route that does not declare one of them fails to compile
 * (the contract as served, with strictStatusCodes).
 */
export function makeAdminWebhookRoutes(deps: AdminWebhookRouteDeps) {
  const { webhooks } = deps;
  const access = async (res: Response, projectId: string) => {
    const actor = authOf(res).console;
    if (!actor) throw new Error('route has no console session');
    const found = await deps.accounts.projectAccess(actor.account, projectId);
    return found.ok ? { ok: true as const, id: found.value.id } : { ok: false as const, response: errorResponse(found.error) };
  };

  return s.router(contract.admin.webhooks, {
    list: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.listEndpoints(p.id);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { endpoints: r.value.map(endpointView) } };
    },
    create: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.createEndpoint(p.id, { url: body.url, eventTypes: body.event_types, description: body.description });
      if (!r.ok) return failureResponse(res, r);
      return { status: 201, body: { endpoint: endpointView(r.value.endpoint), secret: r.value.secret } };
    },
    update: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.updateEndpoint(p.id, params.endpointId, {
        url: body.url,
        eventTypes: body.event_types,
        description: body.description,
        enabled: body.enabled,
      });
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { endpoint: endpointView(r.value) } };
    },
    remove: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.deleteEndpoint(p.id, params.endpointId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { success: true as const } };
    },
    rollSecret: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.rollSecret(p.id, params.endpointId);
      if (!r.ok) return failureResponse(res, r);
      return {
        status: 200,
        body: { endpoint: endpointView(r.value.endpoint), secret: r.value.secret, previous_secret_valid_until: r.value.previousSecretValidUntil.toISOString() },
      };
    },
    test: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.sendTest(p.id, params.endpointId);
      if (!r.ok) return failureResponse(res, r);
      const v = r.value;
      return { status: 200, body: { ok: v.ok, status: v.status, duration_ms: Math.round(v.durationMs), error: v.error ?? null, delivery_id: v.deliveryId } };
    },
    deliveries: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.listDeliveries(p.id, params.endpointId, { limit: query.limit });
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { deliveries: r.value.map(deliveryView) } };
    },
    resend: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.resendDelivery(p.id, params.deliveryId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { delivery_id: r.value.deliveryId, queued: r.value.queued } };
    },
    retryNow: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await webhooks.retryDeliveryNow(p.id, params.deliveryId);
      if (!r.ok) return failureResponse(res, r);
      return { status: 200, body: { delivery_id: r.value.deliveryId, was_due_at: r.value.wasDueAt.toISOString() } };
    },
  });
}
