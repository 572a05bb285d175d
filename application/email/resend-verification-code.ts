import { resolveLocale } from '../../domain/locale';
import { ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountStore } from './email-account.store';
import type { IssueVerificationCode } from './issue-verification-code';
import type { EmailLimits } from './limits';
import { admitEmailRequest, type EmailRequestRefusal, type EmailRequestInput } from './request-checks';

export interface ResendVerificationCodeDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  issueVerificationCode: IssueVerificationCode;
  clock: Clock;
  uow: UnitOfWork;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'resendPerEmail'>;
  mailConfigured: boolean;
}

export type ResendVerificationCodeInput = Omit<EmailRequestInput, 'ip'>;

/**
 * Sends a new verification code, which replaces the previous one, after the request checks and
 * the limit per email. Unknown, disabled and already verified accounts get no email, and the
 * answer is the same either way.
 */
export function makeResendVerificationCode(deps: ResendVerificationCodeDeps) {
  return async (input: ResendVerificationCodeInput): Promise<Result<void, EmailRequestRefusal> | RateLimited> => {
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      {
        provider: 'email',
        callbackUrl: input.callbackUrl,
        mailConfigured: deps.mailConfigured,
        locale: input.locale,
        email: input.email,
      },
      (email) => [['resend:email', email.key, deps.limits.resendPerEmail]],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;

    const account = await deps.accounts.findByLoginEmail(input.project.id, email.key);
    if (!account || account.user.disabled || account.user.emailVerified || account.user.email === null) return ok(undefined);
    const user = { ...account.user, email: account.user.email };
    const mailLocale = resolveLocale({
      requested: locale,
      stored: user.locale,
      acceptLanguage: input.acceptLanguage,
      projectDefault: input.project.settings.defaultLocale,
    });
    await deps.uow.transaction(async () => {
      if (locale && locale !== user.locale) await deps.accounts.update(input.project.id, user.id, { locale }, deps.clock.now());
      await deps.issueVerificationCode({ project: input.project, user, locale: mailLocale });
    });
    return ok(undefined);
  };
}
