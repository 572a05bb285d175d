import type { Identity, IdentityStore } from '../../application/oauth/identity.store';
import type { LinkCandidate } from '../../domain/oauth/linking';
import { normalizeEmail } from '../../domain/oauth/profile';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toIdentity = rowMapper<Identity>({
  id: read.text,
  projectId: read.text,
  userId: read.text,
  provider: read.text,
  providerUserId: read.text,
  email: read.textOrNull,
  emailVerified: read.bool,
  name: read.textOrNull,
  picture: read.textOrNull,
  createdAt: read.date,
  updatedAt: read.date,
});

const toLinkCandidate = rowMapper<LinkCandidate>({
  userId: ['id', read.text],
  emailVerified: read.bool,
  disabled: read.bool,
  providers: (v) => (v as string[] | null) ?? [],
});

export class PostgresIdentityStore implements IdentityStore {
  constructor(private readonly db: Database) {}

  async find(projectId: string, provider: string, providerUserId: string): Promise<Identity | null> {
    const rows = await this.db.query(`select ${toIdentity.columns} from user_identities where project_id = ? and provider = ? and provider_user_id = ?`, [
      projectId,
      provider,
      providerUserId,
    ]);
    return toIdentity.first(rows);
  }

  async insert(i: Identity): Promise<boolean> {
    const rows = await this.db.query(
      `insert into user_identities (id, project_id, user_id, provider, provider_user_id, email, email_verified, name, picture, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (project_id, provider, provider_user_id) do nothing
       returning id`,
      [i.id, i.projectId, i.userId, i.provider, i.providerUserId, i.email, i.emailVerified, i.name, i.picture, i.createdAt, i.updatedAt],
    );
    return rows.length === 1;
  }

  async update(i: Identity): Promise<void> {
    await this.db.query('update user_identities set email = ?, email_verified = ?, name = ?, picture = ?, updated_at = ? where id = ?', [
      i.email,
      i.emailVerified,
      i.name,
      i.picture,
      i.updatedAt,
      i.id,
    ]);
  }

  async linkCandidates(projectId: string, email: string): Promise<LinkCandidate[]> {
    const rows = await this.db.query(
      `select u.id, u.email_verified, u.disabled,
              array_remove(array_agg(i.provider), null) as providers
         from users u
         left join user_identities i on i.user_id = u.id
        where u.project_id = ? and lower(u.email) = ?
        group by u.id`,
      [projectId, normalizeEmail(email)],
    );
    return rows.map(toLinkCandidate);
  }

  async listByUser(projectId: string, userId: string): Promise<Identity[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.db.query(`select ${toIdentity.columns} from user_identities where project_id = ? and user_id = ? order by created_at`, [
      projectId,
      userId,
    ]);
    return rows.map(toIdentity);
  }
}
