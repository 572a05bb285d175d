import { type AppRoute, initContract } from '@ts-rest/core';
import { z } from 'zod';

/** The ts-rest contract builder (its type named, so that declarations of the contract can be emitted). */
export const c: ReturnType<typeof initContract> = initContract();

/**
 * How a route authenticates its caller; the server reads it from the contract's metadata and
 * looks the kind up in its registry of authenticators (apps/server/http/auth.ts), which must have
 * one for every kind named here. A new kind also says which codes it answers (AUTH_ERRORS in
 * contract/errors).
 */
export type RouteAuth =
  /** Authorization: Bearer <API_KEY>; the project is resolved from the key. */
  | 'apiKey'
  /** Authorization: Bearer <ACCESS_TOKEN>, a JWT issued by Tollgate to an end user. */
  | 'user'
  /**
   * Either of the two: an end user's access token (the project and the user from the token), or
   * the project's API key (the project from the key, no user). Public reads a browser and a
   * project server both make (the billing catalog).
   */
  | 'userOrApiKey'
  /**
   * A console session: the HttpOnly `tollgate_console` cookie, and on state-changing methods (all
   * but GET and HEAD) the session's CSRF token in the `x-csrf-token` header. The admin API.
   */
  | 'console'
  | 'none';

export interface RouteMetadata {
  auth: RouteAuth;
  /** With auth 'apiKey': the handler itself refuses inactive projects, later in its order of checks. */
  allowInactiveProject?: boolean;
  /**
   * With auth 'user': the MFA enrollment challenge of a sign-in under the required policy is
   * accepted as the Bearer credential too (the setup endpoints); every other route refuses it.
   */
  enrollmentChallenge?: boolean;
  /**
   * The handler (or the route's authenticator, e.g. a payment processor's signature) needs the
   * exact bytes of the request body: the server keeps them beside the parsed JSON (`rawBodyOf(req)`),
   * and reads them before authenticating the caller.
   */
  rawBody?: boolean;
  /**
   * The route honours an `Idempotency-Key` header (routes of a signed-in user that change
   * something at a payment processor): the same key and request within 24 hours answer the stored
   * status and body again, with `Idempotent-Replayed: true`; the same key with another request 422;
   * while the first is running 409. The server applies it around the handler (apps/server/http/idempotency.ts).
   */
  idempotent?: boolean;
  /** The route takes batches: its body may be up to `BULK_BODY_LIMIT` (1 MB by default) rather than `BODY_LIMIT` (usage events). */
  bulkBody?: boolean;
  /**
   * The route is deprecated (docs/api-compatibility.md): it answers as before, and every answer
   * carries `Deprecation` (since when, RFC 9745), `Sunset` (when it may be removed, RFC 8594; at
   * least 6 months later) and, with `link`, a `Link` to what replaces it (rel="deprecation").
   * Dates as YYYY-MM-DD (UTC).
   */
  deprecated?: RouteDeprecation;
}

/** When a route was deprecated, when it may be removed, and where to read about it (the changelog's entry). */
export interface RouteDeprecation {
  since: string;
  sunset: string;
  link?: string;
}

export const meta = (m: RouteMetadata) => m;

/** Metadata a route adds to what it shares with its router: anything but the auth kind (`idempotent`, `enrollmentChallenge`, ...). */
export type RouteExtras = Omit<RouteMetadata, 'auth'>;

/**
 * A route given to `shared`: either it names its own auth kind (its metadata is all its own, its
 * headers too, if any), or it takes the router's, adding at most some metadata.
 */
type SharingRoute = AppRoute & ({ metadata: RouteMetadata } | { headers?: never; metadata?: RouteExtras });

/** The routes given to `shared`, each with what it takes from the router. */
export type SharedRoutes<R, H> = {
  [K in keyof R]: R[K] extends { metadata: RouteMetadata } ? R[K] : Omit<R[K], 'metadata'> & { headers: H; metadata: RouteMetadata };
};

