import path from 'node:path';
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
import { handleTopic } from '../../../application/ports/outbox';
import { FileMailTransport } from '../../../infrastructure/mail/file-mail-transport';
import { I18nextEmailRenderer } from '../../../infrastructure/mail/i18next-email-renderer';
import { SmtpMailTransport } from '../../../infrastructure/mail/smtp-mail-transport';
import { PostgresEmailAccountStore } from '../../../infrastructure/persistence/postgres-email-account.store';
import { PostgresEmailMagicLinkStore } from '../../../infrastructure/persistence/postgres-email-magic-link.store';
import { PostgresEmailPasswordResetStore } from '../../../infrastructure/persistence/postgres-email-password-reset.store';
import { PostgresEmailVerificationCodeStore } from '../../../infrastructure/persistence/postgres-email-verification-code.store';
import { emailLimits, type Config } from '../config';
import { makeEmailRoutes, MAGIC_LINK_VERIFY_PATH, mountMagicLinkEndpoint } from '../http/email.routes';
import type { Core } from '../core';
import type { HttpFeature, JobsFeature } from './types';

/**
 * How email leaves: SMTP when SMTP_URL is set; otherwise .eml files under the data directory in
 * development and test (the code or link also logged in development), and nothing in production,
 * where the email endpoints then answer 503.
 */
/** Whether this deployment can send email (SMTP_URL, or the file transport outside production). */
export const isMailConfigured = (config: Config): boolean => config.SMTP_URL !== undefined || config.NODE_ENV !== 'production';

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
  /** False in production without SMTP_URL: the endpoints that send email answer 503. */
  mailConfigured: boolean;
}

/** Wires the email feature's routes and magic-link page: accounts, codes, reset, magic links. */
export function wireEmail({ core, config, signInGate, mailConfigured }: EmailFeatureInput) {
  const { db, clock, crypto, outbox, passwordHasher: hasher, stores, rateLimiter } = core;
  const accounts = new PostgresEmailAccountStore(db);
  const codes = new PostgresEmailVerificationCodeStore(db);
  const resets = new PostgresEmailPasswordResetStore(db);
  const links = new PostgresEmailMagicLinkStore(db);
  const completePrimarySignIn = signInGate;
  const issueVerificationCode = makeIssueVerificationCode({ codes, outbox, crypto, clock });
  const limits = emailLimits(config);

  const routes = {
    email: makeEmailRoutes({
      signUp: makeSignUpWithPassword({ accounts, issueVerificationCode, completePrimarySignIn, hasher, crypto, clock, uow: db, audit: core.audit, rateLimiter, limits, mailConfigured }),
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
    }),
  };

  const consumeMagicLink = makeConsumeMagicLink({
    links,
    accounts,
    users: stores.users,
    projects: stores.projects,
    completePrimarySignIn,
    crypto,
    audit: core.audit,
    clock,
    uow: db,
  });
  const renderer = new I18nextEmailRenderer();
  return {
    routes,
    pages: (app) => mountMagicLinkEndpoint(app, { consume: consumeMagicLink, renderer }),
  } satisfies HttpFeature<typeof routes>;
}

/**
 * Renders and sends the mail the email use cases enqueue and the security notifications, and
 * issues password resets off the request path.
 */
export function emailJobs(core: Core, transport: MailTransport | null): JobsFeature {
  const { db, clock, crypto, outbox, stores } = core;
  const renderer = new I18nextEmailRenderer();
  const deliverEmail = transport ? makeDeliverEmail({ renderer, transport }) : null;
  const deliverNotice = transport ? makeDeliverSecurityNotice({ projects: stores.projects, users: stores.users, renderer, transport }) : null;
  const issuePasswordReset = makeIssuePasswordReset({
    projects: stores.projects,
    accounts: new PostgresEmailAccountStore(db),
    resets: new PostgresEmailPasswordResetStore(db),
    outbox,
    crypto,
    clock,
    uow: db,
  });
  return {
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
    close: () => transport?.close?.(),
  };
}
