import type { OAuthStateRecord, OAuthStateStore } from '../../application/oauth/oauth-state.store';
import type { OAuthProvider } from '../../domain/providers';
import type { Database } from './database';
import { OAuthStateEntity } from './entities/oauth.entity';

interface StateRow {
  id: string;
  project_id: string;
  provider: string;
  callback_url: string;
  client_state: string | null;
  locale: string | null;
  link_user_id: string | null;
  secrets_enc: string;
  created_at: Date | string;
  expires_at: Date | string;
}

const toRecord = (r: StateRow): OAuthStateRecord => ({
  id: r.id,
  projectId: r.project_id,
  provider: r.provider as OAuthProvider,
  callbackUrl: r.callback_url,
  clientState: r.client_state,
  locale: r.locale,
  linkUserId: r.link_user_id,
  secretsEncrypted: r.secrets_enc,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

export class PostgresOAuthStateStore implements OAuthStateStore {
  constructor(private readonly db: Database) {}

  async insert(r: OAuthStateRecord, stateHash: string): Promise<void> {
    await this.db.em.insert(OAuthStateEntity, {
      id: r.id,
      projectId: r.projectId,
      provider: r.provider,
      stateHash,
      callbackUrl: r.callbackUrl,
      clientState: r.clientState,
      locale: r.locale,
      linkUserId: r.linkUserId,
      secretsEnc: r.secretsEncrypted,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      usedAt: null,
    });
  }

  async consume(stateHash: string, provider: OAuthProvider, at: Date): Promise<OAuthStateRecord | null> {
    const rows = await this.db.query<StateRow>(
      `update oauth_states set used_at = ?
        where state_hash = ? and provider = ? and used_at is null
        returning id, project_id, provider, callback_url, client_state, locale, link_user_id, secrets_enc, created_at, expires_at`,
      [at, stateHash, provider],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Drops states that can no longer be used. */
  async purgeExpired(before: Date): Promise<number> {
    const rows = await this.db.query('delete from oauth_states where expires_at < ? returning id', [before]);
    return rows.length;
  }
}
