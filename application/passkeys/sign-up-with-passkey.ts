import { parseEmailAddress } from '../../domain/email-address';
import { localeFromAcceptLanguage, resolveLocale } from '../../domain/locale';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor } from '../audit/audit-log';
import type { PrimarySignInOutcome, SignInGate } from '../auth/complete-primary-sign-in';
import type { EmailAccount, EmailAccountStore } from '../email/email-account.store';
import type { IssueVerificationCode } from '../email/issue-verification-code';
import type { EmailLimits } from '../email/limits';
import { admitEmailRequest, type EmailRequestInput, type EmailRequestRefusal } from '../email/request-checks';
import type { VerifyEmailCodeError, VerifyEmailCodeInput } from '../email/verify-email-code';
import type { RateLimited } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import type { UserStore } from '../stores/user.store';
import type { CeremonyOptions } from './ceremonies';
import { ceremonyTimeoutMs, issueChallenge, passkeysFor, takeChallenge, type PasskeyDeps, type PasskeysUnavailable } from './deps';
import type { SignInMethodsReader } from './passkey.store';
import { verifiedPasskey, type NewPasskeyError } from './register-passkey';
import { limited } from './sign-in-with-passkey';
import { validatePasskeyName } from '../../domain/passkeys/passkey';

export interface PasskeySignUpDeps extends PasskeyDeps {
  accounts: Pick<EmailAccountStore, 'findByLoginEmail' | 'insertWithLoginEmail'>;
  methods: SignInMethodsReader;
  issueVerificationCode: IssueVerificationCode;
  verifyEmailCode: (input: VerifyEmailCodeInput) => Promise<Result<EndUser, VerifyEmailCodeError> | RateLimited>;
  users: Pick<UserStore, 'findById'>;
  signInGate: SignInGate;
  limits: Pick<EmailLimits, 'signupPerEmail' | 'signupPerIp'>;
  mailConfigured: boolean;
}

/** An account that can already sign in (a password, a passkey or a linked provider) is taken; one without is the unfinished sign-up. */
async function canSignIn(deps: Pick<PasskeySignUpDeps, 'methods' | 'passkeys'>, account: EmailAccount): Promise<boolean> {
  if (account.passwordHash !== null) return true;
  if ((await deps.passkeys.countForUser(account.user.projectId, account.user.id)) > 0) return true;
  return (await deps.methods.otherSignInMethods(account.user.projectId, account.user.id)).identities > 0;
}

export type StartPasskeySignUpError = PasskeysUnavailable | EmailRequestRefusal | 'email_already_registered';

/**
 * POST passkeys/sign-up: creates the account (no password, email not verified) or finds the
 * unfinished one, and emails the 6-digit code that verifies the address. An address whose account
 * can already sign in is refused, as email sign-up refuses it.
 */
export function makeStartPasskeySignUp(deps: PasskeySignUpDeps) {
  return async (input: EmailRequestInput & { name: string | null }): Promise<Result<void, StartPasskeySignUpError> | RateLimited> => {
    const rp = passkeysFor(input.project, 'sign_in');
    if (!rp.ok) return rp;
    const admitted = await admitEmailRequest(
      deps.rateLimiter,
      input.project,
      { provider: 'passkey', callbackUrl: input.callbackUrl, mailConfigured: deps.mailConfigured, locale: input.locale, email: input.email },
      (email) => [
        ['signup:ip', input.ip, deps.limits.signupPerIp],
        ['signup:email', email.key, deps.limits.signupPerEmail],
      ],
    );
    if (!admitted.ok) return admitted;
    const { email, locale } = admitted.value;
    const preference = locale ?? localeFromAcceptLanguage(input.acceptLanguage);
    const mailLocale = resolveLocale({ requested: preference, projectDefault: input.project.settings.defaultLocale });
    const existing = await deps.accounts.findByLoginEmail(input.project.id, email.key);
    if (existing && (await canSignIn(deps, existing))) return err('email_already_registered');
    const now = deps.clock.now();
    return deps.uow.transaction(async () => {
      let user = existing?.user;
      if (!user) {
        const created: EndUser & { email: string } = {
          id: deps.crypto.uuid(),
          projectId: input.project.id,
          email: email.address,
          name: input.name?.trim() || null,
          picture: null,
          provider: 'passkey',
          emailVerified: false,
          locale: preference,
          disabled: false,
          createdAt: now,
          updatedAt: now,
        };
        if (!(await deps.accounts.insertWithLoginEmail(created, email.key, null))) return err('email_already_registered');
        user = created;
      }
      if (user.email === null) return err('email_already_registered');
      await deps.issueVerificationCode({ project: input.project, user: { ...user, email: user.email }, locale: mailLocale });
      return ok(undefined);
    });
  };
}

