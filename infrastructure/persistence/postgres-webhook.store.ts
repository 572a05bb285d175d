import type { SecretBox } from '../../application/ports/crypto';
import type {
  AttemptSource,
  DeliveryStatus,
  FinishedAttempt,
  OpenedAttempt,
  StreakChange,
  SigningSecrets,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryStore,
  WebhookEndpoint,
  WebhookEndpointStore,
} from '../../application/webhooks/webhook.store';
import { WEBHOOK_DELIVERY_TOPIC } from '../../application/webhooks/ports';
import type { WebhookEventType } from '../../domain/webhooks/endpoint';
import { secretDisplayPrefix } from '../../domain/webhooks/signature';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toEndpoint = rowMapper<WebhookEndpoint>({
  id: read.text,
  projectId: read.text,
  url: read.text,
  eventTypes: read.as<WebhookEventType[]>(),
  description: read.text,
  enabled: read.bool,
  disabledReason: read.textOrNull,
  secretPrefix: read.text,
  failingSince: read.dateOrNull,
  lastSuccessAt: read.dateOrNull,
  createdAt: read.date,
  updatedAt: read.date,
});

const toDelivery = rowMapper<WebhookDelivery>({
  id: read.text,
  projectId: read.text,
  endpointId: read.text,
  eventId: read.textOrNull,
  eventType: read.text,
  payload: read.as<Record<string, unknown>>(),
  status: read.as<DeliveryStatus>(),
  attemptCount: read.number,
  lastStatusCode: read.numberOrNull,
  createdAt: read.date,
  completedAt: read.dateOrNull,
  nextAttemptAt: read.dateOrNull,
});

const toAttempt = rowMapper<WebhookAttempt>({
  deliveryId: read.text,
  attempt: read.number,
  startedAt: read.date,
  durationMs: read.numberOrNull,
  statusCode: read.numberOrNull,
  responseExcerpt: read.textOrNull,
  error: read.textOrNull,
});

interface SecretColumns {
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_until: Date | string | null;
}

/** The secrets an endpoint signs with at `now`, decrypted: the current one, and the one before a roll while it lives. */
function signingSecrets(box: SecretBox, row: SecretColumns, now: Date): SigningSecrets {
  const previousLive = row.previous_secret_enc !== null && row.previous_secret_until !== null && new Date(row.previous_secret_until).getTime() > now.getTime();
  return { current: box.decrypt(row.secret_enc), previous: previousLive ? box.decrypt(row.previous_secret_enc!) : null };
}

/** The endpoint's columns as `e_<column>` beside a delivery's own. */
const ENDPOINT_COLUMNS_PREFIXED = toEndpoint.columns
  .split(', ')
  .map((c) => `e.${c} as e_${c}`)
  .join(', ');
const endpointOf = (row: Record<string, unknown>): WebhookEndpoint =>
  toEndpoint(
    Object.fromEntries(
      Object.entries(row)
        .filter(([k]) => k.startsWith('e_'))
        .map(([k, v]) => [k.slice(2), v]),
    ),
  );

/**
 * The start of the next attempt of each delivery named (`r`, with its place `i` in the request),
 * in one statement: the attempt count goes up on each pending delivery, its attempt row is inserted
 * (the unique (message, attempt) index refuses a second recording of one outbox attempt), and each
 * delivery comes back with its endpoint and the endpoint's encrypted secrets. Nothing is written
 * for a delivery no longer pending.
 */
const BEGIN_ATTEMPTS = `
  with r as (
    select * from jsonb_to_recordset(?::jsonb) as r(i integer, delivery_id uuid, message_id uuid, message_attempt integer)
  ), d as (
    update webhook_deliveries d set attempt_count = d.attempt_count + 1
      from r where d.id = r.delivery_id and d.status = 'pending'
    returning r.i, r.message_id, r.message_attempt, ${toDelivery.columns
      .split(', ')
      .map((c) => `d.${c}`)
      .join(', ')}
  ), a as (
    insert into webhook_attempts (delivery_id, attempt, message_id, message_attempt, started_at)
    select id, attempt_count, message_id, message_attempt, ? from d
    returning delivery_id, attempt
  )
  select d.i, ${toDelivery.columns
    .split(', ')
    .map((c) => `d.${c}`)
    .join(', ')}, a.attempt as attempt_number, ${ENDPOINT_COLUMNS_PREFIXED},
         e.secret_enc, e.previous_secret_enc, e.previous_secret_until
    from d join a on a.delivery_id = d.id join webhook_endpoints e on e.id = d.endpoint_id`;

/** How stale an endpoint's last success may get before a success writes it again. */
const LAST_SUCCESS_PRECISION_MS = 60_000;

