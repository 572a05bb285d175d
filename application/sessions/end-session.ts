import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { UserStore } from '../users/user.store';
import type { SessionStore } from './session.store';

export interface EndSessionDeps {
  sessions: Pick<SessionStore, 'revoke'>;
  users: Pick<UserStore, 'findById'>;
  clock: Clock;
}

/**
 * Ends one session of an end user, asked by the user (access token) or by the project server (API
 * key). Its refresh tokens stop working and token verification refuses its access tokens at once,
 * in every process. `session_not_found` when the session is not one of the user's; ending a
 * session that already ended succeeds (a retry answers the same).
 */
export function makeEndSession(deps: EndSessionDeps) {
  return async (input: { projectId: string; userId: string; sessionId: string }): Promise<Result<void, 'session_not_found' | 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    const found = await deps.sessions.revoke(input.projectId, input.userId, input.sessionId, deps.clock.now());
    return found ? ok(undefined) : err('session_not_found');
  };
}
