import type { z } from 'zod';
import type { TollgateClient } from '../../../contract';
import type { AuthenticationResponseSchema, RegistrationResponseSchema } from '../../../contract/webauthn';
import { errorOf, fetchOrThrow, isTollgateError, TollgateError } from './errors';
import { headerOf, readNodeBody, type NextFunction, type NodeRequestLike, type NodeResponseLike } from './http';
import type { BrowserSession, TollgateUser } from './types';

/** The browser's WebAuthn answers, passed to Tollgate as they came (it validates them). */
type AuthenticationResponse = z.infer<typeof AuthenticationResponseSchema>;
type RegistrationResponse = z.infer<typeof RegistrationResponseSchema>;

/**
 * The routes a browser talks to on the project's own server (Tollgate's sign-in and refresh
 * routes take the project's API key, which never leaves the server):
 *
 *   POST <mount>/session/signup    {email, password, name?, locale?}  -> session | MFA challenge
 *   POST <mount>/session/signin    {email, password, locale?}         -> session | MFA challenge
 *   POST <mount>/session/mfa       {challenge, code, method}          -> session
 *        (method passkey: {challenge, method, assertion} instead of a code)
 *   POST <mount>/session/mfa-passkey-options  {challenge}             -> {options} (the user's passkeys)
 *   POST <mount>/session/passkey-options      {email?}                -> {options} (no email: any passkey the browser holds)
 *   POST <mount>/session/passkey              {response}              -> session | MFA challenge
 *   POST <mount>/session/passkey-signup       {email, name?, locale?} -> {success: true} (a code is emailed)
 *   POST <mount>/session/passkey-signup-options  {email, code}        -> {options} (to register the first passkey)
 *   POST <mount>/session/passkey-signup-verify   {response, name?}    -> session | MFA challenge
 *   POST <mount>/session/refresh   (the cookie)                       -> session
 *   POST <mount>/session/signout   (the cookie)                       -> {success: true}
 *   POST <mount>/session/verify-email         {code} + Bearer        -> {success: true, user}
 *   POST <mount>/session/resend-verification  {} + Bearer            -> {success: true}
 *   GET|POST <mount>/api/proxy/billing/...  passed to Tollgate as they are, with the user's
 *        Bearer access token (the billing routes of a signed-in user; Tollgate answers no CORS);
 *        the catalog (plans, products) without a token is asked with the project's API key;
 *        among them the credit packs (GET billing/credit-packs, POST billing/credit-packs/<id>/checkout)
 *   GET|POST|PATCH|DELETE <mount>/api/proxy/organizations..., /api/proxy/organization-roles,
 *        /api/proxy/invitations...  the user's organization routes, passed the same way (an
 *        invitation without `callback_url` gets `callbackUrl`)
 *   GET|POST|PATCH|DELETE <mount>/api/proxy/passkeys, /api/proxy/passkeys/register/{options,verify},
 *        /api/proxy/passkeys/<id>  the user's passkeys (register, list, rename, delete), passed the
 *        same way; passkey sign-in and sign-up take the API key: they are the session routes above
 *   GET <mount>/api/proxy/usage?for=user|organization  the user's (or the active organization's)
 *        usage of every metered feature, passed the same way
 *
 * The email verification routes take the user's Bearer access token and verify the address of
 * its user (Tollgate's verify routes take the API key and any address).
 *
 * A session is `{token, expiresAt, user}`: the access token for the page's memory; the refresh
 * token goes into an HttpOnly, SameSite=Lax cookie scoped to `<mount>/session`, so page scripts
 * never see it. The session routes take JSON only (`content-type: application/json`), which a
 * cross-site form cannot send, and answer Tollgate's errors (`{error, code}`) as they are.
 */
export interface SessionRoutesOptions {
  /** A callback URL registered for the project (sign-up and sign-in name one; emails link to it). */
  callbackUrl: string;
  /** Name of the refresh-token cookie. Default `tollgate_session`. */
  cookieName?: string;
  /** Mark the cookie Secure. Default: when the request came over https. */
  secureCookie?: boolean;
  /** Cookie lifetime in seconds. Default 30 days (the session's absolute lifetime in Tollgate). */
  cookieMaxAgeSeconds?: number;
}

interface Deps {
  baseUrl: string;
  apiKey: string;
  client: TollgateClient;
  fetch: typeof fetch;
  verify(token: string): Promise<{ user: TollgateUser; expiresAt: string } | null>;
}

/** A request as the routes see it, whichever server it came from. */
interface RouteRequest {
  method: string;
  /** The path below the mount point, e.g. /session/signin. */
  path: string;
  search: string;
  mountPath: string;
  secure: boolean;
  clientIp: string | undefined;
  header(name: string): string | undefined;
  text(): Promise<string>;
}

