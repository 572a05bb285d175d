import { AsyncResource } from 'node:async_hooks';
import type { AuditLog, AuditLogStore, AuditQuery, AuditRangeQuery, AuditStream } from '../../application/audit/audit-log';
import type { Logger } from '../../application/ports/logger';
import type { AuditActorKind, AuditAction, AuditDetails, AuditEntry, AuditOutcome, AuditTargetKind, StoredAuditEntry } from '../../domain/audit';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const COLUMNS = [
  'at',
  'project_id',
  'user_id',
  'actor_kind',
  'actor_id',
  'action',
  'target_kind',
  'target_id',
  'ip',
  'user_agent',
  'request_id',
  'outcome',
  'reason',
  'details',
] as const;
const ROW = `(${COLUMNS.map((c) => (c === 'details' ? '?::jsonb' : '?')).join(', ')})`;

/** Text as PostgreSQL can store it: without NUL characters. */
const text = (value: string | null): string | null => (value === null ? null : value.replace(/\u0000/g, ''));

const toRow = rowMapper<{
  id: string;
  at: Date;
  projectId: string;
  userId: string | null;
  actorKind: AuditActorKind;
  actorId: string | null;
  action: AuditAction;
  targetKind: AuditTargetKind | null;
  targetId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  outcome: AuditOutcome;
  reason: string | null;
  details: AuditDetails;
}>({
  id: read.text,
  at: read.date,
  projectId: read.text,
  userId: read.textOrNull,
  actorKind: read.as<AuditActorKind>(),
  actorId: read.textOrNull,
  action: read.as<AuditAction>(),
  targetKind: read.as<AuditTargetKind | null>(),
  targetId: read.textOrNull,
  ip: read.textOrNull,
  userAgent: read.textOrNull,
  requestId: read.textOrNull,
  outcome: read.as<AuditOutcome>(),
  reason: read.textOrNull,
  details: read.as<AuditDetails>(),
});

const toEntry = (row: object): StoredAuditEntry => {
  const r = toRow(row);
  return {
    id: String(r.id),
    at: r.at,
    projectId: r.projectId,
    userId: r.userId,
    actor: { kind: r.actorKind, id: r.actorId },
    action: r.action,
    target: r.targetKind !== null && r.targetId !== null ? { kind: r.targetKind, id: r.targetId } : null,
    ip: r.ip,
    userAgent: r.userAgent,
    requestId: r.requestId,
    outcome: r.outcome,
    reason: r.reason,
    details: r.details ?? {},
  };
};

/** The conditions of a read: the project, then any of the user, the action (or prefix), the outcome and the time range. */
function conditions(q: Omit<AuditQuery, 'limit' | 'after'>): { where: string[]; params: unknown[] } {
  const where = ['project_id = ?'];
  const params: unknown[] = [q.projectId];
  if (q.userId !== undefined) {
    where.push('user_id = ?');
    params.push(q.userId);
  }
  if (q.action !== undefined) {
    // The name itself, or a longer one starting with `<prefix>.` ('/' sorts right after '.'): an index range.
    where.push('(action = ? or (action > ? and action < ?))');
    params.push(q.action, `${q.action}.`, `${q.action}/`);
  }
  if (q.outcome !== undefined) {
    where.push('outcome = ?');
    params.push(q.outcome);
  }
  if (q.since !== undefined) {
    where.push('at >= ?');
    params.push(q.since);
  }
  if (q.until !== undefined) {
    where.push('at < ?');
    params.push(q.until);
  }
  return { where, params };
}

export interface AuditWriterOptions {
  /** How long an entry may wait in memory before its batch is written (default 100 ms). */
  flushIntervalMs?: number;
  /** A batch this large is written at once, without waiting (default 200, one INSERT). */
  batchSize?: number;
  /** Entries kept while the database does not answer; older ones are dropped beyond it (default 10,000). */
  maxBuffered?: number;
  /** Sees every entry as it is recorded (the metrics of sign-ins, MFA challenges, refresh reuse); must not throw. */
  observe?: (entry: AuditEntry) => void;
  /**
   * Streams written entries to their receivers (webhook endpoints selecting `audit.*`): a batch
   * with receivers is written in one transaction with its deliveries, so an entry is delivered if
   * and only if it is in the table.
   */
  stream?: AuditStream;
}

/**
 * The audit log in PostgreSQL (`audit_log`). Writing is off the request path: `record` appends to
 * an in-process buffer and returns; the buffer is written as one multi-row INSERT every
 * `flushIntervalMs` (100 ms), or at once when it holds `batchSize` entries, and on `close` (the
 * process's shutdown). The trade-off (docs/audit.md): a process that dies without shutting down
 * (SIGKILL, a crash, power loss) loses the entries of its last ~100 ms. While the database fails,
 * entries wait (up to `maxBuffered`, then the oldest are dropped and counted in the log) and the
 * write is retried every second.
 *
 * Writes run outside the recording request's async context, so they never join its transaction.
 */
