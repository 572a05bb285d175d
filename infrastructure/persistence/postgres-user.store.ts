import type { UserStore } from '../../application/stores/user.store';
import type { Locale } from '../../domain/locale';
import type { EndUser } from '../../domain/user';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

/** The columns that make the domain user (no password hash, no phone). */
export const toEndUser = rowMapper<EndUser>({
  id: read.text,
  projectId: read.text,
  email: read.textOrNull,
  name: read.textOrNull,
  picture: read.textOrNull,
  provider: read.text,
  emailVerified: read.bool,
  locale: read.as<Locale | null>(),
  disabled: read.bool,
  createdAt: read.date,
  updatedAt: read.date,
});

export class PostgresUserStore implements UserStore {
  constructor(private readonly db: Database) {}

  async findById(projectId: string, userId: string): Promise<EndUser | null> {
    if (!isUuid(userId) || !isUuid(projectId)) return null;
    const rows = await this.db.query(`select ${toEndUser.columns} from users where id = ? and project_id = ?`, [userId, projectId]);
    return toEndUser.first(rows);
  }

  async insert(u: EndUser): Promise<void> {
    await this.db.query(
      `insert into users (id, project_id, email, name, picture, provider, email_verified, locale, password_hash,
         phone, phone_verified, disabled, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, null, null, false, ?, ?, ?)`,
      [u.id, u.projectId, u.email, u.name, u.picture, u.provider, u.emailVerified, u.locale, u.disabled, u.createdAt, u.updatedAt],
    );
  }

  async update(u: EndUser): Promise<void> {
    await this.db.query(
      `update users set email = ?, name = ?, picture = ?, provider = ?, email_verified = ?, locale = ?, disabled = ?, updated_at = ?
        where id = ? and project_id = ?`,
      [u.email, u.name, u.picture, u.provider, u.emailVerified, u.locale, u.disabled, u.updatedAt, u.id, u.projectId],
    );
  }
}
