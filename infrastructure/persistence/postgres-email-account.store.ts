import type { EmailAccount, EmailAccountChanges, EmailAccountStore } from '../../application/email/email-account.store';
import type { EndUser } from '../../domain/user';
import type { Database } from './database';
import { toEndUser } from './postgres-user.store';
import { isUuid, read } from './rows';

const COLUMNS = `${toEndUser.columns}, password_hash`;

const toAccount = (row: object): EmailAccount => ({
  user: toEndUser(row),
  passwordHash: read.textOrNull((row as { password_hash?: unknown }).password_hash),
});

/** Email sign-in accounts in the `users` table, keyed by `login_email` (partial unique index). */
export class PostgresEmailAccountStore implements EmailAccountStore {
  constructor(private readonly db: Database) {}

  async findByLoginEmail(projectId: string, emailKey: string): Promise<EmailAccount | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(`select ${COLUMNS} from users where project_id = ? and login_email = ?`, [projectId, emailKey]);
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async insertWithLoginEmail(user: EndUser, emailKey: string, passwordHash: string | null): Promise<boolean> {
    const rows = await this.db.query(
      `insert into users (id, project_id, email, name, picture, provider, email_verified, locale, password_hash,
         phone, phone_verified, disabled, created_at, updated_at, login_email)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, null, false, ?, ?, ?, ?)
       on conflict (project_id, login_email) where login_email is not null do nothing
       returning id`,
      [
        user.id,
        user.projectId,
        user.email,
        user.name,
        user.picture,
        user.provider,
        user.emailVerified,
        user.locale,
        passwordHash,
        user.disabled,
        user.createdAt,
        user.updatedAt,
        emailKey,
      ],
    );
    return rows.length === 1;
  }

  async findLinkCandidate(projectId: string, emailKey: string): Promise<EndUser | null> {
    if (!isUuid(projectId)) return null;
    const rows = await this.db.query(
      `select ${toEndUser.columns} from users
        where project_id = ? and lower(email) = ? and login_email is null and email_verified and not disabled
        order by created_at, id limit 1`,
      [projectId, emailKey],
    );
    return toEndUser.first(rows);
  }

  async attachLoginEmail(projectId: string, userId: string, emailKey: string): Promise<boolean> {
    const rows = await this.db.query(
      `update users set login_email = ?
        where project_id = ? and id = ? and login_email is null
          and not exists (select 1 from users u where u.project_id = ? and u.login_email = ?)
        returning id`,
      [emailKey, projectId, userId, projectId, emailKey],
    );
    return rows.length === 1;
  }

  async update(projectId: string, userId: string, changes: EmailAccountChanges, at: Date): Promise<void> {
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [at];
    const columns: ReadonlyArray<readonly [string, unknown]> = [
      ['provider', changes.provider],
      ['email_verified', changes.emailVerified],
      ['locale', changes.locale],
      ['password_hash', changes.passwordHash],
    ];
    for (const [column, value] of columns) {
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      params.push(value);
    }
    await this.db.query(`update users set ${sets.join(', ')} where project_id = ? and id = ?`, [...params, projectId, userId]);
  }
}
