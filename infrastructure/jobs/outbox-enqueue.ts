import type { EnqueueOptions, Topic } from '../../application/ports/outbox';
import type { OutboxHandOver } from './outbox-handover';
import { describeIssues, type PgBossOutboxDeps } from './outbox-model';
import type { OutboxTopics } from './outbox-topics';
import { assertRetryPolicy } from './retry-policy';

type EnqueueDeps = Pick<PgBossOutboxDeps, 'db' | 'box' | 'crypto' | 'clock'>;

/**
 * Records a message in the caller's transaction: the payload validated against its topic's
 * schema (as the handler will receive it, after a round trip through JSON) and encrypted (it
 * carries codes and links). After commit the message is handed over to its queue. A message with
 * the dedupe key of one still pending is that one: its id is answered and nothing is recorded.
 */
export async function enqueueMessage<P>(
  deps: EnqueueDeps,
  topics: OutboxTopics,
  handOver: OutboxHandOver,
  topic: Topic<P>,
  payload: P,
  options: EnqueueOptions,
): Promise<string> {
  const definition = topics.definition(topic.name);
  const json = JSON.stringify(payload);
  const parsed = json === undefined ? undefined : definition.schema.safeParse(JSON.parse(json));
  if (!parsed?.success) {
    throw new Error(`outbox payload of topic ${topic.name} does not match its schema: ${parsed ? describeIssues(parsed.error) : 'not JSON'}`);
  }
  if (options.retry) assertRetryPolicy(options.retry);
  if (options.dedupeKey !== undefined && (options.dedupeKey === '' || options.dedupeKey.length > 500)) throw new Error('dedupeKey must be 1 to 500 characters');
  if (options.subject !== undefined && (options.subject === '' || options.subject.length > 500)) throw new Error('subject must be 1 to 500 characters');
  const now = deps.clock.now();
  const nextAttemptAt = dueAt(now, options);
  const { db } = deps;
  const id = deps.crypto.uuid();
  for (let tries = 0; ; tries++) {
    const inserted = await db.query<{ id: string }>(
      `insert into outbox_messages (id, topic, payload_enc, created_at, next_attempt_at, subject, dedupe_key, retry_policy)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb)
       on conflict (topic, dedupe_key) where status = 'pending' and dedupe_key is not null do nothing
       returning id`,
      [
        id,
        topic.name,
        deps.box.encrypt(json!),
        now,
        nextAttemptAt,
        options.subject ?? null,
        options.dedupeKey ?? null,
        options.retry ? JSON.stringify(options.retry) : null,
      ],
    );
    if (inserted.length) break;
    // A pending message has the key: it stands for this one.
    const pending = await db.query<{ id: string }>(`select id from outbox_messages where topic = ? and dedupe_key = ? and status = 'pending'`, [
      topic.name,
      options.dedupeKey,
    ]);
    if (pending[0]) return pending[0].id;
    // Delivered in between: record this one after all.
    if (tries >= 2) throw new Error(`could not record an outbox message with dedupe key ${options.dedupeKey}`);
  }
  await db.onCommit(() => handOver.dispatch({ id, topic: topic.name, generation: 0, next_attempt_at: nextAttemptAt }).then(() => undefined));
  return id;
}

/** When the first attempt is due: `runAt`, or `delaySeconds` from now (now when neither is given). */
function dueAt(now: Date, options: EnqueueOptions): Date {
  if (options.runAt !== undefined && options.delaySeconds !== undefined) throw new Error('give runAt or delaySeconds, not both');
  if (options.runAt !== undefined) {
    if (!(options.runAt instanceof Date) || Number.isNaN(options.runAt.getTime())) throw new Error('runAt must be a valid Date');
    return options.runAt;
  }
  const delay = options.delaySeconds ?? 0;
  if (!Number.isFinite(delay) || delay < 0) throw new Error('delaySeconds must be a finite number >= 0');
  return new Date(now.getTime() + delay * 1000);
}
