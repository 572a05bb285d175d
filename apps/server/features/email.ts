import path from 'node:path';
import type { CompletePrimarySignIn } from '../../../application/email/deps';
import { makeConfirmPasswordReset } from '../../../application/email/confirm-password-reset';
import { makeConsumeMagicLink } from '../../../application/email/consume-magic-link';
import { makeDeliverEmail } from '../../../application/email/deliver-email';
import { EMAIL_OUTBOX_TOPIC, type MailTransport } from '../../../application/email/email-message';
import { makeIssuePasswordReset } from '../../../application/email/issue-password-reset';
import { makeIssueVerificationCode } from '../../../application/email/issue-verification-code';
import { makeRequestPasswordReset, PASSWORD_RESET_REQUEST_TOPIC } from '../../../application/email/request-password-reset';
import { makeResendVerificationCode } from '../../../application/email/resend-verification-code';
import { makeSendMagicLink } from '../../../application/email/send-magic-link';
import { makeSignInWithPassword } from '../../../application/email/sign-in-with-password';
import { makeSignUpWithPassword } from '../../../application/email/sign-up-with-password';
import { makeVerifyEmailCode } from '../../../application/email/verify-email-code';
import type { Logger } from '../../../application/ports/logger';
import { handleTopic } from '../../../application/ports/outbox';
import { FileMailTransport } from '../../../infrastructure/mail/file-mail-transport';
import { I18nextEmailRenderer } from '../../../infrastructure/mail/i18next-email-renderer';
import { SmtpMailTransport } from '../../../infrastructure/mail/smtp-mail-transport';
import { PostgresEmailAccountStore } from '../../../infrastructure/persistence/postgres-email-account.store';
import { PostgresEmailMagicLinkStore } from '../../../infrastructure/persistence/postgres-email-magic-link.store';
import { PostgresEmailPasswordResetStore } from '../../../infrastructure/persistence/postgres-email-password-reset.store';
import { PostgresEmailVerificationCodeStore } from '../../../infrastructure/persistence/postgres-email-verification-code.store';
import type { Config } from '../config';
import { makeEmailRoutes, MAGIC_LINK_VERIFY_PATH, mountMagicLinkEndpoint } from '../http/email.routes';
import type { CoreServices } from '../tollgate';
import type { FeatureWiring } from './types';

/**
 * How email leaves: SMTP when SMTP_URL is set; otherwise .eml files under the data directory in
 * development and test (the code or link also logged in development), and nothing in production,
 * where the email endpoints then answer 503.
 */
export function buildMailTransport(config: Config, logger: Logger): MailTransport | null {
  const from = config.MAIL_FROM;
  const domain = new URL(config.publicUrl).hostname || 'tollgate';
  if (config.SMTP_URL) return new SmtpMailTransport(config.SMTP_URL, from, domain);
  if (config.NODE_ENV === 'production') return null;
  const dir = path.resolve(config.TOLLGATE_DATA_DIR, 'mail');
  return new FileMailTransport(dir, from, domain, logger, config.NODE_ENV === 'development');
}

/** Wires the email feature: its use cases, adapters and routes. */
export function wireEmail(core: CoreServices) {
  const { db, clock, crypto, outbox, passwordHasher: hasher, stores } = core;
  const transport = buildMailTransport(core.config, core.logger);
  if (!transport) core.logger.warn({}, 'SMTP_URL is not set: email endpoints answer 503 until email delivery is configured');
  const renderer = new I18nextEmailRenderer();

  const accounts = new PostgresEmailAccountStore(db);
  const codes = new PostgresEmailVerificationCodeStore(db);
  const resets = new PostgresEmailPasswordResetStore(db);
  const links = new PostgresEmailMagicLinkStore(db);
  // Read at call time: the MFA feature may replace the gate after this wiring ran.
  const completePrimarySignIn: CompletePrimarySignIn = (input) => core.useCases.completePrimarySignIn(input);
  const issueVerificationCode = makeIssueVerificationCode({ codes, outbox, crypto, clock });

  const routes = {
    email: makeEmailRoutes({
      signUp: makeSignUpWithPassword({ accounts, issueVerificationCode, completePrimarySignIn, hasher, crypto, clock, uow: db }),
      signIn: makeSignInWithPassword({ accounts, completePrimarySignIn, hasher, crypto, clock, uow: db }),
      verifyCode: makeVerifyEmailCode({ accounts, codes, crypto, clock, uow: db }),
      resendCode: makeResendVerificationCode({ accounts, issueVerificationCode, clock, uow: db }),
      requestReset: makeRequestPasswordReset({ outbox, clock, uow: db }),
      confirmReset: makeConfirmPasswordReset({ accounts, resets, refreshTokens: stores.refreshTokens, hasher, crypto, clock, uow: db }),
      sendMagicLink: makeSendMagicLink({ accounts, links, outbox, crypto, clock, uow: db, verifyUrl: core.config.publicUrl + MAGIC_LINK_VERIFY_PATH }),
      rateLimiter: core.rateLimiter,
      mailConfigured: transport !== null,
    }),
  };

  const deliverEmail = transport ? makeDeliverEmail({ renderer, transport }) : null;
  const consumeMagicLink = makeConsumeMagicLink({
    links,
    accounts,
    users: stores.users,
    projects: stores.projects,
    completePrimarySignIn,
    crypto,
    clock,
    uow: db,
  });

  const issuePasswordReset = makeIssuePasswordReset({ projects: stores.projects, accounts, resets, outbox, crypto, clock, uow: db });

  const wiring: FeatureWiring<typeof routes> = {
    routes,
    jobHandlers: [
      handleTopic(EMAIL_OUTBOX_TOPIC, async (message, { messageId }) => {
        if (!deliverEmail) throw new Error('Email delivery is not configured');
        await deliverEmail({ ...message }, messageId);
      }),
      handleTopic(PASSWORD_RESET_REQUEST_TOPIC, (request, { messageId }) => issuePasswordReset({ ...request }, messageId)),
    ],
    mountExtra: (app) => mountMagicLinkEndpoint(app, { consume: consumeMagicLink, renderer }),
    close: () => transport?.close?.(),
  };
  return wiring;
}
