import type { OAuthStateRecord, OAuthStateStore } from '../../application/oauth/oauth-state.store';
import type { OAuthProvider } from '../../domain/providers';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toRecord = rowMapper<OAuthStateRecord>({
  id: read.text,
  projectId: read.text,
  provider: read.as<OAuthProvider>(),
  callbackUrl: read.text,
  clientState: read.textOrNull,
  locale: read.textOrNull,
  linkUserId: read.textOrNull,
  secretsEncrypted: ['secrets_enc', read.text],
  createdAt: read.date,
  expiresAt: read.date,
});

export class PostgresOAuthStateStore implements OAuthStateStore {
  constructor(private readonly db: Database) {}

  async insert(r: OAuthStateRecord, stateHash: string): Promise<void> {
    await this.db.query(
      `insert into oauth_states (id, project_id, provider, state_hash, callback_url, client_state, locale, link_user_id,
         secrets_enc, created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.provider, stateHash, r.callbackUrl, r.clientState, r.locale, r.linkUserId, r.secretsEncrypted, r.createdAt, r.expiresAt],
    );
  }

  async consume(stateHash: string, provider: OAuthProvider, at: Date): Promise<OAuthStateRecord | null> {
    const rows = await this.db.query(
      `update oauth_states set used_at = ?
        where state_hash = ? and provider = ? and used_at is null
        returning ${toRecord.columns}`,
      [at, stateHash, provider],
    );
    return toRecord.first(rows);
  }

  /** Drops states that can no longer be used. */
  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from oauth_states where expires_at < ? returning id', [before]);
    return rows.length;
  }
}
