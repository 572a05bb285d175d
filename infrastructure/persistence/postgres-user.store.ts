import type { UserStore } from '../../application/users/user.store';
import type { Locale } from '../../domain/locale';
import type { EndUser } from '../../domain/user';
import type { Database } from './database';
import { UserEntity } from './entities/user.entity';
import { isUuid } from './postgres-project.store';

export interface UserRowLike {
  id: string;
  projectId: string;
  email?: string | null;
  name?: string | null;
  picture?: string | null;
  provider: string;
  emailVerified: boolean;
  locale?: string | null;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Whitelists the columns that make the domain user (no password hash, no phone). */
export const userToDomain = (r: UserRowLike): EndUser => ({
  id: r.id,
  projectId: r.projectId,
  email: r.email ?? null,
  name: r.name ?? null,
  picture: r.picture ?? null,
  provider: r.provider,
  emailVerified: r.emailVerified,
  locale: (r.locale as Locale | null) ?? null,
  disabled: r.disabled,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export class PostgresUserStore implements UserStore {
  constructor(private readonly db: Database) {}

  async findById(projectId: string, userId: string): Promise<EndUser | null> {
    if (!isUuid(userId) || !isUuid(projectId)) return null;
    const row = await this.db.em.findOne(UserEntity, { id: userId, projectId }, { disableIdentityMap: true });
    return row ? userToDomain(row) : null;
  }

  async insert(user: EndUser): Promise<void> {
    await this.db.em.insert(UserEntity, {
      ...user,
      passwordHash: null,
      phone: null,
      phoneVerified: false,
    });
  }

  async update(user: EndUser): Promise<void> {
    await this.db.em.nativeUpdate(
      UserEntity,
      { id: user.id, projectId: user.projectId },
      {
        email: user.email,
        name: user.name,
        picture: user.picture,
        provider: user.provider,
        emailVerified: user.emailVerified,
        locale: user.locale,
        disabled: user.disabled,
        updatedAt: user.updatedAt,
      },
    );
  }
}
