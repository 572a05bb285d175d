import { readFileSync } from 'node:fs';
import path from 'node:path';
import Stripe from 'stripe';
import { API_VERSION, type Account } from './account';
import { applyMetadata } from './catalog';
import type { Route } from './context';
import { invalidRequest, paramError } from './errors';
import { listFields, s } from './params';
import { newId, paginate, randomString, stripeTypesDir } from './util';

/**
 * Webhook endpoints (https://docs.stripe.com/api/webhook_endpoints) and event delivery
 * (https://docs.stripe.com/webhooks): each event goes as a JSON POST to every enabled endpoint of
 * its account that listens for its type, signed in the `Stripe-Signature` header with the
 * endpoint's `whsec_` secret by stripe-node's own `webhooks.generateTestHeaderString`, so
 * `stripe.webhooks.constructEvent(rawBody, header, secret)` verifies it.
 */

let knownTypes: Set<string> | null = null;
/** Event types stripe-node 18.5 declares (types/EventTypes.d.ts). */
export function knownEventTypes(): Set<string> {
  if (knownTypes) return knownTypes;
  try {
    const dir = stripeTypesDir();
    if (!dir) throw new Error('stripe types not found');
    const text = readFileSync(path.join(dir, 'EventTypes.d.ts'), 'utf8');
    knownTypes = new Set([...text.matchAll(/type: '([a-z0-9_.]+)'/g)].map((m) => m[1]!));
  } catch {
    knownTypes = new Set();
  }
  return knownTypes;
}

export interface WebhookEndpointRecord {
  id: string;
  object: 'webhook_endpoint';
  api_version: string | null;
  application: null;
  created: number;
  description: string | null;
  enabled_events: string[];
  livemode: false;
  metadata: Record<string, string>;
  status: 'enabled' | 'disabled';
  url: string;
  secret?: string;
}

export interface DeliveryAttempt {
  eventId: string;
  type: string;
  endpointId: string;
  url: string;
  /** HTTP status of the receiver's answer; 0 when it could not be reached or timed out. */
  status: number;
  ok: boolean;
  /** Redelivery of an event already attempted on this endpoint (duplicates, retries). */
  redelivery: boolean;
  error?: string;
  at: number;
}

interface Queued {
  account: Account;
  event: Stripe.Event;
  endpoint: WebhookEndpointRecord;
}

export interface DeliverOptions {
  /** Only this endpoint (id or URL); default every endpoint listening for the event's type. */
  endpoint?: string;
  /** Signature timestamp (unix seconds); default now. Lets a test send a stale signature. */
  timestamp?: number;
  /** Sign with another secret (a test of bad signatures). */
  secret?: string;
}

export class WebhookDispatcher {
  readonly attempts: DeliveryAttempt[] = [];
  /** Events waiting while delivery is paused, in emission order. */
  private held: Queued[] = [];
  private queue: Queued[] = [];
  private paused: boolean;
  private running: Promise<void> | null = null;
  private idle: (() => void)[] = [];
  private readonly secrets = new Map<string, string>();

  constructor(private readonly opts: { timeoutMs: number; retryDelaysMs: number[]; paused: boolean }) {
    this.paused = opts.paused;
  }

  endpointSecret(endpoint: WebhookEndpointRecord): string {
    return this.secrets.get(endpoint.id)!;
  }

  registerSecret(endpointId: string, secret: string) {
    this.secrets.set(endpointId, secret);
  }

  endpointsFor(account: Account, type: string): WebhookEndpointRecord[] {
    return account
      .all<WebhookEndpointRecord>('webhook_endpoint', (e) => e.status === 'enabled' && (e.enabled_events.includes('*') || e.enabled_events.includes(type)))
      .reverse();
  }

  /** Called for every committed batch of events. */
  dispatch(account: Account, events: Stripe.Event[]) {
    for (const event of events) {
      const endpoints = this.endpointsFor(account, event.type);
      (event as { pending_webhooks: number }).pending_webhooks = endpoints.length;
      for (const endpoint of endpoints) {
        const item = { account, event, endpoint };
        if (this.paused) this.held.push(item);
        else this.queue.push(item);
      }
    }
    this.kick();
  }

  pause() {
    this.paused = true;
  }

  /** Resumes delivery; held events go out in emission order. */
  resume() {
    this.paused = false;
    this.queue.push(...this.held);
    this.held = [];
    this.kick();
  }

  heldEvents(): Stripe.Event[] {
    const seen = new Set<string>();
    const out: Stripe.Event[] = [];
    for (const h of this.held) {
      if (!seen.has(h.event.id)) {
        seen.add(h.event.id);
        out.push(h.event);
      }
    }
    return out;
  }

  /**
   * Delivers held events now in the given order (event ids, 'reverse', or 'emitted'), leaving
   * delivery paused. Held events not named stay held.
   */
  async release(order: string[] | 'reverse' | 'emitted' = 'emitted'): Promise<void> {
    let items: Queued[];
    if (order === 'emitted') items = this.held;
    else if (order === 'reverse') items = [...this.held].reverse();
    else {
      items = [];
      for (const id of order) {
        const matching = this.held.filter((h) => h.event.id === id);
        if (!matching.length) throw new Error(`release: event ${id} is not held`);
        items.push(...matching);
      }
    }
    const released = new Set(items);
    this.held = this.held.filter((h) => !released.has(h));
    for (const item of items) await this.send(item, {}, false);
  }

