import { checkZodSchema, isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse, TsRestResponseError, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodError } from 'zod';
import type { RouteMetadata } from '../../../contract/common';
import { authenticatorFor, type AuthenticatorRegistry } from './auth';
import { bodyKindOf, MALFORMED_JSON, parseStrictJson } from './body';
import { announceDeprecation } from './deprecation';
import { errorResponse, type ErrorCode, type ErrorDetail } from './errors';
import { describeZodError, unstorableRefusal } from './validation';

/**
 * The hot routes' lane: the few contract routes every request of a project's API calls
 * (token/verify, the usage check, the entitlements read, the refresh rotation) served in front of
 * Express: Node's own request and response (Express's prototypes, set on every request it serves,
 * make Node's HTTP objects megamorphic: about 120 µs of CPU per request on the development
 * machine), no router walk, no ts-rest wrapper, no body-parser stack, and the answer's headers
 * written in one `writeHead`. Everything else of the answer is the same code or the same rule as
 * the contract path (apps/server/http/app.ts): the request id, the security headers, metrics,
 * the request scope, the route's auth kind before its body, the body rules, one check for
 * unstorable strings, ts-rest's own validation (`checkZodSchema`) with the same error answer, the
 * same handler from the router, the same JSON; a fault goes to the app's error handler.
 *
 * A request takes the lane only when nothing about it needs more: the route's method (a HEAD goes
 * the contract path) on the exact path, with no query string or a plain one (`name=value` pairs of
 * letters, digits, `_` and `-`, each name once: what Express's query parser and the lane's read
 * alike), no Transfer-Encoding, Content-Encoding
 * or Expect; a GET without a body or conditional headers (Express may answer those 304); a POST
 * with no body, or a Content-Length within the lane's size and Content-Type `application/json`
 * (optionally `; charset=utf-8`). Any other request goes the contract path, untouched: nothing
 * has been read from it.
 *
 * What a hot route's authenticator and handler get is Node's request and response with what the
 * contract path would have set and they read: `req.body`, `req.query` and `req.params` (empty),
 * `req.ip` (as Express reads it, TRUST_PROXY included), `res.locals` (the request id, the auth).
 * Express's own methods (`res.status`, `res.json`, `req.get`, ...) are not there: a hot route's
 * code answers by its return value and sets headers with Node's `res.setHeader`.
 */

type Handler = (args: Record<string, unknown>) => Promise<{ status: number | string; body: unknown }>;

/** A request of the lane: Node's, with what the contract path would have set on it. */
type LaneRequest = IncomingMessage & { body?: unknown; query?: unknown; params?: unknown; ip?: string; tsRestRoute?: AppRoute };
type LaneResponse = ServerResponse & { locals?: Record<string, unknown> };

export interface HotLane {
  readonly route: AppRoute;
  /** Serves the request; `query` is its query string read (`{}` without one). */
  serve(req: IncomingMessage, res: ServerResponse, query: Record<string, string>): void;
}

/** What every request gets on the contract path (app.ts's prelude), in the lane's form. */
export interface LanePrelude {
  /** The request id: the client's `x-request-id` when well-formed, else a new one. */
  requestId(req: IncomingMessage): string;
  /** The security headers, as a flat name, value list (written with the answer's own). */
  securityHeaders: readonly string[];
  /** The client IP as Express's `req.ip` reads it (TRUST_PROXY). */
  clientIp(req: IncomingMessage): string | undefined;
  /** Runs `next` in the request's scopes (log context, database context), after metrics and the access log are set up. */
  enter(req: IncomingMessage, res: ServerResponse, requestId: string, next: () => void): void;
  /** A fault: the app's error handler answers it (after the prelude's headers are set). */
  fail(req: IncomingMessage, res: ServerResponse, error: unknown): void;
}

export interface HotRoutesOptions {
  contract: AppRouter;
  /** The router the contract path serves (idempotency wrapping included). */
  router: Record<string, unknown>;
  /** The contract routes to serve in the lane: GET or POST routes with a static path and JSON answers. */
  routes: AppRoute[];
  authenticators: AuthenticatorRegistry;
  /** The body limit the contract path applies (`bodyLimit`, e.g. `100kb`). */
  bodyLimit: string;
  prelude: LanePrelude;
}

