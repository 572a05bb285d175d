import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type Stripe from 'stripe';
import { Account, API_VERSION, type AccountKeys, type RequestInfo, type StripeObject } from './account';
import { billingRoutes, runClock } from './billing';
import { catalogRoutes } from './catalog';
import { checkoutRoutes, completeSession, type CompleteCheckoutOptions } from './checkout';
import type { Ctx, Route, Settings } from './context';
import { customerRoutes } from './customers';
import { meterRoutes } from './meters';
import { refundRoutes } from './refunds';
import { authenticationError, idempotencyError, invalidRequest, maskKey, permissionError, StripeApiError, unrecognizedUrl, type Decline } from './errors';
import { parseForm, validateParams, type RawTree } from './params';
import { expand, renderObject } from './render';
import { clone, newId, stripeTypesDir } from './util';
import { createEndpoint, WebhookDispatcher, type DeliverOptions, type DeliveryAttempt, type WebhookEndpointRecord, webhookRoutes } from './webhooks';

export { API_VERSION } from './account';
export type { AccountKeys } from './account';
export type { CompleteCheckoutOptions } from './checkout';
export type { DeliveryAttempt } from './webhooks';

export interface AccountInit {
  id?: string;
  secretKey?: string;
  restrictedKey?: string;
  publishableKey?: string;
  webhookSecret?: string;
  name?: string;
  email?: string;
  country?: string;
  defaultCurrency?: string;
  /** Start of this account's clock (unix seconds); default the server's `startTime`. */
  now?: number;
  /** `METHOD /v1/path` prefixes the restricted key may not call (answered 403), e.g. `GET /v1/balance`. */
  restrictedKeyDenies?: string[];
}

export interface FakeStripeOptions {
  /** Accounts created at start. */
  accounts?: AccountInit[];
  /** Initial clock of new accounts (unix seconds); default the real time at creation. */
  startTime?: number;
  /** Seconds from a renewal invoice's creation to its finalization and charge (Stripe: about 1 hour). */
  finalizeDelaySeconds?: number;
  /** Answer 400 to a `Stripe-Version` other than 2025-08-27.basil (default true). */
  strictApiVersion?: boolean;
  /** Webhook delivery: receiver timeout (default 5000 ms). */
  webhookTimeoutMs?: number;
  /** Automatic redelivery after a failed delivery, after each of these delays (default none). */
  webhookRetryDelaysMs?: number[];
  /** Start with webhook delivery paused (events are held until `webhooks.resume()`). */
  holdWebhooks?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Parameters as sent (bracketed keys parsed into nested objects; all values strings). */
  params: RawTree;
  idempotencyKey: string | null;
  stripeVersion: string | null;
  account: string | null;
  status: number;
  requestId: string;
  replayed: boolean;
  /** The W3C trace context the request carried (Tollgate sends one on every call). */
  traceparent: string | null;
}

export interface UnexpectedRequest {
  method: string;
  path: string;
  reason: 'unknown_route' | 'unknown_parameter' | 'api_version' | 'unsupported_header';
  message: string;
}

export interface InjectedFailure {
  method?: string;
  /** Exact path or a pattern, e.g. '/v1/subscriptions' or /^\/v1\/customers/ */
  path?: string | RegExp;
  /** HTTP status to answer (default 500, Stripe's api_error); 0 = drop the connection. */
  status?: number;
  /** How many matching requests fail (default 1). stripe-node retries 5xx twice by default. */
  count?: number;
  /** Value of the Stripe-Should-Retry header, if any. */
  shouldRetry?: boolean;
}

/**
 * A request answered late: its answer is computed when it arrives (the state then), and sent
 * `ms` later, like a response slowed in transit. For races between a read and later writes.
 */
export interface InjectedDelay {
  method?: string;
  path?: string | RegExp;
  ms: number;
  /** How many matching requests are slowed (default 1). */
  count?: number;
}

