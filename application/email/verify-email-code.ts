import { isLive, isVerificationCodeShape, VERIFICATION_CODE_MAX_FAILURES } from '../../domain/email/rules';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { EmailAccountChanges, EmailAccountStore } from './email-account.store';
import type { EmailLimits } from './limits';
import { admitEmailRequest } from './request-checks';
import type { VerificationCodeStore } from './verification-code.store';

export interface VerifyEmailCodeDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  codes: VerificationCodeStore;
  crypto: Pick<TokenCrypto, 'hash' | 'safeEqual'>;
  clock: Clock;
  uow: UnitOfWork;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'verifyPerIp'>;
}

export interface VerifyEmailCodeInput {
  project: Project;
  email: string;
  code: string;
  locale: string | null;
  ip: string;
  /** The method whose toggle admits the request: email (the default), or passkey for a passkey sign-up's code. */
  provider?: 'email' | 'passkey';
}

export type VerifyEmailCodeError =
  | 'provider_not_enabled'
  | 'unsupported_locale'
  | 'invalid_email'
  | 'invalid_verification_code'
  | 'verification_code_expired'
  | 'verification_code_invalidated';

/**
 * After the request checks and the limit per IP, checks a 6-digit code: right, within 5 minutes, and before the 3rd failure (which invalidates
 * it). The code is consumed by one atomic statement, so concurrent correct submissions yield one
 * success; the account's email becomes verified in the same transaction.
 */
export function makeVerifyEmailCode(deps: VerifyEmailCodeDeps) {
  return async (input: VerifyEmailCodeInput): Promise<Result<EndUser, VerifyEmailCodeError> | RateLimited> => {
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      { provider: input.provider ?? 'email', locale: input.locale, email: input.email },
      () => [['verify:ip', input.ip, deps.limits.verifyPerIp]],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;

    const account = await deps.accounts.findByLoginEmail(input.project.id, email.key);
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
      if (locale && locale !== user.locale) changes.locale = locale;
      await deps.accounts.update(input.project.id, user.id, changes, now);
      return ok({ ...user, emailVerified: true, locale: changes.locale ?? user.locale, updatedAt: now });
    });
  };
}
