import type { DeliveryView, EndpointView } from '../../application/webhooks/views';
import type { WebhookErrorCode } from '../../application/webhooks/errors';
import type { Result } from '../../domain/result';
import { AUDIT_EVENTS, WEBHOOK_EVENT_TYPES, WEBHOOK_SELECTABLE } from '../../domain/webhooks/endpoint';
import type { Options } from './args';
import type { Command } from './command';
import { webhookError, type WebhookErrorContext } from './messages';
import { fields, table } from './render';

/**
 * The webhook commands: a project's endpoints (create, list, update, delete, roll-secret), the Test
 * action, the delivery log, resend, retry now and replay. Each calls one of the webhook use cases
 * (application/webhooks/use-cases.ts), the same the console's routes call. Secrets are printed only by
 * create and roll-secret.
 */

export const WEBHOOK_GROUPS: Record<string, string> = {
  webhook: "a project's webhook endpoints, their signing secrets, deliveries, resends and the Test action",
};

const iso = (date: Date | string | null | undefined): string | null => (date === null || date === undefined ? null : new Date(date).toISOString());

function endpointJson(e: EndpointView) {
  return {
    id: e.id,
    projectId: e.projectId,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    secretPrefix: e.secretPrefix,
    failingSince: iso(e.failingSince),
    lastSuccessAt: iso(e.lastSuccessAt),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}

const eventsText = (types: readonly string[]) => (types.length ? types.join(', ') : 'all events');
const stateText = (e: ReturnType<typeof endpointJson>) => (e.enabled ? 'enabled' : `disabled${e.disabledReason ? ` (${e.disabledReason})` : ''}`);

function endpointText(e: ReturnType<typeof endpointJson>): string {
  return fields(
    [
      ['id', e.id],
      ['url', e.url],
      ['events', eventsText(e.eventTypes)],
      ['description', e.description || '(none)'],
      ['state', stateText(e)],
      ['secret', `${e.secretPrefix}…`],
      ['last success', e.lastSuccessAt ?? 'never'],
      ...(e.failingSince ? [['failing since', e.failingSince] as [string, string]] : []),
      ['created', e.createdAt ?? ''],
    ],
    14,
  );
}

function deliveryJson(d: DeliveryView) {
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attemptCount: d.attemptCount,
    lastStatusCode: d.lastStatusCode,
    createdAt: iso(d.createdAt),
    completedAt: iso(d.completedAt),
    nextAttemptAt: iso(d.nextAttemptAt),
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: iso(a.startedAt),
      durationMs: a.durationMs,
      statusCode: a.statusCode,
      responseExcerpt: a.responseExcerpt,
      error: a.error,
    })),
  };
}

const oneLine = (text: string | null, max = 60): string => {
  if (text === null || text === '') return '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function deliveriesText(endpointId: string, deliveries: ReturnType<typeof deliveryJson>[]): string {
  if (deliveries.length === 0) return `No deliveries to endpoint ${endpointId} yet.`;
  return deliveries
    .map((d) => {
      const next = d.nextAttemptAt && d.status === 'pending' ? ` (next attempt ${d.nextAttemptAt})` : '';
      const head = `${d.createdAt}  ${d.eventType}  ${d.status}${next}  delivery ${d.id}${d.eventId ? `  event ${d.eventId}` : ''}`;
      const rows = d.attempts.map((a) => [
        `#${a.attempt}`,
        a.startedAt ?? '',
        a.statusCode === null ? '-' : String(a.statusCode),
        a.durationMs === null ? '(running or abandoned)' : `${a.durationMs} ms`,
        oneLine(a.error ?? a.responseExcerpt),
      ]);
      const attempts = rows.length
        ? table(['ATTEMPT', 'TIME', 'STATUS', 'DURATION', 'ANSWER OR ERROR'], rows)
            .split('\n')
            .map((l) => `    ${l}`)
            .join('\n')
        : '    (no attempt yet)';
      return `${head}\n${attempts}`;
    })
    .join('\n\n');
}

function unwrap<T, E extends WebhookErrorCode>(outcome: Result<T, E>, ctx: WebhookErrorContext): T {
  if (!outcome.ok) throw webhookError(outcome, ctx);
  return outcome.value;
}

/** `--events a,b`: the names, trimmed; "" or "all" for every type. */
function eventsOption(options: Options): string[] | undefined {
  const given = options.string('events');
  if (given === undefined) return undefined;
  if (given.trim() === '' || given.trim() === 'all') return [];
  const names = given
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = names.find((n) => !(WEBHOOK_SELECTABLE as readonly string[]).includes(n));
  if (unknown !== undefined)
    options.fail(
      `--events: unknown event type "${unknown}"; expected a comma-separated list of ${WEBHOOK_EVENT_TYPES.join(', ')} (or all), and ${AUDIT_EVENTS}.`,
    );
  return names;
}