export interface FakeStripe {
  /** Base URL, e.g. http://127.0.0.1:54321 */
  readonly url: string;
  readonly port: number;
  /** Options for `new Stripe(key, { ...fake.clientOptions, maxNetworkRetries: 0 })`. */
  readonly clientOptions: { host: string; port: number; protocol: 'http' };
  /** Every API request received, in order. */
  readonly requests: RecordedRequest[];
  /** Requests to unknown routes, with unknown parameters or an unsupported API version. */
  readonly unexpected: UnexpectedRequest[];
  createAccount(init?: AccountInit): AccountKeys;
  /** Throws listing the unexpected requests, if any. */
  assertNoUnexpectedRequests(): void;
  /** The account's clock (unix seconds). `account` is its id or any of its keys. */
  now(account: string): number;
  /** Moves the account's clock forward, running renewals, trial ends and cancellations due meanwhile. */
  advance(account: string, seconds: number): void;
  advanceTo(account: string, unixSeconds: number): void;
  /** A stored object as the API would return it, or undefined. */
  get<T = StripeObject>(account: string, id: string): T | undefined;
  /** Stored objects of one type (`subscription`, `invoice`, ...), newest first. */
  list<T = StripeObject>(account: string, type: string): T[];
  /** Emitted events of the account, oldest first (optionally of one type). */
  events(account: string, type?: string): Stripe.Event[];
  /** The customer pays on the Checkout page. Throws a StripeApiError on a declined card. */
  completeCheckout(sessionId: string, opts?: CompleteCheckoutOptions): Stripe.Checkout.Session;
  /** Registers a webhook endpoint; signed with `secret` (default the account's webhookSecret). */
  addWebhookEndpoint(account: string, url: string, opts?: { enabledEvents?: string[]; secret?: string }): { id: string; secret: string };
  /** From now on every charge on this PaymentMethod is declined (or succeeds again with `null`). */
  setChargeOutcome(account: string, paymentMethodId: string, decline: Partial<Decline> | null): void;
  /** The card network updated this card (payment_method.automatically_updated). */
  updateCard(account: string, paymentMethodId: string, card: { exp_month?: number; exp_year?: number; last4?: string }): void;
  /** The next matching requests fail like a Stripe outage. */
  failNext(failure?: InjectedFailure): void;
  /** Answer the next matching request(s) late, with the state of when they arrived. */
  delayNext(delay: InjectedDelay): void;
  readonly webhooks: {
    /** Every delivery attempt, in order. */
    readonly attempts: DeliveryAttempt[];
    /** Hold events instead of delivering them. */
    pause(): void;
    /** Deliver held events (in emission order) and deliver new ones at once again. */
    resume(): void;
    /** Events held while paused. */
    held(): Stripe.Event[];
    /** Deliver held events now in this order (ids, 'reverse' or 'emitted'); delivery stays paused. */
    release(order?: string[] | 'reverse' | 'emitted'): Promise<void>;
    /** Forget held events. */
    discardHeld(): void;
    /** Deliver an emitted event again: a duplicate, possibly with a stale timestamp or wrong secret. */
    redeliver(account: string, eventId: string, opts?: DeliverOptions): Promise<DeliveryAttempt[]>;
    /** Payload and Stripe-Signature header Stripe would send for this event to this endpoint. */
    signedRequest(account: string, eventId: string, endpoint?: string, opts?: DeliverOptions): { payload: string; header: string };
    /** Resolves when no delivery is queued or in flight. */
    settled(): Promise<void>;
  };
  close(): Promise<void>;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const pattern = route.path.replace(/:(\w+)/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { ...route, regex: new RegExp(`^${pattern}$`), names };
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });

/** Top-level parameter names of a stripe-node params interface (types/*.d.ts). */
const declaredParams = new Map<string, Set<string> | null>();
function stripeDeclares(paramsType: string | undefined, name: string): boolean {
  if (!paramsType) return false;
  if (!declaredParams.has(paramsType)) {
    let found: Set<string> | null = null;
    try {
      const dir = stripeTypesDir();
      if (!dir) throw new Error('stripe types not found');
      const [ns, iface] = paramsType.includes('.') ? paramsType.split('.') : [null, paramsType];
      const file = ns ? path.join(dir, ns, `${iface!.replace(/(Create|Retrieve|List|Update|Expire|ListLineItems)Params$/, '')}sResource.d.ts`) : null;
      const candidates = file ? [file] : [];
      const methods =
        'Create|Retrieve|List|Update|Delete|Cancel|Attach|Detach|Confirm|Pay|Resume|' +
        'CreatePreview|FinalizeInvoice|VoidInvoice|MarkUncollectible|ListPaymentMethods';
      const base = iface!.replace(new RegExp(`(${methods})Params$`), '');
      candidates.push(path.join(dir, `${base}sResource.d.ts`), path.join(dir, `${base}Resource.d.ts`));
      for (const f of candidates) {
        let text: string;
        try {
          text = readFileSync(f, 'utf8');
        } catch {
          continue;
        }
        const start = text.indexOf(`interface ${iface} {`);
        if (start < 0) continue;
        const body = text.slice(start, text.indexOf('\n    }', start));
        found = new Set([...body.matchAll(/^ {6}([a-z_]+)\??:/gm)].map((m) => m[1]!));
        break;
      }
    } catch {
      found = null;
    }
    declaredParams.set(paramsType, found);
  }
  return declaredParams.get(paramsType)?.has(name) ?? false;
}

