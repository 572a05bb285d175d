import { z } from 'zod';
import { c, consoleHeaders, meta, shared, SuccessSchema } from '../common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors, QUERY_ROUTE_ERRORS } from '../errors';
import {
  ConsoleSessionSchema,
  RedeemLinkBodySchema,
  SetPasswordBodySchema,
  SignInBodySchema,
  SignUpBodySchema,
  TotpCodeBodySchema,
  TotpSetupSchema,
} from './schemas';

const SECOND_STEP = ['console_totp_required', 'console_totp_invalid', 'rate_limited'] as const;
const PASSWORD_ERRORS = ['password_too_short', 'password_too_long', 'password_missing_letter', 'password_missing_number'] as const;

/**
 * Console sessions. Signing in (password, one-time link, or sign-up when open) sets the HttpOnly
 * `tollgate_console` cookie and answers the session with its CSRF token; those three take no
 * session yet, and only JSON (a cross-site form cannot send it), which is what guards them.
 */
export const adminSessionContract = c.router(
  shared({ auth: 'console' }, consoleHeaders, {
    get: {
      method: 'GET',
      path: '/api/admin/session',
      responses: { 200: ConsoleSessionSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console) },
      summary: 'The signed-in console account, its CSRF token and the sign-up mode',
    },
    signIn: {
      method: 'POST',
      path: '/api/admin/session',
      body: SignInBodySchema,
      responses: { 200: ConsoleSessionSchema, ...errors(...BODY_ROUTE_ERRORS, 'invalid_console_credentials', ...SECOND_STEP) },
      metadata: meta({ auth: 'none' }),
      summary: 'Sign in to the console with email and password (sets the session cookie)',
    },
    redeemLink: {
      method: 'POST',
      path: '/api/admin/session/link',
      body: RedeemLinkBodySchema,
      responses: { 200: ConsoleSessionSchema, ...errors(...BODY_ROUTE_ERRORS, 'sign_in_link_invalid', ...SECOND_STEP) },
      metadata: meta({ auth: 'none' }),
      summary: 'Sign in with a one-time sign-in link (single use, one hour)',
    },
    signupMode: {
      method: 'GET',
      path: '/api/admin/signup',
      responses: { 200: z.object({ signup_mode: z.enum(['invite', 'open']) }), ...errors(...QUERY_ROUTE_ERRORS) },
      metadata: meta({ auth: 'none' }),
      summary: 'Whether anyone may sign up on this deployment (open) or only those invited (invite); asked before signing in',
    },
    signUp: {
      method: 'POST',
      path: '/api/admin/signup',
      body: SignUpBodySchema,
      responses: {
        200: ConsoleSessionSchema,
        ...errors(...BODY_ROUTE_ERRORS, 'console_signup_closed', 'invalid_email', 'console_email_taken', 'rate_limited', ...PASSWORD_ERRORS),
      },
      metadata: meta({ auth: 'none' }),
      summary: 'Create a member account (only when TOLLGATE_CONSOLE_SIGNUP=open)',
    },
    signOut: {
      method: 'DELETE',
      path: '/api/admin/session',
      responses: { 200: SuccessSchema, ...errors(...QUERY_ROUTE_ERRORS, ...AUTH_ERRORS.console) },
      summary: 'Sign out: the session ends and its cookie is cleared',
    },
    setPassword: {
      method: 'PUT',
      path: '/api/admin/account/password',
      body: SetPasswordBodySchema,
      responses: { 200: SuccessSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, ...PASSWORD_ERRORS) },
      summary: "Set or change the signed-in account's password",
    },
    startTotp: {
      method: 'POST',
      path: '/api/admin/account/totp',
      body: c.noBody(),
      responses: { 200: TotpSetupSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'console_totp_already_enabled') },
      summary: 'Start setting up an authenticator app: a new secret and its QR code (pending until confirmed; starting again replaces it)',
    },
    confirmTotp: {
      method: 'POST',
      path: '/api/admin/account/totp/confirm',
      body: TotpCodeBodySchema,
      responses: {
        200: SuccessSchema,
        ...errors(
          ...BODY_ROUTE_ERRORS,
          ...AUTH_ERRORS.console,
          'console_totp_not_started',
          'console_totp_already_enabled',
          'console_totp_invalid',
          'rate_limited',
        ),
      },
      summary: 'Confirm the authenticator app with its first code: from now on every sign-in asks for a code',
    },
    disableTotp: {
      method: 'POST',
      path: '/api/admin/account/totp/disable',
      body: TotpCodeBodySchema,
      responses: { 200: SuccessSchema, ...errors(...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.console, 'console_totp_not_enabled', ...SECOND_STEP) },
      summary: 'Turn the authenticator app off, with a current code of it',
    },
  }),
);
