import type { ConsoleAccount, ConsoleSignupMode } from '../../domain/console';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CreatedProject, CreateProjectError } from '../projects/create-project';
import type { ProjectStore } from '../stores/project.store';
import type { ConsoleStore } from './console.store';

/**
 * The project of a console route, if the account may see it: an operator every project, a member
 * only those it belongs to. Anything else is 'project_not_found', as if it did not exist.
 */
export function makeConsoleProjectAccess(deps: { store: Pick<ConsoleStore, 'isMember'>; projects: Pick<ProjectStore, 'findById'> }) {
  return async (account: ConsoleAccount, projectId: string): Promise<Result<Project, 'project_not_found'>> => {
    if (account.role !== 'operator' && !(await deps.store.isMember(account.id, projectId))) return err('project_not_found');
    const project = await deps.projects.findById(projectId);
    return project ? ok(project) : err('project_not_found');
  };
}

/** The projects a console account sees: every project for an operator, its memberships for a member. */
export function makeListConsoleProjects(deps: { store: Pick<ConsoleStore, 'projectIdsOf'>; projects: Pick<ProjectStore, 'list' | 'findById'> }) {
  return async (account: ConsoleAccount): Promise<Project[]> => {
    if (account.role === 'operator') return deps.projects.list();
    const found = await Promise.all((await deps.store.projectIdsOf(account.id)).map((id) => deps.projects.findById(id)));
    return found.filter((p): p is Project => p !== null);
  };
}

/**
 * Creates a project from the console, with the same use case as `tollgate project create`. An
 * operator always may; a member only when sign-up is open (a hosted deployment), and becomes a
 * member of the project it created, in the same transaction.
 */
export function makeCreateConsoleProject(deps: {
  createProject: (input: { name: string; callbackUrls?: string[] }) => Promise<Result<CreatedProject, CreateProjectError>>;
  store: Pick<ConsoleStore, 'addMembership'>;
  clock: Clock;
  uow: UnitOfWork;
  mode: ConsoleSignupMode;
}) {
  return async (
    account: ConsoleAccount,
    input: { name: string; callbackUrls?: string[] },
  ): Promise<Result<CreatedProject, CreateProjectError | 'console_operator_only'>> => {
    if (account.role !== 'operator' && deps.mode !== 'open') return err('console_operator_only');
    return deps.uow.transaction(async () => {
      const created = await deps.createProject(input);
      if (created.ok && account.role !== 'operator') await deps.store.addMembership(account.id, created.value.project.id, deps.clock.now());
      return created;
    });
  };
}
