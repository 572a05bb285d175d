import type { Clock } from '../../application/ports/clock';
import type { Database } from '../persistence/database';
import type { TopicBacklog } from './prometheus-metrics';

/**
 * The outbox backlog per topic in one statement over the pending messages (the partial index
 * `outbox_messages_due_idx` holds exactly those): how many wait, and the age of the oldest by the
 * application's clock. Every topic of the process is answered, 0 when none of its messages wait.
 */
export function readOutboxBacklog(db: Database, clock: Clock, topics: readonly string[]): () => Promise<TopicBacklog[]> {
  return async () => {
    const now = clock.now();
    const rows = await db.withContext(() =>
      db.query<{ topic: string; pending: string | number; oldest: Date | string }>(
        `select topic, count(*) as pending, min(created_at) as oldest from outbox_messages where status = 'pending' group by topic`,
      ),
    );
    const byTopic = new Map<string, TopicBacklog>(topics.map((topic) => [topic, { topic, pending: 0, oldestSeconds: 0 }]));
    for (const row of rows) {
      // A topic no longer defined in this process still counts (messages of an older version).
      const oldestSeconds = Math.max(0, (now.getTime() - new Date(row.oldest).getTime()) / 1000);
      byTopic.set(row.topic, { topic: row.topic, pending: Number(row.pending), oldestSeconds });
    }
    return [...byTopic.values()];
  };
}
