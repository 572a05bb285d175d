import { z } from 'zod';
import type { RouteAuth } from '../common';
import { adminErrors } from './admin.errors';
import { auditErrors } from './audit.errors';
import { billingErrors } from './billing.errors';
import { consoleErrors } from './console.errors';
import { emailErrors } from './email.errors';
import { authErrors, edgeErrors, projectGateErrors, requestErrors } from './http.errors';
import { mfaErrors } from './mfa.errors';
import { oauthErrors } from './oauth.errors';
import { organizationsErrors } from './organizations.errors';
import { overviewErrors } from './overview.errors';
import { passkeyErrors } from './passkeys.errors';
import { sessionsErrors } from './sessions.errors';
import type { ErrorEntry, ErrorStatus } from './types';
import { usageErrors } from './usage.errors';
import { webhooksErrors } from './webhooks.errors';

/**
 * Every error Tollgate answers, by stable code: its status and its message (the spec's wording
 * where the spec gives one). The server answers from it, the CLI words its failures with it, and
 * each route of the contract declares the codes it can answer (`errors(...)`), so clients switch
 * on `code` with the compiler's help. Features keep their own table and spread it here, once
 * (test/unit/error-codes.test.ts refuses a code defined twice).
 */
export const ERRORS = {
  ...requestErrors,
  ...edgeErrors,
  ...authErrors,
  ...projectGateErrors,
  ...emailErrors,
  ...oauthErrors,
  ...mfaErrors,
  ...adminErrors,
  ...auditErrors,
  ...billingErrors,
  ...webhooksErrors,
  ...consoleErrors,
  ...sessionsErrors,
  ...organizationsErrors,
  ...passkeyErrors,
  ...usageErrors,
  ...overviewErrors,
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;
/** The status an error code answers. */
export type StatusOf<C extends ErrorCode> = (typeof ERRORS)[C]['status'];
/** The codes among `C` that answer status `S`. */
export type CodesWithStatus<C extends ErrorCode, S extends ErrorStatus> = C extends ErrorCode ? (StatusOf<C> extends S ? C : never) : never;

/** The body of every error answer. */
export interface ErrorBody<C extends string = ErrorCode> {
  /** The message for people; the code's message from the table, sometimes naming the field at fault. */
  error: string;
  /** Stable, machine-readable; switch on this. */
  code: C;
  /** What was wrong and how to fix it, when Tollgate knows (e.g. the Authorization header is missing). */
  hint?: string;
}

/** The zod schema of an error body whose code is one of `C`. */
export type ErrorBodySchema<C extends string> = z.ZodObject<{
  error: z.ZodString;
  code: z.ZodEnum<[C, ...C[]]>;
  hint: z.ZodOptional<z.ZodString>;
}>;

const errorBodySchema = <C extends string>(codes: [C, ...C[]]): ErrorBodySchema<C> =>
  z
    .object({
      error: z.string().describe('Message for people'),
      code: z.enum(codes).describe('Stable error code'),
      hint: z.string().optional().describe('What was wrong and how to fix it, when known'),
    })
    .describe(`Error: ${codes.join(', ')}`);

/** The error responses of a route that can answer the codes `C`: one schema per status they use. */
export type ErrorResponses<C extends ErrorCode> = { readonly [S in StatusOf<C>]: ErrorBodySchema<CodesWithStatus<C, S>> };

/**
 * Declares the error answers of a route: `responses: { 200: Ok, ...errors(...BODY_ROUTE_ERRORS, 'invalid_email') }`.
 * Each status the codes use gets `{ error: string, code: enum of that status's codes, hint?: string }`;
 * statuses no code uses are not declared (the server cannot answer them: strictStatusCodes).
 */
export function errors<C extends ErrorCode>(...codes: readonly C[]): ErrorResponses<C> {
  const byStatus = new Map<ErrorStatus, C[]>();
  for (const code of new Set(codes)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Partial<Record<ErrorStatus, ErrorBodySchema<C>>> = {};
  for (const [status, list] of byStatus) responses[status] = errorBodySchema(list as [C, ...C[]]);
  return responses as ErrorResponses<C>;
}

/**
 * What the HTTP edge can answer on any route that takes a request body (JSON, or a form where
 * declared); `invalid_characters` for a string (in the body, the query or the path) holding NUL or
 * an unpaired surrogate.
 */
export const BODY_ROUTE_ERRORS = [
  'invalid_request',
  'invalid_characters',
  'malformed_json',
  'payload_too_large',
  'unsupported_media_type',
  'internal_error',
] as const;
/** What the HTTP edge can answer on a route without a body (GET): its path or query fails the schema or holds NUL, a fault. */
export const QUERY_ROUTE_ERRORS = ['invalid_request', 'invalid_characters', 'internal_error'] as const;

/**
 * What each auth kind answers before the handler runs. A route declares the codes of its kind
 * (`...AUTH_ERRORS.apiKey`); a new kind must say what it answers, or this fails to compile.
 */
export const AUTH_ERRORS = {
  /** A missing, malformed, unknown or revoked key; an inactive project (404, unless the route allows it and checks later). */
  apiKey: ['invalid_api_key', 'project_inactive'],
  /** A missing, malformed, invalid or expired access token, or one of a disabled user. */
  user: ['invalid_access_token'],
  /** Either refusal, by what the Bearer credential looks like (a key `tg_...`, or anything else); an inactive project. */
  userOrApiKey: ['invalid_access_token', 'invalid_api_key', 'project_inactive'],
  /** No console session cookie, or an expired or signed-out one; a state-changing call without the session's x-csrf-token. */
  console: ['console_session_required', 'csrf_token_invalid'],
  none: [],
} as const satisfies { readonly [K in RouteAuth]: readonly ErrorCode[] };

/**
 * A code's message with the offending value put in, for callers that know it (the CLI):
 * `messageWith('invalid_callback_url', '"ftp://x"')` is `Invalid callback URL "ftp://x": it must be ...`.
 * The detail goes before the first colon of the message, or at its end; `tail` is appended.
 */
export function messageWith(code: ErrorCode, detail?: string, tail = ''): string {
  const message: string = ERRORS[code].message;
  if (!detail) return message + tail;
  const colon = message.indexOf(': ');
  return (colon < 0 ? `${message} ${detail}` : `${message.slice(0, colon)} ${detail}${message.slice(colon)}`) + tail;
}

export type { ErrorEntry, ErrorStatus };
export {
  adminErrors,
  auditErrors,
  authErrors,
  billingErrors,
  consoleErrors,
  edgeErrors,
  emailErrors,
  mfaErrors,
  oauthErrors,
  passkeyErrors,
  projectGateErrors,
  requestErrors,
  sessionsErrors,
  usageErrors,
  webhooksErrors,
};
