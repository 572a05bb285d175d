import { auditEntry, userTarget, type AuditLog } from '../audit/audit-log';
import type { AuditActor } from '../../domain/audit';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { RefreshTokenStore } from '../stores/refresh-token.store';

/** Ends every session of an end user: all its refresh tokens are revoked. Answers how many were live. */
export function makeSignOutEverywhere(deps: { refreshTokens: Pick<RefreshTokenStore, 'revokeAllForUser'>; audit: AuditLog; actor: AuditActor; clock: Clock }) {
  return async (input: { projectId: string; userId: string }): Promise<number> => {
    const ended = await deps.refreshTokens.revokeAllForUser(input.projectId, input.userId, deps.clock.now());
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'user.sign_out_everywhere', {
        actor: deps.actor,
        target: userTarget(input.userId),
        origin: SYSTEM_ORIGIN,
        details: { sessions_ended: ended },
      }),
    );
    return ended;
  };
}