/** A query string both Express's parser (qs) and the lane read as the same flat object. */
const PLAIN_QUERY = /^[\w-]+=[\w-]*(?:&[\w-]+=[\w-]*)*$/;

/**
 * A plain query string (PLAIN_QUERY) as an object; null when a name comes twice (qs makes that an
 * array) or names a property of every object (qs leaves those out).
 */
function plainQuery(query: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (Object.hasOwn(out, name) || name in Object.prototype) return null;
    out[name] = pair.slice(eq + 1);
  }
  return out;
}

/** Up to this many bytes a body is read by the lane itself; a larger one goes the contract path. */
const LANE_BODY_BYTES = 16 * 1024;
const PLAIN_JSON = /^application\/json(?:\s*;\s*charset=utf-8)?$/i;

/** A body limit as body-parser reads it (`bytes`: b, kb, mb, gb, 1024-based); null when not plain. */
export function limitBytes(limit: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit);
  if (!m) return null;
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b' | 'kb' | 'mb' | 'gb'];
  return Math.floor(Number(m[1]) * unit);
}

/** The router's implementation of each contract route (ts-rest's nesting: the router mirrors the contract). */
function implementations(contract: AppRouter, router: Record<string, unknown>, into = new Map<AppRoute, Handler>()): Map<AppRoute, Handler> {
  for (const [key, entry] of Object.entries(contract)) {
    const impl = router[key] as unknown;
    if (isAppRoute(entry)) {
      const fn = typeof impl === 'function' ? impl : (impl as { handler?: unknown } | undefined)?.handler;
      if (typeof fn === 'function') into.set(entry, fn as Handler);
    } else if (impl && typeof impl === 'object') {
      implementations(entry, impl as Record<string, unknown>, into);
    }
  }
  return into;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A request the lane takes: its route's lane and its query string read. */
export interface HotMatch {
  lane: HotLane;
  query: Record<string, string>;
}

export function makeHotRoutes(options: HotRoutesOptions): { match(req: IncomingMessage): HotMatch | null } {
  const handlers = implementations(options.contract, options.router);
  const limit = limitBytes(options.bodyLimit);
  const laneBytes = limit === null ? -1 : Math.min(limit, LANE_BODY_BYTES);
  const { prelude } = options;
  const lanes = new Map<string, HotLane>();
  for (const route of options.routes) {
    if ((route.method !== 'POST' && route.method !== 'GET') || route.path.includes(':')) {
      throw new Error(`hot route ${route.method} ${route.path}: only GET and POST routes with a static path`);
    }
    if (Object.values(route.responses).some((r) => isAppRouteNoBody(r) || isAppRouteOtherResponse(r))) {
      throw new Error(`hot route ${route.path}: every answer must be JSON`);
    }
    const metadata = (route.metadata as RouteMetadata | undefined) ?? { auth: 'none' };
    if (bodyKindOf(route) !== (route.method === 'GET' ? 'none' : 'json')) throw new Error(`hot route ${route.path}: a plain JSON body only`);
    const handler = handlers.get(route);
    if (!handler) throw new Error(`hot route ${route.path} has no implementation`);
    lanes.set(`${route.method} ${route.path}`, lane(route, metadata, handler));
  }

  /**
   * res.json's answer, headers in one step: the request id, the security headers, then the
   * content's (the same bytes and headers: ETags are off, a POST is never fresh, a GET with
   * conditions goes the contract path). Headers set before (a deprecation notice, Retry-After)
   * are kept: Node merges them.
   */
  function reply(res: LaneResponse, status: number, body: unknown) {
    const text = JSON.stringify(body);
    const headers = ['x-request-id', res.locals!.requestId as string, ...prelude.securityHeaders, 'Content-Type', JSON_TYPE];
    if (text === undefined) return res.writeHead(status, headers).end();
    headers.push('Content-Length', String(Buffer.byteLength(text)));
    res.writeHead(status, headers).end(text);
  }
  const send = (res: LaneResponse, code: ErrorCode, detail?: ErrorDetail) => {
    const r = errorResponse(code, detail);
    reply(res, r.status, r.body);
  };
  const invalid = (res: LaneResponse, where: 'body' | 'query' | 'path' | 'header', error: ZodError) =>
    send(res, 'invalid_request', describeZodError(where, error));

  function lane(route: AppRoute, metadata: RouteMetadata, handler: Handler): HotLane {
    const authenticate = authenticatorFor(options.authenticators, metadata);

    /** After the body: one check for unstorable strings, the schemas as ts-rest checks them, the handler, the JSON. */
    async function answer(req: LaneRequest, res: LaneResponse) {
      const unstorable = unstorableRefusal(req);
      if (unstorable) return send(res, 'invalid_characters', unstorable);
      const params = checkZodSchema(req.params, route.pathParams, { passThroughExtraKeys: true });
      const headers = checkZodSchema(req.headers, route.headers, { passThroughExtraKeys: true });
      const query = checkZodSchema(req.query, route.query);
      const body = checkZodSchema(req.body, 'body' in route ? route.body : null);
      if (!body.success) return invalid(res, 'body', body.error);
      if (!query.success) return invalid(res, 'query', query.error);
      if (!params.success) return invalid(res, 'path', params.error);
      if (!headers.success) return invalid(res, 'header', headers.error);
      let result: { status: number | string; body: unknown };
      try {
        result = await handler({ params: params.data, body: body.data, query: query.data, headers: headers.data, files: undefined, file: undefined, req, res });
      } catch (e) {
        if (!(e instanceof TsRestResponseError)) throw e;
        result = { status: e.statusCode, body: e.body };
      }
      reply(res, Number(result.status), result.body);
    }

    return {
      route,
      serve(request, response, query) {
        const req = request as LaneRequest;
        const res = response as LaneResponse;
        const requestId = prelude.requestId(req);
        res.locals = { requestId };
        req.tsRestRoute = route;
        req.query = query;
        req.params = {};
        req.ip = prelude.clientIp(req);
        const fail = (e: unknown) => prelude.fail(req, res, e);
        prelude.enter(req, res, requestId, () => {
          if (metadata.deprecated) announceDeprecation(res as unknown as Response, metadata.deprecated);
          authenticate(req as unknown as Request, res as unknown as Response, metadata).then((refused) => {
            if (refused) return send(res, refused.code, { hint: refused.hint });
            const length = req.headers['content-length'];
            if (route.method === 'GET' || length === undefined || length === '0') {
              req.body = {};
              return answer(req, res).catch(fail);
            }
            const chunks: Buffer[] = [];
            req.on('data', (chunk: Buffer) => chunks.push(chunk));
            req.on('end', () => {
              const parsed = parseStrictJson(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
              if (!parsed.ok) return send(res, MALFORMED_JSON.code, { hint: MALFORMED_JSON.hint });
              req.body = parsed.value;
              answer(req, res).catch(fail);
            });
            // A client gone while sending: nothing to answer, as on the contract path.
            req.on('error', () => undefined);
          }, fail);
        });
      },
    };
  }

  const NO_QUERY: Record<string, string> = {};
  return {
    match(req) {
      if (lanes.size === 0) return null;
      const url = req.url ?? '';
      const mark = url.indexOf('?');
      const found = lanes.get(`${req.method} ${mark < 0 ? url : url.slice(0, mark)}`);
      if (!found) return null;
      let query = NO_QUERY;
      if (mark >= 0) {
        const text = url.slice(mark + 1);
        const read = PLAIN_QUERY.test(text) ? plainQuery(text) : null;
        if (!read) return null;
        query = read;
      }
      const h = req.headers;
      if (h['transfer-encoding'] !== undefined || h['content-encoding'] !== undefined || h.expect !== undefined) return null;
      const length = h['content-length'];
      const taken = { lane: found, query };
      if (req.method === 'GET') return length === undefined && h['if-none-match'] === undefined && h['if-modified-since'] === undefined ? taken : null;
      // A body: plain JSON within the lane's size, else body-parser reads it on the contract path.
      if (length === undefined || length === '0') return taken;
      return PLAIN_JSON.test(h['content-type'] ?? '') && Number(length) <= laneBytes ? taken : null;
    },
  };
}
