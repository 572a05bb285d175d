import type { Request, Response } from 'express';
import type { Project } from '../../../domain/project';
import type { EndUser } from '../../../domain/user';

/** What the auth middleware established for a request. */
export interface RequestAuth {
  project?: Project;
  apiKeyId?: string;
  user?: EndUser;
  /** Verified claims of the access token, for routes authenticated by one. */
  claims?: Record<string, unknown>;
}

export const authOf = (res: Response): RequestAuth => (res.locals.auth ??= {}) as RequestAuth;

/** The project resolved from the API key; only called on routes whose contract says auth 'apiKey'. */
export function projectOf(res: Response): Project {
  const project = authOf(res).project;
  if (!project) throw new Error('route has no authenticated project');
  return project;
}

export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** The client IP. X-Forwarded-For counts only when TRUST_PROXY says which proxies to believe. */
export const clientIp = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';