/** Every endpoint the server answers (without a dispatcher: for the conformance test). */
export function routeTable(dispatcher = new WebhookDispatcher({ timeoutMs: 0, retryDelaysMs: [], paused: true })): Route[] {
  return [...catalogRoutes, ...meterRoutes, ...customerRoutes, ...billingRoutes, ...refundRoutes, ...checkoutRoutes, ...webhookRoutes(dispatcher)];
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const accountsById = new Map<string, Account>();
  const accountsByKey = new Map<string, Account>();
  const requests: RecordedRequest[] = [];
  const unexpected: UnexpectedRequest[] = [];
  const failures: InjectedFailure[] = [];
  const delays: InjectedDelay[] = [];
  const matches = (f: { method?: string; path?: string | RegExp }, method: string, pathname: string) =>
    (!f.method || f.method === method) && (!f.path || (typeof f.path === 'string' ? f.path === pathname : f.path.test(pathname)));
  const dispatcher = new WebhookDispatcher({
    timeoutMs: options.webhookTimeoutMs ?? 5000,
    retryDelaysMs: options.webhookRetryDelaysMs ?? [],
    paused: options.holdWebhooks ?? false,
  });
  const settings: Settings = { baseUrl: '', finalizeDelaySeconds: options.finalizeDelaySeconds ?? 3600 };
  const routes = routeTable(dispatcher).map(compile);
  const strictVersion = options.strictApiVersion ?? true;

  function createAccount(init: AccountInit = {}): AccountKeys {
    const acct = new Account({ ...init, now: init.now ?? options.startTime ?? Math.floor(Date.now() / 1000) });
    if (accountsById.has(acct.id)) throw new Error(`Account ${acct.id} exists`);
    acct.render = renderObject;
    acct.onEvents = (a, events) => dispatcher.dispatch(a, events);
    accountsById.set(acct.id, acct);
    for (const key of [acct.secretKey, acct.restrictedKey, acct.publishableKey]) accountsByKey.set(key, acct);
    return acct.keys();
  }
  for (const init of options.accounts ?? []) createAccount(init);

  function account(ref: string): Account {
    const acct = accountsById.get(ref) ?? accountsByKey.get(ref);
    if (!acct) throw new Error(`Unknown fake Stripe account or key: ${ref}`);
    return acct;
  }
  const ctxFor = (acct: Account, req: RequestInfo = { requestId: newId('req', 14), idempotencyKey: null }): Ctx => ({ acct, req, settings });

  function authenticate(req: IncomingMessage): { acct: Account; restricted: boolean } {
    const header = req.headers.authorization;
    let key: string | null = null;
    if (header?.startsWith('Bearer ')) key = header.slice(7).trim();
    else if (header?.startsWith('Basic ')) key = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0] ?? '';
    if (!key) {
      throw authenticationError(
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: " +
          "Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
      );
    }
    if (/\s/.test(key))
      throw authenticationError(`Invalid API Key provided: ${maskKey(key)}. This key contains at least one space. Please delete the spaces and try again.`);
    const acct = accountsByKey.get(key);
    if (!acct) throw authenticationError(`Invalid API Key provided: ${maskKey(key)}`);
    if (key === acct.publishableKey) {
      throw authenticationError(
        'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at ' +
          'https://dashboard.stripe.com/account/apikeys.',
      );
    }
    return { acct, restricted: key === acct.restrictedKey };
  }

  function send(res: ServerResponse, status: number, body: string, headers: Record<string, string>) {
    res.writeHead(status, { 'content-type': 'application/json', 'stripe-version': API_VERSION, ...headers });
    res.end(body);
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL) {
    const method = (req.method ?? 'GET').toUpperCase();
    const requestId = newId('req', 14);
    const rawBody = await readBody(req);
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      params: {},
      idempotencyKey: (req.headers['idempotency-key'] as string | undefined) ?? null,
      stripeVersion: (req.headers['stripe-version'] as string | undefined) ?? null,
      account: null,
      status: 0,
      requestId,
      replayed: false,
      traceparent: (req.headers.traceparent as string | undefined) ?? null,
    };
    requests.push(record);
    const headers: Record<string, string> = { 'request-id': requestId };
    if (record.idempotencyKey) headers['idempotency-key'] = record.idempotencyKey;
    const respondError = (e: StripeApiError) => {
      record.status = e.status;
      send(res, e.status, JSON.stringify({ error: e.body }, null, 2), headers);
    };
    try {
      const raw = method === 'POST' ? parseForm(rawBody) : parseForm(url.search.slice(1));
      record.params = raw;
      const { acct, restricted } = authenticate(req);
      record.account = acct.id;
      if (strictVersion && record.stripeVersion && record.stripeVersion !== API_VERSION) {
        unexpected.push({ method, path: url.pathname, reason: 'api_version', message: `Stripe-Version ${record.stripeVersion}` });
        throw invalidRequest(`This Stripe-shaped test server implements API version ${API_VERSION} only; the request asked for ${record.stripeVersion}.`, {
          beforeExecution: true,
        });
      }
      if (req.headers['stripe-account'] || req.headers['stripe-context']) {
        unexpected.push({ method, path: url.pathname, reason: 'unsupported_header', message: 'Stripe-Account / Stripe-Context (Connect)' });
        throw invalidRequest('This Stripe-shaped test server does not implement Connect (Stripe-Account / Stripe-Context headers).', { beforeExecution: true });
      }
      let route: CompiledRoute | undefined;
      let match: RegExpExecArray | null = null;
      for (const r of routes) {
        if (r.method !== method) continue;
        match = r.regex.exec(url.pathname);
        if (match) {
          route = r;
          break;
        }
      }
      if (!route || !match) {
        unexpected.push({ method, path: url.pathname, reason: 'unknown_route', message: `${method} ${url.pathname}` });
        throw unrecognizedUrl(method, url.pathname);
      }
      const pathParams: Record<string, string> = {};
      route.names.forEach((n, i) => {
        pathParams[n] = decodeURIComponent(match![i + 1]!);
      });
      const failure = failures.find((f) => matches(f, method, url.pathname));
      if (failure) {
        failure.count = (failure.count ?? 1) - 1;
        if (failure.count <= 0) failures.splice(failures.indexOf(failure), 1);
        record.status = failure.status ?? 500;
        if (failure.status === 0) {
          req.socket.destroy();
          return;
        }
        if (failure.shouldRetry !== undefined) headers['stripe-should-retry'] = String(failure.shouldRetry);
        send(res, failure.status ?? 500, JSON.stringify({ error: { type: 'api_error', message: 'An unknown error occurred' } }), headers);
        return;
      }
      // Idempotency (POST only, https://docs.stripe.com/api/idempotent_requests): a saved result is
      // replayed for the same endpoint and parameters; another endpoint or other parameters are refused.
      const idemKey = method === 'POST' ? record.idempotencyKey : null;
      const canonical = JSON.stringify(raw);
      if (idemKey) {
        const saved = acct.idempotency.get(idemKey);
        if (saved && acct.now - saved.createdAt > 24 * 3600) acct.idempotency.delete(idemKey);
        else if (saved) {
          if (saved.method !== method || saved.path !== url.pathname) {
            throw idempotencyError(
              `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${saved.method} ${saved.path}' vs ` +
                `'${method} ${url.pathname}'). Try using a key other than '${idemKey}' if you meant to execute a different request.`,
            );
          }
          if (saved.params !== canonical) {
            throw idempotencyError(
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than ` +
                `'${idemKey}' if you meant to execute a different request.`,
            );
          }
          record.status = saved.status;
          record.replayed = true;
          send(res, saved.status, saved.body, { ...headers, 'idempotent-replayed': 'true', 'original-request': saved.requestId });
          return;
        }
      }
      const params = validateParams(
        route.fields,
        raw,
        (p) => {
          const top = p.split('[')[0]!;
          const hint =
            p === top && stripeDeclares(route!.paramsType, top)
              ? '(Stripe accepts this parameter; this Stripe-shaped test server does not implement it)'
              : null;
          unexpected.push({ method, path: url.pathname, reason: 'unknown_parameter', message: `${p}${hint ? ` ${hint}` : ''}` });
          return hint;
        },
        !route.noExpand,
      );
      if (restricted && acct.restrictedKeyDenies.some((d) => `${method} ${url.pathname}`.startsWith(d))) {
        throw permissionError(
          `The provided key '${maskKey(acct.restrictedKey)}' does not have the required permissions for this endpoint on account '${acct.id}'. ` +
            `Having more permissions would allow this request to continue.`,
        );
      }
      const info: RequestInfo = { requestId, idempotencyKey: record.idempotencyKey };
      const status = 200;
      let body: string;
      try {
        body = acct.transaction(info, () => {
          const result = route!.handler(ctxFor(acct, info), params, pathParams);
          return JSON.stringify(renderResult(acct, result, params.expand), null, 2);
        });
      } catch (e) {
        if (!(e instanceof StripeApiError)) throw e;
        if (idemKey && !e.beforeExecution) {
          acct.idempotency.set(idemKey, {
            method,
            path: url.pathname,
            params: canonical,
            status: e.status,
            body: JSON.stringify({ error: e.body }, null, 2),
            requestId,
            createdAt: acct.now,
          });
        }
        throw e;
      }
      if (idemKey) acct.idempotency.set(idemKey, { method, path: url.pathname, params: canonical, status, body, requestId, createdAt: acct.now });
      record.status = status;
      const delay = delays.find((d) => matches(d, method, url.pathname));
      if (delay) {
        delay.count = (delay.count ?? 1) - 1;
        if (delay.count <= 0) delays.splice(delays.indexOf(delay), 1);
        await new Promise((resolve) => setTimeout(resolve, delay.ms));
      }
      send(res, status, body, headers);
    } catch (e) {
      if (e instanceof StripeApiError) return respondError(e);
      const message = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
      record.status = 500;
      send(res, 500, JSON.stringify({ error: { type: 'api_error', message: `Fake Stripe internal error: ${message}` } }), headers);
    }
  }

  function renderResult(acct: Account, result: StripeObject, expandPaths: string[] | undefined): StripeObject {
    if (result.object === 'list') {
      const list = { ...result, data: result.data.map((o: StripeObject) => (o.object === 'event' ? clone(o) : renderObject(acct, o))) };
      return expand(acct, list, expandPaths);
    }
    const rendered = result.object === 'event' || result.deleted || !acct.get(result.id ?? '') ? clone(result) : renderObject(acct, result);
    // Objects the handler returns fresh (previews, secrets on create) render as given.
    if (result.id && acct.get(result.id) && (result as { secret?: string }).secret) rendered.secret = (result as { secret?: string }).secret;
    return expand(acct, rendered, expandPaths);
  }

  // ---- hosted pages (Checkout, invoices) -----------------------------------------------------

  function findSession(id: string): { acct: Account; session: Stripe.Checkout.Session } | null {
    for (const acct of accountsById.values()) {
      const s = acct.get(id);
      if (s && s.object === 'checkout.session') return { acct, session: s as Stripe.Checkout.Session };
    }
    return null;
  }

  const esc = (v: unknown) => String(v ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

  function checkoutPage(acct: Account, session: Stripe.Checkout.Session, error?: string) {
    const items = (acct.state(session.id).session?.lineItems ?? []) as unknown as Stripe.LineItem[];
    const rows = items.map((li) => `<li>${esc(li.quantity)} × ${esc(li.description)} — ${esc(li.amount_total)} ${esc(li.currency)}</li>`).join('');
    const cards = ['pm_card_visa', 'pm_card_mastercard', 'pm_card_chargeDeclined', 'pm_card_chargeDeclinedInsufficientFunds', 'pm_card_chargeCustomerFail']
      .map((c) => `<option value="${c}">${c}</option>`)
      .join('');
    return `<!doctype html><html><head><meta charset="utf-8"><title>Checkout ${esc(session.id)}</title></head><body>
<h1>Test checkout</h1><p>Status: <span id="status">${esc(session.status)}</span></p><ul>${rows}</ul>
${error ? `<p id="error" role="alert">${esc(error)}</p>` : ''}
${
  session.status === 'open'
    ? `<form method="post" action="/checkout/${esc(session.id)}">
<label>Email <input name="email" value="${esc(session.customer_email ?? '')}"></label>
<label>Card <select name="payment_method">${cards}</select></label>
${session.allow_promotion_codes ? '<label>Promotion code <input name="promotion_code"></label>' : ''}
<button type="submit">Pay</button></form>
${session.cancel_url ? `<form method="post" action="/checkout/${esc(session.id)}/cancel"><button type="submit">Cancel</button></form>` : ''}`
    : ''
}
</body></html>`;
  }

  async function handlePage(req: IncomingMessage, res: ServerResponse, url: URL) {
    const html = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    const m = /^\/checkout\/(cs_[A-Za-z0-9_]+)(\/cancel)?$/.exec(url.pathname);
    if (m) {
      const found = findSession(m[1]!);
      if (!found) return html(404, '<p>No such Checkout Session</p>');
      const { acct, session } = found;
      if (req.method === 'GET') return html(200, checkoutPage(acct, session));
      const form = parseForm(await readBody(req));
      if (m[2]) {
        res.writeHead(303, { location: session.cancel_url ?? '/' });
        return res.end();
      }
      const value = (k: string) => (typeof form[k] === 'string' && form[k] ? (form[k] as string) : undefined);
      try {
        const done = api.completeCheckout(session.id, {
          paymentMethod: value('payment_method'),
          email: value('email'),
          promotionCode: value('promotion_code'),
        });
        res.writeHead(303, { location: (done.success_url ?? '/').replace('{CHECKOUT_SESSION_ID}', done.id) });
        return res.end();
      } catch (e) {
        if (e instanceof StripeApiError) return html(e.status, checkoutPage(acct, acct.get(session.id) as Stripe.Checkout.Session, e.body.message));
        throw e;
      }
    }
    const inv = /^\/invoices\/(in_[A-Za-z0-9]+)(\/pdf)?$/.exec(url.pathname);
    if (inv) {
      for (const acct of accountsById.values()) {
        const i = acct.get(inv[1]!);
        if (i)
          return html(
            200,
            `<!doctype html><html><body><h1>Invoice ${esc(i.number)}</h1><p>Status: ${esc(i.status)}</p><p>Amount due: ${esc(i.amount_due)} ` +
              `${esc(i.currency)}</p></body></html>`,
          );
      }
    }
    return html(404, '<p>Not found</p>');
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const handler =
      url.pathname.startsWith('/v1/') || url.pathname === '/v1'
        ? handleApi
        : url.pathname.startsWith('/checkout/') || url.pathname.startsWith('/invoices/')
          ? handlePage
          : handleApi;
    handler(req, res, url).catch((e) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(e) } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  settings.baseUrl = `http://127.0.0.1:${port}`;

  const api: FakeStripe = {
    url: settings.baseUrl,
    port,
    clientOptions: { host: '127.0.0.1', port, protocol: 'http' },
    requests,
    unexpected,
    createAccount,
    assertNoUnexpectedRequests() {
      if (unexpected.length) {
        throw new Error(
          `Unexpected requests to the Stripe-shaped server:\n${unexpected.map((u) => `  ${u.method} ${u.path}: ${u.reason} ${u.message}`).join('\n')}`,
        );
      }
    },
    now: (ref) => account(ref).now,
    advance(ref, seconds) {
      const acct = account(ref);
      runClock(ctxFor(acct), acct.now + seconds);
    },
    advanceTo(ref, target) {
      runClock(ctxFor(account(ref)), target);
    },
    get(ref, id) {
      const acct = account(ref);
      const obj = acct.get(id);
      return obj ? (renderObject(acct, obj) as never) : undefined;
    },
    list(ref, type) {
      const acct = account(ref);
      return acct.all(type).map((o) => renderObject(acct, o as StripeObject)) as never[];
    },
    events(ref, type) {
      return account(ref).events.filter((e) => !type || e.type === type);
    },
    completeCheckout(sessionId, opts) {
      const found = findSession(sessionId);
      if (!found) throw new Error(`No Checkout Session ${sessionId}`);
      const { acct } = found;
      const session = acct.transaction({ requestId: newId('req', 14), idempotencyKey: null }, () => completeSession(ctxFor(acct), sessionId, opts));
      return renderObject(acct, session as unknown as StripeObject) as unknown as Stripe.Checkout.Session;
    },
    addWebhookEndpoint(ref, url, opts = {}) {
      const acct = account(ref);
      const { endpoint, secret } = createEndpoint(acct, dispatcher, {
        url,
        enabled_events: opts.enabledEvents ?? ['*'],
        secret: opts.secret ?? acct.webhookSecret,
      });
      return { id: endpoint.id, secret };
    },
    setChargeOutcome(ref, pmId, decline) {
      const acct = account(ref);
      if (!acct.get(pmId)) throw new Error(`No PaymentMethod ${pmId}`);
      acct.state(pmId).card = decline
        ? {
            behaviour: 'decline_on_charge',
            decline: {
              code: decline.code ?? 'card_declined',
              decline_code: decline.decline_code ?? 'generic_decline',
              message: decline.message ?? 'Your card was declined.',
            },
          }
        : { behaviour: 'ok' };
    },
    updateCard(ref, pmId, card) {
      const acct = account(ref);
      acct.transaction(null, () => {
        const pm = acct.find<Stripe.PaymentMethod>('payment_method', pmId, 'PaymentMethod');
        acct.update(
          pm,
          (o) => {
            if (card.exp_month !== undefined) o.card!.exp_month = card.exp_month;
            if (card.exp_year !== undefined) o.card!.exp_year = card.exp_year;
            if (card.last4 !== undefined) o.card!.last4 = card.last4;
          },
          'payment_method.automatically_updated',
        );
      });
    },
    failNext(failure = {}) {
      failures.push({ count: 1, ...failure });
    },
    delayNext(delay) {
      delays.push({ count: 1, ...delay });
    },
    webhooks: {
      attempts: dispatcher.attempts,
      pause: () => dispatcher.pause(),
      resume: () => dispatcher.resume(),
      held: () => dispatcher.heldEvents(),
      release: (order) => dispatcher.release(order),
      discardHeld: () => dispatcher.discardHeld(),
      redeliver(ref, eventId, opts) {
        const acct = account(ref);
        const event = acct.events.find((e) => e.id === eventId);
        if (!event) throw new Error(`No event ${eventId} on ${acct.id}`);
        return dispatcher.redeliver(acct, event, opts);
      },
      signedRequest(ref, eventId, endpointRef, opts) {
        const acct = account(ref);
        const event = acct.events.find((e) => e.id === eventId);
        if (!event) throw new Error(`No event ${eventId} on ${acct.id}`);
        const endpoint = acct.all<WebhookEndpointRecord>('webhook_endpoint', (e) => !endpointRef || e.id === endpointRef || e.url === endpointRef).pop();
        if (!endpoint) throw new Error(`No webhook endpoint on ${acct.id}`);
        return dispatcher.signedRequest(event, endpoint, opts);
      },
      settled: () => dispatcher.settled(),
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections?.();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
  return api;
}

/**
 * stripe-node options for an API base URL such as STRIPE_API_URL=http://127.0.0.1:12111:
 * `host` is the URL's hostname, `port` its port (default 443 for https, 80 for http) and
 * `protocol` its scheme without the colon. stripe-node always requests `/v1/...` from that
 * origin (its basePath is fixed), so the URL carries no path.
 */
export function stripeOptionsFromUrl(apiUrl: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const u = new URL(apiUrl);
  if (u.pathname !== '/' && u.pathname !== '') throw new Error('A Stripe API URL cannot have a path: stripe-node always calls /v1/... on the host');
  const protocol = u.protocol === 'http:' ? 'http' : 'https';
  return { host: u.hostname, port: u.port ? Number(u.port) : protocol === 'https' ? 443 : 80, protocol };
}
