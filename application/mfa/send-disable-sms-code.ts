import { err, ok, type Result } from '../../domain/result';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { MfaActor } from './actor';
import type { makeIssueSmsCode } from './issue-sms-code';
import { consumeLimits, type MfaLimits, type RateLimited } from './limits';
import type { SmsStore } from './mfa.store';

export interface SendDisableSmsCodeDeps {
  sms: Pick<SmsStore, 'isEnrolled' | 'phoneOf'>;
  issueCode: ReturnType<typeof makeIssueSmsCode>;
  smsAvailable: boolean;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<MfaLimits, 'smsSend'>;
  uow: UnitOfWork;
}

/** POST mfa/sms/disable/send-code: texts a code that confirms removing a factor (mfa/sms/disable, mfa/totp/disable). */
export function makeSendDisableSmsCode(deps: SendDisableSmsCodeDeps) {
  return async (actor: MfaActor): Promise<Result<void, 'mfa_method_not_enrolled' | 'sms_unavailable'> | RateLimited> => {
    const phone = await deps.sms.phoneOf(actor.project.id, actor.user.id);
    if (!(await deps.sms.isEnrolled(actor.project.id, actor.user.id)) || !phone.phone || !phone.verified) return err('mfa_method_not_enrolled');
    if (!deps.smsAvailable) return err('sms_unavailable');
    const limited = await consumeLimits(deps.rateLimiter, [`mfa-sms:user:${actor.project.id}:${actor.user.id}`], deps.limits.smsSend);
    if (limited) return limited;
    await deps.uow.transaction(() =>
      deps.issueCode({
        projectId: actor.project.id,
        projectName: actor.project.name,
        userId: actor.user.id,
        purpose: 'disable',
        challengeId: null,
        phone: phone.phone!,
      }),
    );
    return ok(undefined);
  };
}
