import type { AuditActor } from '../../domain/audit';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userTarget, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { RequestOrigin } from '../ports/request-origin';
import type { UserStore } from '../stores/user.store';
import type { SessionStore } from '../stores/session.store';

export interface EndOtherSessionsDeps {
  sessions: Pick<SessionStore, 'revokeAllBut'>;
  users: Pick<UserStore, 'findById'>;
  audit: AuditLog;
  clock: Clock;
}

export interface EndOtherSessionsInput {
  projectId: string;
  userId: string;
  keepSessionId: string | null;
  /** Who asks: the user (their access token) or the project server (`apiKeyActor`). */
  actor: AuditActor;
  origin: RequestOrigin;
}

/**
 * Ends every session of an end user but one: the caller's own (`keepSessionId`, the user signing
 * out their other devices), or none (null: the project server ending them all). Answers how many
 * live sessions ended; their access tokens are refused at once, in every process. Recorded as
 * `session.revoked.others` (one kept, named in the details) or `user.sign_out_everywhere` (none
 * kept), with who asked and `sessions_ended`.
 */
export function makeEndOtherSessions(deps: EndOtherSessionsDeps) {
  return async (input: EndOtherSessionsInput): Promise<Result<number, 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    const now = deps.clock.now();
    const ended = await deps.sessions.revokeAllBut(input.projectId, input.userId, input.keepSessionId, now);
    deps.audit.record(
      input.keepSessionId === null
        ? auditEntry(now, input.projectId, 'user.sign_out_everywhere', {
            actor: input.actor,
            target: userTarget(input.userId),
            origin: input.origin,
            details: { sessions_ended: ended },
          })
        : auditEntry(now, input.projectId, 'session.revoked.others', {
            actor: input.actor,
            target: userTarget(input.userId),
            origin: input.origin,
            details: { sessions_ended: ended, kept_session_id: input.keepSessionId },
          }),
    );
    return ok(ended);
  };
}
