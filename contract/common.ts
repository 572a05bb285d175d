import { initContract } from '@ts-rest/core';
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
}

export const meta = (m: RouteMetadata) => m;

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
      'Optional, 1 to 255 printable ASCII characters (a UUID v4 is a good choice). Retrying with the same key and the same request within 24 hours answers the first answer again (header Idempotent-Replayed: true) instead of doing it twice.',
    ),
});

export const LocaleSchema = z.string().min(2).max(35).describe('One of the supported locales (en, it, es, fr, de, pt, ja, ko, zh, nl, pl, ru, sv, da, nb, fi, ar, he, th, vi)');

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

export const MfaChallengeResponseSchema = z.object({
  mfa_required: z.literal(true),
  challenge: z.string().describe('Opaque; expires in 5 minutes'),
  methods: z.array(z.enum(['totp', 'sms', 'backup_codes'])).describe("The user's enrolled methods"),
  enrollment_required: z.boolean().optional().describe('Required policy and nothing enrolled yet'),
});

/** What every primary sign-in answers: a session, or an MFA challenge (no JWT). */
export const SignInResponseSchema = z.union([SessionResponseSchema, MfaChallengeResponseSchema]);
