import type { Request, Response } from 'express';
import type { RouteAuth, RouteMetadata } from '../../../contract/common';
import type { AUTH_ERRORS } from '../../../contract/errors';
import { API_KEY_PREFIX } from '../../../application/api-keys/create-api-key';
import type { Project } from '../../../domain/project';
import type { EndUser } from '../../../domain/user';
import { authOf, readAuthorization } from './request-context';
import type { ConsoleActor } from '../../../application/console/authenticate-console-session';

/** Why a request's credentials were refused: one of the codes its auth kind declares, and what was wrong. */
export interface AuthRefusal<C extends string = AuthErrorCode> {
  code: C;
  hint?: string;
}

/** Authenticates an end user by the Bearer credential of a `user` route. */
export type UserAuthenticator = (
  token: string,
  options?: { enrollmentChallenge?: boolean },
) => Promise<{ project: Project; user: EndUser; claims: Record<string, unknown> } | null>;

/** The codes an auth kind answers (AUTH_ERRORS in the contract, which every route of that kind declares). */
export type AuthErrorCodeOf<K extends RouteAuth> = (typeof AUTH_ERRORS)[K][number];
export type AuthErrorCode = AuthErrorCodeOf<RouteAuth>;

/**
 * Checks a request's credentials for one auth kind, records what they establish (`authOf(res)`:
 * the project, the user) and answers null, or refuses. It runs after ts-rest matched the route
 * and before the request is validated, so a bad credential answers 401 whatever the body holds;
 * on routes whose metadata sets `rawBody`, the body's exact bytes are already read (`rawBodyOf(req)`),
 * for credentials computed over them (a payment processor's signature).
 */
export type Authenticator<C extends string = AuthErrorCode> = (req: Request, res: Response, metadata: RouteMetadata) => Promise<AuthRefusal<C> | null>;

/**
 * One authenticator per auth kind the contract can name (RouteAuth), each answering only the
 * codes of its kind: a kind without an authenticator, or one answering an undeclared code, fails
 * to compile. The composition root assembles it.
 */
export type AuthenticatorRegistry = { readonly [K in RouteAuth]: Authenticator<AuthErrorCodeOf<K>> };

/** The authenticator of a route's kind, as named by its contract metadata. */
export const authenticatorFor = (registry: AuthenticatorRegistry, metadata: RouteMetadata): Authenticator => registry[metadata.auth] as Authenticator;

/** The use cases the built-in authenticators call. */
export interface RouteAuthDeps {
  authenticateApiKey: (key: string | null) => Promise<{ ok: true; value: { project: Project; keyId: string } } | { ok: false; error: 'invalid_api_key' }>;
  authenticateAccessToken: UserAuthenticator;
}

/** What a bad Authorization header lacked, said in the hint of the 401 (the message stays the spec's). */
function headerHint(req: Request, credential: '<API_KEY>' | '<ACCESS_TOKEN>'): { token: string } | { hint: string } {
  const read = readAuthorization(req);
  if (read.kind === 'missing') return { hint: `Missing Authorization header: send Authorization: Bearer ${credential}` };
  if (read.kind === 'malformed') return { hint: `Authorization must be Bearer ${credential}` };
  return { token: read.token };
}

const looksLikeJwt = (token: string) => token.startsWith('eyJ') && token.split('.').length === 3;

/** No credential: MFA verify and SMS send-code (the challenge identifies the attempt), the OAuth callbacks. */
export const noAuthentication: Authenticator<never> = async () => null;

/**
 * `Authorization: Bearer <API_KEY>`: the project is resolved from the key. An inactive project
 * answers 404 unless the route sets `allowInactiveProject` (and checks it later itself).
 */
export function apiKeyAuthenticator(authenticateApiKey: RouteAuthDeps['authenticateApiKey']): Authenticator<AuthErrorCodeOf<'apiKey'>> {
  return async (req, res, metadata) => {
    const header = headerHint(req, '<API_KEY>');
    if ('hint' in header) return { code: 'invalid_api_key', hint: header.hint };
    const result = await authenticateApiKey(header.token);
    if (!result.ok) {
      return looksLikeJwt(header.token)
        ? { code: 'invalid_api_key', hint: "This route takes the project's API key (tg_...), not an access token" }
        : { code: 'invalid_api_key' };
    }
    const auth = authOf(res);
    auth.project = result.value.project;
    auth.apiKeyId = result.value.keyId;
    if (!metadata.allowInactiveProject && !result.value.project.active) return { code: 'project_inactive' };
    return null;
  };
}

