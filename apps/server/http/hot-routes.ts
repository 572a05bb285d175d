import { checkZodSchema, isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse, TsRestResponseError, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { NextFunction, Request, Response } from 'express';
import type { ZodError } from 'zod';
import type { RouteMetadata } from '../../../contract/common';
import { authenticatorFor, type AuthenticatorRegistry } from './auth';
import { bodyKindOf, MALFORMED_JSON, parseStrictJson, type BodyFailure, type makeBodyReader } from './body';
import { announceDeprecation } from './deprecation';
import type { ErrorCode, ErrorDetail } from './errors';
import { unstorableRefusal } from './validation';

/**
 * The hot routes' lane: the few contract routes every request of a project's API calls
 * (token/verify, the usage check, the entitlements read) served without walking Express's router (every contract route
 * is a layer it would test in turn), without ts-rest's per-route wrapper and, for a plain JSON body,
 * without body-parser's stack. Everything else of the answer is the same code or the same rule as
 * the contract path (apps/server/http/app.ts): the prelude (request id, security headers, metrics,
 * request scope), the route's auth kind before its body, the body rules, one check for
 * unstorable strings, ts-rest's own validation (`checkZodSchema`) with the same error answer, the
 * same handler from the router, the same JSON, and errors to the same error handler.
 *
 * A request takes the lane only when nothing about it needs more: the route's method (a HEAD goes
 * the contract path) on the exact path (no query string), no Transfer-Encoding, Content-Encoding
 * or Expect; a GET without conditional headers (Express may answer those 304); a POST with no body
 * or a Content-Length within the body limit and Content-Type `application/json` (optionally
 * `; charset=utf-8`; any other goes to body-parser as on the contract path). Any other request of
 * these routes goes the contract path, untouched: nothing has been read from it.
 */

type Handler = (args: Record<string, unknown>) => Promise<{ status: number | string; body: unknown }>;

export interface HotLane {
  readonly route: AppRoute;
  serve(req: Request, res: Response, next: NextFunction): void;
}

export interface HotRoutesOptions {
  contract: AppRouter;
  /** The router the contract path serves (idempotency wrapping included). */
  router: Record<string, unknown>;
  /** The contract routes to serve in the lane: GET or POST routes with a static path and JSON answers. */
  routes: AppRoute[];
  authenticators: AuthenticatorRegistry;
  bodies: ReturnType<typeof makeBodyReader>;
  /** The body limit the contract path applies (`bodyLimit`, e.g. `100kb`). */
  bodyLimit: string;
  send: (res: Response, code: ErrorCode, detail?: ErrorDetail) => unknown;
  /** The contract path's answer to a request that fails its schemas (the first failure: body, query, path, headers). */
  invalid: (res: Response, where: 'body' | 'query' | 'path' | 'header', error: ZodError) => void;
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

export function makeHotRoutes(options: HotRoutesOptions): { match(req: Request): HotLane | null } {
  const handlers = implementations(options.contract, options.router);
  const limit = limitBytes(options.bodyLimit);
  const laneBytes = limit === null ? -1 : Math.min(limit, LANE_BODY_BYTES);
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

  function lane(route: AppRoute, metadata: RouteMetadata, handler: Handler): HotLane {
    const authenticate = authenticatorFor(options.authenticators, metadata);

    /** After the body: one check for unstorable strings, the schemas as ts-rest checks them, the handler, the JSON. */
    async function answer(req: Request, res: Response) {
      const unstorable = unstorableRefusal(req);
      if (unstorable) return options.send(res, 'invalid_characters', unstorable);
      const params = checkZodSchema(req.params, route.pathParams, { passThroughExtraKeys: true });
      const headers = checkZodSchema(req.headers, route.headers, { passThroughExtraKeys: true });
      const query = checkZodSchema(req.query, route.query);
      const body = checkZodSchema(req.body, 'body' in route ? route.body : null);
      if (!body.success) return options.invalid(res, 'body', body.error);
      if (!query.success) return options.invalid(res, 'query', query.error);
      if (!params.success) return options.invalid(res, 'path', params.error);
      if (!headers.success) return options.invalid(res, 'header', headers.error);
      let result: { status: number | string; body: unknown };
      try {
        result = await handler({ params: params.data, body: body.data, query: query.data, headers: headers.data, files: undefined, file: undefined, req, res });
      } catch (e) {
        if (!(e instanceof TsRestResponseError)) throw e;
        result = { status: e.statusCode, body: e.body };
      }
      // res.json's answer: the same bytes and headers (ETags are off; a POST is never fresh, a GET with conditions goes the contract path).
      const text = JSON.stringify(result.body);
      res.statusCode = Number(result.status);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      if (text === undefined) return res.end();
      res.setHeader('Content-Length', Buffer.byteLength(text));
      res.end(text);
    }

    return {
      route,
      serve(req, res, next) {
        (req as Request & { tsRestRoute?: AppRoute }).tsRestRoute = route;
        if (metadata.deprecated) announceDeprecation(res, metadata.deprecated);
        authenticate(req, res, metadata).then((refused) => {
          if (refused) return options.send(res, refused.code, { hint: refused.hint });
          const settle = (failure: BodyFailure | null) => {
            if (failure) return failure.code === 'aborted' ? undefined : options.send(res, failure.code, { hint: failure.hint });
            answer(req, res).catch(next);
          };
          if (route.method === 'GET') return settle(null);
          const length = req.headers['content-length'];
          if (length === undefined || length === '0') {
            req.body = {};
            return settle(null);
          }
          if (!PLAIN_JSON.test(req.headers['content-type'] ?? '') || !(Number(length) <= laneBytes)) {
            // Another content type, or a large body: body-parser reads it as on the contract path.
            return options.bodies.parse(req, res, 'json', settle, next);
          }
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            const parsed = parseStrictJson(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
            if (!parsed.ok) return settle(MALFORMED_JSON);
            req.body = parsed.value;
            settle(null);
          });
          // A client gone while sending: nothing to answer, as on the contract path.
          req.on('error', () => undefined);
        }, next);
      },
    };
  }

  return {
    match(req) {
      if (lanes.size === 0) return null;
      const found = lanes.get(`${req.method} ${req.url}`);
      if (!found) return null;
      const h = req.headers;
      if (h['transfer-encoding'] !== undefined || h['content-encoding'] !== undefined || h.expect !== undefined) return null;
      if (req.method === 'GET' && (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined || h['content-length'] !== undefined)) {
        return null;
      }
      return found;
    },
  };
}