/**
 * The end of attempts (`r`) on each attempt row and its delivery, and what they mean for each
 * endpoint (`c`: its last success among them, and the first failure after it), in one statement.
 * An endpoint row is written only when its failing streak begins or ends, or to move a last
 * success more than a minute old: at hundreds of deliveries a second to one endpoint, not on every
 * delivery (concurrent writers of one row would queue on its lock). Answers, for each endpoint
 * with a failure, when its streak began.
 */
const FINISH_ATTEMPTS = `
  with r as (
    select * from jsonb_to_recordset(?::jsonb) as r(delivery_id uuid, attempt integer, duration_ms integer, status_code integer,
      response_excerpt text, error text, status text, completed_at timestamptz, next_attempt_at timestamptz)
  ), a as (
    update webhook_attempts a set duration_ms = r.duration_ms, status_code = r.status_code, response_excerpt = r.response_excerpt, error = r.error
      from r where a.delivery_id = r.delivery_id and a.attempt = r.attempt
  ), d as (
    update webhook_deliveries d set status = r.status, last_status_code = coalesce(r.status_code, d.last_status_code),
           completed_at = r.completed_at, next_attempt_at = r.next_attempt_at
      from r where d.id = r.delivery_id
  ), c as (
    select * from jsonb_to_recordset(?::jsonb) as c(endpoint_id uuid, succeeded_at timestamptz, failing_from timestamptz)
  ), e as (
    update webhook_endpoints e
       set last_success_at = coalesce(c.succeeded_at, e.last_success_at),
           failing_since = case when c.succeeded_at is null then coalesce(e.failing_since, c.failing_from) else c.failing_from end
      from c
     where e.id = c.endpoint_id
       and (case when c.succeeded_at is null then e.failing_since is null
                 else e.failing_since is distinct from c.failing_from or e.last_success_at is null
                      or e.last_success_at < c.succeeded_at - interval '${LAST_SUCCESS_PRECISION_MS} milliseconds' end)
    returning e.id, e.failing_since
  )
  select c.endpoint_id, coalesce((select e.failing_since from e where e.id = c.endpoint_id),
                                 (select x.failing_since from webhook_endpoints x where x.id = c.endpoint_id)) as failing_since
    from c where c.failing_from is not null`;

/**
 * What a set of attempt ends means for each endpoint: its latest success (the streak ends then),
 * and its first failure after that (a streak begins then, unless one runs already).
 */
function streakChanges(streaks: readonly StreakChange[]): Array<{ endpoint_id: string; succeeded_at: string | null; failing_from: string | null }> {
  const byEndpoint = new Map<string, StreakChange[]>();
  for (const s of streaks) byEndpoint.set(s.endpointId, [...(byEndpoint.get(s.endpointId) ?? []), s]);
  return [...byEndpoint].map(([endpointId, changes]) => {
    const succeeded = changes.filter((c) => c.outcome === 'succeeded').map((c) => c.at.getTime());
    const lastSuccess = succeeded.length ? Math.max(...succeeded) : null;
    const failures = changes.filter((c) => c.outcome === 'failed' && (lastSuccess === null || c.at.getTime() > lastSuccess)).map((c) => c.at.getTime());
    const firstFailure = failures.length ? Math.min(...failures) : null;
    return {
      endpoint_id: endpointId,
      succeeded_at: lastSuccess === null ? null : new Date(lastSuccess).toISOString(),
      failing_from: firstFailure === null ? null : new Date(firstFailure).toISOString(),
    };
  });
}

/** A text[] parameter, from JSON (bindings would spread a JS array into a list). */
const TEXT_ARRAY = 'array(select jsonb_array_elements_text(?::jsonb))';

/**
 * Endpoints in webhook_endpoints, their signing secrets encrypted with the deployment's SecretBox
 * (decrypted only to sign). Written on the caller's connection, in its transaction when it has one.
 */
