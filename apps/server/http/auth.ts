import type { Request, Response } from 'express';
import type { RouteMetadata } from '../../../contract/common';
import type { Project } from '../../../domain/project';
import type { EndUser } from '../../../domain/user';
import type { ErrorCode } from './errors';
import { authOf, bearerToken } from './request-context';

export type RouteAuthenticator = (req: Request, res: Response, metadata: RouteMetadata) => Promise<ErrorCode | null>;

/** Authenticates an end user by the Bearer credential of a `user` route. */
export type UserAuthenticator = (
  token: string,
  options?: { enrollmentChallenge?: boolean },
) => Promise<{ project: Project; user: EndUser; claims: Record<string, unknown> } | null>;

export interface RouteAuthDeps {
  authenticateApiKey: (key: string | null) => Promise<{ ok: true; value: { project: Project; keyId: string } } | { ok: false; error: 'invalid_api_key' }>;
  authenticateAccessToken: UserAuthenticator;
}

/**
 * Applies the `auth` declared in a route's contract metadata before the request is validated, so
 * that a bad credential answers 401 whatever the body holds.
 */
export function makeRouteAuthenticator(deps: RouteAuthDeps): RouteAuthenticator {
  return async (req, res, metadata) => {
    const auth = authOf(res);
    switch (metadata.auth) {
      case 'none':
        return null;
      case 'apiKey': {
        const result = await deps.authenticateApiKey(bearerToken(req));
        if (!result.ok) return 'invalid_api_key';
        auth.project = result.value.project;
        auth.apiKeyId = result.value.keyId;
        if (!metadata.allowInactiveProject && !result.value.project.active) return 'project_inactive';
        return null;
      }
      case 'user': {
        const token = bearerToken(req);
        const found = token ? await deps.authenticateAccessToken(token, { enrollmentChallenge: metadata.enrollmentChallenge === true }) : null;
        if (!found) return 'invalid_access_token';
        auth.project = found.project;
        auth.user = found.user;
        auth.claims = found.claims;
        return null;
      }
    }
  };
}
