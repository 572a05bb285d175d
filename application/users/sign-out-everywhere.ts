import type { Clock } from '../ports/clock';
import type { RefreshTokenStore } from '../tokens/refresh-token.store';

/** Ends every session of an end user: all its refresh tokens are revoked. Answers how many were live. */
export function makeSignOutEverywhere(deps: { refreshTokens: Pick<RefreshTokenStore, 'revokeAllForUser'>; clock: Clock }) {
  return (input: { projectId: string; userId: string }): Promise<number> =>
    deps.refreshTokens.revokeAllForUser(input.projectId, input.userId, deps.clock.now());
}
