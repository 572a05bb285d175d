import type { AuditActor } from '../../domain/audit';
import { isUuid } from '../../domain/ids';
import { PRIMARY_MFA_METHODS, type FactorMethod } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userTarget, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { SessionStore } from '../stores/session.store';
import type { UserStore } from '../stores/user.store';
import type { BackupCodeStore, EnrolledMethodsReader, SmsStore, TotpStore } from './mfa.store';

export interface RemoveFactorDeps {
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  enrollment: EnrolledMethodsReader;
  totp: Pick<TotpStore, 'remove'>;
  sms: Pick<SmsStore, 'unenroll'>;
  backupCodes: Pick<BackupCodeStore, 'invalidateAll'>;
  sessions: Pick<SessionStore, 'revokeAllBut'>;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  /** The operator making the change. */
  actor: AuditActor;
  clock: Clock;
  uow: UnitOfWork;
}

export interface RemovedFactor {
  factor: FactorMethod;
  /** Sessions of the user that ended; null when the project's MFA policy is off (none end then). */
  sessionsEnded: number | null;
}

/**
 * An operator removes one MFA factor of an end user (a lost phone, a user locked out): TOTP, SMS,
 * or the backup codes. No code is asked: the operator acts on the user's behalf. As when the user
 * removes a factor (disable-factor.ts), once neither TOTP nor SMS remains the backup codes are
 * invalidated too, and while the project's policy is optional or required every session of the
 * user ends (the operator holds none of them), so that no session signed in with the factor
 * outlives it. Unlike the user, the operator may remove the last factor under the required
 * policy: the user is then asked to enroll again at the next sign-in. The user is told by the
 * `mfa_factor_removed` notification (when the project sends it); recorded as `mfa.factor.removed`
 * with the operator as actor.
 */
export function makeRemoveFactor(deps: RemoveFactorDeps) {
  return async (input: {
    projectId: string;
    userId: string;
    factor: FactorMethod;
  }): Promise<Result<RemovedFactor, 'project_not_found' | 'user_not_found' | 'mfa_method_not_enrolled'>> => {
    const project = isUuid(input.projectId) ? await deps.projects.findById(input.projectId) : null;
    if (!project) return err('project_not_found');
    const user = await deps.users.findById(project.id, input.userId);
    if (!user) return err('user_not_found');
    return deps.uow.transaction(async () => {
      const enrolled = await deps.enrollment.enrolledMethods(project.id, user.id);
      if (!enrolled.includes(input.factor)) return err('mfa_method_not_enrolled');
      const now = deps.clock.now();
      const remaining = enrolled.filter((m) => m !== input.factor);
      if (input.factor === 'totp') await deps.totp.remove(project.id, user.id);
      else if (input.factor === 'sms') await deps.sms.unenroll(project.id, user.id);
      if (input.factor === 'backup_codes' || !remaining.some((m) => PRIMARY_MFA_METHODS.includes(m))) {
        await deps.backupCodes.invalidateAll(project.id, user.id, now);
      }
      const sessionsEnded = project.settings.mfaPolicy !== 'off' ? await deps.sessions.revokeAllBut(project.id, user.id, null, now) : null;
      if (input.factor !== 'backup_codes') {
        await deps.notify({ project, userId: user.id, kind: 'mfa_factor_removed', origin: SYSTEM_ORIGIN, method: input.factor });
      }
      deps.audit.record(
        auditEntry(now, project.id, 'mfa.factor.removed', {
          actor: deps.actor,
          target: userTarget(user.id),
          origin: SYSTEM_ORIGIN,
          details: { method: input.factor, ...(sessionsEnded !== null ? { sessions_ended: sessionsEnded } : {}) },
        }),
      );
      return ok({ factor: input.factor, sessionsEnded });
    });
  };
}
