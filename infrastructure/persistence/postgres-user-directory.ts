import type { LinkedIdentity, MfaFactorSummary, UserDirectory, UserListPosition } from '../../application/stores/user-directory';
import type { FactorMethod } from '../../domain/mfa';
import type { EndUser } from '../../domain/user';
import type { Database } from './database';
import { toEndUser } from './postgres-user.store';
import { isUuid, read, rowMapper } from './rows';

const toIdentity = rowMapper<LinkedIdentity>({ provider: read.text, email: read.textOrNull, createdAt: read.date });
const toFactor = rowMapper<MfaFactorSummary>({ kind: read.as<FactorMethod>(), createdAt: read.date, remaining: read.numberOrNull });

/** `like` matches these characters literally (backslash is PostgreSQL's default `like` escape). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The operator's read view of end users: the Users list (newest first, by `users_project_created_idx`,
 * the email matched with `lower(email) like`), the providers linked and the MFA factors.
 */
export class PostgresUserDirectory implements UserDirectory {
  constructor(private readonly db: Database) {}

  async search(projectId: string, query: { emailContains?: string; after?: UserListPosition; limit: number }): Promise<EndUser[]> {
    if (!isUuid(projectId)) return [];
    const where = ['project_id = ?'];
    const params: unknown[] = [projectId];
    if (query.emailContains) {
      where.push('lower(email) like ?');
      params.push(`%${likeLiteral(query.emailContains.toLowerCase())}%`);
    }
    if (query.after) {
      where.push('(created_at, id) < (?, ?::uuid)');
      params.push(query.after.createdAt, query.after.id);
    }
    const rows = await this.db.query(`select ${toEndUser.columns} from users where ${where.join(' and ')} order by created_at desc, id desc limit ?`, [
      ...params,
      query.limit,
    ]);
    return rows.map((row) => toEndUser(row));
  }

  async emails(projectId: string, userIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const ids = [...new Set(userIds.filter(isUuid))];
    if (!isUuid(projectId) || ids.length === 0) return new Map();
    const list = ids.map(() => '?').join(', ');
    const rows = await this.db.query(`select id, email from users where project_id = ? and id in (${list}) and email is not null`, [projectId, ...ids]);
    return new Map(rows.map((row) => [String(row.id), String(row.email)]));
  }

  async identities(projectId: string, userId: string): Promise<LinkedIdentity[]> {
    if (!isUuid(projectId) || !isUuid(userId)) return [];
    const rows = await this.db.query(
      `select provider, email, created_at from user_identities where project_id = ? and user_id = ? order by created_at, provider`,
      [projectId, userId],
    );
    return rows.map((row) => toIdentity(row));
  }

  async mfaFactors(projectId: string, userId: string): Promise<MfaFactorSummary[]> {
    if (!isUuid(projectId) || !isUuid(userId)) return [];
    const rows = await this.db.query(
      `select 'totp' as kind, confirmed_at as created_at, null::int as remaining
         from mfa_totp_factors where project_id = ? and user_id = ? and confirmed_at is not null
       union all
       select 'sms', f.enrolled_at, null::int
         from mfa_sms_factors f join users u on u.id = f.user_id
        where f.project_id = ? and f.user_id = ? and u.phone is not null and u.phone_verified
       union all
       select 'backup_codes', min(created_at), count(*)::int
         from mfa_backup_codes where project_id = ? and user_id = ? and used_at is null and invalidated_at is null
       having count(*) > 0`,
      [projectId, userId, projectId, userId, projectId, userId],
    );
    const order: FactorMethod[] = ['totp', 'sms', 'backup_codes'];
    return rows.map((row) => toFactor(row)).sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  }
}
