import path from 'node:path';
import type express from 'express';
import type { SignInGate } from '../../../application/auth/complete-primary-sign-in';
import { makeConfirmPasswordReset } from '../../../application/email/confirm-password-reset';
import { makeConsumeMagicLink } from '../../../application/email/consume-magic-link';
import { makeDeliverEmail } from '../../../application/email/deliver-email';
import { EMAIL_OUTBOX_TOPIC, type MailTransport } from '../../../application/mail/email-message';
import { makeIssuePasswordReset } from '../../../application/email/issue-password-reset';
import { makeIssueVerificationCode } from '../../../application/email/issue-verification-code';
import { makeRequestPasswordReset, PASSWORD_RESET_REQUEST_TOPIC } from '../../../application/email/request-password-reset';
import { makeResendVerificationCode } from '../../../application/email/resend-verification-code';
import { makeSendMagicLink } from '../../../application/email/send-magic-link';
import { makeSignInWithPassword } from '../../../application/email/sign-in-with-password';
import { makeSignUpWithPassword } from '../../../application/email/sign-up-with-password';
import { makeVerifyEmailCode } from '../../../application/email/verify-email-code';
import { makeDeliverSecurityNotice } from '../../../application/notifications/deliver-security-notice';
import { SECURITY_NOTICE_TOPIC } from '../../../application/notifications/security-notice';
import type { Logger } from '../../../application/ports/logger';
import { handleTopic, type TopicHandler } from '../../../application/ports/outbox';
import { FileMailTransport } from '../../../infrastructure/mail/file-mail-transport';
import { I18nextEmailRenderer } from '../../../infrastructure/mail/i18next-email-renderer';
import { SmtpMailTransport } from '../../../infrastructure/mail/smtp-mail-transport';
import { emailLimits, type Config } from '../config';
import { type EmailRouteDeps, makeEmailRoutes, MAGIC_LINK_VERIFY_PATH, type MagicLinkEndpointDeps, mountMagicLinkEndpoint } from '../http/email.routes';
import type { Core } from '../core';
import type { Feature } from './types';

/** Whether this deployment can send email (SMTP_URL, or the file transport outside production). */
export const isMailConfigured = (config: Config): boolean => config.SMTP_URL !== undefined || config.NODE_ENV !== 'production';

/**
 * How email leaves: SMTP when SMTP_URL is set; otherwise .eml files under the data directory in
 * development and test (the code or link also logged in development), and nothing in production,
 * where the email endpoints then answer 503. Building it opens no connection.
 */
export function buildMailTransport(config: Config, logger: Logger): MailTransport | null {
  const from = config.MAIL_FROM;
  const domain = new URL(config.publicUrl).hostname || 'tollgate';
  if (config.SMTP_URL) return new SmtpMailTransport(config.SMTP_URL, from, domain);
  if (config.NODE_ENV === 'production') return null;
  const dir = path.resolve(config.TOLLGATE_DATA_DIR, 'mail');
  return new FileMailTransport(dir, from, domain, logger, config.NODE_ENV === 'development');
}

export interface EmailFeatureInput {
  core: Core;
  config: Config;
  /** The primary sign-in gate (MFA policy) sign-up, sign-in and magic links pass through. */
  signInGate: SignInGate;
}

export interface EmailFeature extends Feature {
  useCases: EmailRouteDeps & { consumeMagicLink: MagicLinkEndpointDeps['consume'] };
  routes: { email: ReturnType<typeof makeEmailRoutes> };
  /** The magic link's browser end (GET/HEAD /api/proxy/email/magic-link/verify). */
  pages: (app: express.Express) => void;
  /** Renders and sends the mail the use cases enqueue and the security notices; issues password resets off the request path. */
  handlers: TopicHandler[];
  /** The deployment's mail transport (null where no mail can be sent), which the console's mail goes through too. */
  mail: MailTransport | null;
  /** Closes the mail transport's pooled connections. */
  close: () => Promise<void> | void;
}

