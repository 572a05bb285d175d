import { isE164 } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { makeIssueSmsCode } from './issue-sms-code';
import { consumeLimits, type MfaLimits, type RateLimited } from './limits';

export interface StartPhoneVerificationDeps {
  issueCode: ReturnType<typeof makeIssueSmsCode>;
  smsAvailable: boolean;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<MfaLimits, 'smsSend'>;
  uow: UnitOfWork;
}

/** POST mfa/sms/phone: texts a 6-digit code to the given E.164 number; verifying it makes the number the account's. */
export function makeStartPhoneVerification(deps: StartPhoneVerificationDeps) {
  return async (actor: MfaActor, phone: string): Promise<Result<void, MethodUnavailable | 'mfa_invalid_phone'> | RateLimited> => {
    const unavailable = methodUnavailable(actor.project, 'sms', deps.smsAvailable);
    if (unavailable) return err(unavailable);
    const normalized = phone.replace(/[\s().-]/g, '');
    if (!isE164(normalized)) return err('mfa_invalid_phone');
    const limited = await consumeLimits(deps.rateLimiter, [`mfa-sms:user:${actor.project.id}:${actor.user.id}`], deps.limits.smsSend);
    if (limited) return limited;
    await deps.uow.transaction(() =>
      deps.issueCode({
        projectId: actor.project.id,
        projectName: actor.project.name,
        userId: actor.user.id,
        purpose: 'phone',
        challengeId: null,
        phone: normalized,
      }),
    );
    return ok(undefined);
  };
}
