/**
 * Side effects leave through the database: a message is recorded in the caller's transaction and
 * delivered by a background job after commit, with retries (at least once: handlers are
 * idempotent, keyed by the message id).
 *
 * A topic is declared here, in the application, with the TypeScript type of its payload; the
 * adapter keeps a schema of each topic, checked against that type at compile time, and validates
 * every payload against it on enqueue and on delivery.
 */

/**
 * When the next attempt of a failed delivery runs, counted from the end of the failed attempt.
 * - `exponential`: `limit` retries after the first attempt, the n-th `firstDelaySeconds * 2^(n-1)`
 *   seconds later (at least 1 s, at most a day).
 * - `schedule`: one retry per entry, the n-th `delaysSeconds[n-1]` seconds after the n-th failure
 *   (project webhooks: 5 s, 5 min, 30 min, 2 h, ...; the first attempt runs right away).
 */
export type RetryPolicy =
  | { readonly kind: 'exponential'; readonly limit: number; readonly firstDelaySeconds: number }
  | { readonly kind: 'schedule'; readonly delaysSeconds: readonly number[] };

export const exponentialRetry = (limit: number, firstDelaySeconds: number): RetryPolicy => ({ kind: 'exponential', limit, firstDelaySeconds });
export const retrySchedule = (delaysSeconds: readonly number[]): RetryPolicy => ({ kind: 'schedule', delaysSeconds: [...delaysSeconds] });

/**
 * A topic: a kind of message, the queue that delivers it and, optionally, its own retry policy and
 * per-attempt timeout (otherwise the queue's). Topics on different queues never wait for each
 * other: a slow webhook endpoint does not hold back mail.
 */
export interface Topic<Payload> {
  /** Stable: stored with every message (`email.send`). */
  readonly name: string;
  /** Name of the queue that delivers it (`mail`, `sms`, `webhooks`); queues are configured by the worker. */
  readonly queue: string;
  readonly retry?: RetryPolicy;
  /** How long one delivery attempt may run before it counts as failed. */
  readonly timeoutSeconds?: number;
  /** The payload type; never set at run time. */
  readonly __payload?: Payload;
}

export function defineTopic<Payload>(spec: { name: string; queue: string; retry?: RetryPolicy; timeoutSeconds?: number }): Topic<Payload> {
  return { ...spec };
}

export type PayloadOf<T> = T extends Topic<infer P> ? P : never;

export interface EnqueueOptions {
  /** Deliver no earlier than this many seconds from now. */
  delaySeconds?: number;
  /** Deliver no earlier than this time (instead of `delaySeconds`). */
  runAt?: Date;
  /**
   * While a message of the topic with this key is pending (not yet delivered or given up), enqueueing
   * another with the same key records nothing and returns the pending message's id: the first wins.
   */
  dedupeKey?: string;
  /** Overrides the topic's retry policy for this message. */
  retry?: RetryPolicy;
  /** What the message is about (a webhook endpoint, a subscription): the delivery log filters on it. */
  subject?: string;
}

export interface Outbox {
  /**
   * Records a message in the current transaction (delivered only if it commits). Returns the message
   * id (the pending message's id when `dedupeKey` matched one). A payload that does not match the
   * topic's schema is a bug: it throws.
   */
  enqueue<P>(topic: Topic<P>, payload: NoInfer<P>, options?: EnqueueOptions): Promise<string>;
}

/** Moves a message's retry forward (the webhooks' "retry now"). */
export interface OutboxRetryNow {
  /**
   * Runs now the next attempt of the pending message of `topic` with `dedupeKey` that waits for a
   * retry (its previous attempt failed, the next one is due later). Answers when that attempt was
   * due, or null when no such message waits (none pending, or its attempt is due or running).
   */
  runNow(topic: Topic<unknown>, dedupeKey: string): Promise<Date | null>;
}

/** What a handler knows about the delivery it runs. */
export interface DeliveryContext {
  /** Stable across retries: the idempotency key (e.g. an email's Message-ID). */
  messageId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the attempt's timeout passes. */
  signal: AbortSignal;
  /**
   * A batch handler calls this once this item's own work is over, before the rest of its batch:
   * the job layer then stops counting it as in flight (its subject's limit of slow attempts).
   */
  ended?: () => void;
}

/** One message of a batch, with its delivery's context. */
export interface BatchItem<P> {
  payload: P;
  context: DeliveryContext;
}

/**
 * What a batch handler answers for each item, in order: null when it was delivered, or the error
 * that failed its attempt (retried per the policy).
 */
export type BatchOutcome = Error | null;

/** Delivers one message of a topic; throws to fail the attempt (it is retried per the policy). */
export interface TopicHandler {
  readonly topic: Topic<unknown>;
  readonly handle: (payload: never, context: DeliveryContext) => Promise<void>;
  /**
   * When given, the messages of this topic that the job layer fetched together are handed over in
   * one call (each attempt still succeeds or fails on its own): a handler that records its own
   * bookkeeping does it in one statement for all of them. Throwing fails every item.
   */
  readonly handleBatch?: (items: Array<BatchItem<never>>) => Promise<BatchOutcome[]>;
}

/** Pairs a topic with its handler, typed by the topic's payload. */
export function handleTopic<P>(topic: Topic<P>, handle: (payload: P, context: DeliveryContext) => Promise<void>): TopicHandler {
  return { topic, handle };
}

/**
 * Pairs a topic with a handler that takes the messages fetched together at once (see
 * `TopicHandler.handleBatch`); one message alone is a batch of one.
 */
export function handleTopicInBatches<P>(topic: Topic<P>, handleBatch: (items: Array<BatchItem<P>>) => Promise<BatchOutcome[]>): TopicHandler {
  return {
    topic,
    handleBatch: handleBatch as TopicHandler['handleBatch'],
    handle: async (payload: P, context: DeliveryContext) => {
      const [outcome] = await handleBatch([{ payload, context }]);
      if (outcome) throw outcome;
    },
  } as TopicHandler;
}

export type MessageStatus = 'pending' | 'delivered' | 'failed';

export interface OutboxMessageSummary {
  id: string;
  topic: string;
  subject: string | null;
  /** `failed`: every attempt the retry policy allows failed (mail and SMS are revived later). */
  status: MessageStatus;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  /** When the next attempt is due (pending messages only). */
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

export interface DeliveryAttempt {
  messageId: string;
  attempt: number;
  /** `running` while in flight; an attempt whose worker died is closed as failed by the next one. */
  status: 'running' | 'succeeded' | 'failed';
  startedAt: Date;
  finishedAt: Date | null;
  /** Truncated; values of the payload are redacted from it. */
  error: string | null;
}

/** The delivery log: messages and every attempt made to deliver them, kept after delivery. */
export interface OutboxLog {
  /** Newest first. */
  listMessages(filter: { topic: Topic<unknown>; subject?: string; status?: MessageStatus; before?: Date; limit?: number }): Promise<OutboxMessageSummary[]>;
  /** Oldest first. */
  listAttempts(messageId: string): Promise<DeliveryAttempt[]>;
}
