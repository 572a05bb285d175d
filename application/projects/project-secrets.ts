import type { ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import type { SecretBox } from '../ports/crypto';
import type { ProjectSecrets, ProjectStore } from './project.store';

/** Decrypts project secrets on demand. Signing keys are kept base64url-encoded at rest inside the box. */
export function makeProjectSecrets(deps: {
  projects: Pick<ProjectStore, 'signingSecretEncrypted' | 'providerCredentialsEncrypted'>;
  box: SecretBox;
}): ProjectSecrets {
  return {
    async signingKey(projectId) {
      const encrypted = await deps.projects.signingSecretEncrypted(projectId);
      if (!encrypted) return null;
      return new Uint8Array(Buffer.from(deps.box.decrypt(encrypted), 'base64url'));
    },
    async providerCredentials(projectId: string, provider: OAuthProvider) {
      const encrypted = await deps.projects.providerCredentialsEncrypted(projectId, provider);
      if (!encrypted) return null;
      return JSON.parse(deps.box.decrypt(encrypted)) as ProviderCredentials;
    },
  };
}
