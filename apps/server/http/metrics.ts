import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { AppRoute } from '@ts-rest/core';
import type { Metrics } from '../../../application/ports/metrics';
import { errorResponse } from './errors';

/**
 * GET /metrics (Prometheus text format) and the per-request signals of the HTTP edge. Outside the
 * contract's JSON API, like /healthz: mounted only when METRICS_ENABLED is on (otherwise the path
 * answers 404 like any unknown one); with METRICS_TOKEN set, a scrape must send it as a Bearer
 * token. docs/operations.md.
 */

/** What a scrape reads: the process's registry in the exposition format. */
export interface MetricsSource {
  readonly contentType: string;
  exposition(): Promise<string>;
}

/** What to answer a scrape: the exposition, or a JSON refusal in the API's error shape. */
export type ScrapeAnswer =
  | { status: 200; contentType: string; body: string }
  | { status: 401; body: { error: string; code: 'invalid_metrics_token'; hint?: string } };

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Compares the Authorization header with the token in constant time (both hashed first, so lengths leak nothing). */
export function scrapeAllowed(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/** One scrape: 401 without the right Bearer token (when METRICS_TOKEN is set), else the metrics. */
export async function answerScrape(source: MetricsSource, token: string | undefined, authorization: string | undefined): Promise<ScrapeAnswer> {
  if (!scrapeAllowed(token, authorization)) {
    const refusal = errorResponse('invalid_metrics_token', { hint: 'Send METRICS_TOKEN as a Bearer token: Authorization: Bearer <METRICS_TOKEN>' });
    return { status: 401, body: refusal.body };
  }
  return { status: 200, contentType: source.contentType, body: await source.exposition() };
}

/** The server's GET /metrics. */
export function metricsEndpoint(source: MetricsSource, token: string | undefined): RequestHandler {
  return (req, res, next) => {
    answerScrape(source, token, req.headers.authorization).then((answer) => {
      if (answer.status === 401) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        return res.status(401).json(answer.body);
      }
      res.setHeader('Content-Type', answer.contentType);
      res.status(200).send(answer.body);
    }, next);
  };
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STARTED = Symbol('tollgate.metrics.started');
type Timed = Response & { [STARTED]?: number };

/**
 * The route template a request matched, never its raw URL: the contract's path
 * (`/api/v1/admin/projects/:projectId`), else the Express route's (`/dashboard/*`), else
 * `unmatched` (404s, static files).
 */
export function routeTemplate(req: Request): string {
  const contractRoute = (req as Request & { tsRestRoute?: AppRoute }).tsRestRoute;
  if (contractRoute) return contractRoute.path;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? req.baseUrl + path : 'unmatched';
}

/**
 * Starts timing a request and counts it when its answer is sent: one counter increment and one
 * histogram observation (and the rate-limit counter on a 429). The listener is one shared
 * function, so a request allocates nothing for it but its entry in the response's listeners.
 */
export function requestCounter(metrics: Metrics): (res: Response) => void {
  function finished(this: Timed) {
    const req = this.req;
    const seconds = (performance.now() - (this[STARTED] ?? 0)) / 1000;
    const route = routeTemplate(req);
    metrics.httpRequest(METHODS.has(req.method) ? req.method : 'OTHER', route, this.statusCode, seconds);
    if (this.statusCode === 429) metrics.rateLimited(route);
  }
  return (res: Timed) => {
    res[STARTED] = performance.now();
    res.on('finish', finished);
  };
}
