import type { ProjectStore } from '../stores/project.store';

export function makeGetProject(deps: { projects: Pick<ProjectStore, 'findById'> }) {
  return (id: string) => deps.projects.findById(id);
}

export function makeListProjects(deps: { projects: Pick<ProjectStore, 'list'> }) {
  return () => deps.projects.list();
}
