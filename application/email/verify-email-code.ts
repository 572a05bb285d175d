import type { EmailAddress } from '../../domain/email-address';
import { isLive, isVerificationCodeShape, VERIFICATION_CODE_MAX_FAILURES } from '../../domain/email/rules';
import type { Locale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountChanges, EmailAccountStore } from './email-account.store';
import type { VerificationCodeStore } from './verification-code.store';

export interface VerifyEmailCodeDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  codes: VerificationCodeStore;
  crypto: Pick<TokenCrypto, 'hash' | 'safeEqual'>;
  clock: Clock;
  uow: UnitOfWork;
}

export type VerifyEmailCodeError = 'invalid_verification_code' | 'verification_code_expired' | 'verification_code_invalidated';

/**
 * Checks a 6-digit code: right, within 5 minutes, and before the 3rd failure (which invalidates
 * it). The code is consumed by one atomic statement, so concurrent correct submissions yield one
 * success; the account's email becomes verified in the same transaction.
 */
export function makeVerifyEmailCode(deps: VerifyEmailCodeDeps) {
  return async (input: { project: Project; email: EmailAddress; code: string; locale: Locale | null }): Promise<Result<EndUser, VerifyEmailCodeError>> => {
    const account = await deps.accounts.findByLoginEmail(input.project.id, input.email.key);
    if (!account) return err('invalid_verification_code');
    const { user } = account;
    const record = await deps.codes.find(input.project.id, user.id);
    if (!record || record.consumedAt) return err('invalid_verification_code');
    if (record.failedAttempts >= VERIFICATION_CODE_MAX_FAILURES) return err('verification_code_invalidated');
    const now = deps.clock.now();
    if (!isLive(record.expiresAt, now)) return err('verification_code_expired');

    const submitted = isVerificationCodeShape(input.code) ? deps.crypto.hash(input.code) : '';
    if (!deps.crypto.safeEqual(submitted, record.codeHash)) {
      const failures = await deps.codes.recordFailure(input.project.id, user.id, record.codeHash, VERIFICATION_CODE_MAX_FAILURES);
      return err(failures !== null && failures >= VERIFICATION_CODE_MAX_FAILURES ? 'verification_code_invalidated' : 'invalid_verification_code');
    }

    return deps.uow.transaction(async () => {
      if (!(await deps.codes.consume(input.project.id, user.id, record.codeHash, now, VERIFICATION_CODE_MAX_FAILURES))) {
        return err('invalid_verification_code');
      }
      const changes: EmailAccountChanges = { emailVerified: true };
      if (input.locale && input.locale !== user.locale) changes.locale = input.locale;
      await deps.accounts.update(input.project.id, user.id, changes, now);
      return ok({ ...user, emailVerified: true, locale: changes.locale ?? user.locale, updatedAt: now });
    });
  };
}
