import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { UnitOfWork } from '../ports/unit-of-work';
import { methodUnavailable, type MethodUnavailable, type MfaActor } from './actor';
import type { SmsStore } from './mfa.store';

export interface EnableSmsDeps {
  sms: Pick<SmsStore, 'phoneOf' | 'enroll'>;
  smsAvailable: boolean;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  clock: Clock;
  uow: UnitOfWork;
}

/** POST mfa/sms/enable: enrolls SMS when the account has a verified phone number. */
export function makeEnableSms(deps: EnableSmsDeps) {
  return async (actor: MfaActor): Promise<Result<void, MethodUnavailable | 'mfa_phone_not_verified'>> => {
    const unavailable = methodUnavailable(actor.project, 'sms', deps.smsAvailable);
    if (unavailable) return err(unavailable);
    const phone = await deps.sms.phoneOf(actor.project.id, actor.user.id);
    if (!phone.phone || !phone.verified) return err('mfa_phone_not_verified');
    await deps.uow.transaction(async () => {
      await deps.sms.enroll(actor.project.id, actor.user.id, deps.clock.now());
      await deps.notify({ project: actor.project, userId: actor.user.id, kind: 'mfa_factor_added', origin: actor.origin, method: 'sms' });
    });
    deps.audit.record(
      auditEntry(deps.clock.now(), actor.project.id, 'mfa.factor.added', { actor: userActor(actor.user.id), origin: actor.origin, details: { method: 'sms' } }),
    );
    return ok(undefined);
  };
}
