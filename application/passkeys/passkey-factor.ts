import { effectiveMfaMethods } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { MfaChallengeStore } from '../mfa/mfa.store';
import type { PasskeyFactorCheck } from '../mfa/verify-factor-code';
import { consumeLimits, type RateLimited } from '../ports/rate-limiter';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import type { CeremonyOptions } from './ceremonies';
import { ceremonyTimeoutMs, descriptors, issueChallenge, passkeysFor, type PasskeyDeps, type PasskeysUnavailable } from './deps';
import { verifyAssertion } from './verify-assertion';
import { SYSTEM_ORIGIN } from '../ports/request-origin';

export type MfaPasskeyOptionsError = PasskeysUnavailable | 'mfa_invalid_challenge' | 'mfa_method_not_allowed' | 'mfa_method_not_enrolled' | 'project_inactive';

/**
 * POST mfa/passkey/options: request options for the second step of a sign-in, listing the
 * challenged user's passkeys, with a challenge bound to that MFA challenge and user.
 */
export function makeMfaPasskeyOptions(
  deps: PasskeyDeps & {
    mfaChallenges: Pick<MfaChallengeStore, 'findLive'>;
    projects: Pick<ProjectStore, 'findById'>;
    users: Pick<UserStore, 'findById'>;
  },
) {
  return async (input: { challenge: string; ip: string }): Promise<Result<CeremonyOptions, MfaPasskeyOptionsError> | RateLimited> => {
    const refused = await consumeLimits(deps.rateLimiter, [`passkey:ip:${input.ip}`], deps.limit);
    if (refused) return refused;
    const challenge = await deps.mfaChallenges.findLive(deps.crypto.hash(input.challenge), deps.clock.now());
    if (!challenge || challenge.enrollment) return err('mfa_invalid_challenge');
    const project = await deps.projects.findById(challenge.projectId);
    if (!project?.active) return err('project_inactive');
    const user = await deps.users.findById(project.id, challenge.userId);
    if (!user || user.disabled) return err('mfa_invalid_challenge');
    if (!effectiveMfaMethods(project.settings.mfaMethods).includes('passkey')) return err('mfa_method_not_allowed');
    // A sign-in that began with a passkey (without user verification) cannot use a passkey as its second factor (the gate does not offer it).
    if (challenge.provider === 'passkey') return err('mfa_method_not_allowed');
    const rp = passkeysFor(project, 'mfa');
    if (!rp.ok) return rp;
    const held = await deps.passkeys.listForUser(project.id, user.id);
    if (held.length === 0) return err('mfa_method_not_enrolled');
    const webauthnChallenge = await issueChallenge(deps, project, rp.value, 'mfa', { userId: user.id, mfaChallengeId: challenge.id });
    return ok(
      await deps.ceremonies.authenticationOptions({
        rpId: rp.value.id,
        challenge: webauthnChallenge,
        allowCredentials: descriptors(held),
        userVerification: rp.value.userVerification,
        timeoutMs: ceremonyTimeoutMs,
      }),
    );
  };
}

/**
 * The passkey as a second factor, for mfa/verify: the assertion must answer options handed out
 * for this MFA challenge, with a passkey of the challenged user. Every refusal reads as a wrong code.
 */
export function makePasskeyFactorCheck(deps: PasskeyDeps & { projects: Pick<ProjectStore, 'findById'> }): PasskeyFactorCheck {
  return async (input) => {
    const project = await deps.projects.findById(input.projectId);
    if (!project) return err('mfa_invalid_code');
    const rp = passkeysFor(project, 'mfa');
    if (!rp.ok) return err('mfa_method_not_enrolled');
    const response = input.assertion as { id: string; response: { clientDataJSON: string } };
    const used = await verifyAssertion(deps, project, rp.value, 'mfa', response, SYSTEM_ORIGIN, {
      userId: input.userId,
      mfaChallengeId: input.mfaChallengeId,
    });
    if (!used.ok) return err('mfa_invalid_code');
    const { record, passkey } = used.value;
    if (record.mfaChallengeId !== input.mfaChallengeId || record.userId !== input.userId || passkey.userId !== input.userId) {
      return err('mfa_invalid_code');
    }
    return ok(undefined) as Result<void, never>;
  };
}
