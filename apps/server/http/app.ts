import { createExpressEndpoints, type RequestValidationError } from '@ts-rest/express';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { RouteMetadata } from '../../../contract/common';
import { requestScope, type PinoLogger } from './logger';
import { errorResponse, type ErrorCode, type ErrorDetail } from './errors';
import { describeZodError, unstorableRefusal } from './validation';
import { authenticatorFor, type AuthenticatorRegistry } from './auth';
import { bodyKindOf, makeBodyReader } from './body';
import { mountDocs } from './docs';
import { withIdempotency } from './idempotency';
import { announceDeprecation } from './deprecation';
import { BUILD } from '../version';
import type { RunIdempotent } from '../../../application/idempotency/run-idempotent';
import { isDatabaseUnavailable } from '../../../infrastructure/persistence/connection-errors';
import { RequestTrace } from '../../../infrastructure/tracing/request-scope';
import type { Metrics } from '../../../application/ports/metrics';
import { requestCounter } from './metrics';
import { makeHotRoutes } from './hot-routes';
import type { ZodError } from 'zod';

export interface HttpAppOptions {
  contract: AppRouter;
  router: Record<string, unknown>;
  logger: PinoLogger;
  /** One authenticator per auth kind of the contract (assembled by the composition root). */
  authenticators: AuthenticatorRegistry;
  trustProxy: boolean | number | string;
  bodyLimit: string;
  /** The larger limit of the routes that take batches (`bulkBody` in the contract). */
  bulkBodyLimit?: string;
  /** The OpenAPI document, made on the first request for it. */
  openApiDocument: () => Promise<object>;
  ready: () => Promise<boolean>;
  requestContext: RequestHandler;
  /** Extra Express routes that are not JSON (redirect targets, pages). Mounted before the contract. */
  mountExtra?: (app: express.Express) => void;
  /** Runs the handlers of routes whose metadata says `idempotent: true` once per `Idempotency-Key` (required if any does). */
  runIdempotent?: RunIdempotent;
  /** Counts every request by method, route template and status, with its latency (when metrics are on). */
  metrics?: Metrics;
  /** GET /metrics, outside the contract (only when metrics are on: otherwise the path is unknown, 404). */
  metricsEndpoint?: RequestHandler;
  /** Contract routes served by the hot routes' lane (apps/server/http/hot-routes.ts): GET or POST, static path, JSON. */
  hotRoutes?: AppRoute[];
}

const send = (res: Response, code: ErrorCode, detail?: ErrorDetail) => {
  const r = errorResponse(code, detail);
  return res.status(r.status).json(r.body);
};

/** The client's `x-request-id` when well-formed (up to 100 of letters, digits, `_`, `.`, `-`), else a new one. */
const requestIdOf = (req: IncomingMessage): string => {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
};

const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdOf(req);
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};

/** The contract route ts-rest matched (it sets `req.tsRestRoute` before the global middleware runs). */
const routeOf = (req: Request): AppRoute | undefined => (req as Request & { tsRestRoute?: AppRoute }).tsRestRoute;

/**
 * The Express application: request ids, logging (no query strings: they can carry tokens), the
 * contract routes behind one edge middleware (auth kind, then the body as the route declares
 * it), a small index at /, JSON 404s and 405s (with Allow), and one error handler.
 */
