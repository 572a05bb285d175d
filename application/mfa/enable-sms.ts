import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { SmsStore } from './mfa.store';

export interface EnableSmsDeps {
  sms: Pick<SmsStore, 'phoneOf' | 'enroll'>;
  smsAvailable: boolean;
  clock: Clock;
}

/** POST mfa/sms/enable: enrolls SMS when the account has a verified phone number. */
export function makeEnableSms(deps: EnableSmsDeps) {
  return async (actor: MfaActor): Promise<Result<void, MethodUnavailable | 'mfa_phone_not_verified'>> => {
    const unavailable = methodUnavailable(actor.project, 'sms', deps.smsAvailable);
    if (unavailable) return err(unavailable);
    const phone = await deps.sms.phoneOf(actor.project.id, actor.user.id);
    if (!phone.phone || !phone.verified) return err('mfa_phone_not_verified');
    await deps.sms.enroll(actor.project.id, actor.user.id, deps.clock.now());
    return ok(undefined);
  };
}
