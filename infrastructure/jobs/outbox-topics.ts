import type PgBoss from 'pg-boss';
import type { TopicHandler } from '../../application/ports/outbox';
import { EXPIRY_GRACE_SECONDS, pgBossQueueName } from './outbox-model';
import { ensurePgBossQueue } from './pg-boss-queue';
import type { QueueSettings } from './queues';
import { assertRetryPolicy } from './retry-policy';
import type { AnyTopicDefinition } from './topics';

/**
 * The topics and queues the outbox knows in this process, each checked once when it is built, the
 * handlers registered here, and the pg-boss queues made ready (a job sent to a queue pg-boss does
 * not know is silently dropped).
 */
export class OutboxTopics {
  private readonly topics = new Map<string, AnyTopicDefinition>();
  private readonly queues = new Map<string, QueueSettings>();
  private readonly handlers = new Map<string, TopicHandler>();
  private readonly queueReady = new Map<string, Promise<string>>();

  constructor(
    private readonly boss: PgBoss,
    topics: readonly AnyTopicDefinition[],
    queues: readonly QueueSettings[],
  ) {
    for (const queue of queues) {
      if (this.queues.has(queue.name)) throw new Error(`queue ${queue.name} is configured twice`);
      assertRetryPolicy(queue.retry);
      assertTimeout(queue.timeoutSeconds, `queue ${queue.name}`);
      if (!Number.isInteger(queue.batchSize) || queue.batchSize < 1 || !Number.isInteger(queue.concurrency) || queue.concurrency < 1) {
        throw new Error(`queue ${queue.name}: batchSize and concurrency must be positive integers`);
      }
      if (queue.maxWorkerLoops !== undefined && (!Number.isInteger(queue.maxWorkerLoops) || queue.maxWorkerLoops < queue.concurrency)) {
        throw new Error(`queue ${queue.name}: maxWorkerLoops must be an integer of at least concurrency`);
      }
      this.queues.set(queue.name, queue);
    }
    for (const definition of topics) {
      const { name, queue, retry } = definition.topic;
      if (this.topics.has(name)) throw new Error(`topic ${name} is defined twice`);
      if (!this.queues.has(queue)) throw new Error(`topic ${name} names queue ${queue}, which is not configured`);
      if (retry) assertRetryPolicy(retry);
      if (definition.topic.timeoutSeconds !== undefined) assertTimeout(definition.topic.timeoutSeconds, `topic ${name}`);
      this.topics.set(name, definition);
    }
  }

  /** Registers the handler of a topic in this process (its worker delivers that topic). */
  register(handler: TopicHandler): void {
    const name = handler.topic.name;
    if (!this.topics.has(name)) throw new Error(`topic ${name} has no schema: add its definition to the outbox's topics`);
    if (this.handlers.has(name)) throw new Error(`topic ${name} already has a handler`);
    this.handlers.set(name, handler);
  }

  handler(topic: string): TopicHandler | undefined {
    return this.handlers.get(topic);
  }

  /** The queues with a topic handled in this process: the ones its workers fetch from. */
  handledQueues(): QueueSettings[] {
    const names = new Set([...this.handlers.keys()].map((topic) => this.definition(topic).topic.queue));
    return [...names].map((name) => this.queue(name));
  }

  /** The definition of a topic; throws for a topic the outbox was not given. */
  definition(topic: string): AnyTopicDefinition {
    const definition = this.topics.get(topic);
    if (!definition) throw new Error(`unknown outbox topic ${topic}: add its definition to the outbox's topics`);
    return definition;
  }

  /** The definition of a topic, if the outbox was given it. */
  find(topic: string): AnyTopicDefinition | undefined {
    return this.topics.get(topic);
  }

  all(): AnyTopicDefinition[] {
    return [...this.topics.values()];
  }

  queue(name: string): QueueSettings {
    const queue = this.queues.get(name);
    if (!queue) throw new Error(`queue ${name} is not configured`);
    return queue;
  }

  /** How long one attempt of the topic may run: its own timeout, or its queue's. */
  timeoutSeconds(definition: AnyTopicDefinition): number {
    return definition.topic.timeoutSeconds ?? this.queue(definition.topic.queue).timeoutSeconds;
  }

  /** Seconds after its start that pg-boss fails a job of this topic whose worker has not settled it. */
  expirySeconds(definition: AnyTopicDefinition): number {
    return this.timeoutSeconds(definition) + EXPIRY_GRACE_SECONDS;
  }

  /** The queue must exist before a job is sent to it: pg-boss silently drops jobs for unknown queues. */
  ensureQueue(name: string): Promise<string> {
    let ready = this.queueReady.get(name);
    if (!ready) {
      const pgQueue = pgBossQueueName(name);
      ready = ensurePgBossQueue(this.boss, pgQueue).then(
        () => pgQueue,
        (e: unknown) => {
          this.queueReady.delete(name);
          throw e;
        },
      );
      this.queueReady.set(name, ready);
    }
    return ready;
  }
}

/** pg-boss expires a job at most 24 h after it started, and the attempt's timeout plus a grace must fit. */
function assertTimeout(seconds: number, what: string): void {
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 23 * 3600) throw new Error(`${what}: timeoutSeconds must be more than 0 and at most 82800`);
}
