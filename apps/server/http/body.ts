import type { AppRoute } from '@ts-rest/core';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { RouteMetadata } from '../../../contract/common';
import { keepRawBody, rawBodyOf } from './request-context';

/** Why a request body was refused; `aborted` when the client went away while sending it (nothing to answer). */
export type BodyFailure = { code: 'malformed_json' | 'payload_too_large' | 'unsupported_media_type'; hint: string } | { code: 'aborted' };

/** How a route's body is read, from its contract: nothing (GET), JSON, a form (+ JSON), or JSON kept byte for byte. */
export type BodyKind = 'none' | 'json' | 'bulk-json' | 'form' | 'raw-json';

export function bodyKindOf(route: AppRoute): BodyKind {
  if (route.method === 'GET' || !('body' in route)) return 'none';
  if ((route.metadata as RouteMetadata | undefined)?.rawBody) return 'raw-json';
  if ((route.metadata as RouteMetadata | undefined)?.bulkBody) return 'bulk-json';
  return route.contentType === 'application/x-www-form-urlencoded' ? 'form' : 'json';
}

/** application/json or any +json type, parameters allowed. */
const isJson = (contentType: string | undefined) => !!contentType && /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(contentType);
const isForm = (contentType: string | undefined) => !!contentType && /^application\/x-www-form-urlencoded\s*(?:;|$)/i.test(contentType);
const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** A body that is not the JSON a route takes. */
export const MALFORMED_JSON = { code: 'malformed_json', hint: 'The body is not valid JSON (an object or an array)' } as const satisfies BodyFailure;

/**
 * The JSON body-parser's `strict` parser accepts, read as it reads it: UTF-8 without its byte order
 * mark, an empty body as `{}`, otherwise an object or an array (leading JSON whitespace allowed).
 */
export function parseStrictJson(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return { ok: true, value: {} };
  const first = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/.exec(text)?.[1];
  if (first !== '{' && first !== '[') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * Request bodies, read per route as its contract declares (there is no global parser): the body
 * is read only after the route matched and, except for `rawBody` routes, only once the caller is
 * authenticated. Every failure is a value the edge answers: 413 over `limit`, 415 for a content
 * type (or encoding, or charset) the route does not take, 400 for malformed JSON.
 */
export function makeBodyReader(limit: string, bulkLimit: string = limit) {
  const json = express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] });
  // Routes that take batches (usage events): the same parser with the larger limit.
  const bulk = express.json({ limit: bulkLimit, strict: true, type: ['application/json', 'application/*+json'] });
  // Apple's form_post callback; JSON is accepted there too.
  const form = express.urlencoded({ extended: false, limit });
  // The exact bytes: no inflating (a signature covers what was sent), no charset decoding.
  const raw = express.raw({ type: () => true, limit, inflate: false });

  const run = (parser: RequestHandler, req: Request, res: Response) => new Promise<unknown>((resolve) => parser(req, res, (err?: unknown) => resolve(err)));

  /** A body-parser error as a failure; anything else is a fault, thrown. */
  const failureOf = (err: unknown, request: Request, kind: BodyKind = 'json'): BodyFailure => {
    switch ((err as { type?: string }).type) {
      case 'entity.parse.failed':
        return MALFORMED_JSON;
      case 'entity.too.large':
        return { code: 'payload_too_large', hint: `The limit is ${kind === 'bulk-json' ? bulkLimit : limit}` };
      case 'encoding.unsupported':
        return { code: 'unsupported_media_type', hint: `Content-Encoding ${request.headers['content-encoding'] ?? ''} is not accepted here` };
      case 'charset.unsupported':
        return { code: 'unsupported_media_type', hint: 'Send the body in UTF-8' };
      case 'request.aborted':
        return { code: 'aborted' };
      default:
        throw err;
    }
  };

  const contentTypeRefusal = (request: Request, kind: BodyKind): BodyFailure | null => {
    if (!hasBody(request)) return null;
    const type = request.headers['content-type'];
    if (isJson(type) || (kind === 'form' && isForm(type))) return null;
    const accepted = kind === 'form' ? 'application/x-www-form-urlencoded or application/json' : 'application/json';
    return {
      code: 'unsupported_media_type',
      hint: `${type ? `Content-Type ${type.split(';')[0]!.trim()} is not accepted` : 'The body has no Content-Type'}: send ${accepted}`,
    };
  };

  return {
    /**
     * Reads the exact bytes of a `raw-json` body (before authentication: a signature covers them),
     * keeping them for `rawBodyOf(req)`. Other kinds read nothing here.
     */
    async readRaw(request: Request, res: Response, kind: BodyKind): Promise<BodyFailure | null> {
      if (kind !== 'raw-json') return null;
      const refused = contentTypeRefusal(request, kind);
      if (refused) return refused;
      const charset = /;\s*charset=("?)([\w-]+)\1/i.exec(request.headers['content-type'] ?? '')?.[2];
      if (charset && !/^utf-?8$/i.test(charset)) return { code: 'unsupported_media_type', hint: 'Send the body in UTF-8' };
      const err = await run(raw, request, res);
      if (err) return failureOf(err, request);
      keepRawBody(request, Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
      return null;
    },

    /**
     * Parses the body as the route declares (`req.body`; a `raw-json` body from the bytes `readRaw`
     * kept) and calls `done` with the failure, or null; a fault (not a body-parser refusal) goes to `fault`. Callback-shaped, not a promise: it runs on
     * every request with a body, and each awaited promise costs on the hot paths.
     */
    parse(request: Request, res: Response, kind: BodyKind, done: (failure: BodyFailure | null) => void, fault: (error: unknown) => void): void {
      if (kind === 'none') {
        done(null);
        return;
      }
      if (kind === 'raw-json') {
        const parsed = parseStrictJson(rawBodyOf(request));
        if (parsed.ok) request.body = parsed.value;
        done(parsed.ok ? null : MALFORMED_JSON);
        return;
      }
      const refused = contentTypeRefusal(request, kind);
      if (refused) {
        done(refused);
        return;
      }
      const parser = kind === 'form' && isForm(request.headers['content-type']) ? form : kind === 'bulk-json' ? bulk : json;
      parser(request, res, (err?: unknown) => {
        if (!err) return done(null);
        let failure: BodyFailure;
        try {
          failure = failureOf(err, request, kind);
        } catch (e) {
          return fault(e);
        }
        done(failure);
      });
    },
  };
}
