import type { Project, ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';

/**
 * Persistence of projects. Use cases depend on the narrow `Pick<>` of it they need; the
 * PostgreSQL adapter implements the whole.
 */
export interface ProjectStore {
  insert(project: Project, signingSecretEncrypted: string): Promise<void>;
  findById(id: string): Promise<Project | null>;
  findByName(name: string): Promise<Project | null>;
  list(): Promise<Project[]>;
  update(project: Project): Promise<void>;
  count(): Promise<number>;
  signingSecretEncrypted(projectId: string): Promise<string | null>;
  /** Encrypted credentials of one provider, or null. */
  providerCredentialsEncrypted(projectId: string, provider: OAuthProvider): Promise<string | null>;
  setProviderCredentialsEncrypted(projectId: string, provider: OAuthProvider, encrypted: string | null): Promise<void>;
}

/** Resolves the decrypted signing key and provider credentials of a project. */
export interface ProjectSecrets {
  signingKey(projectId: string): Promise<Uint8Array | null>;
  providerCredentials(projectId: string, provider: OAuthProvider): Promise<ProviderCredentials | null>;
}
