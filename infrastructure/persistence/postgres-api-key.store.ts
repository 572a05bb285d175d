import type { ApiKeyRecord, ApiKeyStore } from '../../application/api-keys/api-key.store';
import type { Database } from './database';
import { ApiKeyEntity } from './entities/project.entity';
import { isUuid } from './postgres-project.store';

type Nullish<T> = { [K in keyof T]: null extends T[K] ? T[K] | undefined : T[K] };
const toRecord = (r: Nullish<ApiKeyRecord>): ApiKeyRecord => ({
  id: r.id,
  projectId: r.projectId,
  prefix: r.prefix,
  label: r.label ?? null,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt ?? null,
  revokedAt: r.revokedAt ?? null,
});

export class PostgresApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Database) {}

  async insert(record: ApiKeyRecord, keyHash: string): Promise<void> {
    await this.db.em.insert(ApiKeyEntity, { ...record, keyHash });
  }

  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = await this.db.em.findOne(ApiKeyEntity, { keyHash, revokedAt: null }, { disableIdentityMap: true });
    return row ? toRecord(row) : null;
  }

  async listByProject(projectId: string): Promise<ApiKeyRecord[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.em.find(ApiKeyEntity, { projectId }, { orderBy: { createdAt: 'asc' }, disableIdentityMap: true });
    return rows.map(toRecord);
  }

  async revoke(projectId: string, keyId: string, at: Date): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(keyId)) return false;
    const n = await this.db.em.nativeUpdate(ApiKeyEntity, { id: keyId, projectId, revokedAt: null }, { revokedAt: at });
    return n > 0;
  }

  async touch(keyId: string, at: Date): Promise<void> {
    await this.db.em.nativeUpdate(ApiKeyEntity, { id: keyId }, { lastUsedAt: at });
  }
}
