import type { WebhookSelection } from '../../domain/webhooks/endpoint';

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
  eventTypes: WebhookSelection[];
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
  /** The enabled endpoints of these projects that select `audit.*`, oldest first. */
  auditReceivers(projectIds: readonly string[]): Promise<Array<Pick<WebhookEndpoint, 'id' | 'projectId'>>>;
  /** The secrets to sign with at `now`. */
  secrets(id: string, now: Date): Promise<SigningSecrets | null>;
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

/** The outbox message and its attempt that make a delivery attempt: the same one is never recorded twice. */
export interface AttemptSource {
  messageId: string;
  messageAttempt: number;
}

/** An attempt just recorded as started, with everything sending it needs. */
export interface OpenedAttempt {
  delivery: WebhookDelivery;
  endpoint: WebhookEndpoint;
  /** The attempt's number (1 for the first). */
  attempt: number;
  /** The secrets to sign with at the attempt's start; null when the endpoint is disabled (nothing is sent). */
  secrets: SigningSecrets | null;
}

/** What an attempt's end means for its endpoint's failing streak (the 5-day rule). */
export interface StreakChange {
  endpointId: string;
  /** A success ends the streak; a failure starts it unless it runs already. */
  outcome: 'succeeded' | 'failed';
  at: Date;
}

/** The end of an attempt to record, with what it means for its endpoint's streak (none for the Test action). */
export interface FinishedAttempt {
  result: AttemptResult;
  streak?: StreakChange;
}

export interface WebhookDeliveryStore {
  insert(delivery: WebhookDelivery): Promise<void>;
  get(projectId: string, id: string): Promise<WebhookDelivery | null>;
  /**
   * Records the start of the next attempt of each pending delivery named, and answers, in the same
   * order and from the same statement, the delivery, its endpoint and the secrets to sign with at
   * `startedAt` (one round trip for a whole batch). Null for a delivery gone or no longer pending:
   * nothing is recorded for it. The same outbox attempt (`source`) is never recorded twice, so
   * never sent twice.
   */
  beginAttempts(attempts: ReadonlyArray<{ deliveryId: string; source: AttemptSource }>, startedAt: Date): Promise<Array<OpenedAttempt | null>>;
  /** Records the start of an attempt that no outbox message makes (the Test action) and answers its number. */
  startAttempt(deliveryId: string, startedAt: Date, source: AttemptSource | null): Promise<number>;
  /**
   * Records the end of attempts on each attempt, its delivery and its endpoint's failing streak, in
   * one statement. An endpoint row is written only when its streak begins or ends, or its last
   * success is more than a minute old: not on every delivery. Answers, for each endpoint with a
   * failure among them, when its failing streak began (null when a success ended it since).
   */
  finishAttempts(attempts: readonly FinishedAttempt[]): Promise<Map<string, Date | null>>;
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
