import { localeFromAcceptLanguage, resolveLocale } from '../../domain/locale';
import { checkPassword, type PasswordPolicyError } from '../../domain/password-policy';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, TokenCrypto } from '../ports/crypto';
import type { RateLimited, RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CompletePrimarySignIn } from './deps';
import type { EmailAccountStore } from './email-account.store';
import type { IssueVerificationCode } from './issue-verification-code';
import type { EmailLimits } from './limits';
import { admitEmailRequest, type EmailRequestRefusal, type EmailRequestInput } from './request-checks';

export interface SignUpWithPasswordDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'insertWithLoginEmail'>;
  issueVerificationCode: IssueVerificationCode;
  completePrimarySignIn: CompletePrimarySignIn;
  hasher: Pick<PasswordHasher, 'hash'>;
  crypto: Pick<TokenCrypto, 'uuid'>;
  clock: Clock;
  uow: UnitOfWork;
  audit: AuditLog;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<EmailLimits, 'signupPerEmail' | 'signupPerIp'>;
  /** False without a mail transport: sign-up sends a code, so it is refused. */
  mailConfigured: boolean;
}

export type SignUpInput = EmailRequestInput & { password: string; name: string | null };

export type SignUpError = EmailRequestRefusal | PasswordPolicyError | 'email_already_registered';

/**
 * Creates an email + password account (email not yet verified), sends its verification code and
 * signs the user in through the primary sign-in gate, all in one transaction. The request checks
 * (checkEmailRequest) come first, then the limits per IP and per email, then the password policy.
 * The locale the user asked for (body, else Accept-Language) becomes the stored preference.
 */
export function makeSignUpWithPassword(deps: SignUpWithPasswordDeps) {
  return async (input: SignUpInput): Promise<Result<PrimarySignInOutcome, SignUpError> | RateLimited> => {
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
      (email) => [
        ['signup:ip', input.ip, deps.limits.signupPerIp],
        ['signup:email', email.key, deps.limits.signupPerEmail],
      ],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;

    const policy = checkPassword(input.password);
    if (!policy.ok) return policy;
    if (await deps.accounts.findByLoginEmail(input.project.id, email.key)) return err('email_already_registered');

    const passwordHash = await deps.hasher.hash(input.password);
    const preference = locale ?? localeFromAcceptLanguage(input.acceptLanguage);
    const mailLocale = resolveLocale({ requested: preference, projectDefault: input.project.settings.defaultLocale });
    const now = deps.clock.now();
    const user: EndUser & { email: string } = {
      id: deps.crypto.uuid(),
      projectId: input.project.id,
      email: email.address,
      name: input.name?.trim() || null,
      picture: null,
      provider: 'email',
      emailVerified: false,
      locale: preference,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    return deps.uow.transaction(async () => {
      // The unique index decides between concurrent sign-ups of one address.
      if (!(await deps.accounts.insertWithLoginEmail(user, email.key, passwordHash))) return err('email_already_registered');
      await deps.issueVerificationCode({ project: input.project, user, locale: mailLocale });
      deps.audit.record(auditEntry(now, input.project.id, 'user.sign_up', { actor: userActor(user.id), origin: input.origin, details: { provider: 'email' } }));
      return ok(await deps.completePrimarySignIn({ project: input.project, user, provider: 'email', origin: input.origin }));
    });
  };
}