/**
 * `Authorization: Bearer <ACCESS_TOKEN>`, a JWT Tollgate issued to an end user. Routes whose
 * metadata sets `enrollmentChallenge` pass that option on: the authenticator given (MFA's) then
 * accepts an enrollment challenge in place of a token.
 */
export function accessTokenAuthenticator(authenticateAccessToken: RouteAuthDeps['authenticateAccessToken']): Authenticator<AuthErrorCodeOf<'user'>> {
  return async (req, res, metadata) => {
    const header = headerHint(req, '<ACCESS_TOKEN>');
    if ('hint' in header) return { code: 'invalid_access_token', hint: header.hint };
    const found = await authenticateAccessToken(header.token, { enrollmentChallenge: metadata.enrollmentChallenge === true });
    if (!found) {
      return header.token.startsWith(API_KEY_PREFIX)
        ? { code: 'invalid_access_token', hint: "This route takes an end user's access token, not the project's API key" }
        : { code: 'invalid_access_token' };
    }
    const auth = authOf(res);
    auth.project = found.project;
    auth.user = found.user;
    auth.claims = found.claims;
    return null;
  };
}

/**
 * `Authorization: Bearer <ACCESS_TOKEN>` or `Bearer <API_KEY>` (the billing catalog, read by a
 * browser and by a project server alike). What the credential looks like picks the check: a key
 * (`tg_...`) is checked as the project's API key, anything else as an end user's access token
 * (never an MFA enrollment challenge). A user establishes the project and the user; a key the
 * project alone, which must be active (404 otherwise).
 */
export function userOrApiKeyAuthenticator(
  authenticateAccessToken: RouteAuthDeps['authenticateAccessToken'],
  authenticateApiKey: RouteAuthDeps['authenticateApiKey'],
): Authenticator<AuthErrorCodeOf<'userOrApiKey'>> {
  return async (req, res) => {
    const read = readAuthorization(req);
    if (read.kind === 'missing')
      return { code: 'invalid_access_token', hint: 'Missing Authorization header: send Authorization: Bearer <ACCESS_TOKEN> or Bearer <API_KEY>' };
    if (read.kind === 'malformed') return { code: 'invalid_access_token', hint: 'Authorization must be Bearer <ACCESS_TOKEN> or Bearer <API_KEY>' };
    const auth = authOf(res);
    if (read.token.startsWith(API_KEY_PREFIX)) {
      const result = await authenticateApiKey(read.token);
      if (!result.ok) return { code: 'invalid_api_key' };
      auth.project = result.value.project;
      auth.apiKeyId = result.value.keyId;
      return result.value.project.active ? null : { code: 'project_inactive' };
    }
    const found = await authenticateAccessToken(read.token, { enrollmentChallenge: false });
    if (!found) return { code: 'invalid_access_token' };
    auth.project = found.project;
    auth.user = found.user;
    auth.claims = found.claims;
    return null;
  };
}

/** The console session cookie's name (HttpOnly, SameSite=Lax, Secure outside development and test). */
export const CONSOLE_COOKIE = 'tollgate_console';

/** One cookie's value from the Cookie header, or null. */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * A console session: the `tollgate_console` cookie names a live session (401 otherwise), and every
 * method but GET and HEAD carries that session's CSRF token in `x-csrf-token` (403 otherwise,
 * compared in constant time). The account goes into `authOf(res).console`.
 */
export function consoleSessionAuthenticator(
  authenticate: (token: string) => Promise<ConsoleActor | null>,
  safeEqual: (a: string, b: string) => boolean,
): Authenticator<AuthErrorCodeOf<'console'>> {
  return async (req, res) => {
    const token = readCookie(req, CONSOLE_COOKIE);
    if (!token) return { code: 'console_session_required', hint: 'Sign in at /dashboard; the console session travels in the tollgate_console cookie' };
    const actor = await authenticate(token);
    if (!actor) return { code: 'console_session_required' };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const sent = req.headers['x-csrf-token'];
      if (typeof sent !== 'string' || sent.length !== actor.csrfToken.length || !safeEqual(sent, actor.csrfToken)) {
        return { code: 'csrf_token_invalid' };
      }
    }
    authOf(res).console = actor;
    return null;
  };
}