export function buildHttpApp(options: HttpAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  app.set('etag', false);
  // One middleware for what every request needs (each Express layer costs on the hot paths):
  // request id, security headers, an access log line at debug level, and the request's scopes
  // (request id for log lines, database context).
  const security = securityHeaders();
  const securityFlat = security.entries.flat();
  const logRequests = options.logger.isLevelEnabled('debug');
  const countRequest = options.metrics?.enabled ? requestCounter(options.metrics) : null;
  /** The access log line (debug level), written when the answer is sent; `path` for a request Express did not see. */
  const logAnswer = (req: Request, res: Response, path?: string) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      options.logger.debug(
        { requestId: res.locals.requestId, method: req.method, path: path ?? req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 },
        'request',
      );
    });
  };
  const prelude = (req: Request, res: Response, next: NextFunction) => {
    requestId(req, res, () => undefined);
    security.set(res);
    if (countRequest) countRequest(res);
    if (logRequests) logAnswer(req, res);
    // The request's id and W3C trace context (its `traceparent`, read only when a log line or an outgoing call asks).
    requestScope.run(new RequestTrace(res.locals.requestId as string, req.headers.traceparent), () => options.requestContext(req, res, next));
  };
  // No global body parser: a route's body is read once its route is known, as its contract says.
  const bodies = makeBodyReader(options.bodyLimit, options.bulkBodyLimit ?? options.bodyLimit);
  const router = options.runIdempotent
    ? withIdempotency(options.contract, options.router, options.runIdempotent)
    : refuseIdempotentRoutes(options.contract, options.router);
  const invalid = (res: Response, where: 'body' | 'query' | 'path' | 'header', error: ZodError) => {
    send(res, 'invalid_request', describeZodError(where, error));
  };
  app.use(prelude);

  app.get('/', (_req, res) => {
    res.json({ name: 'Tollgate', docs: '/docs', openapi: '/api/openapi.json', health: '/healthz' });
  });
  options.mountExtra?.(app);

  /**
   * Runs after ts-rest matched the route, before it validates the request: reads the exact
   * bytes first on `rawBody` routes (their credential may be a signature over them), then
   * applies the route's auth kind (a bad credential answers 401 whatever the body holds, and
   * costs no parsing), then parses the body.
   */
  const edge = async (req: Request, res: Response, next: NextFunction) => {
    try {
      const route = routeOf(req);
      const metadata: RouteMetadata = (route?.metadata as RouteMetadata | undefined) ?? { auth: 'none' };
      if (metadata.deprecated) announceDeprecation(res, metadata.deprecated);
      const kind = route ? bodyKindOf(route) : 'none';
      if (kind === 'raw-json') {
        const unreadable = await bodies.readRaw(req, res, kind);
        if (unreadable) return unreadable.code === 'aborted' ? undefined : send(res, unreadable.code, { hint: unreadable.hint });
      }
      const refused = await authenticatorFor(options.authenticators, metadata)(req, res, metadata);
      if (refused) return send(res, refused.code, { hint: refused.hint });
      bodies.parse(
        req,
        res,
        kind,
        (failed) => {
          if (failed) return failed.code === 'aborted' ? undefined : send(res, failed.code, { hint: failed.hint });
          // One rule for every string of every route, before its schema and its handler see it.
          const unstorable = unstorableRefusal(req);
          if (unstorable) return send(res, 'invalid_characters', unstorable);
          next();
        },
        next,
      );
    } catch (e) {
      next(e);
    }
  };

  createExpressEndpoints(options.contract, router as never, app, {
    globalMiddleware: [edge as never],
    responseValidation: false,
    jsonQuery: false,
    requestValidationErrorHandler: (err: RequestValidationError, _req, res) => {
      if (err.body) invalid(res, 'body', err.body);
      else if (err.query) invalid(res, 'query', err.query);
      else if (err.pathParams) invalid(res, 'path', err.pathParams);
      else invalid(res, 'header', err.headers!);
    },
  });

  if (options.metricsEndpoint) app.get('/metrics', options.metricsEndpoint);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: BUILD.version });
  });
  app.get('/readyz', async (_req, res) => {
    if (await options.ready()) return res.json({ status: 'ok' });
    res.status(503).json({ status: 'unavailable', ...errorResponse('database_unreachable').body });
  });
  let openApiDocument: Promise<object> | undefined;
  app.get('/api/openapi.json', async (_req, res, next) => {
    try {
      openApiDocument ??= options.openApiDocument();
      res.json(await openApiDocument);
    } catch (e) {
      openApiDocument = undefined;
      next(e);
    }
  });
  mountDocs(app);

  // Nothing matched: 405 when another method is served at this path (Allow lists them), else 404.
  let methodsAt: ((path: string) => string[]) | undefined;
  app.use((req, res) => {
    methodsAt ??= routeMethods(app);
    const allowed = methodsAt(req.path);
    if (allowed.length === 0) return send(res, 'not_found');
    res.setHeader('Allow', allowed.join(', '));
    send(res, 'method_not_allowed', { hint: `${req.method} is not served at ${req.path}; use ${allowed.join(', ')}` });
  });

  const onError: ErrorRequestHandler = (error, req, res, _next) => {
    const e = error as { type?: string; status?: number };
    if (e.type === 'request.aborted') return;
    // Express refuses a path whose parameters are not valid percent-encoding.
    if (error instanceof URIError && e.status === 400) return send(res, 'invalid_request', { hint: 'The path is not valid percent-encoding' });
    if (isDatabaseUnavailable(error)) {
      // A restart or failover: the client may try again in a moment, as /readyz tells balancers.
      options.logger.warn({ error: (error as Error).message, requestId: res.locals.requestId, method: req.method, path: req.path }, 'database unavailable');
      if (res.headersSent) return;
      res.setHeader('Retry-After', '1');
      return send(res, 'database_unreachable');
    }
    options.logger.error({ err: error, requestId: res.locals.requestId, method: req.method, path: req.path }, 'unhandled error');
    if (res.headersSent) return;
    send(res, 'internal_error');
  };
  app.use(onError);

  if (options.hotRoutes?.length) {
    // The hot routes' lane, in front of Express (http/hot-routes.ts): the same prelude, without Express's objects.
    const hot = makeHotRoutes({
      contract: options.contract,
      router: router as Record<string, unknown>,
      routes: options.hotRoutes,
      authenticators: options.authenticators,
      bodyLimit: options.bodyLimit,
      prelude: {
        requestId: requestIdOf,
        securityHeaders: securityFlat,
        clientIp: (req) => proxyaddr(req, app.get('trust proxy fn') as (addr: string, i: number) => boolean),
        enter(req, res, id, next) {
          if (countRequest) countRequest(res as Response);
          if (logRequests) logAnswer(req as Request, res as Response, (req as Request & { tsRestRoute: AppRoute }).tsRestRoute.path);
          requestScope.run(new RequestTrace(id, req.headers.traceparent), () => options.requestContext(req as Request, res as Response, next));
        },
        fail(req, res, error) {
          // Rare: the request becomes an Express one for the app's error handler, with the prelude's headers.
          Object.setPrototypeOf(req, app.request);
          Object.setPrototypeOf(res, app.response);
          Object.assign(req, { res });
          if (!res.headersSent) {
            res.setHeader('x-request-id', (res as Response).locals.requestId as string);
            security.set(res as Response);
          }
          onError(error, req as Request, res as Response, () => undefined);
        },
      },
    });
    // Express's app calls app.handle(req, res, callback) for every request: a hot one is served here instead.
    const express = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, callback?: unknown) => void };
    const handle = express.handle.bind(app);
    express.handle = (req, res, callback) => {
      const taken = hot.match(req);
      if (taken) taken.lane.serve(req, res, taken.query);
      else handle(req, res, callback);
    };
  }
  return app;
}

