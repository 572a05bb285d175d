import type { AuditActor } from '../../domain/audit';
import type { EndUser } from '../../domain/user';
import { auditEntry, userTarget, type AuditLog } from '../audit/audit-log';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { RefreshTokenStore } from '../stores/refresh-token.store';
import type { UserStore } from '../stores/user.store';

export interface SetUserDisabledDeps {
  users: Pick<UserStore, 'findById' | 'update'>;
  refreshTokens: Pick<RefreshTokenStore, 'revokeAllForUser'>;
  audit: AuditLog;
  /** The operator making the change. */
  actor: AuditActor;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * Disables or re-enables an end user of a project. Disabling also ends every session of the user
 * (its refresh tokens are revoked); token verification refuses the user's access tokens from then on.
 */
export function makeSetUserDisabled(deps: SetUserDisabledDeps) {
  return (input: { projectId: string; userId: string; disabled: boolean }): Promise<Result<EndUser, 'user_not_found'>> =>
    deps.uow.transaction(async () => {
      const user = await deps.users.findById(input.projectId, input.userId);
      if (!user) return err('user_not_found');
      const now = deps.clock.now();
      if (user.disabled === input.disabled) return ok(user);
      const changed: EndUser = { ...user, disabled: input.disabled, updatedAt: now };
      await deps.users.update(changed);
      const ended = input.disabled ? await deps.refreshTokens.revokeAllForUser(input.projectId, input.userId, now) : 0;
      deps.audit.record(
        auditEntry(now, input.projectId, input.disabled ? 'user.disabled' : 'user.enabled', {
          actor: deps.actor,
          target: userTarget(input.userId),
          origin: SYSTEM_ORIGIN,
          ...(input.disabled ? { details: { sessions_ended: ended } } : {}),
        }),
      );
      return ok(changed);
    });
}
