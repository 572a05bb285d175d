import { z } from 'zod';
import { apiKeyHeaders, c, LocaleSchema, PublicUserSchema, shared, SignInResponseSchema, SuccessSchema } from './common';
import { AUTH_ERRORS, BODY_ROUTE_ERRORS, errors } from './errors';

const Email = z.string().max(1000).describe('Email address; trimmed and normalized (NFKC, lower-cased domain)');
const Password = z.string().max(4096).describe('8 to 128 characters, at least one letter and one number');
const CallbackUrl = z.string().max(2048).describe('Must be registered for the project (exact match)');
const Locale = LocaleSchema.optional().describe(
  'Language of the email (en, it, es, fr, de, pt, ja, ko, zh, nl, pl, ru, sv, da, nb, fi, ar, he, th, vi; a regional tag such as pt-BR counts as ' +
    "its language). Stored as the user's preference.",
);

/** What every email route can answer: the request, the API key, the provider toggle (email or magic-link), the locale. */
const ROUTE = [...BODY_ROUTE_ERRORS, ...AUTH_ERRORS.apiKey, 'provider_not_enabled', 'unsupported_locale'] as const;
/** Routes that take an email address and a callback URL. */
const ADDRESSED = [...ROUTE, 'invalid_email', 'callback_url_not_registered', 'rate_limited'] as const;
/** Routes that send an email: 503 without email delivery. */
const SENDS_MAIL = [...ADDRESSED, 'email_delivery_not_configured'] as const;
const PASSWORD_RULES = ['password_too_short', 'password_too_long', 'password_missing_letter', 'password_missing_number'] as const;

/**
 * Email authentication: email + password accounts, verification codes, password reset and magic
 * links. Every route takes the project's API key. The magic link in the email points to
 * GET /api/proxy/email/magic-link/verify?token=..., a browser endpoint outside this contract that
 * answers a 302 redirect or an HTML page.
 */
export const emailContract = c.router(
  shared({ auth: 'apiKey' }, apiKeyHeaders, {
    signup: {
      method: 'POST',
      path: '/api/proxy/email/signup',
      summary: 'Create an email + password account',
      description:
        'Creates the account (email_verified false), emails a 6-digit verification code (valid 5 minutes) and signs the user in: a JWT (5 minutes) ' +
        'and a refresh token, or an MFA challenge. 409 when the email is already registered. Rate-limited per email and per IP.',
      body: z.object({ email: Email, password: Password, name: z.string().max(200).nullish(), callback_url: CallbackUrl, locale: Locale }),
      responses: { 200: SignInResponseSchema, ...errors(...SENDS_MAIL, ...PASSWORD_RULES, 'email_already_registered') },
    },
    signin: {
      method: 'POST',
      path: '/api/proxy/email/signin',
      summary: 'Sign in with email and password',
      description:
        'Unknown email and wrong password both answer 401 "Invalid email or password", in the same time. Answers the same shape as signup with the ' +
        'current email_verified, or an MFA challenge. Rate-limited per email and per IP.',
      body: z.object({ email: Email, password: Password, callback_url: CallbackUrl, locale: Locale }),
      responses: { 200: SignInResponseSchema, ...errors(...ADDRESSED, 'invalid_credentials', 'account_disabled') },
    },
    verify: {
      method: 'POST',
      path: '/api/proxy/email/verify',
      summary: 'Verify the email address with the 6-digit code',
      description:
        'The code must be right, within 5 minutes, and before 3 failed attempts; the 3rd failure invalidates it (request a new one with ' +
        'verify/resend). A code works once.',
      body: z.object({ email: Email, code: z.string().max(100).describe('6 digits'), locale: Locale }),
      responses: {
        200: z.object({ success: z.literal(true), user: PublicUserSchema }),
        ...errors(...ROUTE, 'invalid_email', 'rate_limited', 'invalid_verification_code', 'verification_code_expired', 'verification_code_invalidated'),
      },
    },
    resendVerification: {
      method: 'POST',
      path: '/api/proxy/email/verify/resend',
      summary: 'Send a new verification code',
      description:
        'The new code replaces the previous one. Answers success for any email (unknown or already verified addresses get no email). Rate-limited ' +
        'per email: 429 with Retry-After.',
      body: z.object({ email: Email, callback_url: CallbackUrl, locale: Locale }),
      responses: { 200: SuccessSchema, ...errors(...SENDS_MAIL) },
    },
    resetPassword: {
      method: 'POST',
      path: '/api/proxy/email/reset-password',
      summary: 'Email a password reset link',
      description:
        'Always answers 200 {success:true}, whether or not the email has an account, in the same time. A known account gets a link to ' +
        'callback_url?token=<reset token>; the token lives 1 hour and works once.',
      body: z.object({ email: Email, callback_url: CallbackUrl, locale: Locale }),
      responses: { 200: SuccessSchema, ...errors(...SENDS_MAIL) },
    },
    confirmPasswordReset: {
      method: 'POST',
      path: '/api/proxy/email/reset-password/confirm',
      summary: 'Set a new password with a reset token',
      description: 'Password rules apply. The token is consumed; every refresh token of the user is revoked.',
      body: z.object({ token: z.string().max(512), password: Password, locale: Locale }),
      responses: { 200: SuccessSchema, ...errors(...ROUTE, ...PASSWORD_RULES, 'invalid_reset_token', 'reset_token_expired', 'reset_token_used') },
    },
    sendMagicLink: {
      method: 'POST',
      path: '/api/proxy/email/magic-link/send',
      summary: 'Email a magic sign-in link',
      description:
        'Emails a link to GET /api/proxy/email/magic-link/verify?token=... (15 minutes, single use). Following it signs the user in (creating the ' +
        'account when the email has none; email_verified becomes true) and redirects 302 to callback_url?token=<JWT> (provider magic-link, 15 ' +
        'minutes), or to callback_url?mfa_required=true&challenge=... when MFA applies. Rate-limited per email and per IP.',
      body: z.object({ email: Email, callback_url: CallbackUrl, locale: Locale }),
      responses: { 200: SuccessSchema, ...errors(...SENDS_MAIL) },
    },
  }),
  { strictStatusCodes: true },
);
