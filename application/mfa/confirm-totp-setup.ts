import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { SecretBox } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import { ChallengeAlreadyConsumed, type ChallengePassed, type FinishedSignIn } from './finish-challenge';
import type { MfaChallengeRecord, MfaChallengeStore, TotpStore } from './mfa.store';
import type { TotpAuthenticator } from './ports';

export interface ConfirmTotpSetupDeps {
  totp: Pick<TotpStore, 'find' | 'confirm'>;
  challenges: Pick<MfaChallengeStore, 'findLiveById'>;
  authenticator: Pick<TotpAuthenticator, 'matchStep'>;
  finish: (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed) => Promise<FinishedSignIn>;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  box: SecretBox;
  clock: Clock;
  uow: UnitOfWork;
}

export type ConfirmTotpSetupError = MethodUnavailable | 'totp_already_enrolled' | 'totp_setup_not_started' | 'mfa_invalid_code' | 'mfa_invalid_challenge';

/**
 * POST mfa/totp/verify-setup: a correct code from the app enrolls TOTP (its step counts as used).
 * Called with an enrollment challenge, it also finishes that sign-in and returns the session.
 */
export function makeConfirmTotpSetup(deps: ConfirmTotpSetupDeps) {
  return async (actor: MfaActor, code: string): Promise<Result<{ session: FinishedSignIn | null }, ConfirmTotpSetupError>> => {
    const unavailable = methodUnavailable(actor.project, 'totp', true);
    if (unavailable) return err(unavailable);
    const factor = await deps.totp.find(actor.project.id, actor.user.id);
    if (!factor) return err('totp_setup_not_started');
    if (factor.confirmedAt) return err('totp_already_enrolled');
    const trimmed = code.trim();
    const now = deps.clock.now();
    const step = /^\d{6}$/.test(trimmed) ? deps.authenticator.matchStep(deps.box.decrypt(factor.secretEncrypted), trimmed, now) : null;
    if (step === null) return err('mfa_invalid_code');
    try {
      const done = await deps.uow.transaction(async () => {
        if (!(await deps.totp.confirm(actor.project.id, actor.user.id, step, now))) return err('totp_already_enrolled');
        await deps.notify({ project: actor.project, userId: actor.user.id, kind: 'mfa_factor_added', origin: actor.origin, method: 'totp' });
        if (!actor.enrollmentChallengeId) return ok({ session: null });
        const challenge = await deps.challenges.findLiveById(actor.enrollmentChallengeId, now);
        if (!challenge) throw new ChallengeAlreadyConsumed();
        return ok({ session: await deps.finish(challenge, actor.project, actor.user, { method: 'enrollment', origin: actor.origin }) });
      });
      if (done.ok) {
        deps.audit.record(
          auditEntry(now, actor.project.id, 'mfa.factor.added', { actor: userActor(actor.user.id), origin: actor.origin, details: { method: 'totp' } }),
        );
      }
      return done;
    } catch (e) {
      if (e instanceof ChallengeAlreadyConsumed) return err('mfa_invalid_challenge');
      throw e;
    }
  };
}
