import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { UserStore } from '../users/user.store';
import type { SessionStore } from './session.store';

export interface EndOtherSessionsDeps {
  sessions: Pick<SessionStore, 'revokeAllBut'>;
  users: Pick<UserStore, 'findById'>;
  clock: Clock;
}

/**
 * Ends every session of an end user but one: the caller's own (`keepSessionId`, the user signing
 * out their other devices), or none (null: the project server ending them all). Answers how many
 * live sessions ended; their access tokens are refused at once, in every process.
 */
export function makeEndOtherSessions(deps: EndOtherSessionsDeps) {
  return async (input: { projectId: string; userId: string; keepSessionId: string | null }): Promise<Result<number, 'user_not_found'>> => {
    const user = await deps.users.findById(input.projectId, input.userId);
    if (!user) return err('user_not_found');
    return ok(await deps.sessions.revokeAllBut(input.projectId, input.userId, input.keepSessionId, deps.clock.now()));
  };
}
