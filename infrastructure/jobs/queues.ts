import { exponentialRetry, type RetryPolicy } from '../../application/ports/outbox';
import { WEBHOOK_DELIVERY_TOPIC, WEBHOOKS_QUEUE } from '../../application/webhooks/ports';
import type { SubjectIsolation } from './subject-load';

/**
 * A queue: one pg-boss queue with its own workers, so its topics never wait behind another
 * queue's (mail is not held back by a slow webhook endpoint). Topics name their queue; the retry
 * policy and timeout here apply to the topics that do not set their own.
 */
export interface QueueSettings {
  /** As topics name it (`mail`); the pg-boss queue is `tollgate.<name>`. */
  readonly name: string;
  readonly retry: RetryPolicy;
  /** How long one delivery attempt may run before it counts as failed (its handler is aborted). */
  readonly timeoutSeconds: number;
  /** Jobs fetched per poll by one worker loop; a worker loop fetches again once its batch is done. */
  readonly batchSize: number;
  /** Worker loops in each worker process: at most batchSize x concurrency deliveries at once. */
  readonly concurrency: number;
  /**
   * How many worker loops a process may run while some are held by slow batches (default:
   * `concurrency`). A loop whose batch still has an attempt running after a quarter second (a
   * queue with `subjectIsolation`: an attempt its handler has not reported ended), with no other
   * loop idle, gets a spare beside it, so that jobs due meanwhile never wait for a slow batch; a spare stops
   * once it is idle again.
   */
  readonly maxWorkerLoops?: number;
  /** Per-subject limits of slow attempts in one process (none: no limit). */
  readonly subjectIsolation?: SubjectIsolation;
  /** How often an idle worker loop polls (0.5 s at least). */
  readonly pollingIntervalSeconds?: number;
  /**
   * A message whose retries ran out is tried again this long after its last attempt (then once more
   * after each further failure); without it, the message stays failed until someone redelivers it.
   */
  readonly reviveFailedAfterSeconds?: number;
}

export const MAIL_QUEUE = 'mail';
export const SMS_QUEUE = 'sms';
/** What follows a record's end in other features (an organization deleted: its subscription canceled). */
export const LIFECYCLE_QUEUE = 'lifecycle';

/** Retry settings of mail and SMS (OUTBOX_RETRY_LIMIT, OUTBOX_RETRY_DELAY_SECONDS, OUTBOX_JOB_TIMEOUT_SECONDS). */
export interface MessageDeliverySettings {
  retryLimit: number;
  retryDelaySeconds: number;
  timeoutSeconds: number;
  /** WEBHOOK_TIMEOUT_MS: one webhook attempt's HTTP limit; the job's own limit leaves room for DNS and bookkeeping. */
  webhookTimeoutMs?: number;
}

/**
 * Seconds a webhook attempt's job may run: the HTTP timeout plus room for the address lookup and
 * the two statements that record the attempt. pg-boss expires the job of a dead worker 2 s after
 * that, so this room is part of how long a dead worker's deliveries wait to be tried again.
 */
export const webhookJobTimeoutSeconds = (timeoutMs: number): number => Math.ceil(timeoutMs / 1000) + 5;

/**
 * Isolation of webhook endpoints in each worker process: a batch held by an endpoint that is slow
 * to answer (or never answers) gets a spare worker loop, up to 100 loops (1,000 attempts in
 * flight), and an endpoint may hold at most 10 attempts that have run for more than a second; its
 * next ones wait in the queue, not counted as attempts, until one of those times out.
 */
export const WEBHOOK_MAX_WORKER_LOOPS = 100;
export const WEBHOOK_ENDPOINT_ISOLATION: SubjectIsolation = { slowAfterMs: 1_000, maxSlowAttempts: 10 };

/**
 * The queues of Tollgate's own topics: mail (and password-reset requests), SMS, and project
 * webhooks, each on its own. Webhooks follow their topic's schedule (about three days), are never
 * revived (a person resends them), and take many attempts at once: a slow endpoint holds neither
 * the other endpoints' deliveries (spare worker loops) nor more than its share (the endpoint limit).
 */
export function tollgateQueues(settings: MessageDeliverySettings): QueueSettings[] {
  const common = {
    retry: exponentialRetry(settings.retryLimit, settings.retryDelaySeconds),
    timeoutSeconds: settings.timeoutSeconds,
    batchSize: 5,
    concurrency: 1,
    pollingIntervalSeconds: 0.5,
    reviveFailedAfterSeconds: 15 * 60,
  };
  return [
    { name: MAIL_QUEUE, ...common },
    { name: SMS_QUEUE, ...common },
    { name: LIFECYCLE_QUEUE, ...common },
    {
      name: WEBHOOKS_QUEUE,
      retry: WEBHOOK_DELIVERY_TOPIC.retry!,
      timeoutSeconds: webhookJobTimeoutSeconds(settings.webhookTimeoutMs ?? 10_000),
      batchSize: 10,
      concurrency: 4,
      maxWorkerLoops: WEBHOOK_MAX_WORKER_LOOPS,
      subjectIsolation: WEBHOOK_ENDPOINT_ISOLATION,
      pollingIntervalSeconds: 0.5,
    },
  ];
}
