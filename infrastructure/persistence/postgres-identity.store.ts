import type { Identity, IdentityStore } from '../../application/oauth/identity.store';
import type { LinkCandidate } from '../../domain/oauth/linking';
import { normalizeEmail } from '../../domain/oauth/profile';
import type { Database } from './database';
import { IdentityEntity } from './entities/oauth.entity';
import { isUuid } from './postgres-project.store';

type Row = {
  id: string;
  projectId: string;
  userId: string;
  provider: string;
  providerUserId: string;
  email?: string | null;
  emailVerified: boolean;
  name?: string | null;
  picture?: string | null;
  createdAt: Date;
  updatedAt: Date;
};

const toDomain = (r: Row): Identity => ({
  id: r.id,
  projectId: r.projectId,
  userId: r.userId,
  provider: r.provider,
  providerUserId: r.providerUserId,
  email: r.email ?? null,
  emailVerified: r.emailVerified,
  name: r.name ?? null,
  picture: r.picture ?? null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export class PostgresIdentityStore implements IdentityStore {
  constructor(private readonly db: Database) {}

  async find(projectId: string, provider: string, providerUserId: string): Promise<Identity | null> {
    const row = await this.db.em.findOne(IdentityEntity, { projectId, provider, providerUserId }, { disableIdentityMap: true });
    return row ? toDomain(row) : null;
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
    await this.db.em.nativeUpdate(
      IdentityEntity,
      { id: i.id },
      { email: i.email, emailVerified: i.emailVerified, name: i.name, picture: i.picture, updatedAt: i.updatedAt },
    );
  }

  async linkCandidates(projectId: string, email: string): Promise<LinkCandidate[]> {
    const rows = await this.db.query<{ id: string; email_verified: boolean; disabled: boolean; providers: string[] | null }>(
      `select u.id, u.email_verified, u.disabled,
              array_remove(array_agg(i.provider), null) as providers
         from users u
         left join user_identities i on i.user_id = u.id
        where u.project_id = ? and lower(u.email) = ?
        group by u.id`,
      [projectId, normalizeEmail(email)],
    );
    return rows.map((r) => ({ userId: r.id, emailVerified: r.email_verified, disabled: r.disabled, providers: r.providers ?? [] }));
  }

  async listByUser(projectId: string, userId: string): Promise<Identity[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.db.em.find(IdentityEntity, { projectId, userId }, { orderBy: { createdAt: 'asc' }, disableIdentityMap: true });
    return rows.map(toDomain);
  }
}
