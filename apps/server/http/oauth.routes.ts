import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import { oauthContract } from '../../../contract/oauth.contract';
import type { CompleteAuthorizationError, CompleteAuthorizationInput } from '../../../application/oauth/complete-authorization';
import type { StartAuthorizationError, StartAuthorizationInput } from '../../../application/oauth/start-authorization';
import type { RateLimiter, RateLimitRule } from '../../../application/ports/rate-limiter';
import { initiationRefusal } from '../../../domain/oauth/initiation';
import { isOAuthProvider } from '../../../domain/providers';
import type { Result } from '../../../domain/result';
import { errorResponse } from './errors';
import { tooManyRequests } from './rate-limit';
import { authOf, clientIp, projectOf } from './request-context';

const s = initServer();

export interface OAuthRouteDeps {
  startAuthorization: (input: StartAuthorizationInput) => Promise<Result<{ redirectUrl: string }, StartAuthorizationError>>;
  completeAuthorization: (input: CompleteAuthorizationInput) => Promise<Result<{ redirectUrl: string }, CompleteAuthorizationError>>;
  rateLimiter: Pick<RateLimiter, 'consume'>;
  initiationRateLimit: RateLimitRule;
}

interface InitiationFields {
  callback_url?: string;
  state?: string;
  locale?: string;
  link_to?: string;
  link_token?: string;
}


export function makeOAuthRoutes(deps: OAuthRouteDeps) {
  /** The initiation checks in the spec's order (the API key was checked first, by the route's auth). */
  const initiate = async (provider: string, f: InitiationFields, req: Request, res: Response) => {
    if (!f.callback_url) return errorResponse('missing_callback_url');
    if (!isOAuthProvider(provider)) return errorResponse('unsupported_provider');
    const project = projectOf(res);
    const refusal = initiationRefusal(project, provider, f.callback_url);
    if (refusal) return errorResponse(refusal);
    const decision = await deps.rateLimiter.consume(`oauth-init:${authOf(res).apiKeyId}:${clientIp(req)}`, deps.initiationRateLimit);
    if (!decision.allowed) return tooManyRequests(res, decision);
    const started = await deps.startAuthorization({
      project,
      provider,
      callbackUrl: f.callback_url,
      clientState: f.state ?? null,
      locale: f.locale ?? null,
      linkTo: f.link_to || null,
      linkToken: f.link_token || null,
    });
    if (!started.ok) return errorResponse(started.error);
    return { redirectUrl: started.value.redirectUrl };
  };

  const callback = async (provider: string, f: { code?: string; state?: string; user?: string }, res: Response) => {
    if (!isOAuthProvider(provider)) return errorResponse('unsupported_provider');
    const done = await deps.completeAuthorization({ provider, code: f.code ?? null, state: f.state ?? null, userField: f.user ?? null });
    if (!done.ok) return errorResponse(done.error);
    res.setHeader('location', done.value.redirectUrl);
    return { status: 302 as const, body: undefined };
  };

  return s.router(oauthContract, {
    start: async ({ params, body, req, res }) => {
      const r = await initiate(params.provider, body, req, res);
      if ('status' in r) return r;
      return { status: 200, body: { redirect_url: r.redirectUrl } };
    },
    startRedirect: async ({ params, query, req, res }) => {
      const r = await initiate(params.provider, query, req, res);
      if ('status' in r) return r;
      res.setHeader('location', r.redirectUrl);
      return { status: 302, body: undefined };
    },
    callback: async ({ params, query, res }) => callback(params.provider, query, res),
    callbackPost: async ({ params, body, res }) => callback(params.provider, body, res),
  });
}
