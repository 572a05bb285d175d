import type { EmailAddress } from '../../domain/email-address';
import { resolveLocale, type Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import type { Clock } from '../ports/clock';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountStore } from './email-account.store';
import type { IssueVerificationCode } from './issue-verification-code';

export interface ResendVerificationCodeDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  issueVerificationCode: IssueVerificationCode;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * Sends a new verification code, which replaces the previous one. Unknown, disabled and already
 * verified accounts get no email, and the caller answers the same either way.
 */
export function makeResendVerificationCode(deps: ResendVerificationCodeDeps) {
  return async (input: { project: Project; email: EmailAddress; locale: Locale | null; acceptLanguage: string | null }): Promise<{ sent: boolean }> => {
    const account = await deps.accounts.findByLoginEmail(input.project.id, input.email.key);
    if (!account || account.user.disabled || account.user.emailVerified || account.user.email === null) return { sent: false };
    const user = { ...account.user, email: account.user.email };
    const locale = resolveLocale({
      requested: input.locale,
      stored: user.locale,
      acceptLanguage: input.acceptLanguage,
      projectDefault: input.project.settings.defaultLocale,
    });
    await deps.uow.transaction(async () => {
      if (input.locale && input.locale !== user.locale) await deps.accounts.update(input.project.id, user.id, { locale: input.locale }, deps.clock.now());
      await deps.issueVerificationCode({ project: input.project, user, locale });
    });
    return { sent: true };
  };
}
