import type { ApiKeyRecord, ApiKeyStore } from '../../application/stores/api-key.store';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toRecord = rowMapper<ApiKeyRecord>({
  id: read.text,
  projectId: read.text,
  prefix: read.text,
  label: read.textOrNull,
  createdAt: read.date,
  lastUsedAt: read.dateOrNull,
  revokedAt: read.dateOrNull,
});

export class PostgresApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Database) {}

  async insert(r: ApiKeyRecord, keyHash: string): Promise<void> {
    await this.db.query(
      `insert into api_keys (id, project_id, prefix, key_hash, label, created_at, last_used_at, revoked_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.prefix, keyHash, r.label, r.createdAt, r.lastUsedAt, r.revokedAt],
    );
  }

  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const rows = await this.db.query(`select ${toRecord.columns} from api_keys where key_hash = ? and revoked_at is null`, [keyHash]);
    return toRecord.first(rows);
  }

  async listByProject(projectId: string): Promise<ApiKeyRecord[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query(`select ${toRecord.columns} from api_keys where project_id = ? order by created_at`, [projectId]);
    return rows.map(toRecord);
  }

  async revoke(projectId: string, keyId: string, at: Date): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(keyId)) return false;
    const rows = await this.db.query('update api_keys set revoked_at = ? where id = ? and project_id = ? and revoked_at is null returning id', [
      at,
      keyId,
      projectId,
    ]);
    return rows.length > 0;
  }

  async touch(keyId: string, at: Date): Promise<void> {
    await this.db.query('update api_keys set last_used_at = ? where id = ?', [at, keyId]);
  }
}
