import type { AuditActor } from '../../domain/audit';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { RequestOrigin } from '../ports/request-origin';
import type { UserStore } from '../stores/user.store';
import type { SessionStore } from '../stores/session.store';

export interface EndSessionDeps {
  sessions: Pick<SessionStore, 'revoke'>;
  users: Pick<UserStore, 'findById'>;
  audit: AuditLog;
  clock: Clock;
}

export interface EndSessionInput {
  projectId: string;
  userId: string;
  sessionId: string;
  /** Who asks: the user (their access token) or the project server (`apiKeyActor`). */
  actor: AuditActor;
  origin: RequestOrigin;
}

/**
 * Ends one session of an end user, asked by the user (access token) or by the project server (API
 * key). Its refresh tokens stop working and token verification refuses its access tokens at once,
 * in every process. `session_not_found` when the session is not one of the user's; ending a
 * session that already ended succeeds (a retry answers the same). Recorded as `session.revoked`
 * with who asked.
 */
export function makeEndSession(deps: EndSessionDeps) {
  return async (input: EndSessionInput): Promise<Result<void, 'session_not_found' | 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    const now = deps.clock.now();
    const found = await deps.sessions.revoke(input.projectId, input.userId, input.sessionId, now);
    if (!found) return err('session_not_found');
    deps.audit.record(
      auditEntry(now, input.projectId, 'session.revoked', {
        actor: input.actor,
        target: { kind: 'session', id: input.sessionId },
        user: input.userId,
        origin: input.origin,
      }),
    );
    return ok(undefined);
  };
}