export class PostgresWebhookEndpointStore implements WebhookEndpointStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  async insert(e: WebhookEndpoint, secret: string): Promise<void> {
    await this.db.query(
      `insert into webhook_endpoints (id, project_id, url, event_types, description, enabled, disabled_reason, secret_enc, secret_prefix,
                                      failing_since, last_success_at, created_at, updated_at)
       values (?, ?, ?, ${TEXT_ARRAY}, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        e.id,
        e.projectId,
        e.url,
        JSON.stringify(e.eventTypes),
        e.description,
        e.enabled,
        e.disabledReason,
        this.box.encrypt(secret),
        e.secretPrefix,
        e.failingSince,
        e.lastSuccessAt,
        e.createdAt,
        e.updatedAt,
      ],
    );
  }

  async list(projectId: string): Promise<WebhookEndpoint[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(`select ${toEndpoint.columns} from webhook_endpoints where project_id = ? order by created_at, id`, [projectId]);
    return rows.map(toEndpoint);
  }

  async get(projectId: string, id: string): Promise<WebhookEndpoint | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    return toEndpoint.first(await this.db.query(`select ${toEndpoint.columns} from webhook_endpoints where project_id = ? and id = ?`, [projectId, id]));
  }

  async update(e: WebhookEndpoint): Promise<boolean> {
    const rows = await this.db.query(
      `update webhook_endpoints set url = ?, event_types = ${TEXT_ARRAY}, description = ?, enabled = ?, disabled_reason = ?, failing_since = ?, updated_at = ?
        where project_id = ? and id = ? returning id`,
      [e.url, JSON.stringify(e.eventTypes), e.description, e.enabled, e.disabledReason, e.failingSince, e.updatedAt, e.projectId, e.id],
    );
    return rows.length > 0;
  }

  async rollSecret(projectId: string, id: string, secret: string, previousUntil: Date, now: Date): Promise<WebhookEndpoint | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    const prefix = secretDisplayPrefix(secret);
    const rows = await this.db.query(
      `update webhook_endpoints set previous_secret_enc = secret_enc, previous_secret_until = ?, secret_enc = ?, secret_prefix = ?, updated_at = ?
        where project_id = ? and id = ? returning ${toEndpoint.columns}`,
      [previousUntil, this.box.encrypt(secret), prefix, now, projectId, id],
    );
    return toEndpoint.first(rows);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(id)) return false;
    return (await this.db.query(`delete from webhook_endpoints where project_id = ? and id = ? returning id`, [projectId, id])).length > 0;
  }

  async subscribedTo(projectId: string, type: string): Promise<Array<{ id: string }>> {
    return this.db.query<{ id: string }>(
      `select id from webhook_endpoints where project_id = ? and enabled and (cardinality(event_types) = 0 or ? = any(event_types)) order by created_at, id`,
      [projectId, type],
    );
  }

  async auditReceivers(projectIds: readonly string[]): Promise<Array<{ id: string; projectId: string }>> {
    const ids = projectIds.filter(isUuid);
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ id: string; project_id: string }>(
      `select id, project_id from webhook_endpoints where project_id = any(?::uuid[]) and enabled and 'audit.*' = any(event_types) order by created_at, id`,
      [ids],
    );
    return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
  }

  async secrets(id: string, now: Date): Promise<SigningSecrets | null> {
    const [row] = await this.db.query<SecretColumns>(`select secret_enc, previous_secret_enc, previous_secret_until from webhook_endpoints where id = ?`, [id]);
    return row ? signingSecrets(this.box, row, now) : null;
  }

  async disable(id: string, reason: string, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update webhook_endpoints set enabled = false, disabled_reason = ?, updated_at = ? where id = ? and enabled returning id`,
      [reason, now, id],
    );
    return rows.length > 0;
  }
}

