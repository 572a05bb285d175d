import { initServer } from '@ts-rest/express';
import type express from 'express';
import type { Request, Response } from 'express';
import { emailContract } from '../../../contract/email.contract';
import type { ConsumeMagicLinkError, ConsumedMagicLink } from '../../../application/email/consume-magic-link';
import type { RateLimiter, RateLimitRule } from '../../../application/ports/rate-limiter';
import type { makeConfirmPasswordReset } from '../../../application/email/confirm-password-reset';
import type { makeRequestPasswordReset } from '../../../application/email/request-password-reset';
import type { makeResendVerificationCode } from '../../../application/email/resend-verification-code';
import type { makeSendMagicLink } from '../../../application/email/send-magic-link';
import type { makeSignInWithPassword } from '../../../application/email/sign-in-with-password';
import type { makeSignUpWithPassword } from '../../../application/email/sign-up-with-password';
import type { makeVerifyEmailCode } from '../../../application/email/verify-email-code';
import { parseEmailAddress, type EmailAddress } from '../../../domain/email-address';
import { withQuery } from '../../../domain/email/rules';
import { DEFAULT_LOCALE, localeFromAcceptLanguage, matchLocale, type Locale } from '../../../domain/locale';
import { isCallbackUrlRegistered, isProviderEnabled, type Project } from '../../../domain/project';
import type { Provider } from '../../../domain/providers';
import type { Result } from '../../../domain/result';
import type { I18nextEmailRenderer, LinkPageKind } from '../../../infrastructure/mail/i18next-email-renderer';
import { errorResponse, type ErrorCode, type ErrorResponse } from './errors';
import { tooManyRequests } from './rate-limit';
import { clientIp, projectOf } from './request-context';
import { toSignInResponse } from './sign-in-response';

/** Where the link in a magic-link email points. */
export const MAGIC_LINK_VERIFY_PATH = '/api/proxy/email/magic-link/verify';

const MINUTE = 60_000;
/** Thresholds of the email endpoints' rate limits, per project. */
export const EMAIL_RATE_LIMITS = {
  signupPerEmail: { points: 5, windowMs: 60 * MINUTE },
  signupPerIp: { points: 30, windowMs: 60 * MINUTE },
  signinPerEmail: { points: 10, windowMs: 15 * MINUTE },
  signinPerIp: { points: 100, windowMs: 15 * MINUTE },
  verifyPerIp: { points: 100, windowMs: 15 * MINUTE },
  resendPerEmail: { points: 3, windowMs: 15 * MINUTE },
  resetPerEmail: { points: 5, windowMs: 60 * MINUTE },
  resetPerIp: { points: 30, windowMs: 15 * MINUTE },
  magicLinkPerEmail: { points: 5, windowMs: 15 * MINUTE },
  magicLinkPerIp: { points: 30, windowMs: 15 * MINUTE },
} as const satisfies Record<string, RateLimitRule>;

export interface EmailRouteDeps {
  signUp: ReturnType<typeof makeSignUpWithPassword>;
  signIn: ReturnType<typeof makeSignInWithPassword>;
  verifyCode: ReturnType<typeof makeVerifyEmailCode>;
  resendCode: ReturnType<typeof makeResendVerificationCode>;
  requestReset: ReturnType<typeof makeRequestPasswordReset>;
  confirmReset: ReturnType<typeof makeConfirmPasswordReset>;
  sendMagicLink: ReturnType<typeof makeSendMagicLink>;
  rateLimiter: Pick<RateLimiter, 'consume'>;
  /** False in production without SMTP_URL: the endpoints that send email answer 503. */
  mailConfigured: boolean;
}

const s = initServer();

type Failure<C extends ErrorCode = ErrorCode> = ErrorResponse<C>;
type Checked<T, C extends ErrorCode = ErrorCode> = { ok: true; value: T } | { ok: false; response: Failure<C> };
const fail = <C extends ErrorCode>(code: C): { ok: false; response: Failure<C> } => ({ ok: false, response: errorResponse(code) });

const acceptLanguage = (req: Request): string | null => {
  const h = req.headers['accept-language'];
  return typeof h === 'string' ? h : null;
};

/** The body's `locale`: a supported locale or a tag of a supported language (pt-BR -> pt); 400 otherwise. */
function bodyLocale(value: string | undefined): Checked<Locale | null, 'unsupported_locale'> {
  if (value === undefined) return { ok: true, value: null };
  const locale = matchLocale(value);
  return locale ? { ok: true, value: locale } : fail('unsupported_locale');
}

function emailOf(value: string): Checked<EmailAddress, 'invalid_email'> {
  const parsed = parseEmailAddress(value);
  return parsed.ok ? { ok: true, value: parsed.value } : fail('invalid_email');
}

