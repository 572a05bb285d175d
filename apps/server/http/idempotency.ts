import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import type { Request, Response } from 'express';
import type { RouteMetadata } from '../../../contract/common';
import type { IdempotentAnswer, RunIdempotent } from '../../../application/idempotency/run-idempotent';
import type { JsonValue } from '../../../domain/billing/idempotency';
import { errorResponse } from './errors';
import { authOf } from './request-context';

/** The header a replayed answer carries (as Stripe's `Idempotent-Replayed`). */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

const REQUEST_KEY = 'idempotencyRequestKey';

/**
 * The key an `idempotent` route's handler runs under: the request's `Idempotency-Key`, or a fresh
 * id without one. Use cases take it as `requestKey`, so that their writes at a payment processor
 * are idempotent too (a retried request never charges twice).
 */
export function requestKeyOf(res: Response): string {
  const key = res.locals[REQUEST_KEY] as string | undefined;
  if (key === undefined) throw new Error('requestKeyOf: the route is not idempotent (contract metadata idempotent: true)');
  return key;
}

/**
 * Whether an answer is kept for replays: not a fault or an outage (5xx: the retry must run again),
 * nor a refusal that only says "try again" (a concurrent change in progress, a rate limit), as
 * Stripe does not keep a request that "conflicted with another that was executing concurrently".
 */
export function isKeptAnswer(answer: IdempotentAnswer): boolean {
  if (answer.status >= 500 || answer.status === 429) return false;
  const code = (answer.body as { code?: unknown } | null)?.code;
  return !(answer.status === 409 && code === 'subscription_busy');
}

type Handler = (args: { req: Request; res: Response } & Record<string, unknown>) => Promise<IdempotentAnswer>;
type Implementation = Handler | { handler: Handler; middleware?: unknown[] };

/**
 * `Idempotency-Key` at the edge: every route whose contract metadata says `idempotent: true` gets
 * its handler wrapped. It runs after the caller is authenticated and the request validated (a
 * request refused for its shape keeps nothing, so the client can fix it and retry with the same
 * key), scoped to the caller (project and user). The fingerprint is the method, the path and the
 * JSON body as sent (canonical: key order and spacing do not matter).
 */
export function withIdempotency<R extends Record<string, unknown>>(contract: AppRouter, router: R, run: RunIdempotent): R {
  const wrap =
    (handler: Handler): Handler =>
    async (args) => {
      const { req, res } = args;
      const auth = authOf(res);
      if (!auth.project || !auth.user) throw new Error('an idempotent route needs an authenticated user (auth: user)');
      const header = req.headers['idempotency-key'];
      const outcome = await run(
        {
          scope: `${auth.project.id}:${auth.user.id}`,
          key: header === undefined ? null : Array.isArray(header) ? header.join(', ') : header,
          method: req.method,
          // The query names whom a billing request acts for (`?for=organization`): part of the request.
          path: req.originalUrl,
          body: req.body as JsonValue | undefined,
        },
        (key) => {
          res.locals[REQUEST_KEY] = key;
          return handler(args);
        },
        isKeptAnswer,
      );
      switch (outcome.kind) {
        case 'refused':
          return errorResponse(outcome.error);
        case 'replayed':
          res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
          return outcome.answer;
        case 'ran':
          return outcome.answer;
      }
    };

  const walk = (schema: AppRouter, implementation: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...implementation };
    for (const [name, entry] of Object.entries(schema)) {
      const impl = implementation[name];
      if (impl === undefined) continue;
      if (!isAppRoute(entry)) {
        out[name] = walk(entry as AppRouter, impl as Record<string, unknown>);
        continue;
      }
      if (!(entry as AppRoute & { metadata?: RouteMetadata }).metadata?.idempotent) continue;
      const current = impl as Implementation;
      out[name] = typeof current === 'function' ? wrap(current) : { ...current, handler: wrap(current.handler) };
    }
    return out;
  };
  return walk(contract, router) as R;
}