  /** Drops held events without delivering them (a receiver that was down and never got them). */
  discardHeld() {
    this.held = [];
  }

  /** Sends an already emitted event again (a duplicate delivery, as Stripe may do). */
  async redeliver(account: Account, event: Stripe.Event, opts: DeliverOptions = {}): Promise<DeliveryAttempt[]> {
    let endpoints = this.endpointsFor(account, event.type);
    if (opts.endpoint) {
      endpoints = account.all<WebhookEndpointRecord>('webhook_endpoint', (e) => e.id === opts.endpoint || e.url === opts.endpoint);
      if (!endpoints.length) throw new Error(`No webhook endpoint ${opts.endpoint} on ${account.id}`);
    }
    const out: DeliveryAttempt[] = [];
    for (const endpoint of endpoints) out.push(await this.send({ account, event, endpoint }, opts, true));
    return out;
  }

  /** Resolves when nothing is queued or being sent (held events do not count). */
  settled(): Promise<void> {
    if (!this.running && !this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private kick() {
    if (this.running || !this.queue.length) return;
    this.running = (async () => {
      while (this.queue.length) {
        const item = this.queue.shift()!;
        await this.send(item, {}, false);
      }
    })().finally(() => {
      this.running = null;
      if (this.queue.length) this.kick();
      else for (const r of this.idle.splice(0)) r();
    });
  }

  /** The exact bytes and header Stripe would send for this event to this endpoint. */
  signedRequest(event: Stripe.Event, endpoint: WebhookEndpointRecord, opts: DeliverOptions = {}) {
    const payload = JSON.stringify(event, null, 2);
    const secret = opts.secret ?? this.endpointSecret(endpoint);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000) });
    return { payload, header };
  }

  private async send(item: Queued, opts: DeliverOptions, redelivery: boolean, retry = 0): Promise<DeliveryAttempt> {
    const { event, endpoint } = item;
    const { payload, header } = this.signedRequest(event, endpoint, opts);
    const attempt: DeliveryAttempt = {
      eventId: event.id,
      type: event.type,
      endpointId: endpoint.id,
      url: endpoint.url,
      status: 0,
      ok: false,
      redelivery: redelivery || retry > 0,
      at: Date.now(),
    };
    try {
      const res = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': header,
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'cache-control': 'no-cache',
          accept: '*/*; q=0.5, application/xml',
        },
        body: payload,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      attempt.status = res.status;
      attempt.ok = res.status >= 200 && res.status < 300;
    } catch (e) {
      attempt.error = e instanceof Error ? e.message : String(e);
    }
    this.attempts.push(attempt);
    if (attempt.ok && !attempt.redelivery) {
      const ev = event as { pending_webhooks: number };
      ev.pending_webhooks = Math.max(0, ev.pending_webhooks - 1);
    }
    if (!attempt.ok && retry < this.opts.retryDelaysMs.length) {
      await new Promise((r) => setTimeout(r, this.opts.retryDelaysMs[retry]));
      return this.send(item, opts, redelivery, retry + 1);
    }
    return attempt;
  }
}

// ---- webhook_endpoints API -------------------------------------------------------------------

function checkEvents(events: string[]) {
  const known = knownEventTypes();
  events.forEach((type, i) => {
    if (type !== '*' && known.size && !known.has(type))
      throw paramError(`Invalid enabled_events[${i}]: ${type} is not a valid event type.`, `enabled_events[${i}]`);
  });
}

function checkUrl(url: string) {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw paramError('Invalid URL: URL must be a valid http(s) address.', 'url', 'url_invalid');
  }
}

export function createEndpoint(
  account: Account,
  dispatcher: WebhookDispatcher,
  init: { url: string; enabled_events: string[]; description?: string; metadata?: Record<string, string | null>; secret?: string; api_version?: string },
) {
  const endpoint: WebhookEndpointRecord = {
    id: newId('we'),
    object: 'webhook_endpoint',
    api_version: init.api_version ?? null,
    application: null,
    created: account.now,
    description: init.description ?? null,
    enabled_events: init.enabled_events,
    livemode: false,
    metadata: applyMetadata({}, init.metadata),
    status: 'enabled',
    url: init.url,
  };
  account.put(endpoint);
  const secret = init.secret ?? `whsec_${randomString(32)}`;
  dispatcher.registerSecret(endpoint.id, secret);
  return { endpoint, secret };
}

