import { createExpressEndpoints, type RequestValidationError } from '@ts-rest/express';
import type { AppRouter } from '@ts-rest/core';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { randomUUID } from 'node:crypto';
import type { RouteMetadata } from '../../../contract/common';
import { requestScope, type PinoLogger } from './logger';
import { errorResponse, type ErrorCode } from './errors';
import { describeZodError } from './validation';
import type { RouteAuthenticator } from './auth';
import { mountDocs } from './docs';

export interface HttpAppOptions {
  contract: AppRouter;
  router: Record<string, unknown>;
  logger: PinoLogger;
  authenticate: RouteAuthenticator;
  trustProxy: boolean | number | string;
  bodyLimit: string;
  openApiDocument: object;
  ready: () => Promise<boolean>;
  requestContext: RequestHandler;
  /** Extra Express routes that are not JSON (redirect targets, pages). Mounted before the contract. */
  mountExtra?: (app: express.Express) => void;
}

const send = (res: Response, code: ErrorCode, message?: string) => {
  const r = errorResponse(code, message);
  return res.status(r.status).json(r.body);
};

const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};

/**
 * The Express application: request ids, logging (no query strings: they can carry tokens), JSON
 * parsing with a size limit, contract routes with their auth, JSON 404s and one error handler.
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
  const logRequests = options.logger.isLevelEnabled('debug');
  app.use((req, res, next) => {
    requestId(req, res, () => undefined);
    security(req, res, () => undefined);
    if (logRequests) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        options.logger.debug(
          { requestId: res.locals.requestId, method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 },
          'request',
        );
      });
    }
    requestScope.run({ requestId: res.locals.requestId as string }, () => options.requestContext(req, res, next));
  });

  app.use(express.json({ limit: options.bodyLimit, strict: true }));
  // Only the providers' form_post callbacks (Apple) send form bodies.
  app.use('/api/proxy/callback', express.urlencoded({ extended: false, limit: options.bodyLimit }));
  options.mountExtra?.(app);

  const contentTypeAndAuth = async (req: Request, res: Response, next: NextFunction) => {
    const route = (req as Request & { tsRestRoute?: { method: string; metadata?: RouteMetadata } }).tsRestRoute;
    const metadata = route?.metadata ?? { auth: 'none' as const };
    try {
      const hasBody = req.method !== 'GET' && (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined);
      if (hasBody && !metadata.nonJson && !isJson(req.headers['content-type'])) {
        return send(res, 'unsupported_media_type');
      }
      const failure = await options.authenticate(req, res, metadata);
      if (failure) return send(res, failure);
      next();
    } catch (e) {
      next(e);
    }
  };

  createExpressEndpoints(options.contract, options.router as never, app, {
    globalMiddleware: [contentTypeAndAuth as never],
    responseValidation: false,
    jsonQuery: false,
    requestValidationErrorHandler: (err: RequestValidationError, _req, res) => {
      const [where, zerr] = err.body
        ? (['body', err.body] as const)
        : err.query
          ? (['query', err.query] as const)
          : err.pathParams
            ? (['path', err.pathParams] as const)
            : (['header', err.headers!] as const);
      send(res, 'invalid_request', describeZodError(where, zerr));
    },
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ok = await options.ready();
    res.status(ok ? 200 : 503).json(ok ? { status: 'ok' } : { status: 'unavailable', error: 'Database unreachable', code: 'database_unreachable' });
  });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(options.openApiDocument);
  });
  mountDocs(app);

  app.use((_req, res) => send(res, 'not_found'));

  const onError: ErrorRequestHandler = (error, req, res, _next) => {
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') return send(res, 'malformed_json');
    if (type === 'entity.too.large') return send(res, 'payload_too_large', `Request body too large (limit ${options.bodyLimit})`);
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return send(res, 'unsupported_media_type', 'Unsupported body encoding');
    if (type === 'request.aborted') return;
    options.logger.error({ err: error, requestId: res.locals.requestId, method: req.method, path: req.path }, 'unhandled error');
    if (res.headersSent) return;
    send(res, 'internal_error');
  };
  app.use(onError);
  return app;
}

/**
 * helmet's headers (without CSP: the API answers JSON, /docs sets its own page), computed once by
 * running helmet against a stub response and then set in one step per request: the same
 * headers, without eleven middleware calls on every request. Answers carry tokens, codes and
 * secrets, so nothing is cached by default (`Cache-Control: no-store`, as OAuth token responses
 * require); a route that serves something public (the /docs bundle) says so itself.
 */
function securityHeaders(): RequestHandler {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  const removed: string[] = [];
  const stub = {
    setHeader: (name: string, value: string) => {
      headers[name] = String(value);
    },
    removeHeader: (name: string) => {
      removed.push(name);
    },
  };
  helmet({ contentSecurityPolicy: false })({} as Request, stub as unknown as Response, () => undefined);
  const entries = Object.entries(headers);
  return (_req, res, next) => {
    for (const [name, value] of entries) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}

/** application/json or any +json type, parameters allowed (what express.json parses). */
const isJson = (contentType: string | undefined) => !!contentType && /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(contentType);
