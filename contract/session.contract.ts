import { z } from 'zod';
import { apiKeyHeaders, c, shared, SignInResponseSchema, SuccessSchema } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors } from './errors';

/** What every route here can answer before its handler: the request, the API key. */
const ROUTE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey] as const;

const RefreshTokenBody = z.object({ refresh_token: z.string().max(512).describe('rt_...') });

export const sessionContract = c.router(
  shared({ auth: 'apiKey' }, apiKeyHeaders, {
    exchange: {
      method: 'POST',
      path: '/api/proxy/token/exchange',
      summary: 'Exchange an authorization code',
      description:
        "Redeems the code from the OAuth callback redirect (single use, 60 seconds, only with this project's API key) for an access token (JWT, 5 " +
        'minutes), a refresh token and the user; ' +
        "or an MFA challenge when the project's policy asks for one. A code redeemed twice fails (400) and revokes the sessions minted from it.",
      body: z.object({ code: z.string().max(512) }),
      responses: {
        200: SignInResponseSchema,
        ...errors(...ROUTE, 'invalid_authorization_code'),
      },
    },
    refresh: {
      method: 'POST',
      path: '/api/proxy/token/refresh',
      summary: 'Refresh a session',
      description:
        'Rotates the refresh token: answers a new access token and a new refresh token; the one presented stops working. Presenting a rotated ' +
        'token again revokes the whole session (401), ' +
        'except the immediately previous one within the reuse grace window (10 s by default), which answers the same new pair. Sessions end at ' +
        'their absolute lifetime (30 days by default) and after the idle timeout (14 days).',
      body: RefreshTokenBody,
      responses: {
        200: z.object({ token: z.string().describe('Access JWT, 5 minutes'), refresh_token: z.string() }),
        ...errors(...ROUTE, 'invalid_refresh_token', 'refresh_token_reused'),
      },
    },
    revoke: {
      method: 'POST',
      path: '/api/proxy/token/revoke',
      summary: 'Sign a session out',
      description: 'Revokes the session the refresh token belongs to (every token of it). Answers 200 whether or not the token was known.',
      body: RefreshTokenBody,
      responses: {
        200: SuccessSchema,
        ...errors(...ROUTE),
      },
    },
  }),
  { strictStatusCodes: true },
);
