import type { Err } from '../../domain/result';
import type { DestinationRefusal } from './ports';

/**
 * Every refusal of a webhook use case; contract/errors/webhooks.errors.ts words each. A use case
 * returns `Result<T, E>` (domain/result.ts) with the narrow part of this union it can answer, so
 * the console's routes compile only if they declare each of its codes.
 */
export type WebhookErrorCode =
  | DestinationRefusal
  | 'project_not_found'
  | 'webhook_endpoint_not_found'
  | 'webhook_delivery_not_found'
  | 'invalid_webhook_events'
  | 'invalid_webhook_description'
  | 'webhook_endpoint_disabled'
  | 'webhook_delivery_not_waiting'
  | 'invalid_replay_since';

/** An endpoint of a project not found: the project, or the endpoint in it. */
export type EndpointNotFound = 'project_not_found' | 'webhook_endpoint_not_found';

/** A URL, event selection or description an endpoint may not have (the URL with the address it resolved to, in `detail`). */
export type EndpointFieldRefusal = DestinationRefusal | 'invalid_webhook_events' | 'invalid_webhook_description';

/** A delivery that cannot be sent again: not found (or a test delivery), or its endpoint disabled. */
export type UnsendableDelivery = 'project_not_found' | 'webhook_delivery_not_found' | 'webhook_endpoint_disabled';

/** A webhook use case's refusal, with the words that replace the table's message when it has them (which address a host resolved to). */
export type WebhookRefusal<E extends WebhookErrorCode = WebhookErrorCode> = Err<E>;
