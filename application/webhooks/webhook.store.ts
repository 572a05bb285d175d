import type { WebhookEventType } from '../../domain/webhooks/endpoint';

/**
 * The stores the webhook use cases need (PostgreSQL adapter: infrastructure/persistence/
 * postgres-webhook.store.ts). Every read and write by an operator is scoped by project; the
 * delivery handler reads by delivery id (it has nothing else).
 */

/** A project's endpoint, without its secret (the store keeps it encrypted). */
export interface WebhookEndpoint {
  id: string;
  projectId: string;
  url: string;
  /** Empty: every event type. */
  eventTypes: WebhookEventType[];
  description: string;
  enabled: boolean;
  /** Why Tollgate disabled it (410, 5 days of failures); null when enabled or disabled by a person. */
  disabledReason: string | null;
  /** The signing secret's readable start (`whsec_Ab3d`), for lists. */
  secretPrefix: string;
  /** The first failed attempt since the last success; null while healthy. */
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The secrets an endpoint signs with: the current one, and the one before a roll for a day after it. */
export interface SigningSecrets {
  current: string;
  previous: string | null;
}

export interface WebhookEndpointStore {
  insert(endpoint: WebhookEndpoint, secret: string): Promise<void>;
  /** Oldest first. */
  list(projectId: string): Promise<WebhookEndpoint[]>;
  get(projectId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Writes url, event types, description, enabled, disabled reason, failing since and updated at. */
  update(endpoint: WebhookEndpoint): Promise<boolean>;
  /** Replaces the secret; the old one keeps signing (beside the new one) until `previousUntil`. */
  rollSecret(projectId: string, id: string, secret: string, previousUntil: Date, now: Date): Promise<WebhookEndpoint | null>;
  /** Deletes the endpoint with its deliveries and their attempts. */
  delete(projectId: string, id: string): Promise<boolean>;
  /** The enabled endpoints of a project that select `type`. */
  subscribedTo(projectId: string, type: string): Promise<Array<Pick<WebhookEndpoint, 'id'>>>;
  /** The secrets to sign with at `now`. */
  secrets(id: string, now: Date): Promise<SigningSecrets | null>;
  /** A successful delivery: the failing streak ends. */
  recordSuccess(id: string, now: Date): Promise<void>;
  /** A failed delivery: answers when the streak began (now, if this is its first failure). */
  recordFailure(id: string, now: Date): Promise<Date | null>;
  /** Disables an enabled endpoint with Tollgate's reason; false when it was disabled already or is gone. */
  disable(id: string, reason: string, now: Date): Promise<boolean>;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event (or test) to one endpoint, with every attempt made to deliver it. */
export interface WebhookDelivery {
  id: string;
  projectId: string;
  endpointId: string;
  /** The billing event's id (`webhook-id`); null for a test, whose payload carries its own id. */
  eventId: string | null;
  eventType: string;
  /** The body as sent (its fields in their documented order). */
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attemptCount: number;
  lastStatusCode: number | null;
  createdAt: Date;
  completedAt: Date | null;
  nextAttemptAt: Date | null;
}

export interface WebhookAttempt {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  /** Null while the attempt runs (or when its process died during it). */
  durationMs: number | null;
  statusCode: number | null;
  /** The first 1 KB of the answer. */
  responseExcerpt: string | null;
  /** The network error, or why it was not sent. */
  error: string | null;
}

export interface AttemptResult {
  deliveryId: string;
  attempt: number;
  durationMs: number;
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
  /** The delivery after this attempt. */
  status: DeliveryStatus;
  completedAt: Date | null;
  nextAttemptAt: Date | null;
}

export interface WebhookDeliveryStore {
  insert(delivery: WebhookDelivery): Promise<void>;
  get(projectId: string, id: string): Promise<WebhookDelivery | null>;
  /** What one attempt needs: the delivery and its endpoint (null when either is gone). */
  forAttempt(id: string): Promise<{ delivery: WebhookDelivery; endpoint: WebhookEndpoint } | null>;
  /**
   * Records the start of an attempt and answers its number. `source` is the outbox message and its
   * attempt: recording the same one twice throws, so an attempt is never sent twice.
   */
  startAttempt(deliveryId: string, startedAt: Date, source: { messageId: string; messageAttempt: number } | null): Promise<number>;
  finishAttempt(result: AttemptResult): Promise<void>;
  /** Newest first, each with its attempts (oldest first). */
  listForEndpoint(projectId: string, endpointId: string, filter: { limit: number }): Promise<Array<WebhookDelivery & { attempts: WebhookAttempt[] }>>;
  /** Sets a delivery pending again (a resend); false when it is gone. */
  reopen(projectId: string, id: string, now: Date): Promise<boolean>;
  /** Failed deliveries of an endpoint created at or after `since`, oldest first. */
  listFailed(projectId: string, endpointId: string, since: Date, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Fails pending deliveries that no message will attempt any more (the job layer gave up on an
   * attempt whose worker died); answers how many.
   */
  failOrphans(olderThan: Date, now: Date): Promise<number>;
}
