import type { DestinationRefusal } from './ports';

/** Every refusal of a webhook use case; contract/errors/webhooks.errors.ts words each. */
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

export interface WebhookRefusal<E extends WebhookErrorCode = WebhookErrorCode> {
  readonly ok: false;
  readonly error: E;
  /** Says more than the table's message (which address a host resolved to). */
  readonly detail?: string;
}

export type WebhookOutcome<T> = { readonly ok: true; readonly value: T } | WebhookRefusal;

export const refuse = <E extends WebhookErrorCode>(error: E, detail?: string): WebhookRefusal<E> =>
  detail === undefined ? { ok: false, error } : { ok: false, error, detail };
