import type { IdempotentBegin, IdempotentRequestStore } from '../../application/idempotency/idempotent-request.store';
import { idempotencyExpiry } from '../../application/idempotency/run-idempotent';
import { idempotencyDecision } from '../../domain/billing/idempotency';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toStored = rowMapper({
  fingerprint: read.text,
  status: read.numberOrNull,
  body: read.as<unknown>(),
  createdAt: read.date,
  completedAt: read.dateOrNull,
});

/**
 * `Idempotency-Key` records in idempotent_requests, primary key (scope, key). Claiming a key is one
 * statement: an insert, or the takeover of an expired record, so concurrent first requests with
 * one key serialize on the primary key and exactly one of them gets `new`.
 */
export class PostgresIdempotentRequestStore implements IdempotentRequestStore {
  constructor(private readonly db: Database) {}

  async begin(scope: string, key: string, fingerprint: string, now: Date): Promise<IdempotentBegin> {
    // A record deleted (abandoned) between the two statements leaves nothing to read: claim again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.db.query(
        `insert into idempotent_requests (scope, key, fingerprint, status, body, created_at, completed_at)
         values (?, ?, ?, null, null, ?, null)
         on conflict (scope, key) do update
           set fingerprint = excluded.fingerprint, status = null, body = null, created_at = excluded.created_at, completed_at = null
           where idempotent_requests.created_at <= ?
         returning key`,
        [scope, key, fingerprint, now, idempotencyExpiry(now)],
      );
      if (claimed.length > 0) return { decision: 'new' };
      const stored = toStored.first(
        await this.db.query(`select ${toStored.columns} from idempotent_requests where scope = ? and key = ?`, [scope, key]),
      );
      if (stored === null) continue;
      const decision = idempotencyDecision(stored, fingerprint, now);
      if (decision === 'replay') return { decision, status: stored.status ?? 500, body: stored.body };
      if (decision === 'new') continue; // expired between the two statements
      return { decision };
    }
    // Three races in a row with other requests on this key: it is busy.
    return { decision: 'in_progress' };
  }

  async complete(scope: string, key: string, status: number, body: unknown, now: Date): Promise<void> {
    await this.db.query(
      `update idempotent_requests set status = ?, body = cast(? as jsonb), completed_at = ?
        where scope = ? and key = ? and completed_at is null`,
      [status, JSON.stringify(body ?? null), now, scope, key],
    );
  }

  async abandon(scope: string, key: string): Promise<void> {
    await this.db.query('delete from idempotent_requests where scope = ? and key = ? and completed_at is null', [scope, key]);
  }

  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from idempotent_requests where created_at < ? returning key', [before]);
    return rows.length;
  }
}