/** Provider toggle, then the callback URL (exact match), as the OAuth proxy checks them. */
function checkProject(project: Project, provider: Provider): 'provider_not_enabled' | null;
function checkProject(project: Project, provider: Provider, callbackUrl: string | undefined): 'provider_not_enabled' | 'callback_url_not_registered' | null;
function checkProject(project: Project, provider: Provider, callbackUrl?: string): 'provider_not_enabled' | 'callback_url_not_registered' | null {
  if (!isProviderEnabled(project, provider)) return 'provider_not_enabled';
  if (callbackUrl !== undefined && !isCallbackUrlRegistered(project, callbackUrl)) return 'callback_url_not_registered';
  return null;
}

interface PrepareInput {
  provider: Provider;
  callbackUrl?: string;
  sendsMail: boolean;
  locale?: string;
  email: string;
}
/** What `prepare` can refuse, by its input: a callback URL to check, an email to send. */
type PrepareCode<I extends PrepareInput> =
  | 'provider_not_enabled'
  | 'unsupported_locale'
  | 'invalid_email'
  | (I extends { callbackUrl: string } ? 'callback_url_not_registered' : never)
  | (I extends { sendsMail: false } ? never : 'email_delivery_not_configured');

export function makeEmailRoutes(deps: EmailRouteDeps) {
  /** Consumes every rule; the first refusal becomes the 429 answer. */
  async function limit(res: Response, checks: Array<[string, RateLimitRule]>): Promise<Failure<'rate_limited'> | null> {
    for (const [key, rule] of checks) {
      const decision = await deps.rateLimiter.consume(key, rule);
      if (!decision.allowed) return tooManyRequests(res, decision);
    }
    return null;
  }

  /** Shared first steps: provider and callback URL, email delivery, locale, email address. */
  function prepare<I extends PrepareInput>(res: Response, input: I): Checked<{ project: Project; locale: Locale | null; email: EmailAddress }, PrepareCode<I>> {
    const project = projectOf(res);
    const refused = checkProject(project, input.provider, input.callbackUrl);
    if (refused) return fail(refused) as Checked<never, PrepareCode<I>>;
    if (input.sendsMail && !deps.mailConfigured) return fail('email_delivery_not_configured') as Checked<never, PrepareCode<I>>;
    const locale = bodyLocale(input.locale);
    if (!locale.ok) return locale;
    const email = emailOf(input.email);
    if (!email.ok) return email;
    return { ok: true, value: { project, locale: locale.value, email: email.value } };
  }

  const key = (project: Project, scope: string, value: string) => `${project.id}:email-${scope}:${value}`;

  return s.router(emailContract, {
    signup: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'email', callbackUrl: body.callback_url, sendsMail: true, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [
        [key(project, 'signup:ip', clientIp(req)), EMAIL_RATE_LIMITS.signupPerIp],
        [key(project, 'signup:email', email.key), EMAIL_RATE_LIMITS.signupPerEmail],
      ]);
      if (limited) return limited;
      const name = body.name?.trim() || null;
      const result = await deps.signUp({ project, email, password: body.password, name, locale, acceptLanguage: acceptLanguage(req) });
      if (!result.ok) return errorResponse(result.error);
      return { status: 200, body: toSignInResponse(result.value) };
    },

    signin: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'email', callbackUrl: body.callback_url, sendsMail: false, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [
        [key(project, 'signin:ip', clientIp(req)), EMAIL_RATE_LIMITS.signinPerIp],
        [key(project, 'signin:email', email.key), EMAIL_RATE_LIMITS.signinPerEmail],
      ]);
      if (limited) return limited;
      const result = await deps.signIn({ project, email, password: body.password, locale });
      if (!result.ok) return errorResponse(result.error);
      return { status: 200, body: toSignInResponse(result.value) };
    },

    verify: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'email', sendsMail: false, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [[key(project, 'verify:ip', clientIp(req)), EMAIL_RATE_LIMITS.verifyPerIp]]);
      if (limited) return limited;
      const result = await deps.verifyCode({ project, email, code: body.code, locale });
      if (!result.ok) return errorResponse(result.error);
      const u = result.value;
      return { status: 200, body: { success: true as const, user: { id: u.id, email: u.email, name: u.name, email_verified: u.emailVerified } } };
    },

    resendVerification: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'email', callbackUrl: body.callback_url, sendsMail: true, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [[key(project, 'resend:email', email.key), EMAIL_RATE_LIMITS.resendPerEmail]]);
      if (limited) return limited;
      await deps.resendCode({ project, email, locale, acceptLanguage: acceptLanguage(req) });
      return { status: 200, body: { success: true as const } };
    },

    resetPassword: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'email', callbackUrl: body.callback_url, sendsMail: true, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [[key(project, 'reset:ip', clientIp(req)), EMAIL_RATE_LIMITS.resetPerIp]]);
      if (limited) return limited;
      // Over the per-email limit the answer stays the same and no email leaves (no mail bombing,
      // and nothing to learn about the address).
      const perEmail = await deps.rateLimiter.consume(key(project, 'reset:email', email.key), EMAIL_RATE_LIMITS.resetPerEmail);
      if (perEmail.allowed) await deps.requestReset({ project, email, callbackUrl: body.callback_url, locale, acceptLanguage: acceptLanguage(req) });
      return { status: 200, body: { success: true as const } };
    },

    confirmPasswordReset: async ({ body, res }) => {
      const project = projectOf(res);
      const refused = checkProject(project, 'email');
      if (refused) return errorResponse(refused);
      const locale = bodyLocale(body.locale);
      if (!locale.ok) return locale.response;
      const result = await deps.confirmReset({ project, token: body.token, password: body.password, locale: locale.value });
      if (!result.ok) return errorResponse(result.error);
      return { status: 200, body: { success: true as const } };
    },

    sendMagicLink: async ({ body, req, res }) => {
      const p = prepare(res, { provider: 'magic-link', callbackUrl: body.callback_url, sendsMail: true, locale: body.locale, email: body.email });
      if (!p.ok) return p.response;
      const { project, email, locale } = p.value;
      const limited = await limit(res, [
        [key(project, 'magic-link:ip', clientIp(req)), EMAIL_RATE_LIMITS.magicLinkPerIp],
        [key(project, 'magic-link:email', email.key), EMAIL_RATE_LIMITS.magicLinkPerEmail],
      ]);
      if (limited) return limited;
      await deps.sendMagicLink({ project, email, callbackUrl: body.callback_url, locale, acceptLanguage: acceptLanguage(req) });
      return { status: 200, body: { success: true as const } };
    },
  });
}

