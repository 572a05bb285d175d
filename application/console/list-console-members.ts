import type { ConsoleInvitation, ConsoleProjectMember } from '../../domain/console';
import type { ConsoleStore } from './console.store';

export interface ConsoleMembersView {
  members: ConsoleProjectMember[];
  invitations: Array<ConsoleInvitation & { invitedByEmail: string | null }>;
}

/** Who sees a project in the console (its members, then the operators) and its pending invitations. */
export function makeListConsoleMembers(deps: { store: Pick<ConsoleStore, 'listProjectMembers' | 'listPendingInvitations'> }) {
  return async (projectId: string): Promise<ConsoleMembersView> => ({
    members: await deps.store.listProjectMembers(projectId),
    invitations: await deps.store.listPendingInvitations(projectId),
  });
}
