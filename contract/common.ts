import { initContract } from '@ts-rest/core';
import { z } from 'zod';

export const c = initContract();

/** Every error body: the spec's message word for word, plus a stable machine-readable code. */
export const ErrorSchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    code: z.string().describe('Stable error code'),
  })
  .describe('Error');
export type ErrorBody = z.infer<typeof ErrorSchema>;

/** Responses every route can give: bad request, bad credentials, rate limit, server fault. */
type CommonErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503;
// Declared with an explicit type: spreading an `as const` literal would turn its numeric keys
// into strings ("429"), and ts-rest would then refuse handlers that return those statuses.
export const commonErrors: { readonly [S in CommonErrorStatus]: typeof ErrorSchema } = {
  400: ErrorSchema,
  401: ErrorSchema,
  403: ErrorSchema,
  404: ErrorSchema,
  409: ErrorSchema,
  413: ErrorSchema,
  415: ErrorSchema,
  429: ErrorSchema,
  500: ErrorSchema,
  503: ErrorSchema,
};

/** How a route authenticates its caller; the server reads it from the contract's metadata. */
export type RouteAuth =
  /** Authorization: Bearer <API_KEY>; the project is resolved from the key. */
  | 'apiKey'
  /** Authorization: Bearer <ACCESS_TOKEN>, a JWT issued by Tollgate to an end user. */
  | 'user'
  | 'none';

export interface RouteMetadata {
  auth: RouteAuth;
  /** With auth 'apiKey': the handler itself refuses inactive projects, later in its order of checks. */
  allowInactiveProject?: boolean;
  /** The route answers something other than JSON (a redirect or a page). */
  nonJson?: boolean;
  /**
   * With auth 'user': the MFA enrollment challenge of a sign-in under the required policy is
   * accepted as the Bearer credential too (the setup endpoints); every other route refuses it.
   */
  enrollmentChallenge?: boolean;
}

export const meta = (m: RouteMetadata) => m;

export const apiKeyHeaders = z.object({
  authorization: z.string().optional().describe('Bearer <API_KEY>'),
});
export const userTokenHeaders = z.object({
  authorization: z.string().optional().describe('Bearer <ACCESS_TOKEN>'),
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
