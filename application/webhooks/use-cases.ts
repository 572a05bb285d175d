import type { DeliveryView, EndpointView } from './views';
import type { WebhookOutcome } from './errors';
import type { EndpointChanges, EndpointInput } from './manage-endpoints';
import type { ResendResult, RetryNowResult } from './deliveries';
import type { TestResult } from './send-test';

/**
 * The webhook use cases, as the composition root assembles them (apps/server/features/webhooks.ts):
 * the CLI calls these now, the dashboard later. One file per use case in this folder.
 */
export interface WebhookUseCases {
  /** Registers an endpoint; `secret` is shown now and never again. */
  createEndpoint(projectId: string, input: EndpointInput): Promise<WebhookOutcome<{ endpoint: EndpointView; secret: string }>>;
  listEndpoints(projectId: string): Promise<WebhookOutcome<EndpointView[]>>;
  updateEndpoint(projectId: string, endpointId: string, changes: EndpointChanges): Promise<WebhookOutcome<EndpointView>>;
  deleteEndpoint(projectId: string, endpointId: string): Promise<WebhookOutcome<{ deleted: true }>>;
  /** A new secret, shown now and never again; the old one signs beside it for a day. */
  rollSecret(projectId: string, endpointId: string): Promise<WebhookOutcome<{ endpoint: EndpointView; secret: string; previousSecretValidUntil: Date }>>;
  /** The Test action: a signed test event sent now; `ok` when the receiver answered 200. */
  sendTest(projectId: string, endpointId: string): Promise<WebhookOutcome<TestResult>>;
  listDeliveries(projectId: string, endpointId: string, filter?: { limit?: number }): Promise<WebhookOutcome<DeliveryView[]>>;
  resendDelivery(projectId: string, deliveryId: string): Promise<WebhookOutcome<ResendResult>>;
  /** Runs now the next attempt of a delivery waiting for a retry. */
  retryDeliveryNow(projectId: string, deliveryId: string): Promise<WebhookOutcome<RetryNowResult>>;
  replayFailed(projectId: string, endpointId: string, since: Date): Promise<WebhookOutcome<{ resent: number; deliveryIds: string[] }>>;
}
