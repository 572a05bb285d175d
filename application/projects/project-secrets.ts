import { base64UrlDecode } from '../../domain/encoding';
import type { ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import type { SecretBox } from '../ports/crypto';
import type { ProjectSecrets, ProjectStore } from '../stores/project.store';

/** Decrypts project secrets on demand. Signing keys are kept base64url-encoded at rest inside the box. */
export function makeProjectSecrets(deps: {
  projects: Pick<ProjectStore, 'signingSecretEncrypted' | 'providerCredentialsEncrypted'>;
  box: SecretBox;
}): ProjectSecrets {
  return {
    async signingKey(projectId) {
      const encrypted = await deps.projects.signingSecretEncrypted(projectId);
      if (!encrypted) return null;
      const key = base64UrlDecode(deps.box.decrypt(encrypted));
      if (!key) throw new Error(`signing secret of project ${projectId} is not base64url`);
      return key;
    },
    async providerCredentials(projectId: string, provider: OAuthProvider) {
      const encrypted = await deps.projects.providerCredentialsEncrypted(projectId, provider);
      if (!encrypted) return null;
      return JSON.parse(deps.box.decrypt(encrypted)) as ProviderCredentials;
    },
  };
}
