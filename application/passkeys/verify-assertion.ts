import { counterRegressed, type Passkey } from '../../domain/passkeys/passkey';
import type { RelyingParty } from '../../domain/passkeys/relying-party';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, userTarget } from '../audit/audit-log';
import type { RequestOrigin } from '../ports/request-origin';
import type { PasskeyCeremony } from '../../domain/passkeys/passkey';
import { expectedCeremony, takeChallenge, type PasskeyDeps } from './deps';
import type { PasskeyChallengeRecord } from './passkey.store';

export type AssertionError =
  | 'passkey_invalid_challenge'
  | 'passkey_verification_failed'
  | 'passkey_user_verification_required'
  | 'passkey_unknown_credential'
  | 'passkey_counter_regressed';

export interface VerifiedUse {
  passkey: Passkey;
  record: PasskeyChallengeRecord;
  userVerified: boolean;
}

/**
 * The check of an assertion, shared by sign-in and the second factor: the challenge (spent here,
 * once), the credential registered in this project, the signature, origin and relying party (the
 * library), and the counter. A counter that did not grow is a cloned authenticator: refused and
 * recorded (`user.passkey.clone_detected`). A use moves the counter forward in one compare-and-set.
 */
export async function verifyAssertion(
  deps: PasskeyDeps,
  project: Project,
  rp: RelyingParty,
  ceremony: PasskeyCeremony,
  response: { id: string; response: { clientDataJSON: string } },
  origin: RequestOrigin,
  /**
   * The user and MFA challenge the ceremony is for (second factor): options handed out for another
   * are refused before anything is verified or recorded, and another user's passkey is unknown here.
   */
  bound?: { userId: string; mfaChallengeId: string | null },
): Promise<Result<VerifiedUse, AssertionError>> {
  const taken = await takeChallenge(deps, project, ceremony, response);
  if (!taken) return err('passkey_invalid_challenge');
  if (bound && (taken.record.userId !== bound.userId || taken.record.mfaChallengeId !== bound.mfaChallengeId)) return err('passkey_invalid_challenge');
  const passkey = await deps.passkeys.findByCredentialId(project.id, response.id);
  if (!passkey || (bound && passkey.userId !== bound.userId)) return err('passkey_unknown_credential');
  const failed = (error: AssertionError, details: Record<string, unknown>) => {
    deps.audit.record(
      auditEntry(deps.clock.now(), project.id, error === 'passkey_counter_regressed' ? 'user.passkey.clone_detected' : 'user.passkey.failed', {
        actor: userActor(passkey.userId),
        target: userTarget(passkey.userId),
        origin,
        reason: error,
        details: { ceremony, key_id: passkey.id, ...details },
      }),
    );
    return err(error);
  };
  const checked = await deps.ceremonies.verifyAuthentication(response, expectedCeremony(rp, taken), passkey);
  if (!checked.ok) {
    return failed(/user verification/i.test(checked.reason) ? 'passkey_user_verification_required' : 'passkey_verification_failed', {
      detail: checked.reason,
    });
  }
  const { newCounter, userVerified, backedUp } = checked.value;
  if (counterRegressed(passkey.counter, newCounter)) return failed('passkey_counter_regressed', { stored_counter: passkey.counter, counter: newCounter });
  const now = deps.clock.now();
  if (!(await deps.passkeys.recordUse(passkey.id, passkey.counter, { counter: newCounter, backedUp, at: now }))) {
    return failed('passkey_counter_regressed', { counter: newCounter });
  }
  return ok({ passkey: { ...passkey, counter: newCounter, backedUp, lastUsedAt: now }, record: taken.record, userVerified });
}
