import type { IdempotencyLease, IdempotentBegin, IdempotentRequestStore } from '../../application/idempotency/idempotent-request.store';
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
  leaseExpiresAt: read.dateOrNull,
});

/**
 * `Idempotency-Key` records in idempotent_requests, primary key (scope, key). Claiming a key is one
 * statement: an insert, the takeover of an expired record, or the takeover of the same request's
 * unanswered record whose holder's lease ran out (the holder died), so concurrent first requests
 * (and concurrent retries after a crash) with one key serialize on the primary key and exactly one
 * of them gets `new`. A takeover keeps the record's created_at: the key's 24 hours run from its
 * first use, as the processor's keys derived from it do.
 */
export class PostgresIdempotentRequestStore implements IdempotentRequestStore {
  constructor(private readonly db: Database) {}

  async begin(scope: string, key: string, fingerprint: string, lease: IdempotencyLease): Promise<IdempotentBegin> {
    const { now } = lease;
    const expired = idempotencyExpiry(now);
    // A record deleted (abandoned) between the two statements leaves nothing to read: claim again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.db.query(
        `insert into idempotent_requests (scope, key, fingerprint, status, body, created_at, completed_at, holder, lease_expires_at)
         values (?, ?, ?, null, null, ?, null, ?, ?)
         on conflict (scope, key) do update
           set fingerprint = excluded.fingerprint, status = null, body = null, completed_at = null,
               holder = excluded.holder, lease_expires_at = excluded.lease_expires_at,
               created_at = case when idempotent_requests.created_at <= ? then excluded.created_at else idempotent_requests.created_at end
           where idempotent_requests.created_at <= ?
              or (idempotent_requests.completed_at is null and idempotent_requests.fingerprint = excluded.fingerprint
                  and (idempotent_requests.lease_expires_at is null or idempotent_requests.lease_expires_at <= ?))
         returning key`,
        [scope, key, fingerprint, now, lease.holder, lease.expiresAt, expired, expired, now],
      );
      if (claimed.length > 0) return { decision: 'new' };
      const stored = toStored.first(await this.db.query(`select ${toStored.columns} from idempotent_requests where scope = ? and key = ?`, [scope, key]));
      if (stored === null) continue;
      const decision = idempotencyDecision(stored, fingerprint, now);
      if (decision === 'replay') return { decision, status: stored.status ?? 500, body: stored.body };
      if (decision === 'new') continue; // expired, or its lease ran out, between the two statements
      return { decision };
    }
    // Three races in a row with other requests on this key: it is busy.
    return { decision: 'in_progress' };
  }

  async renew(scope: string, key: string, lease: IdempotencyLease): Promise<boolean> {
    const rows = await this.db.query(
      `update idempotent_requests set lease_expires_at = ?
        where scope = ? and key = ? and holder = ? and completed_at is null
        returning key`,
      [lease.expiresAt, scope, key, lease.holder],
    );
    return rows.length > 0;
  }

  async complete(scope: string, key: string, holder: string, status: number, body: unknown, now: Date): Promise<void> {
    await this.db.query(
      `update idempotent_requests set status = ?, body = cast(? as jsonb), completed_at = ?, lease_expires_at = null
        where scope = ? and key = ? and holder = ? and completed_at is null`,
      [status, JSON.stringify(body ?? null), now, scope, key, holder],
    );
  }

  async abandon(scope: string, key: string, holder: string): Promise<void> {
    await this.db.query('delete from idempotent_requests where scope = ? and key = ? and holder = ? and completed_at is null', [scope, key, holder]);
  }

  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from idempotent_requests where created_at < ? returning key', [before]);
    return rows.length;
  }
}
