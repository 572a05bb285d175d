import { defaultPasskeyName, MAX_PASSKEYS_PER_USER, validatePasskeyName, type Passkey } from '../../domain/passkeys/passkey';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor } from '../audit/audit-log';
import { ChallengeAlreadyConsumed, type ChallengePassed, type FinishedSignIn } from '../mfa/finish-challenge';
import type { MfaActor } from '../mfa/actor';
import type { MfaChallengeRecord, MfaChallengeStore } from '../mfa/mfa.store';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { RequestOrigin } from '../ports/request-origin';
import type { CeremonyOptions } from './ceremonies';
import {
  ceremonyTimeoutMs,
  descriptors,
  expectedCeremony,
  issueChallenge,
  passkeysFor,
  takeChallenge,
  type PasskeyDeps,
  type PasskeysUnavailable,
} from './deps';

export interface RegisterPasskeyDeps extends PasskeyDeps {
  mfaChallenges: Pick<MfaChallengeStore, 'findLiveById'>;
  finish: (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed) => Promise<FinishedSignIn>;
}

/** A user registering: with their access token, or (required MFA policy) the enrollment challenge, where passkeys must be an MFA method. */
const useOf = (actor: MfaActor) => (actor.enrollmentChallengeId ? 'mfa' : 'any') as 'mfa' | 'any';

/**
 * POST passkeys/register/options: creation options for the signed-in user (resident key, the
 * project's user verification, their passkeys excluded), with a registration challenge bound to them.
 */
export function makeRegisterPasskeyOptions(deps: PasskeyDeps) {
  return async (actor: MfaActor): Promise<Result<CeremonyOptions, PasskeysUnavailable | 'passkey_limit_reached'>> => {
    const rp = passkeysFor(actor.project, useOf(actor));
    if (!rp.ok) return rp;
    const held = await deps.passkeys.listForUser(actor.project.id, actor.user.id);
    if (held.length >= MAX_PASSKEYS_PER_USER) return err('passkey_limit_reached');
    const challenge = await issueChallenge(deps, actor.project, rp.value, 'registration', {
      userId: actor.user.id,
      enrollmentChallengeId: actor.enrollmentChallengeId,
    });
    return ok(
      await deps.ceremonies.registrationOptions({
        rpId: rp.value.id,
        rpName: rp.value.name,
        userId: actor.user.id,
        userName: actor.user.email ?? actor.user.id,
        userDisplayName: actor.user.name ?? actor.user.email ?? '',
        challenge,
        excludeCredentialIds: descriptors(held),
        userVerification: rp.value.userVerification,
        timeoutMs: ceremonyTimeoutMs,
      }),
    );
  };
}

/** What storing a new passkey can refuse, whoever registers it (a signed-in user, or a sign-up). */
export type NewPasskeyError =
  | PasskeysUnavailable
  | 'passkey_invalid_challenge'
  | 'passkey_verification_failed'
  | 'passkey_user_verification_required'
  | 'passkey_already_registered'
  | 'passkey_limit_reached'
  | 'invalid_passkey_name';

export type RegisterPasskeyError = NewPasskeyError | 'mfa_invalid_challenge';

/** Verifies a new credential against its challenge and the relying party, and builds the passkey to store. */
export async function verifiedPasskey(
  deps: PasskeyDeps,
  project: Project,
  rp: { id: string; origins: string[] },
  taken: Parameters<typeof expectedCeremony>[1],
  userId: string,
  response: { response: { clientDataJSON: string } },
  name: string | undefined,
  origin: RequestOrigin,
): Promise<
  Result<{ passkey: Passkey; userVerified: boolean }, 'passkey_verification_failed' | 'passkey_user_verification_required' | 'passkey_limit_reached'>
