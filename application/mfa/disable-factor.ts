import { PRIMARY_MFA_METHODS, usableMfaMethods, type FactorMethod } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { SessionStore } from '../stores/session.store';
import type { MfaActor } from './actor';
import { consumeLimits, type MfaLimits, type RateLimited } from './limits';
import type { BackupCodeStore, EnrolledMethodsReader, SmsStore, TotpStore } from './mfa.store';
import type { FactorCodeError, makeVerifyFactorCode } from './verify-factor-code';

export interface DisableFactorDeps {
  enrollment: EnrolledMethodsReader;
  verifyCode: ReturnType<typeof makeVerifyFactorCode>;
  totp: Pick<TotpStore, 'remove'>;
  sms: Pick<SmsStore, 'unenroll'>;
  backupCodes: Pick<BackupCodeStore, 'invalidateAll'>;
  sessions: Pick<SessionStore, 'revokeAllBut'>;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<MfaLimits, 'verify'>;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * POST mfa/totp/disable and mfa/sms/disable: removes a factor after a current code of any enrolled
 * method (the factor's own by default). Under the required policy the last usable factor stays.
 * Once no TOTP, SMS or passkey factor remains, the backup codes are invalidated too. While the project's
 * policy is optional or required (MFA guards its sign-ins), every other session of the user ends:
 * a factor is removed when it may be in someone else's hands, and sessions signed in with it must
 * not outlive it. The caller's own session stays (it just proved a current code).
 */
export function makeDisableFactor(deps: DisableFactorDeps) {
  return async (
    actor: MfaActor,
    factor: 'totp' | 'sms',
    input: { code: string; method?: FactorMethod },
  ): Promise<Result<void, FactorCodeError | 'mfa_last_method'> | RateLimited> => {
    const { project, user } = actor;
    const enrolled = await deps.enrollment.enrolledMethods(project.id, user.id);
    if (!enrolled.includes(factor)) return err('mfa_method_not_enrolled');
    const method = input.method ?? factor;
    if (!enrolled.includes(method)) return err('mfa_method_not_enrolled');
    const remaining = enrolled.filter((m) => m !== factor);
    if (project.settings.mfaPolicy === 'required' && usableMfaMethods(remaining, project.settings.mfaMethods).length === 0) {
      return err('mfa_last_method');
    }
    const limited = await consumeLimits(deps.rateLimiter, [`mfa-disable:user:${project.id}:${user.id}`], deps.limits.verify);
    if (limited) return limited;
    const facts = { actor: userActor(user.id), origin: actor.origin };
    return deps.uow.transaction(async () => {
      const checked = await deps.verifyCode({
        projectId: project.id,
        userId: user.id,
        method,
        code: input.code,
        sms: { purpose: 'disable', challengeId: null },
      });
      if (!checked.ok) {
        if ('replayed' in checked) {
          deps.audit.record(auditEntry(deps.clock.now(), project.id, 'mfa.totp.replayed', { ...facts, reason: checked.error, details: { method, factor } }));
          await deps.notify({ project, userId: user.id, kind: 'totp_replayed', origin: actor.origin });
        }
        return err(checked.error);
      }
      if (factor === 'totp') await deps.totp.remove(project.id, user.id);
      else await deps.sms.unenroll(project.id, user.id);
      if (!remaining.some((m) => PRIMARY_MFA_METHODS.includes(m))) await deps.backupCodes.invalidateAll(project.id, user.id, deps.clock.now());
      // Sessions signed in with the factor must not outlive it (the caller's own stays).
      const endedSessions =
        project.settings.mfaPolicy !== 'off' ? await deps.sessions.revokeAllBut(project.id, user.id, actor.sessionId, deps.clock.now()) : null;
      await deps.notify({ project, userId: user.id, kind: 'mfa_factor_removed', origin: actor.origin, method: factor });
      deps.audit.record(
        auditEntry(deps.clock.now(), project.id, 'mfa.factor.removed', {
          ...facts,
          details: { method: factor, verified_with: method, ...(endedSessions !== null ? { other_sessions_ended: endedSessions } : {}) },
        }),
      );
      return ok(undefined);
    });
  };
}