export interface MagicLinkEndpointDeps {
  consume: (token: string) => Promise<{ result: Result<ConsumedMagicLink, ConsumeMagicLinkError>; locale: Locale | null }>;
  renderer: Pick<I18nextEmailRenderer, 'linkPage' | 'continuePage'>;
}

/** Link previews and speculative loads announce themselves with one of these. */
const PREFETCH_HEADERS: Array<[string, RegExp]> = [
  ['purpose', /prefetch|preview/i],
  ['sec-purpose', /prefetch|prerender/i],
  ['x-purpose', /prefetch|preview/i],
  ['x-moz', /prefetch/i],
];
/** Chat and social apps that fetch links to draw previews. */
const PREVIEW_AGENTS = /Slackbot|facebookexternalhit|Facebot|Twitterbot|WhatsApp|TelegramBot|Discordbot|LinkedInBot|SkypeUriPreview|Iframely|Embedly|redditbot|Pinterestbot|vkShare|Googlebot|bingbot|Applebot/i;

export const isPrefetch = (req: Request): boolean =>
  PREFETCH_HEADERS.some(([h, re]) => typeof req.headers[h] === 'string' && re.test(req.headers[h] as string)) ||
  PREVIEW_AGENTS.test(req.headers['user-agent'] ?? '');

/**
 * GET /api/proxy/email/magic-link/verify?token=... The browser end of a magic link: consumes the
 * token and redirects 302 to callback_url?token=<JWT> (or ?mfa_required=true&challenge=... when
 * MFA applies). HEAD requests and announced prefetches or link previews never consume it: HEAD
 * answers headers only, a preview gets a page with a button that follows the link. An invalid,
 * expired or used link answers a small localized HTML page.
 */
export function mountMagicLinkEndpoint(app: express.Express, deps: MagicLinkEndpointDeps): void {
  const headers = (res: Response) => {
    // Cache-Control: no-store and Referrer-Policy: no-referrer come with every answer (app.ts).
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  };
  const page = (res: Response, status: number, html: string) => {
    res.status(status).type('html').send(html);
  };

  app.head(MAGIC_LINK_VERIFY_PATH, (_req, res) => {
    headers(res);
    res.status(200).type('html').end();
  });

  app.get(MAGIC_LINK_VERIFY_PATH, async (req, res, next) => {
    try {
      headers(res);
      const fallbackLocale = localeFromAcceptLanguage(acceptLanguage(req)) ?? DEFAULT_LOCALE;
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      if (!token || token.length > 512) return page(res, 400, deps.renderer.linkPage('link_invalid', fallbackLocale));
      if (isPrefetch(req)) return page(res, 200, deps.renderer.continuePage(req.originalUrl, fallbackLocale));

      const { result, locale } = await deps.consume(token);
      if (!result.ok) {
        const kind: LinkPageKind = result.error;
        const status = kind === 'link_expired' || kind === 'link_used' ? 410 : kind === 'link_unavailable' ? 403 : 400;
        return page(res, status, deps.renderer.linkPage(kind, locale ?? fallbackLocale));
      }
      const { outcome, callbackUrl } = result.value;
      const target =
        outcome.kind === 'session'
          ? withQuery(callbackUrl, { token: outcome.session.token })
          : withQuery(callbackUrl, {
              mfa_required: 'true',
              challenge: outcome.challenge,
              ...(outcome.enrollmentRequired ? { enrollment_required: 'true' } : {}),
            });
      res.redirect(302, target);
    } catch (e) {
      next(e);
    }
  });
}