export type PasskeySignUpOptionsError = PasskeysUnavailable | VerifyEmailCodeError | 'email_already_registered';

/**
 * POST passkeys/sign-up/options: the code verifies the address (as email/verify does), then the
 * creation options for the account's first passkey, with a sign-up challenge bound to the account.
 */
export function makePasskeySignUpOptions(deps: PasskeySignUpDeps) {
  return async (input: {
    project: Project;
    email: string;
    code: string;
    ip: string;
  }): Promise<Result<CeremonyOptions, PasskeySignUpOptionsError> | RateLimited> => {
    const rp = passkeysFor(input.project, 'sign_in');
    if (!rp.ok) return rp;
    const address = parseEmailAddress(input.email);
    const account = address.ok ? await deps.accounts.findByLoginEmail(input.project.id, address.value.key) : null;
    if (account && (await canSignIn(deps, account))) return err('email_already_registered');
    const verified = await deps.verifyEmailCode({
      project: input.project,
      email: input.email,
      code: input.code,
      locale: null,
      ip: input.ip,
      provider: 'passkey',
    });
    if (!verified.ok) return verified;
    const user = verified.value;
    const challenge = await issueChallenge(deps, input.project, rp.value, 'sign_up', { userId: user.id });
    return ok(
      await deps.ceremonies.registrationOptions({
        rpId: rp.value.id,
        rpName: rp.value.name,
        userId: user.id,
        userName: user.email ?? user.id,
        userDisplayName: user.name ?? user.email ?? '',
        challenge,
        excludeCredentialIds: [],
        userVerification: rp.value.userVerification,
        timeoutMs: ceremonyTimeoutMs,
      }),
    );
  };
}

export type FinishPasskeySignUpError = NewPasskeyError | 'account_disabled';

/**
 * POST passkeys/sign-up/verify: stores the first passkey of the account the sign-up challenge is
 * bound to and signs the user in through the gate, as a sign-in with that passkey would.
 */
export function makeFinishPasskeySignUp(deps: PasskeySignUpDeps) {
  return async (input: {
    project: Project;
    response: { response: { clientDataJSON: string } };
    name?: string;
    ip: string;
    origin: RequestOrigin;
  }): Promise<Result<PrimarySignInOutcome, FinishPasskeySignUpError> | RateLimited> => {
    const rp = passkeysFor(input.project, 'sign_in');
    if (!rp.ok) return rp;
    const refused = await limited(deps, input.ip);
    if (refused) return refused;
    let name: string | undefined;
    if (input.name !== undefined) {
      const valid = validatePasskeyName(input.name);
      if (!valid.ok) return valid;
      name = valid.value;
    }
    const taken = await takeChallenge(deps, input.project, 'sign_up', input.response);
    if (!taken?.record.userId) return err('passkey_invalid_challenge');
    const user = await deps.users.findById(input.project.id, taken.record.userId);
    if (!user) return err('passkey_invalid_challenge');
    if (user.disabled) return err('account_disabled');
    const built = await verifiedPasskey(deps, input.project, rp.value, taken, user.id, input.response, name, input.origin);
    if (!built.ok) return built;
    const { passkey, userVerified } = built.value;
    return deps.uow.transaction(async () => {
      if (!(await deps.passkeys.insert(passkey))) return err('passkey_already_registered');
      const now = deps.clock.now();
      const facts = { actor: userActor(user.id), origin: input.origin };
      deps.audit.record(auditEntry(now, input.project.id, 'user.sign_up', { ...facts, details: { provider: 'passkey' } }));
      deps.audit.record(
        auditEntry(now, input.project.id, 'user.passkey.added', {
          ...facts,
          details: { key_id: passkey.id, name: passkey.name, authenticator: passkey.authenticatorName },
        }),
      );
      return ok(await deps.signInGate({ project: input.project, user, provider: 'passkey', origin: input.origin, multiFactor: userVerified }));
    });
  };
}