/** Without a runner, a contract with an `idempotent` route cannot be served (its promise would silently not hold). */
function refuseIdempotentRoutes<R>(contract: AppRouter, router: R): R {
  const idempotent = (r: AppRouter): boolean =>
    Object.values(r).some((e) => (isAppRoute(e) ? (e.metadata as RouteMetadata | undefined)?.idempotent === true : idempotent(e)));
  if (idempotent(contract)) throw new Error('The contract has idempotent routes: pass runIdempotent to buildHttpApp');
  return router;
}

/**
 * The methods served at a path, from the routes registered on the app (contract routes and the
 * extra ones alike): HEAD wherever GET is (Express answers it), sorted. Read once, after every
 * route is mounted (Express 4 keeps them in `app._router.stack`).
 */
function routeMethods(app: express.Express): (path: string) => string[] {
  type RouteLayer = { regexp: RegExp; route?: { methods: Record<string, boolean> } };
  const stack = ((app as unknown as { _router?: { stack: RouteLayer[] } })._router?.stack ?? []).filter((l) => l.route);
  return (path) => {
    const methods = new Set<string>();
    for (const layer of stack) {
      if (!layer.regexp.test(path)) continue;
      for (const [method, on] of Object.entries(layer.route!.methods)) if (on && method !== '_all') methods.add(method.toUpperCase());
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/**
 * helmet's headers (without CSP: the API answers JSON, /docs sets its own page), computed once by
 * running helmet against a stub response and then set in one step per request: the same
 * headers, without eleven middleware calls on every request. Answers carry tokens, codes and
 * secrets, so nothing is cached by default (`Cache-Control: no-store`, as OAuth token responses
 * require); a route that serves something public (the /docs bundle) says so itself.
 */
function securityHeaders(): { entries: Array<[string, string]>; set: (res: Response) => void } {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  const stub = {
    setHeader: (name: string, value: string) => {
      headers[name] = String(value);
    },
    // helmet removes X-Powered-By, which Tollgate never sets (x-powered-by is disabled).
    removeHeader: () => undefined,
  };
  helmet({ contentSecurityPolicy: false })({} as Request, stub as unknown as Response, () => undefined);
  const entries = Object.entries(headers);
  return {
    entries,
    set: (res) => {
      for (const [name, value] of entries) res.setHeader(name, value);
    },
  };
}
