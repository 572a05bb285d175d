import { OAUTH_PROVIDERS, type OAuthProvider } from '../../domain/providers';
import type { ProjectStore } from '../stores/project.store';

/** Which OAuth providers of a project have client credentials stored: only whether they exist, never their values. */
export function makeListConfiguredCredentials(deps: { projects: Pick<ProjectStore, 'providerCredentialsEncrypted'> }) {
  return async (projectId: string): Promise<OAuthProvider[]> => {
    const found: OAuthProvider[] = [];
    for (const provider of OAUTH_PROVIDERS) {
      if (await deps.projects.providerCredentialsEncrypted(projectId, provider)) found.push(provider);
    }
    return found;
  };
}