const EVENTS_OPTION = {
  arity: 1 as const,
  placeholder: '<a,b>',
  description:
    `event types, comma-separated: ${WEBHOOK_EVENT_TYPES.join(', ')}; all (the default) for every type; ` +
    `${AUDIT_EVENTS} for the audit log as it is written (named on its own, never in all)`,
};

export const WEBHOOK_COMMANDS: Command[] = [
  {
    path: ['webhook', 'create'],
    args: ['projectId'],
    summary: 'Register a webhook endpoint; prints its signing secret (shown once)',
    options: {
      url: {
        arity: 1,
        required: true,
        placeholder: '<url>',
        description: 'https URL receiving POSTs (http and private hosts only with WEBHOOK_ALLOW_PRIVATE_URLS=true), required',
      },
      events: EVENTS_OPTION,
      description: { arity: 1, placeholder: '<text>', description: 'a note to recognise it by (up to 500 characters)' },
    },
    plan({ args, options }) {
      const url = options.string('url');
      if (url === undefined) return options.fail('Missing --url <url>.');
      const eventTypes = eventsOption(options);
      const description = options.string('description');
      const projectId = args.projectId!;
      return async (_admin, _billing, webhooks) => {
        const created = unwrap(
          await webhooks.createEndpoint(projectId, { url, ...(eventTypes ? { eventTypes } : {}), ...(description !== undefined ? { description } : {}) }),
          { projectId, url, events: options.string('events') },
        );
        const endpoint = endpointJson(created.endpoint);
        return {
          json: { projectId, endpoint, secret: created.secret },
          text: [
            `Created webhook endpoint ${endpoint.id} for project ${projectId}. Its signing secret is shown only now: keep it.`,
            '',
            `  signing secret : ${created.secret}`,
            '',
            endpointText(endpoint),
            '',
            `Check it with: tollgate webhook test ${projectId} ${endpoint.id}`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['webhook', 'list'],
    args: ['projectId'],
    summary: "List a project's webhook endpoints (secret prefixes only)",
    options: {},
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const endpoints = unwrap(await webhooks.listEndpoints(projectId), { projectId }).map(endpointJson);
        const text = endpoints.length
          ? table(
              ['ID', 'STATE', 'EVENTS', 'SECRET', 'URL'],
              endpoints.map((e) => [e.id, e.enabled ? 'enabled' : 'disabled', eventsText(e.eventTypes), `${e.secretPrefix}…`, e.url]),
            ) +
            (endpoints.some((e) => !e.enabled && e.disabledReason)
              ? `\n\n${endpoints
                  .filter((e) => e.disabledReason)
                  .map((e) => `${e.id}: ${e.disabledReason}`)
                  .join('\n')}`
              : '')
          : `Project ${projectId} has no webhook endpoints. Add one with: tollgate webhook create ${projectId} --url https://...`;
        return { json: { projectId, endpoints }, text };
      },
  },
  {
    path: ['webhook', 'update'],
    args: ['projectId', 'endpointId'],
    summary: 'Change a webhook endpoint: URL, events, description, enabled',
    options: {
      url: { arity: 1, placeholder: '<url>', description: 'a new URL (checked as at creation)' },
      events: EVENTS_OPTION,
      description: { arity: 1, placeholder: '<text>', description: 'a new description ("" clears it)' },
      enabled: { arity: 1, placeholder: '<on|off>', description: 'enable (also after Tollgate disabled it) or disable the endpoint' },
    },
    plan({ args, options }) {
      const url = options.string('url');
      const eventTypes = eventsOption(options);
      const description = options.string('description');
      const enabled = options.onOff('enabled');
      const changes = {
        ...(url !== undefined ? { url } : {}),
        ...(eventTypes !== undefined ? { eventTypes } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(enabled !== undefined ? { enabled } : {}),
      };
      if (Object.keys(changes).length === 0) options.fail('Nothing to update: give at least one option.');
      const projectId = args.projectId!;
      const endpointId = args.endpointId!;
      return async (_admin, _billing, webhooks) => {
        const endpoint = endpointJson(
          unwrap(await webhooks.updateEndpoint(projectId, endpointId, changes), { projectId, endpointId, url, events: options.string('events') }),
        );
        return { json: { projectId, endpoint }, text: `Updated webhook endpoint ${endpoint.id}.\n${endpointText(endpoint)}` };
      };
    },
  },
  {
    path: ['webhook', 'delete'],
    args: ['projectId', 'endpointId'],
    summary: 'Delete a webhook endpoint with its delivery log; pending deliveries stop',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const endpointId = args.endpointId!;
        unwrap(await webhooks.deleteEndpoint(projectId, endpointId), { projectId, endpointId });
        return { json: { projectId, endpointId, deleted: true }, text: `Deleted webhook endpoint ${endpointId} of project ${projectId}.` };
      },
  },
  {
    path: ['webhook', 'roll-secret'],
    args: ['projectId', 'endpointId'],
    summary: 'Issue a new signing secret (shown once); the old one also signs for 24 hours',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const endpointId = args.endpointId!;
        const rolled = unwrap(await webhooks.rollSecret(projectId, endpointId), { projectId, endpointId });
        const until = iso(rolled.previousSecretValidUntil);
        return {
          json: { projectId, endpoint: endpointJson(rolled.endpoint), secret: rolled.secret, previousSecretValidUntil: until },
          text: [
            `New signing secret for webhook endpoint ${endpointId}. It is shown only now: keep it.`,
            '',
            `  signing secret : ${rolled.secret}`,
            '',
            `Until ${until} deliveries carry a signature with the old secret too (two v1= values), so your receiver can switch without refusing any.`,
          ].join('\n'),
        };
      },
  },
  {
    path: ['webhook', 'test'],
    args: ['projectId', 'endpointId'],
    summary: 'Send a signed test event to an endpoint now; exits 1 unless it answers 200',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const endpointId = args.endpointId!;
        const result = unwrap(await webhooks.sendTest(projectId, endpointId), { projectId, endpointId });
        const said = result.status === null ? (result.error ?? 'no answer') : `answered ${result.status}`;
        return {
          json: { projectId, endpointId, ...result },
          text: result.ok
            ? `Test event ${result.eventId} delivered: the endpoint answered 200 in ${result.durationMs} ms.`
            : `Test event ${result.eventId} not accepted: ${said} (${result.durationMs} ms). A receiver answers 200 to a valid test event.`,
          exitCode: result.ok ? 0 : 1,
        };
      },
  },
  {
    path: ['webhook', 'deliveries'],
    args: ['projectId', 'endpointId'],
    summary: "Show an endpoint's deliveries, newest first, with every attempt: time, status, duration, answer or error",
    options: { limit: { arity: 1, placeholder: '<n>', description: 'at most n deliveries (1 to 500, default 20)' } },
    plan({ args, options }) {
      const limit = options.int('limit', 1, 500) ?? 20;
      const projectId = args.projectId!;
      const endpointId = args.endpointId!;
      return async (_admin, _billing, webhooks) => {
        const deliveries = unwrap(await webhooks.listDeliveries(projectId, endpointId, { limit }), { projectId, endpointId }).map(deliveryJson);
        return { json: { projectId, endpointId, deliveries }, text: deliveriesText(endpointId, deliveries) };
      };
    },
  },
  {
    path: ['webhook', 'resend'],
    args: ['projectId', 'deliveryId'],
    summary: 'Send one delivery again (same event id and body, signed afresh, a new retry schedule)',
    options: {},
    enqueues: true,
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const deliveryId = args.deliveryId!;
        const result = unwrap(await webhooks.resendDelivery(projectId, deliveryId), { projectId, deliveryId });
        return {
          json: { projectId, ...result },
          text: result.queued
            ? `Delivery ${deliveryId} is queued to be sent again now.`
            : `Delivery ${deliveryId} is still being retried: its next attempt stands for the resend.`,
        };
      },
  },
  {
    path: ['webhook', 'retry-now'],
    args: ['projectId', 'deliveryId'],
    summary: 'Run now the next attempt of a delivery waiting for a retry (the schedule goes on from there)',
    options: {},
    enqueues: true,
    plan:
      ({ args }) =>
      async (_admin, _billing, webhooks) => {
        const projectId = args.projectId!;
        const deliveryId = args.deliveryId!;
        const result = unwrap(await webhooks.retryDeliveryNow(projectId, deliveryId), { projectId, deliveryId });
        return {
          json: { projectId, deliveryId, wasDueAt: result.wasDueAt.toISOString() },
          text: `Delivery ${deliveryId}: its next attempt runs now (it was due at ${result.wasDueAt.toISOString()}).`,
        };
      },
  },
  {
    path: ['webhook', 'replay'],
    args: ['projectId', 'endpointId'],
    summary: 'Send again every failed delivery of an endpoint created since a time',
    options: { since: { arity: 1, required: true, placeholder: '<ISO time>', description: 'e.g. 2026-11-24T00:00:00Z, required' } },
    enqueues: true,
    plan({ args, options }) {
      const text = options.string('since');
      if (text === undefined) return options.fail('Missing --since <ISO time>.');
      if (!/^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.test(text) || Number.isNaN(Date.parse(text))) {
        options.fail(`--since must be an ISO 8601 time such as 2026-11-24T00:00:00Z, got "${text}".`);
      }
      const since = new Date(text);
      const projectId = args.projectId!;
      const endpointId = args.endpointId!;
      return async (_admin, _billing, webhooks) => {
        const result = unwrap(await webhooks.replayFailed(projectId, endpointId, since), { projectId, endpointId, since: text });
        return {
          json: { projectId, endpointId, since: since.toISOString(), ...result },
          text: result.resent
            ? `Queued ${result.resent} failed deliver${result.resent === 1 ? 'y' : 'ies'} of endpoint ${endpointId} since ${since.toISOString()} to ` +
              `be sent again.`
            : `No failed deliveries of endpoint ${endpointId} since ${since.toISOString()}.`,
        };
      };
    },
  },
];
