import type { Metrics, WebhookDeliveryOutcome } from '../../application/ports/metrics';
import type { WebhookResponse, WebhookTransport } from '../../application/webhooks/ports';

/** How an attempt ended, as the delivery metric names it. */
export function deliveryOutcome(response: WebhookResponse): WebhookDeliveryOutcome {
  if (response.kind === 'refused') return 'refused';
  if (response.kind === 'failed') return 'error';
  return response.status >= 200 && response.status < 300 ? 'success' : 'failure';
}

/**
 * The delivery job's transport: each attempt counted by outcome, with its time on the wire. The
 * console's Test action uses the transport itself, so test sends are not counted as deliveries.
 */
export function countedDeliveries(transport: WebhookTransport, metrics: Pick<Metrics, 'enabled' | 'webhookDelivered'>): WebhookTransport {
  if (!metrics.enabled) return transport;
  return {
    check: (url, allowPrivate) => transport.check(url, allowPrivate),
    send: async (request) => {
      const response = await transport.send(request);
      metrics.webhookDelivered(deliveryOutcome(response), response.durationMs / 1000);
      return response;
    },
  };
}
