import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, userTarget, type AuditLog } from '../audit/audit-log';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, TokenCrypto } from '../ports/crypto';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CompletePrimarySignIn } from './deps';
import type { EmailAccountChanges, EmailAccountStore } from './email-account.store';
import type { EmailLimits } from './limits';
import { admitEmailRequest, type EmailRequestRefusal, type EmailRequestInput } from './request-checks';

export interface SignInWithPasswordDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>;
  completePrimarySignIn: CompletePrimarySignIn;
  hasher: PasswordHasher;
  crypto: Pick<TokenCrypto, 'randomToken'>;
  clock: Clock;
  uow: UnitOfWork;
  audit: AuditLog;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'signinPerEmail' | 'signinPerIp'>;
}

export type SignInInput = Omit<EmailRequestInput, 'acceptLanguage'> & { password: string };

export type SignInError = Exclude<EmailRequestRefusal, 'email_delivery_not_configured'> | 'invalid_credentials' | 'account_disabled';

/**
 * Email + password sign-in. After the request checks (checkEmailRequest; sign-in sends no mail)
 * and the limits per IP and per email, an unknown email, an account without a password and a wrong password
 * all cost one argon2 verification (against a decoy hash made once) and give the same error.
 * A hash made with weaker parameters than today's is replaced on success.
 */
export function makeSignInWithPassword(deps: SignInWithPasswordDeps) {
  let decoy: Promise<string> | undefined;
  const decoyHash = () => (decoy ??= deps.hasher.hash(deps.crypto.randomToken(24)));
  // Made up front, so that the first unknown email does not take two hashes' time.
  decoyHash().catch(() => (decoy = undefined));

  /** `user.sign_in.failed` with the reason code, about the account when the email names one. */
  const failed = (input: SignInInput, error: SignInError | 'rate_limited', userId: string | null = null, emailKey: string | null = null) => {
    deps.audit.record(
      auditEntry(deps.clock.now(), input.project.id, 'user.sign_in.failed', {
        actor: userId ? userActor(userId) : { kind: 'user', id: null },
        target: userId ? userTarget(userId) : null,
        origin: input.origin,
        reason: error,
        details: { provider: 'email', ...(emailKey !== null && userId === null ? { email: emailKey } : {}) },
      }),
    );
  };

  return async (input: SignInInput): Promise<Result<PrimarySignInOutcome, SignInError> | RateLimited> => {
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      {
        provider: 'email',
        callbackUrl: input.callbackUrl,
        locale: input.locale,
        email: input.email,
      },
      (email) => [
        ['signin:ip', input.ip, deps.limits.signinPerIp],
        ['signin:email', email.key, deps.limits.signinPerEmail],
      ],
    );
    if (!admitted.ok) {
      failed(input, admitted.error);
      return admitted;
    }
    const { email, locale } = admitted.value;

    const account = await deps.accounts.findByLoginEmail(input.project.id, email.key);
    if (!account || account.passwordHash === null) {
      await deps.hasher.verify(await decoyHash(), input.password);
      failed(input, 'invalid_credentials', account?.user.id ?? null, email.key);
      return err('invalid_credentials');
    }
    if (!(await deps.hasher.verify(account.passwordHash, input.password))) {
      failed(input, 'invalid_credentials', account.user.id);
      return err('invalid_credentials');
    }
    if (account.user.disabled) {
      failed(input, 'account_disabled', account.user.id);
      return err('account_disabled');
    }

    const changes: EmailAccountChanges = {};
    if (account.user.provider !== 'email') changes.provider = 'email';
    if (locale && locale !== account.user.locale) changes.locale = locale;
    if (deps.hasher.needsRehash(account.passwordHash)) changes.passwordHash = await deps.hasher.hash(input.password);
    // The usual sign-in changes nothing on the user: no write, so no cache invalidation either.
    if (Object.keys(changes).length === 0) {
      return ok(await deps.completePrimarySignIn({ project: input.project, user: account.user, provider: 'email', origin: input.origin }));
    }
    const now = deps.clock.now();
    const user = { ...account.user, provider: 'email', locale: changes.locale ?? account.user.locale, updatedAt: now };
    return deps.uow.transaction(async () => {
      await deps.accounts.update(input.project.id, user.id, changes, now);
      return ok(await deps.completePrimarySignIn({ project: input.project, user, provider: 'email', origin: input.origin }));
    });
  };
}
