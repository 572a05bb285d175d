import type { ConsoleStore } from '../../application/console/console.store';
import type { ConsoleAccount, ConsoleRole, ConsoleSession } from '../../domain/console';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toAccount = rowMapper<ConsoleAccount>({
  id: read.text,
  email: read.text,
  role: read.as<ConsoleRole>(),
  createdAt: read.date,
});

const toSession = rowMapper<ConsoleSession>({
  id: read.text,
  accountId: read.text,
  createdAt: read.date,
  lastSeenAt: read.date,
  expiresAt: read.date,
});

export class PostgresConsoleStore implements ConsoleStore {
  constructor(private readonly db: Database) {}

  async insertAccount(a: ConsoleAccount, emailKey: string, passwordHash: string | null): Promise<'inserted' | 'email_taken'> {
    const rows = await this.db.query(
      `insert into console_accounts (id, email, email_key, password_hash, role, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?) on conflict (email_key) do nothing returning id`,
      [a.id, a.email, emailKey, passwordHash, a.role, a.createdAt, a.createdAt],
    );
    return rows.length > 0 ? 'inserted' : 'email_taken';
  }

  async findAccountById(id: string): Promise<ConsoleAccount | null> {
    if (!isUuid(id)) return null;
    return toAccount.first(await this.db.query(`select ${toAccount.columns} from console_accounts where id = ?`, [id]));
  }

  async findAccountByEmailKey(emailKey: string): Promise<{ account: ConsoleAccount; passwordHash: string | null } | null> {
    const rows = await this.db.query<Record<string, unknown>>(`select ${toAccount.columns}, password_hash from console_accounts where email_key = ?`, [emailKey]);
    const row = rows[0];
    return row ? { account: toAccount(row), passwordHash: read.textOrNull(row.password_hash) } : null;
  }

  async setPasswordHash(accountId: string, passwordHash: string, at: Date): Promise<void> {
    await this.db.query('update console_accounts set password_hash = ?, updated_at = ? where id = ?', [passwordHash, at, accountId]);
  }

  async countAccounts(role?: ConsoleRole): Promise<number> {
    const rows = await this.db.query<{ n: string }>(
      role ? 'select count(*) as n from console_accounts where role = ?' : 'select count(*) as n from console_accounts',
      role ? [role] : [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async insertSession(s: ConsoleSession, tokenHash: string): Promise<void> {
    await this.db.query(
      `insert into console_sessions (id, account_id, token_hash, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?, ?)`,
      [s.id, s.accountId, tokenHash, s.createdAt, s.lastSeenAt, s.expiresAt],
    );
  }

  async findSessionByTokenHash(tokenHash: string): Promise<ConsoleSession | null> {
    return toSession.first(
      await this.db.query(`select ${toSession.columns} from console_sessions where token_hash = ? and revoked_at is null`, [tokenHash]),
    );
  }

  async touchSession(sessionId: string, at: Date): Promise<void> {
    await this.db.query('update console_sessions set last_seen_at = greatest(last_seen_at, ?) where id = ?', [at, sessionId]);
  }

  async revokeSession(sessionId: string, at: Date): Promise<void> {
    await this.db.query('update console_sessions set revoked_at = ? where id = ? and revoked_at is null', [at, sessionId]);
  }

  async insertSignInLink(link: { id: string; accountId: string; expiresAt: Date; createdAt: Date }, tokenHash: string): Promise<void> {
    await this.db.query(
      'insert into console_sign_in_links (id, account_id, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?)',
      [link.id, link.accountId, tokenHash, link.createdAt, link.expiresAt],
    );
  }

  async consumeSignInLink(tokenHash: string, now: Date): Promise<string | null> {
    const rows = await this.db.query<{ account_id: string }>(
      'update console_sign_in_links set used_at = ? where token_hash = ? and used_at is null and expires_at > ? returning account_id',
      [now, tokenHash, now],
    );
    return rows[0]?.account_id ?? null;
  }

  async addMembership(accountId: string, projectId: string, at: Date): Promise<void> {
    await this.db.query('insert into console_memberships (account_id, project_id, created_at) values (?, ?, ?) on conflict do nothing', [accountId, projectId, at]);
  }

  async isMember(accountId: string, projectId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(accountId)) return false;
    const rows = await this.db.query('select 1 from console_memberships where account_id = ? and project_id = ?', [accountId, projectId]);
    return rows.length > 0;
  }

  async projectIdsOf(accountId: string): Promise<string[]> {
    const rows = await this.db.query<{ project_id: string }>('select project_id from console_memberships where account_id = ? order by created_at', [accountId]);
    return rows.map((r) => r.project_id);
  }
}
