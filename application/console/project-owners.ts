import type { WebhookOwners } from '../webhooks/endpoint-disabled-mail';
import type { ConsoleStore } from './console.store';

/**
 * Who is told about a project's operations (a webhook endpoint Tollgate disabled): the console
 * accounts that are members of the project; when it has none (a self-hosted deployment run by its
 * operators alone), every operator.
 */
export function makeProjectOwners(store: Pick<ConsoleStore, 'listProjectMembers'>): WebhookOwners {
  return {
    async emailsOf(projectId) {
      const all = await store.listProjectMembers(projectId);
      const members = all.filter((m) => m.role === 'member');
      return (members.length > 0 ? members : all.filter((m) => m.role === 'operator')).map((m) => m.email);
    },
  };
}