/** Deliveries and their attempts, in webhook_deliveries and webhook_attempts. */
export class PostgresWebhookDeliveryStore implements WebhookDeliveryStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  async insert(d: WebhookDelivery): Promise<void> {
    await this.db.query(
      `insert into webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, payload, status, attempt_count, last_status_code,
                                       created_at, completed_at, next_attempt_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?)`,
      [
        d.id,
        d.projectId,
        d.endpointId,
        d.eventId,
        d.eventType,
        JSON.stringify(d.payload),
        d.status,
        d.attemptCount,
        d.lastStatusCode,
        d.createdAt,
        d.completedAt,
        d.nextAttemptAt,
      ],
    );
  }

  async get(projectId: string, id: string): Promise<WebhookDelivery | null> {
    if (!isUuid(projectId) || !isUuid(id)) return null;
    return toDelivery.first(await this.db.query(`select ${toDelivery.columns} from webhook_deliveries where project_id = ? and id = ?`, [projectId, id]));
  }

  async beginAttempts(attempts: ReadonlyArray<{ deliveryId: string; source: AttemptSource }>, startedAt: Date): Promise<Array<OpenedAttempt | null>> {
    const wanted = attempts
      .map((a, i) => ({ i, delivery_id: a.deliveryId, message_id: a.source.messageId, message_attempt: a.source.messageAttempt }))
      .filter((a) => isUuid(a.delivery_id));
    const opened: Array<OpenedAttempt | null> = attempts.map(() => null);
    if (wanted.length === 0) return opened;
    const rows = await this.db.query<Record<string, unknown> & SecretColumns & { i: number; attempt_number: number }>(
      BEGIN_ATTEMPTS,
      [JSON.stringify(wanted), startedAt],
      { prepare: 'webhook_begin_attempts' },
    );
    for (const row of rows) {
      const endpoint = endpointOf(row);
      opened[Number(row.i)] = {
        delivery: toDelivery(row),
        endpoint,
        attempt: Number(row.attempt_number),
        secrets: endpoint.enabled ? signingSecrets(this.box, row, startedAt) : null,
      };
    }
    return opened;
  }

  async startAttempt(deliveryId: string, startedAt: Date, source: AttemptSource | null): Promise<number> {
    // One statement: the count and the attempt row together, or neither (a second recording of the
    // same outbox attempt violates the unique index, and nothing is sent).
    const [row] = await this.db.query<{ attempt: number }>(
      `with d as (update webhook_deliveries set attempt_count = attempt_count + 1 where id = ? returning id, attempt_count)
       insert into webhook_attempts (delivery_id, attempt, message_id, message_attempt, started_at)
       select id, attempt_count, ?, ?, ? from d
       returning attempt`,
      [deliveryId, source?.messageId ?? null, source?.messageAttempt ?? null, startedAt],
    );
    if (!row) throw new Error(`webhook delivery ${deliveryId} is gone`);
    return Number(row.attempt);
  }

  async finishAttempts(attempts: readonly FinishedAttempt[]): Promise<Map<string, Date | null>> {
    const failingSince = new Map<string, Date | null>();
    if (attempts.length === 0) return failingSince;
    const results = attempts.map(({ result: r }) => ({
      delivery_id: r.deliveryId,
      attempt: r.attempt,
      duration_ms: Math.round(r.durationMs),
      status_code: r.statusCode,
      response_excerpt: r.responseExcerpt,
      error: r.error,
      status: r.status,
      completed_at: r.completedAt?.toISOString() ?? null,
      next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
    }));
    const changes = streakChanges(attempts.flatMap((a) => (a.streak ? [a.streak] : [])));
    const rows = await this.db.query<{ endpoint_id: string; failing_since: Date | string | null }>(
      FINISH_ATTEMPTS,
      [JSON.stringify(results), JSON.stringify(changes)],
      { prepare: 'webhook_finish_attempts' },
    );
    for (const row of rows) failingSince.set(row.endpoint_id, row.failing_since === null ? null : new Date(row.failing_since));
    return failingSince;
  }

  async listForEndpoint(projectId: string, endpointId: string, filter: { limit: number }): Promise<Array<WebhookDelivery & { attempts: WebhookAttempt[] }>> {
    if (!isUuid(projectId) || !isUuid(endpointId)) return [];
    const deliveries = (
      await this.db.query(
        `select ${toDelivery.columns} from webhook_deliveries where project_id = ? and endpoint_id = ? order by created_at desc, seq desc limit ?`,
        [projectId, endpointId, Math.max(1, Math.floor(filter.limit))],
      )
    ).map(toDelivery);
    if (deliveries.length === 0) return [];
    const attempts = (
      await this.db.query(
        `select ${toAttempt.columns} from webhook_attempts where delivery_id in (select jsonb_array_elements_text(?::jsonb)::uuid) order by ` +
          `delivery_id, attempt`,
        [JSON.stringify(deliveries.map((d) => d.id))],
      )
    ).map(toAttempt);
    const byDelivery = new Map<string, WebhookAttempt[]>();
    for (const a of attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
    return deliveries.map((d) => ({ ...d, attempts: byDelivery.get(d.id) ?? [] }));
  }

  async reopen(projectId: string, id: string, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update webhook_deliveries
          set status = 'pending', completed_at = null, next_attempt_at = coalesce(case when status = 'pending' then next_attempt_at end, ?)
        where project_id = ? and id = ? returning id`,
      [now, projectId, id],
    );
    return rows.length > 0;
  }

  async listFailed(projectId: string, endpointId: string, since: Date, limit: number): Promise<WebhookDelivery[]> {
    if (!isUuid(projectId) || !isUuid(endpointId)) return [];
    const rows = await this.db.query(
      `select ${toDelivery.columns} from webhook_deliveries
        where endpoint_id = ? and project_id = ? and status = 'failed' and created_at >= ? order by created_at, seq limit ?`,
      [endpointId, projectId, since, limit],
    );
    return rows.map(toDelivery);
  }

  async failOrphans(olderThan: Date, now: Date): Promise<number> {
    const rows = await this.db.query(
      `update webhook_deliveries d set status = 'failed', completed_at = ?, next_attempt_at = null
        where d.status = 'pending' and d.created_at < ?
          and not exists (select 1 from outbox_messages m where m.topic = ? and m.dedupe_key = d.id::text and m.status = 'pending')
        returning d.id`,
      [now, olderThan, WEBHOOK_DELIVERY_TOPIC.name],
    );
    return rows.length;
  }
}
