import { SMS_CODE_MAX_FAILED_ATTEMPTS } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { SmsStore } from './mfa.store';

export interface ConfirmPhoneDeps {
  sms: Pick<SmsStore, 'findLatestCode' | 'consumeCode' | 'recordFailure' | 'setVerifiedPhone'>;
  smsAvailable: boolean;
  crypto: Pick<TokenCrypto, 'hash' | 'safeEqual'>;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * POST mfa/sms/phone/verify: the code texted by mfa/sms/phone, within 5 minutes and before 3
 * failed attempts, makes that number the account's verified phone.
 */
export function makeConfirmPhone(deps: ConfirmPhoneDeps) {
  return async (actor: MfaActor, code: string): Promise<Result<{ phone: string }, MethodUnavailable | 'mfa_invalid_code' | 'mfa_code_expired'>> => {
    const unavailable = methodUnavailable(actor.project, 'sms', deps.smsAvailable);
    if (unavailable) return err(unavailable);
    const now = deps.clock.now();
    return deps.uow.transaction(async () => {
      const latest = await deps.sms.findLatestCode(actor.project.id, actor.user.id, 'phone', null);
      if (!latest || latest.expiresAt.getTime() <= now.getTime() || latest.failedAttempts >= SMS_CODE_MAX_FAILED_ATTEMPTS) {
        return err('mfa_code_expired');
      }
      if (!deps.crypto.safeEqual(deps.crypto.hash(code.trim()), latest.codeHash)) {
        await deps.sms.recordFailure(latest.id);
        return err('mfa_invalid_code');
      }
      if (!(await deps.sms.consumeCode(latest.id, now, SMS_CODE_MAX_FAILED_ATTEMPTS))) return err('mfa_code_expired');
      await deps.sms.setVerifiedPhone(actor.project.id, actor.user.id, latest.phone, now);
      return ok({ phone: latest.phone });
    });
  };
}