interface RouteAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

const json = (status: number, body: unknown, headers: Record<string, string | string[]> = {}): RouteAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify(body),
});

/** Tollgate's routes of a signed-in user that are passed through: billing and usage, organizations with their invitations, and passkeys. */
const PROXIED = [
  /^\/api\/proxy\/billing\//,
  /^\/api\/proxy\/usage$/,
  /^\/api\/proxy\/(?:organizations|invitations)(?:\/|$)/,
  /^\/api\/proxy\/organization-roles$/,
  // The user's passkeys; not sign-in/... and sign-up/..., which take the API key (session routes).
  /^\/api\/proxy\/passkeys(?:\/register\/(?:options|verify)|\/(?!sign-)[^/]+)?$/,
];
/** An invitation sent by a user: its `callback_url` is the session routes' when the page sends none. */
const INVITE = /^\/api\/proxy\/organizations\/[^/]+\/invitations$/;
/** Request headers passed on to Tollgate's billing routes. */
const FORWARDED_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'accept-language'];
/** Catalog routes a visitor may read without a session (the server asks with its API key). */
const PUBLIC_CATALOG = ['/api/proxy/billing/plans', '/api/proxy/billing/products'];
/** Answer headers passed back to the browser. */
const FORWARDED_ANSWER_HEADERS = ['content-type', 'idempotent-replayed', 'retry-after', 'x-request-id'];

export interface SessionRoutes {
  /** Express / Connect middleware: `app.use('/tollgate', routes.express)`. Paths it does not serve go to `next()`. */
  express(req: NodeRequestLike, res: NodeResponseLike, next?: NextFunction): void;
  /**
   * For servers built on fetch's Request/Response (Hono, Next.js route handlers, Deno, Bun...):
   * the answer, or null for a path it does not serve. `mountPath` is where the routes live
   * (e.g. `/tollgate`); the request's path must start with it.
   */
  fetch(request: Request, mountPath: string): Promise<Response | null>;
}

