import type { Request, Response } from 'express';
import type { Project } from '../../../domain/project';
import type { EndUser } from '../../../domain/user';
import type { RequestOrigin } from '../../../application/ports/request-origin';
import type { ConsoleActor } from '../../../application/console/authenticate-console-session';

/** What the auth middleware established for a request. */
export interface RequestAuth {
  project?: Project;
  apiKeyId?: string;
  user?: EndUser;
  /** Verified claims of the access token, for routes authenticated by one. */
  claims?: Record<string, unknown>;
  /** The console account and session of an admin route (auth kind 'console'). */
  console?: ConsoleActor;
}

export const authOf = (res: Response): RequestAuth => {
  res.locals.auth ??= {};
  return res.locals.auth as RequestAuth;
};

/** The project resolved from the API key; only called on routes whose contract says auth 'apiKey'. */
export function projectOf(res: Response): Project {
  const project = authOf(res).project;
  if (!project) throw new Error('route has no authenticated project');
  return project;
}

/** The Authorization header, read: absent, not a Bearer credential, or the Bearer token. */
export type AuthorizationHeader = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'bearer'; token: string };

export function readAuthorization(req: Request): AuthorizationHeader {
  const header = req.headers.authorization;
  if (!header?.trim()) return { kind: 'missing' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? { kind: 'bearer', token: match[1]! } : { kind: 'malformed' };
}

export function bearerToken(req: Request): string | null {
  const read = readAuthorization(req);
  return read.kind === 'bearer' ? read.token : null;
}

const RAW_BODY = Symbol('tollgate.rawBody');
type WithRawBody = Request & { [RAW_BODY]?: Buffer };

/** Keeps the exact bytes of the request body (routes whose contract metadata sets `rawBody`). */
export function keepRawBody(req: Request, raw: Buffer): void {
  (req as WithRawBody)[RAW_BODY] = raw;
}

/**
 * The exact bytes of the request body, as received (before any decoding), for checking a
 * signature over them; an empty Buffer when the request had no body. Only on routes whose
 * contract metadata sets `rawBody: true`: anywhere else it throws, since the bytes were not kept.
 */
export function rawBodyOf(req: Request): Buffer {
  const raw = (req as WithRawBody)[RAW_BODY];
  if (!raw) throw new Error('the raw body is kept only on routes whose contract metadata sets rawBody: true');
  return raw;
}

/** The client IP. X-Forwarded-For counts only when TRUST_PROXY says which proxies to believe. */
export const clientIp = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Where the request came from: IP, user agent (cut to 512 characters) and request id. */
export function originOf(req: Request, res: Response): RequestOrigin {
  const ua = req.headers['user-agent'];
  return {
    ip: clientIp(req),
    userAgent: typeof ua === 'string' && ua.length > 0 ? ua.slice(0, 512) : null,
    requestId: typeof res.locals.requestId === 'string' ? res.locals.requestId : null,
  };
}
