import type { ApiKeyStore } from '../stores/api-key.store';

export function makeListApiKeys(deps: { apiKeys: Pick<ApiKeyStore, 'listByProject'> }) {
  return (projectId: string) => deps.apiKeys.listByProject(projectId);
}