export function makeSessionRoutes(deps: Deps, options: SessionRoutesOptions): SessionRoutes {
  const cookieName = options.cookieName ?? 'tollgate_session';
  const maxAge = options.cookieMaxAgeSeconds ?? 30 * 24 * 3600;

  const cookie = (req: RouteRequest, value: string, age: number) =>
    [
      `${cookieName}=${value}`,
      `Path=${req.mountPath.replace(/\/$/, '')}/session`,
      `Max-Age=${age}`,
      'HttpOnly',
      'SameSite=Lax',
      ...((options.secureCookie ?? req.secure) ? ['Secure'] : []),
    ].join('; ');
  const clearCookie = (req: RouteRequest) => cookie(req, '', 0);

  const refreshTokenOf = (req: RouteRequest): string | undefined => {
    for (const part of (req.header('cookie') ?? '').split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name === cookieName) return rest.join('=') || undefined;
    }
    return undefined;
  };

  /** The project server's own headers toward Tollgate: the client's address and language. */
  const upstreamHeaders = (req: RouteRequest): Record<string, string> => {
    const headers: Record<string, string> = {};
    const forwarded = [req.header('x-forwarded-for'), req.clientIp].filter(Boolean).join(', ');
    if (forwarded) headers['x-forwarded-for'] = forwarded;
    const language = req.header('accept-language');
    if (language) headers['accept-language'] = language;
    return headers;
  };

  /** A session answer from the tokens of a sign-in or refresh: the user and expiry checked with Tollgate. */
  async function sessionAnswer(req: RouteRequest, tokens: { token: string; refresh_token: string }): Promise<RouteAnswer> {
    const verified = await deps.verify(tokens.token);
    if (!verified) throw new TollgateError({ code: 'invalid_access_token', message: 'Tollgate did not accept the access token it issued', status: 401 });
    const session: BrowserSession = { token: tokens.token, expiresAt: verified.expiresAt, user: verified.user };
    return json(200, session, { 'set-cookie': cookie(req, tokens.refresh_token, maxAge) });
  }

  async function readJson(req: RouteRequest): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; answer: RouteAnswer }> {
    if (!/^application\/json\b/i.test(req.header('content-type') ?? '')) {
      return { ok: false, answer: json(415, { error: 'Send the body as JSON (content-type: application/json)', code: 'unsupported_media_type' }) };
    }
    const text = await req.text();
    try {
      const value: unknown = text ? JSON.parse(text) : {};
      if (value && typeof value === 'object' && !Array.isArray(value)) return { ok: true, value: value as Record<string, unknown> };
    } catch {
      // answered below
    }
    return { ok: false, answer: json(400, { error: 'The request body is not a JSON object', code: 'malformed_json' }) };
  }

  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  /** Tollgate's answer as it is (options, success, or its error). */
  const answer = (response: { status: number; body: unknown }) => json(response.status, response.body);

  /** The user of the request's Bearer access token, for the routes that act on their own address. */
  async function bearerUser(req: RouteRequest): Promise<TollgateUser | null> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
    return match ? ((await deps.verify(match[1]!))?.user ?? null) : null;
  }
  const signInFirst = () => json(401, { error: 'Sign in first: send Authorization: Bearer <ACCESS_TOKEN>', code: 'invalid_access_token' });
  const noEmail = () => json(400, { error: 'This account has no email address to verify', code: 'invalid_email' });

  /** A sign-in answer from Tollgate: a session (cookie set), an MFA challenge, or its error as it is. */
  async function signInAnswer(req: RouteRequest, response: { status: number; body: unknown }): Promise<RouteAnswer> {
    // 201: a sign-up with a passkey, which answers like a sign-in.
    if (response.status !== 200 && response.status !== 201) return json(response.status, response.body);
    const body = response.body as { token?: string; refresh_token?: string; mfa_required?: true };
    if (body.mfa_required) return json(200, body);
    return sessionAnswer(req, { token: body.token!, refresh_token: body.refresh_token! });
  }

  async function session(req: RouteRequest, action: string): Promise<RouteAnswer> {
    if (req.method !== 'POST') return json(405, { error: 'Use POST', code: 'method_not_allowed' }, { allow: 'POST' });
    const body = await readJson(req);
    if (!body.ok) return body.answer;
    const input = body.value;
    const extraHeaders = upstreamHeaders(req);
    switch (action) {
      case 'signup':
        return signInAnswer(
          req,
          await deps.client.email.signup({
            body: {
              email: str(input.email) ?? '',
              password: str(input.password) ?? '',
              name: str(input.name) ?? null,
              callback_url: options.callbackUrl,
              ...(str(input.locale) ? { locale: str(input.locale) } : {}),
            },
            extraHeaders,
          }),
        );
      case 'signin':
        return signInAnswer(
          req,
          await deps.client.email.signin({
            body: {
              email: str(input.email) ?? '',
              password: str(input.password) ?? '',
              callback_url: options.callbackUrl,
              ...(str(input.locale) ? { locale: str(input.locale) } : {}),
            },
            extraHeaders,
          }),
        );
      case 'mfa': {
        const challenge = str(input.challenge) ?? '';
        const body =
          input.method === 'passkey'
            ? { challenge, method: 'passkey' as const, assertion: input.assertion as AuthenticationResponse }
            : { challenge, code: str(input.code) ?? '', method: (str(input.method) ?? 'totp') as 'totp' };
        return signInAnswer(req, await deps.client.mfa.verify({ body, extraHeaders }));
      }
      // Passkeys: the ceremonies' options and answers, with the API key. The WebAuthn responses are
      // passed as the browser made them; Tollgate checks their shape and everything in them.
      case 'mfa-passkey-options':
        return answer(await deps.client.passkeySignIn.mfaOptions({ body: { challenge: str(input.challenge) ?? '' }, extraHeaders }));
      case 'passkey-options': {
        const email = str(input.email);
        return answer(await deps.client.passkeySignIn.signInOptions({ body: email ? { email } : {}, extraHeaders }));
      }
      case 'passkey':
        return signInAnswer(req, await deps.client.passkeySignIn.signInVerify({ body: { response: input.response as AuthenticationResponse }, extraHeaders }));
      case 'passkey-signup': {
        const locale = str(input.locale);
        return answer(
          await deps.client.passkeySignIn.signUp({
            body: { email: str(input.email) ?? '', name: str(input.name) ?? null, callback_url: options.callbackUrl, ...(locale ? { locale } : {}) },
            extraHeaders,
          }),
        );
      }
      case 'passkey-signup-options':
        return answer(await deps.client.passkeySignIn.signUpOptions({ body: { email: str(input.email) ?? '', code: str(input.code) ?? '' }, extraHeaders }));
      case 'passkey-signup-verify': {
        const name = str(input.name);
        return signInAnswer(
          req,
          await deps.client.passkeySignIn.signUpVerify({
            body: { response: input.response as RegistrationResponse, ...(name !== undefined ? { name } : {}) },
            extraHeaders,
          }),
        );
      }
      case 'refresh': {
        const refreshToken = refreshTokenOf(req);
        if (!refreshToken) return json(401, { error: 'No session: sign in first', code: 'not_signed_in' });
        const refreshed = await deps.client.session.refresh({ body: { refresh_token: refreshToken }, extraHeaders });
        if (refreshed.status !== 200) return json(refreshed.status, refreshed.body, refreshed.status === 401 ? { 'set-cookie': clearCookie(req) } : {});
        return sessionAnswer(req, refreshed.body);
      }
      case 'signout': {
        const refreshToken = refreshTokenOf(req);
        if (refreshToken) {
          const revoked = await deps.client.session.revoke({ body: { refresh_token: refreshToken }, extraHeaders });
          if (revoked.status !== 200) return json(revoked.status, revoked.body);
        }
        return json(200, { success: true }, { 'set-cookie': clearCookie(req) });
      }
      case 'verify-email': {
        const user = await bearerUser(req);
        if (!user) return signInFirst();
        if (!user.email) return noEmail();
        const locale = str(input.locale);
        const verified = await deps.client.email.verify({
          body: { email: user.email, code: str(input.code) ?? '', ...(locale ? { locale } : {}) },
          extraHeaders,
        });
        return json(verified.status, verified.body);
      }
      case 'resend-verification': {
        const user = await bearerUser(req);
        if (!user) return signInFirst();
        if (!user.email) return noEmail();
        const locale = str(input.locale);
        const sent = await deps.client.email.resendVerification({
          body: { email: user.email, callback_url: options.callbackUrl, ...(locale ? { locale } : {}) },
          extraHeaders,
        });
        return json(sent.status, sent.body);
      }
      default:
        return json(404, { error: 'Not found', code: 'not_found' });
    }
  }

  /** The body passed on: an invitation without a callback URL gets the session routes' one. */
  async function forwardedBody(req: RouteRequest): Promise<string> {
    const text = await req.text();
    if (req.method !== 'POST' || !INVITE.test(req.path)) return text;
    try {
      const body: unknown = text ? JSON.parse(text) : {};
      if (body && typeof body === 'object' && !Array.isArray(body) && !('callback_url' in body)) {
        return JSON.stringify({ ...body, callback_url: options.callbackUrl });
      }
    } catch {
      // Tollgate answers the malformed body.
    }
    return text;
  }

  async function proxy(req: RouteRequest): Promise<RouteAnswer> {
    const headers: Record<string, string> = upstreamHeaders(req);
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.header(name);
      if (value !== undefined) headers[name] = value;
    }
    // The catalog is public: a visitor who is not signed in sees the plans, asked with the key.
    if (headers.authorization === undefined && req.method === 'GET' && PUBLIC_CATALOG.includes(req.path)) headers.authorization = `Bearer ${deps.apiKey}`;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const upstream = await fetchOrThrow(deps.fetch, `${deps.baseUrl}${req.path}${req.search}`, {
      method: req.method,
      headers,
      ...(hasBody ? { body: await forwardedBody(req) } : {}),
    });
    const answerHeaders: Record<string, string> = { 'cache-control': 'no-store' };
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) answerHeaders[name] = value;
    }
    return { status: upstream.status, headers: answerHeaders, body: await upstream.text() };
  }

  async function route(req: RouteRequest): Promise<RouteAnswer | null> {
    try {
      const sessionMatch = /^\/session\/([a-z-]+)\/?$/.exec(req.path);
      if (sessionMatch) return await session(req, sessionMatch[1]!);
      if (PROXIED.some((prefix) => prefix.test(req.path))) return await proxy(req);
      return null;
    } catch (error) {
      if (isTollgateError(error)) return json(error.status || 502, error.toJSON());
      const failed = errorOf(502, null);
      return json(502, { error: `Tollgate could not be asked: ${(error as Error).message}`, code: failed.code });
    }
  }

  return {
    express(req, res, next) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const request: RouteRequest = {
        method: (req.method ?? 'GET').toUpperCase(),
        path: url.pathname,
        search: url.search,
        mountPath: req.baseUrl ?? '',
        secure: req.secure ?? req.socket?.encrypted === true,
        clientIp: req.ip ?? req.socket?.remoteAddress,
        header: (name) => headerOf(req.headers, name),
        text: () => readNodeBody(req),
      };
      route(request).then(
        (answer) => {
          if (!answer) {
            if (next) next();
            else {
              res.statusCode = 404;
              res.end();
            }
            return;
          }
          res.statusCode = answer.status;
          for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
          res.end(answer.body);
        },
        (error: unknown) => {
          if (next) return next(error);
          res.statusCode = 500;
          res.end();
        },
      );
    },
    async fetch(request, mountPath) {
      const url = new URL(request.url);
      const mount = mountPath.replace(/\/$/, '');
      if (!url.pathname.startsWith(`${mount}/`)) return null;
      const answer = await route({
        method: request.method.toUpperCase(),
        path: url.pathname.slice(mount.length),
        search: url.search,
        mountPath: mount,
        secure: url.protocol === 'https:',
        clientIp: undefined,
        header: (name) => request.headers.get(name) ?? undefined,
        text: () => request.text(),
      });
      if (!answer) return null;
      const headers = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      return new Response(answer.body, { status: answer.status, headers });
    },
  };
}