> {
  const checked = await deps.ceremonies.verifyRegistration(response, expectedCeremony({ ...rp, name: '', userVerification: 'preferred' }, taken));
  if (!checked.ok) {
    const error = /user verification/i.test(checked.reason) ? 'passkey_user_verification_required' : 'passkey_verification_failed';
    deps.audit.record(
      auditEntry(deps.clock.now(), project.id, 'user.passkey.failed', {
        actor: userActor(userId),
        origin,
        reason: error,
        details: { ceremony: taken.record.ceremony, detail: checked.reason },
      }),
    );
    return err(error);
  }
  const held = await deps.passkeys.countForUser(project.id, userId);
  if (held >= MAX_PASSKEYS_PER_USER) return err('passkey_limit_reached');
  const credential = checked.value;
  const authenticatorName = deps.ceremonies.authenticatorName(credential.aaguid);
  const passkey: Passkey = {
    id: deps.crypto.uuid(),
    projectId: project.id,
    userId,
    credentialId: credential.credentialId,
    publicKey: credential.publicKey,
    counter: credential.counter,
    transports: credential.transports,
    aaguid: credential.aaguid,
    authenticatorName,
    deviceType: credential.deviceType,
    backedUp: credential.backedUp,
    name: name ?? defaultPasskeyName(authenticatorName, held),
    createdAt: deps.clock.now(),
    lastUsedAt: null,
  };
  return ok({ passkey, userVerified: credential.userVerified });
}

/**
 * POST passkeys/register/verify: stores the passkey the browser created for the options, tells
 * the user (security notice) and records it. With an enrollment challenge it also finishes that
 * sign-in, as confirming TOTP does.
 */
export function makeRegisterPasskey(deps: RegisterPasskeyDeps) {
  return async (
    actor: MfaActor,
    input: { response: { response: { clientDataJSON: string } }; name?: string },
  ): Promise<Result<{ passkey: Passkey; session: FinishedSignIn | null }, RegisterPasskeyError>> => {
    const rp = passkeysFor(actor.project, useOf(actor));
    if (!rp.ok) return rp;
    let name: string | undefined;
    if (input.name !== undefined) {
      const valid = validatePasskeyName(input.name);
      if (!valid.ok) return valid;
      name = valid.value;
    }
    const taken = await takeChallenge(deps, actor.project, 'registration', input.response);
    if (!taken || taken.record.userId !== actor.user.id || taken.record.enrollmentChallengeId !== actor.enrollmentChallengeId) {
      return err('passkey_invalid_challenge');
    }
    const built = await verifiedPasskey(deps, actor.project, rp.value, taken, actor.user.id, input.response, name, actor.origin);
    if (!built.ok) return built;
    const { passkey } = built.value;
    const now = deps.clock.now();
    try {
      const done = await deps.uow.transaction(async (): Promise<Result<{ passkey: Passkey; session: FinishedSignIn | null }, RegisterPasskeyError>> => {
        if (!(await deps.passkeys.insert(passkey))) return err('passkey_already_registered');
        await deps.notify({ project: actor.project, userId: actor.user.id, kind: 'passkey_added', origin: actor.origin, passkey: { name: passkey.name } });
        if (!actor.enrollmentChallengeId) return ok({ passkey, session: null });
        const challenge = await deps.mfaChallenges.findLiveById(actor.enrollmentChallengeId, now);
        if (!challenge) throw new ChallengeAlreadyConsumed();
        return ok({ passkey, session: await deps.finish(challenge, actor.project, actor.user, { method: 'enrollment', origin: actor.origin }) });
      });
      if (done.ok) {
        deps.audit.record(
          auditEntry(now, actor.project.id, 'user.passkey.added', {
            actor: userActor(actor.user.id),
            origin: actor.origin,
            // key_id, not passkey_id: safeAuditDetails drops every key that contains "pass".
            details: { key_id: passkey.id, name: passkey.name, authenticator: passkey.authenticatorName },
          }),
        );
      }
      return done;
    } catch (e) {
      if (e instanceof ChallengeAlreadyConsumed) return err('mfa_invalid_challenge');
      throw e;
    }
  };
}