/**
 * The routes of a router, stating once what they share: the metadata (the auth kind, ...) and the
 * headers that carry the credential. Each route whose metadata names no auth kind gets the headers,
 * and the metadata with its own merged over it (as ts-rest merges a router's `metadata` option);
 * a route that names its own auth kind keeps its own metadata and headers (or none). ts-rest's
 * `baseHeaders` and `metadata` router options are not used: a route could not drop the base
 * headers, and the merged metadata would no longer be typed `RouteMetadata`.
 *
 *   c.router(shared({ auth: 'console' }, consoleHeaders, { list: { method: 'GET', ... }, ... }))
 */
export function shared<H extends z.AnyZodObject, R extends Record<string, SharingRoute>>(
  metadata: RouteMetadata,
  headers: H,
  // R is inferred from the routes as written; reading each route property by property too (as c.router does) keeps the
  // literal types of paths and summaries, and NoInfer keeps c.router's parameter type from widening them.
  routes: R & { [K in keyof R]: { [P in keyof R[K]]: R[K][P] } },
): NoInfer<SharedRoutes<R, H>> {
  const entries = Object.entries(routes as Record<string, { metadata?: Partial<RouteMetadata> }>).map(([key, route]) => {
    const own = route.metadata;
    if (own?.auth !== undefined) return [key, route];
    return [key, { ...route, headers, metadata: { ...metadata, ...own } }];
  });
  return Object.fromEntries(entries) as SharedRoutes<R, H>;
}

/** The headers of a console route: the session cookie, and the CSRF token on state-changing calls. */
export const consoleHeaders = z.object({
  'x-csrf-token': z.string().optional().describe('The csrf_token of GET /api/admin/session; required on every method but GET'),
});

export const apiKeyHeaders = z.object({
  authorization: z.string().optional().describe('Bearer <API_KEY>'),
});
export const userTokenHeaders = z.object({
  authorization: z.string().optional().describe('Bearer <ACCESS_TOKEN>'),
});

/** Either credential of a `userOrApiKey` route. */
export const userOrApiKeyHeaders = z.object({
  authorization: z.string().optional().describe('Bearer <ACCESS_TOKEN> (an end user) or Bearer <API_KEY> (the project server)'),
});

/** The headers of an `idempotent` route of a signed-in user. */
export const idempotentUserHeaders = userTokenHeaders.extend({
  'idempotency-key': z
    .string()
    .optional()
    .describe(
      'Optional, 1 to 255 printable ASCII characters (a UUID v4 is a good choice). Retrying with the same key and the same request within 24 hours ' +
        'answers the first answer again (header Idempotent-Replayed: true) instead of doing it twice.',
    ),
});

export const LocaleSchema = z
  .string()
  .min(2)
  .max(35)
  .describe('One of the supported locales (en, it, es, fr, de, pt, ja, ko, zh, nl, pl, ru, sv, da, nb, fi, ar, he, th, vi)');

export const SuccessSchema = z.object({ success: z.literal(true) });

export const PublicUserSchema = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  email_verified: z.boolean(),
});

export const SessionResponseSchema = z.object({
  token: z.string().describe('Access JWT (HS256, project signing secret)'),
  refresh_token: z.string(),
  user: PublicUserSchema,
});

/** The MFA methods; `passkey` only where the project allows passkeys as a second factor. */
export const MFA_METHOD_VALUES = ['totp', 'sms', 'backup_codes', 'passkey'] as const;

export const MfaChallengeResponseSchema = z.object({
  mfa_required: z.literal(true),
  challenge: z.string().describe('Opaque; expires in 5 minutes'),
  methods: z.array(z.enum(MFA_METHOD_VALUES)).describe("The user's enrolled methods"),
  enrollment_required: z.boolean().optional().describe('Required policy and nothing enrolled yet'),
});

/** What every primary sign-in answers: a session, or an MFA challenge (no JWT). */
export const SignInResponseSchema = z.union([SessionResponseSchema, MfaChallengeResponseSchema]);
