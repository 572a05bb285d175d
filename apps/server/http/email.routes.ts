import { initServer } from '@ts-rest/express';
import type express from 'express';
import type { Request, Response } from 'express';
import { emailContract } from '../../../contract/email.contract';
import type { ConsumeMagicLinkError, ConsumedMagicLink } from '../../../application/email/consume-magic-link';
import type { makeConfirmPasswordReset } from '../../../application/email/confirm-password-reset';
import type { makeRequestPasswordReset } from '../../../application/email/request-password-reset';
import type { makeResendVerificationCode } from '../../../application/email/resend-verification-code';
import type { makeSendMagicLink } from '../../../application/email/send-magic-link';
import type { makeSignInWithPassword } from '../../../application/email/sign-in-with-password';
import type { makeSignUpWithPassword } from '../../../application/email/sign-up-with-password';
import type { makeVerifyEmailCode } from '../../../application/email/verify-email-code';
import { withQuery } from '../../../domain/email/rules';
import { DEFAULT_LOCALE, localeFromAcceptLanguage, type Locale } from '../../../domain/locale';
import type { RequestOrigin } from '../../../application/ports/request-origin';
import type { Result } from '../../../domain/result';
import type { I18nextEmailRenderer, LinkPageKind } from '../../../infrastructure/mail/i18next-email-renderer';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { clientIp, originOf, projectOf } from './request-context';
import { toPublicUser, toSignInResponse } from './sign-in-response';

/** Where the link in a magic-link email points. */
export const MAGIC_LINK_VERIFY_PATH = '/api/proxy/email/magic-link/verify';

export interface EmailRouteDeps {
  signUp: ReturnType<typeof makeSignUpWithPassword>;
  signIn: ReturnType<typeof makeSignInWithPassword>;
  verifyCode: ReturnType<typeof makeVerifyEmailCode>;
  resendCode: ReturnType<typeof makeResendVerificationCode>;
  requestReset: ReturnType<typeof makeRequestPasswordReset>;
  confirmReset: ReturnType<typeof makeConfirmPasswordReset>;
  sendMagicLink: ReturnType<typeof makeSendMagicLink>;
}

const s = initServer();

const acceptLanguage = (req: Request): string | null => {
  const h = req.headers['accept-language'];
  return typeof h === 'string' ? h : null;
};

const success = () => ({ status: 200 as const, body: { success: true as const } });

/** The fields every email endpoint hands its use case: project, address, callback URL, locale, client. */
const emailRequestOf = (req: Request, res: Response, body: { email: string; callback_url: string; locale?: string }) => ({
  project: projectOf(res),
  email: body.email,
  callbackUrl: body.callback_url,
  locale: body.locale ?? null,
  acceptLanguage: acceptLanguage(req),
  ip: clientIp(req),
  origin: originOf(req, res),
});

/**
 * The email endpoints. Each one hands the request's fields to its use case, which checks them
 * (provider, callback URL, mail delivery, locale, email), applies the rate limits and does the
 * work; the answer is rendered here.
 */
export function makeEmailRoutes(deps: EmailRouteDeps) {
  return s.router(emailContract, {
    signup: async ({ body, req, res }) => {
      const r = await deps.signUp({ ...emailRequestOf(req, res, body), password: body.password, name: body.name ?? null });
      return r.ok ? { status: 200, body: toSignInResponse(r.value) } : failureResponse(res, r);
    },

    signin: async ({ body, req, res }) => {
      const r = await deps.signIn({ ...emailRequestOf(req, res, body), password: body.password });
      return r.ok ? { status: 200, body: toSignInResponse(r.value) } : failureResponse(res, r);
    },

    verify: async ({ body, req, res }) => {
      const r = await deps.verifyCode({ project: projectOf(res), email: body.email, code: body.code, locale: body.locale ?? null, ip: clientIp(req) });
      return r.ok ? { status: 200, body: { success: true as const, user: toPublicUser(r.value) } } : failureResponse(res, r);
    },

    resendVerification: async ({ body, req, res }) => {
      const r = await deps.resendCode(emailRequestOf(req, res, body));
      return r.ok ? success() : failureResponse(res, r);
    },

    resetPassword: async ({ body, req, res }) => {
      const r = await deps.requestReset(emailRequestOf(req, res, body));
      return r.ok ? success() : failureResponse(res, r);
    },

    confirmPasswordReset: async ({ body, req, res }) => {
      const r = await deps.confirmReset({
        project: projectOf(res),
        token: body.token,
        password: body.password,
        locale: body.locale ?? null,
        origin: originOf(req, res),
      });
      return r.ok ? success() : errorResponse(r.error);
    },

    sendMagicLink: async ({ body, req, res }) => {
      const r = await deps.sendMagicLink(emailRequestOf(req, res, body));
      return r.ok ? success() : failureResponse(res, r);
    },
  });
}

export interface MagicLinkEndpointDeps {
  consume: (token: string, origin: RequestOrigin) => Promise<{ result: Result<ConsumedMagicLink, ConsumeMagicLinkError>; locale: Locale | null }>;
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
const PREVIEW_AGENTS = new RegExp(
  [
    'Slackbot',
    'facebookexternalhit',
    'Facebot',
    'Twitterbot',
    'WhatsApp',
    'TelegramBot',
    'Discordbot',
    'LinkedInBot',
    'SkypeUriPreview',
    'Iframely',
    'Embedly',
    'redditbot',
    'Pinterestbot',
    'vkShare',
    'Googlebot',
    'bingbot',
    'Applebot',
  ].join('|'),
  'i',
);

const isPrefetch = (req: Request): boolean =>
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

      const { result, locale } = await deps.consume(token, originOf(req, res));
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
