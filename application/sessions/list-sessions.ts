import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { UserStore } from '../stores/user.store';
import type { SessionRecord, SessionStore } from '../stores/session.store';

/** At most this many sessions are listed (the most recently used). */
export const SESSION_LIST_LIMIT = 100;

export interface SessionView extends SessionRecord {
  /** The session of the access token that asked (always false when a project server asks). */
  current: boolean;
}

export interface ListSessionsDeps {
  sessions: Pick<SessionStore, 'listLive'>;
  users: Pick<UserStore, 'findById'>;
  clock: Clock;
}

/**
 * The live sessions of an end user (not ended, not expired), most recently used first: when each
 * started, when it was last refreshed, where the user was when it started, and which one is the
 * caller's own (`currentSessionId`, the `sid` of the caller's access token).
 */
export function makeListSessions(deps: ListSessionsDeps) {
  return async (input: { projectId: string; userId: string; currentSessionId: string | null }): Promise<Result<SessionView[], 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    const sessions = await deps.sessions.listLive(input.projectId, input.userId, deps.clock.now(), SESSION_LIST_LIMIT);
    return ok(sessions.map((s) => ({ ...s, current: s.id === input.currentSessionId })));
  };
}
