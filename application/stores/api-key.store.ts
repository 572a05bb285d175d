export interface ApiKeyRecord {
  id: string;
  projectId: string;
  /** First characters of the key, safe to show. */
  prefix: string;
  label: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface ApiKeyStore {
  insert(record: ApiKeyRecord, keyHash: string): Promise<void>;
  /** Looks a key up by its SHA-256 hash; revoked keys are not returned. */
  findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  listByProject(projectId: string): Promise<ApiKeyRecord[]>;
  revoke(projectId: string, keyId: string, at: Date): Promise<boolean>;
  touch(keyId: string, at: Date): Promise<void>;
}
