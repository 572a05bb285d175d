import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import { oauthContract } from '../../../contract/oauth.contract';
import type { makeCompleteAuthorization } from '../../../application/oauth/complete-authorization';
import type { makeStartAuthorization } from '../../../application/oauth/start-authorization';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf, clientIp, originOf, projectOf } from './request-context';

const s = initServer();

export interface OAuthRouteDeps {
  startAuthorization: ReturnType<typeof makeStartAuthorization>;
  completeAuthorization: ReturnType<typeof makeCompleteAuthorization>;
}

interface InitiationFields {
  callback_url?: string;
  state?: string;
  locale?: string;
  link_to?: string;
  link_token?: string;
}

/** The API key the request authenticated with; only on routes whose contract says auth 'apiKey'. */
function apiKeyIdOf(res: Response): string {
  const id = authOf(res).apiKeyId;
  if (!id) throw new Error('route has no authenticated API key');
  return id;
}

/**
 * The OAuth proxy endpoints. The use cases check the request in the spec's order and apply the
 * initiation rate limit; these handlers only pass the fields in and render the redirect.
 */
export function makeOAuthRoutes(deps: OAuthRouteDeps) {
  const initiate = (provider: string, f: InitiationFields, req: Request, res: Response) =>
    deps.startAuthorization({
      project: projectOf(res),
      apiKeyId: apiKeyIdOf(res),
      ip: clientIp(req),
      provider,
      callbackUrl: f.callback_url ?? null,
      clientState: f.state ?? null,
      locale: f.locale ?? null,
      linkTo: f.link_to ?? null,
      linkToken: f.link_token ?? null,
    });

  const callback = async (provider: string, f: { code?: string; state?: string; user?: string }, req: Request, res: Response) => {
    const done = await deps.completeAuthorization({
      provider,
      code: f.code ?? null,
      state: f.state ?? null,
      userField: f.user ?? null,
      origin: originOf(req, res),
    });
    if (!done.ok) return errorResponse(done.error);
    res.setHeader('location', done.value.redirectUrl);
    return { status: 302 as const, body: undefined };
  };

  return s.router(oauthContract, {
    start: async ({ params, body, req, res }) => {
      const r = await initiate(params.provider, body, req, res);
      return r.ok ? { status: 200, body: { redirect_url: r.value.redirectUrl } } : failureResponse(res, r);
    },
    startRedirect: async ({ params, query, req, res }) => {
      const r = await initiate(params.provider, query, req, res);
      if (!r.ok) return failureResponse(res, r);
      res.setHeader('location', r.value.redirectUrl);
      return { status: 302, body: undefined };
    },
    callback: async ({ params, query, req, res }) => callback(params.provider, query, req, res),
    callbackPost: async ({ params, body, req, res }) => callback(params.provider, body, req, res),
  });
}
