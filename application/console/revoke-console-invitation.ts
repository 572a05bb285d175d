import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { ConsoleStore } from './console.store';

/** Revokes a pending invitation to a project (the caller has checked that the account sees it): its link stops working. */
export function makeRevokeConsoleInvitation(deps: { store: Pick<ConsoleStore, 'revokeInvitation'>; clock: Clock }) {
  return async (projectId: string, invitationId: string): Promise<Result<true, 'console_invitation_not_found'>> =>
    (await deps.store.revokeInvitation(projectId, invitationId, deps.clock.now())) ? ok(true) : err('console_invitation_not_found');
}