export class PostgresAuditLog implements AuditLog, AuditLogStore {
  private buffer: AuditEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly detached = new AsyncResource('tollgate.audit-log');
  private readonly flushIntervalMs: number;
  private readonly batchSize: number;
  private readonly maxBuffered: number;
  private readonly stream: AuditStream | null;
  private readonly observe: ((entry: AuditEntry) => void) | undefined;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    options: AuditWriterOptions = {},
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? 100;
    this.batchSize = options.batchSize ?? 200;
    this.maxBuffered = options.maxBuffered ?? 10_000;
    this.stream = options.stream ?? null;
    this.observe = options.observe;
  }

  record(entry: AuditEntry): void {
    if (!isUuid(entry.projectId) || (entry.userId !== null && !isUuid(entry.userId))) {
      this.logger.error({ action: entry.action }, 'audit entry with a malformed project or user id: not recorded');
      return;
    }
    this.observe?.(entry);
    this.buffer.push(entry);
    if (this.closed) {
      // After close (a late request): written at once, nothing will flush it later.
      void this.flush();
    } else if (this.buffer.length >= this.batchSize) {
      void this.flush();
    } else {
      this.schedule(this.flushIntervalMs);
    }
  }

  /** Writes every buffered entry; resolves when they are written (or kept for a retry after a failure). */
  flush(): Promise<void> {
    this.cancelTimer();
    this.writing = this.writing.then(() => this.detached.runInAsyncScope(() => this.writeBuffered()));
    return this.writing;
  }

  /** Writes what is buffered and stops the timer; later entries are written as they come. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    this.cancelTimer();
    if (this.buffer.length > 0) this.logger.error({ lost: this.buffer.length }, 'audit entries could not be written before closing');
  }

  private schedule(ms: number): void {
    if (this.timer || this.closed) return;
    this.detached.runInAsyncScope(() => {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, ms);
      this.timer.unref();
    });
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async writeBuffered(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.batchSize);
      try {
        await this.db.withContext(() => this.insert(batch));
      } catch (e) {
        // One entry PostgreSQL refuses must not hold back the others: they are written one by one,
        // and only when none of them can be written (the database is away) do they all wait.
        const refused = batch.length > 1 ? await this.insertOneByOne(batch) : batch;
        if (refused.length < batch.length) {
          if (refused.length > 0)
            this.logger.error({ err: e, actions: refused.map((r) => r.action) }, 'audit log: entries refused by the database were dropped');
          continue;
        }
        this.buffer.unshift(...batch);
        const excess = this.buffer.length - this.maxBuffered;
        if (excess > 0) {
          this.buffer.splice(0, excess);
          this.logger.error({ err: e, dropped: excess }, 'audit log: writing failed and the buffer is full; the oldest entries were dropped');
        } else {
          this.logger.error({ err: e, waiting: this.buffer.length }, 'audit log: writing failed; retrying in 1 s');
        }
        if (!this.closed) this.schedule(1000);
        return;
      }
    }
  }

  /** Writes each entry alone; returns the ones that could not be written. */
  private async insertOneByOne(batch: AuditEntry[]): Promise<AuditEntry[]> {
    const refused: AuditEntry[] = [];
    for (const entry of batch) {
      try {
        await this.db.withContext(() => this.insert([entry]));
      } catch {
        refused.push(entry);
      }
    }
    return refused;
  }

  /** Writes a batch: alone, or with its deliveries in one transaction when some project of it streams its log. */
  private async insert(batch: AuditEntry[]): Promise<void> {
    const stream = this.stream;
    const receivers = stream ? await stream.receivers([...new Set(batch.map((e) => e.projectId))]) : new Map<string, readonly string[]>();
    if (!stream || receivers.size === 0) {
      await this.insertRows(batch);
      return;
    }
    await this.db.transaction(async () => {
      const ids = await this.insertRows(batch);
      await stream.deliver(
        batch.map((e, i) => ({ ...e, id: ids[i]! })),
        receivers,
      );
    });
  }

  /** One multi-row INSERT; answers the ids in the order of the batch (PostgreSQL returns a VALUES list's rows in order). */
  private async insertRows(batch: AuditEntry[]): Promise<string[]> {
    const params: unknown[] = [];
    for (const e of batch) {
      params.push(
        e.at,
        e.projectId,
        e.userId,
        e.actor.kind,
        text(e.actor.id),
        e.action,
        e.target?.kind ?? null,
        text(e.target?.id ?? null),
        text(e.ip),
        text(e.userAgent),
        text(e.requestId),
        e.outcome,
        text(e.reason),
        JSON.stringify(e.details, (_key, value: unknown) => (typeof value === 'string' ? text(value) : value)),
      );
    }
    const rows = await this.db.query<{ id: string | number }>(
      `insert into audit_log (${COLUMNS.join(', ')}) values ${batch.map(() => ROW).join(', ')} returning id`,
      params,
    );
    return rows.map((r) => String(r.id));
  }

  async list(q: AuditQuery): Promise<StoredAuditEntry[]> {
    const { where, params } = conditions(q);
    if (q.after !== undefined) {
      where.push('(at, id) < (?, ?)');
      params.push(q.after.at, q.after.id);
    }
    params.push(q.limit);
    const rows = await this.db.query(`select ${toRow.columns} from audit_log where ${where.join(' and ')} order by at desc, id desc limit ?`, params);
    return rows.map(toEntry);
  }

  async listOldestFirst(q: AuditRangeQuery): Promise<StoredAuditEntry[]> {
    const { where, params } = conditions(q);
    if (q.after !== undefined) {
      where.push('(at, id) > (?, ?)');
      params.push(q.after.at, q.after.id);
    }
    params.push(q.limit);
    // The (project_id, at, id) index read forwards; with an action, (project_id, action, at, id).
    const rows = await this.db.query(`select ${toRow.columns} from audit_log where ${where.join(' and ')} order by at, id limit ?`, params);
    return rows.map(toEntry);
  }

  async pruneBefore(before: Date, batch: number): Promise<number> {
    const rows = await this.db.query<{ n: string }>(
      `with gone as (
         delete from audit_log where id in (select id from audit_log where at < ? order by at limit ?) returning 1
       ) select count(*) as n from gone`,
      [before, batch],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
