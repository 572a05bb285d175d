import type { ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import type { ProjectStore } from '../stores/project.store';
import type { ConsoleStore } from './console.store';

export interface ConsoleAccountView extends ConsoleAccount {
  /** The projects it is a member of (an operator sees every project besides). */
  projects: Array<{ id: string; name: string }>;
}

/** Every console account of the deployment, with its projects: for operators only. */
export function makeListConsoleAccounts(deps: { store: Pick<ConsoleStore, 'listAccounts'>; projects: Pick<ProjectStore, 'list'> }) {
  return async (by: ConsoleAccount): Promise<Result<ConsoleAccountView[], 'console_operator_only'>> => {
    if (by.role !== 'operator') return err('console_operator_only');
    const names = new Map((await deps.projects.list()).map((p) => [p.id, p.name]));
    const accounts = await deps.store.listAccounts();
    return ok(
      accounts.map(({ projectIds, ...account }) => ({
        ...account,
        projects: projectIds.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! })),
      })),
    );
  };
}
