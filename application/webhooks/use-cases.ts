import type { Result } from '../../domain/result';
import type { DeliveryView, EndpointView } from './views';
import type { EndpointNotFound, UnsendableDelivery } from './errors';
import type { CreateEndpointError, EndpointChanges, EndpointInput, RolledSecret, UpdateEndpointError } from './manage-endpoints';
import type { ReplayError, ReplayResult, ResendResult, RetryNowError, RetryNowResult } from './deliveries';
import type { TestResult } from './send-test';

/**
 * The webhook use cases, as the composition root assembles them (apps/server/features/webhooks.ts):
 * the CLI and the console's routes call these. One file per use case in this folder. Each answers
 * the narrow union of the codes it can refuse with, which each route of the console declares.
 */
export interface WebhookUseCases {
  /** Registers an endpoint; `secret` is shown now and never again. */
  createEndpoint(projectId: string, input: EndpointInput): Promise<Result<{ endpoint: EndpointView; secret: string }, CreateEndpointError>>;
  listEndpoints(projectId: string): Promise<Result<EndpointView[], 'project_not_found'>>;
  updateEndpoint(projectId: string, endpointId: string, changes: EndpointChanges): Promise<Result<EndpointView, UpdateEndpointError>>;
  deleteEndpoint(projectId: string, endpointId: string): Promise<Result<{ deleted: true }, EndpointNotFound>>;
  /** A new secret, shown now and never again; the old one signs beside it for a day. */
  rollSecret(projectId: string, endpointId: string): Promise<Result<RolledSecret, EndpointNotFound>>;
  /** The Test action: a signed test event sent now; `ok` when the receiver answered 200. */
  sendTest(projectId: string, endpointId: string): Promise<Result<TestResult, EndpointNotFound>>;
  listDeliveries(projectId: string, endpointId: string, filter?: { limit?: number }): Promise<Result<DeliveryView[], EndpointNotFound>>;
  resendDelivery(projectId: string, deliveryId: string): Promise<Result<ResendResult, UnsendableDelivery>>;
  /** Runs now the next attempt of a delivery waiting for a retry. */
  retryDeliveryNow(projectId: string, deliveryId: string): Promise<Result<RetryNowResult, RetryNowError>>;
  replayFailed(projectId: string, endpointId: string, since: Date): Promise<Result<ReplayResult, ReplayError>>;
}