/**
 * Wires email sign-in: accounts, verification codes, password reset and magic links (use cases,
 * routes, the magic link's page), and the delivery of the deployment's mail through one transport.
 */
export function wireEmail({ core, config, signInGate }: EmailFeatureInput): EmailFeature {
  const { db, clock, crypto, outbox, passwordHasher: hasher, stores, rateLimiter } = core;
  const { accounts, verificationCodes: codes, passwordResets: resets, magicLinks: links } = stores.email;
  const mail = buildMailTransport(config, core.logger);
  // False in production without SMTP_URL: the endpoints that send email answer 503.
  const mailConfigured = isMailConfigured(config);
  const completePrimarySignIn = signInGate;
  const issueVerificationCode = makeIssueVerificationCode({ codes, outbox, crypto, clock });
  const limits = emailLimits(config);

  const useCases: EmailFeature['useCases'] = {
    signUp: makeSignUpWithPassword({
      accounts,
      issueVerificationCode,
      completePrimarySignIn,
      hasher,
      crypto,
      clock,
      uow: db,
      audit: core.audit,
      rateLimiter,
      limits,
      mailConfigured,
    }),
    signIn: makeSignInWithPassword({ accounts, completePrimarySignIn, hasher, crypto, clock, uow: db, audit: core.audit, rateLimiter, limits }),
    verifyCode: makeVerifyEmailCode({ accounts, codes, crypto, clock, uow: db, rateLimiter, limits }),
    resendCode: makeResendVerificationCode({ accounts, issueVerificationCode, clock, uow: db, rateLimiter, limits, mailConfigured }),
    requestReset: makeRequestPasswordReset({ outbox, audit: core.audit, clock, uow: db, rateLimiter, limits, mailConfigured }),
    confirmReset: makeConfirmPasswordReset({
      accounts,
      resets,
      refreshTokens: stores.refreshTokens,
      hasher,
      crypto,
      audit: core.audit,
      notify: core.securityNotices.notify,
      clock,
      uow: db,
    }),
    sendMagicLink: makeSendMagicLink({
      accounts,
      links,
      outbox,
      crypto,
      clock,
      uow: db,
      verifyUrl: core.config.publicUrl + MAGIC_LINK_VERIFY_PATH,
      rateLimiter,
      limits,
      mailConfigured,
    }),
    consumeMagicLink: makeConsumeMagicLink({
      links,
      accounts,
      users: stores.users,
      projects: stores.projects,
      completePrimarySignIn,
      crypto,
      audit: core.audit,
      clock,
      uow: db,
    }),
  };
  const renderer = new I18nextEmailRenderer();
  const deliverEmail = mail ? makeDeliverEmail({ renderer, transport: mail }) : null;
  const deliverNotice = mail ? makeDeliverSecurityNotice({ projects: stores.projects, users: stores.users, renderer, transport: mail }) : null;
  const issuePasswordReset = makeIssuePasswordReset({ projects: stores.projects, accounts, resets, outbox, crypto, clock, uow: db });
  return {
    useCases,
    routes: { email: makeEmailRoutes(useCases) },
    pages: (app) => mountMagicLinkEndpoint(app, { consume: useCases.consumeMagicLink, renderer }),
    handlers: [
      handleTopic(EMAIL_OUTBOX_TOPIC, async (message, { messageId }) => {
        if (!deliverEmail) throw new Error('Email delivery is not configured');
        await deliverEmail({ ...message }, messageId);
      }),
      handleTopic(PASSWORD_RESET_REQUEST_TOPIC, (request, { messageId }) => issuePasswordReset({ ...request }, messageId)),
      handleTopic(SECURITY_NOTICE_TOPIC, async (notice, { messageId }) => {
        if (!deliverNotice) throw new Error('Email delivery is not configured');
        await deliverNotice(notice, messageId);
      }),
    ],
    mail,
    close: () => mail?.close?.(),
  };
}
