import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, userTarget } from '../audit/audit-log';
import type { PrimarySignInOutcome, SignInGate } from '../auth/complete-primary-sign-in';
import type { EmailAccountStore } from '../email/email-account.store';
import { parseEmailAddress } from '../../domain/email-address';
import { consumeLimits, type RateLimited } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import type { UserStore } from '../stores/user.store';
import type { CeremonyOptions } from './ceremonies';
import { ceremonyTimeoutMs, descriptors, issueChallenge, passkeysFor, type PasskeyDeps, type PasskeysUnavailable } from './deps';
import { verifyAssertion, type AssertionError } from './verify-assertion';

/** Every passkey ceremony counts against the caller's IP. */
export const limited = (deps: Pick<PasskeyDeps, 'rateLimiter' | 'limit'>, ip: string): Promise<RateLimited | null> =>
  consumeLimits(deps.rateLimiter, [`passkey:ip:${ip}`], deps.limit);

/**
 * POST passkeys/sign-in/options: request options with a sign-in challenge. Without an email the
 * browser offers any passkey it holds for the relying party (discoverable credentials, autofill);
 * with one, the account's passkeys are listed (an unknown email lists none: the same answer shape).
 */
export function makePasskeySignInOptions(deps: PasskeyDeps & { accounts: Pick<EmailAccountStore, 'findByLoginEmail'> }) {
  return async (project: Project, input: { email?: string; ip: string }): Promise<Result<CeremonyOptions, PasskeysUnavailable> | RateLimited> => {
    const rp = passkeysFor(project, 'sign_in');
    if (!rp.ok) return rp;
    const refused = await limited(deps, input.ip);
    if (refused) return refused;
    let allow: ReturnType<typeof descriptors> = [];
    if (input.email !== undefined) {
      const email = parseEmailAddress(input.email);
      const account = email.ok ? await deps.accounts.findByLoginEmail(project.id, email.value.key) : null;
      if (account) allow = descriptors(await deps.passkeys.listForUser(project.id, account.user.id));
    }
    const challenge = await issueChallenge(deps, project, rp.value, 'sign_in');
    return ok(
      await deps.ceremonies.authenticationOptions({
        rpId: rp.value.id,
        challenge,
        allowCredentials: allow,
        userVerification: rp.value.userVerification,
        timeoutMs: ceremonyTimeoutMs,
      }),
    );
  };
}

export type PasskeySignInError = PasskeysUnavailable | AssertionError | 'account_disabled';

/**
 * POST passkeys/sign-in/verify: a primary sign-in with a passkey. With user verification the
 * passkey is two factors at once (something held, unlocked by something known or something one
 * is), so the gate issues a session under every MFA policy; without, the policy applies.
 */
export function makeSignInWithPasskey(deps: PasskeyDeps & { users: Pick<UserStore, 'findById'>; signInGate: SignInGate }) {
  return async (
    project: Project,
    input: { response: { id: string; response: { clientDataJSON: string } }; ip: string; origin: RequestOrigin },
  ): Promise<Result<PrimarySignInOutcome, PasskeySignInError> | RateLimited> => {
    const rp = passkeysFor(project, 'sign_in');
    if (!rp.ok) return rp;
    const refused = await limited(deps, input.ip);
    if (refused) return refused;
    const used = await verifyAssertion(deps, project, rp.value, 'sign_in', input.response, input.origin);
    if (!used.ok) return used;
    const user = await deps.users.findById(project.id, used.value.passkey.userId);
    if (!user || user.disabled) {
      deps.audit.record(
        auditEntry(deps.clock.now(), project.id, 'user.sign_in.failed', {
          actor: userActor(used.value.passkey.userId),
          target: userTarget(used.value.passkey.userId),
          origin: input.origin,
          reason: 'account_disabled',
          details: { provider: 'passkey' },
        }),
      );
      return err('account_disabled');
    }
    return ok(await deps.signInGate({ project, user, provider: 'passkey', origin: input.origin, multiFactor: used.value.userVerified }));
  };
}