export function webhookRoutes(dispatcher: WebhookDispatcher): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/webhook_endpoints',
      paramsType: 'WebhookEndpointCreateParams',
      fields: {
        url: s.req(s.str({ max: 5000 })),
        enabled_events: s.req(s.arr(s.str())),
        description: s.str({ max: 5000, emptyable: true }),
        metadata: s.meta(),
        api_version: s.str(),
      },
      handler: (ctx, p) => {
        checkUrl(p.url);
        checkEvents(p.enabled_events);
        if (p.api_version && p.api_version !== API_VERSION) {
          throw invalidRequest(`This Stripe-shaped test server renders events in API version ${API_VERSION} only.`, { param: 'api_version' });
        }
        const { endpoint, secret } = createEndpoint(ctx.acct, dispatcher, p as never);
        return { ...endpoint, secret };
      },
    },
    {
      method: 'GET',
      path: '/v1/webhook_endpoints/:id',
      paramsType: 'WebhookEndpointRetrieveParams',
      fields: {},
      handler: (ctx, _p, path) => ctx.acct.find('webhook_endpoint', path.id!, 'webhook endpoint'),
    },
    {
      method: 'POST',
      path: '/v1/webhook_endpoints/:id',
      paramsType: 'WebhookEndpointUpdateParams',
      fields: { url: s.str({ max: 5000 }), enabled_events: s.arr(s.str()), disabled: s.bool(), description: s.str({ emptyable: true }), metadata: s.meta() },
      handler: (ctx, p, path) => {
        const endpoint = ctx.acct.find<WebhookEndpointRecord>('webhook_endpoint', path.id!, 'webhook endpoint');
        if (p.url) checkUrl(p.url);
        if (p.enabled_events) checkEvents(p.enabled_events);
        return ctx.acct.update(endpoint, (o) => {
          if (p.url) o.url = p.url;
          if (p.enabled_events) o.enabled_events = p.enabled_events;
          if (p.disabled !== undefined) o.status = p.disabled ? 'disabled' : 'enabled';
          if (p.description !== undefined) o.description = p.description;
          o.metadata = applyMetadata(o.metadata, p.metadata);
        });
      },
    },
    {
      method: 'DELETE',
      path: '/v1/webhook_endpoints/:id',
      paramsType: 'WebhookEndpointDeleteParams',
      noExpand: true,
      fields: {},
      handler: (ctx, _p, path) => {
        ctx.acct.find('webhook_endpoint', path.id!, 'webhook endpoint');
        ctx.acct.remove(path.id!);
        return { id: path.id!, object: 'webhook_endpoint', deleted: true };
      },
    },
    {
      method: 'GET',
      path: '/v1/webhook_endpoints',
      paramsType: 'WebhookEndpointListParams',
      fields: listFields,
      handler: (ctx, p) => paginate(ctx.acct.all('webhook_endpoint'), p, '/v1/webhook_endpoints'),
    },
    {
      method: 'GET',
      path: '/v1/events/:id',
      paramsType: 'EventRetrieveParams',
      fields: {},
      handler: (ctx, _p, path) => {
        const event = ctx.acct.events.find((e) => e.id === path.id);
        if (!event) throw invalidRequest(`No such event: '${path.id}'`, { param: 'id', code: 'resource_missing', status: 404 });
        return event as never;
      },
    },
    {
      method: 'GET',
      path: '/v1/events',
      paramsType: 'EventListParams',
      fields: {
        ...listFields,
        type: s.str(),
        types: s.arr(s.str(), { maxItems: 20 }),
        created: s.obj({ gt: s.int(), gte: s.int(), lt: s.int(), lte: s.int() }),
        delivery_success: s.bool(),
      },
      handler: (ctx, p) => {
        const matchType = (t: string) => {
          if (p.type) return p.type.endsWith('.*') ? t.startsWith(p.type.slice(0, -1)) : t === p.type;
          if (p.types) return p.types.includes(t);
          return true;
        };
        const c = p.created ?? {};
        const items = [...ctx.acct.events]
          .reverse()
          .filter(
            (e) =>
              matchType(e.type) &&
              (c.gt === undefined || e.created > c.gt) &&
              (c.gte === undefined || e.created >= c.gte) &&
              (c.lt === undefined || e.created < c.lt) &&
              (c.lte === undefined || e.created <= c.lte),
          );
        if (p.type && p.types) throw invalidRequest('You may only specify one of these parameters: type, types.', { param: 'types' });
        return paginate(items as never[], p, '/v1/events');
      },
    },
    { method: 'GET', path: '/v1/account', fields: {}, paramsType: 'AccountRetrieveParams', handler: (ctx) => accountObject(ctx.acct) as never },
  ];
}

export function accountObject(acct: Account): Stripe.Account {
  return {
    id: acct.id,
    object: 'account',
    business_profile: {
      annual_revenue: null,
      estimated_worker_count: null,
      mcc: null,
      minority_owned_business_designation: null,
      name: acct.name,
      support_address: null,
      support_email: null,
      support_phone: null,
      support_url: null,
      url: null,
    },
    business_type: null,
    capabilities: { card_payments: 'active', transfers: 'active' },
    charges_enabled: true,
    country: acct.country,
    created: acct.now,
    default_currency: acct.defaultCurrency,
    details_submitted: true,
    email: acct.email,
    payouts_enabled: true,
    settings: null,
    type: 'standard',
  };
}
