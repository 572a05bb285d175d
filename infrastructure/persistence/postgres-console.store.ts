import type { ConsoleStore } from '../../application/console/console.store';
import type { ConsoleAccount, ConsoleInvitation, ConsoleProjectMember, ConsoleRole, ConsoleSession, ConsoleTotp } from '../../domain/console';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

const toAccount = rowMapper<ConsoleAccount>({
  id: read.text,
  email: read.text,
  role: read.as<ConsoleRole>(),
  createdAt: read.date,
  totpEnabled: read.bool,
});

const toTotp = rowMapper<ConsoleTotp>({
  secretEncrypted: ['totp_secret_encrypted', read.text],
  confirmedAt: ['totp_confirmed_at', read.dateOrNull],
  lastStep: ['totp_last_step', read.numberOrNull],
});

const toSession = rowMapper<ConsoleSession>({
  id: read.text,
  accountId: read.text,
  createdAt: read.date,
  lastSeenAt: read.date,
  expiresAt: read.date,
});

const toInvitation = rowMapper<ConsoleInvitation>({
  id: read.text,
  projectId: read.text,
  email: read.text,
  invitedBy: read.textOrNull,
  createdAt: read.date,
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
    const rows = await this.db.query<Record<string, unknown>>(`select ${toAccount.columns}, password_hash from console_accounts where email_key = ?`, [
      emailKey,
    ]);
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

  async findTotp(accountId: string): Promise<ConsoleTotp | null> {
    if (!isUuid(accountId)) return null;
    return toTotp.first(await this.db.query(`select ${toTotp.columns} from console_accounts where id = ? and totp_secret_encrypted is not null`, [accountId]));
  }

  async savePendingTotp(accountId: string, secretEncrypted: string, at: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update console_accounts set totp_secret_encrypted = ?, totp_confirmed_at = null, totp_last_step = null, updated_at = ?
        where id = ? and totp_confirmed_at is null returning id`,
      [secretEncrypted, at, accountId],
    );
    return rows.length > 0;
  }

  async confirmTotp(accountId: string, step: number, at: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update console_accounts set totp_confirmed_at = ?, totp_last_step = ?, updated_at = ?
        where id = ? and totp_secret_encrypted is not null and totp_confirmed_at is null returning id`,
      [at, step, at, accountId],
    );
    return rows.length > 0;
  }

  async useTotpStep(accountId: string, step: number): Promise<boolean> {
    const rows = await this.db.query(
      `update console_accounts set totp_last_step = ?
        where id = ? and totp_confirmed_at is not null and (totp_last_step is null or totp_last_step < ?) returning id`,
      [step, accountId, step],
    );
    return rows.length > 0;
  }

  async clearTotp(accountId: string, at: Date): Promise<boolean> {
    const rows = await this.db.query(
      `update console_accounts set totp_secret_encrypted = null, totp_confirmed_at = null, totp_last_step = null, updated_at = ?
        where id = ? and totp_secret_encrypted is not null returning id`,
      [at, accountId],
    );
    return rows.length > 0;
  }

  async insertSession(s: ConsoleSession, tokenHash: string): Promise<void> {
    await this.db.query(`insert into console_sessions (id, account_id, token_hash, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?, ?)`, [
      s.id,
      s.accountId,
      tokenHash,
      s.createdAt,
      s.lastSeenAt,
      s.expiresAt,
    ]);
  }

  async findSessionByTokenHash(tokenHash: string): Promise<ConsoleSession | null> {
    return toSession.first(await this.db.query(`select ${toSession.columns} from console_sessions where token_hash = ? and revoked_at is null`, [tokenHash]));
  }

  async touchSession(sessionId: string, at: Date): Promise<void> {
    await this.db.query('update console_sessions set last_seen_at = greatest(last_seen_at, ?) where id = ?', [at, sessionId]);
  }

  async revokeSession(sessionId: string, at: Date): Promise<void> {
    await this.db.query('update console_sessions set revoked_at = ? where id = ? and revoked_at is null', [at, sessionId]);
  }

  async revokeAccountSessions(accountId: string, at: Date): Promise<void> {
    await this.db.query('update console_sessions set revoked_at = ? where account_id = ? and revoked_at is null', [at, accountId]);
  }

  async insertSignInLink(link: { id: string; accountId: string; expiresAt: Date; createdAt: Date }, tokenHash: string): Promise<void> {
    await this.db.query('insert into console_sign_in_links (id, account_id, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?)', [
      link.id,
      link.accountId,
      tokenHash,
      link.createdAt,
      link.expiresAt,
    ]);
  }

  async consumeSignInLink(tokenHash: string, now: Date): Promise<string | null> {
    const rows = await this.db.query<{ account_id: string }>(
      'update console_sign_in_links set used_at = ? where token_hash = ? and used_at is null and expires_at > ? returning account_id',
      [now, tokenHash, now],
    );
    return rows[0]?.account_id ?? null;
  }

  async findSignInLink(tokenHash: string, now: Date): Promise<string | null> {
    const rows = await this.db.query<{ account_id: string }>(
      'select account_id from console_sign_in_links where token_hash = ? and used_at is null and expires_at > ?',
      [tokenHash, now],
    );
    return rows[0]?.account_id ?? null;
  }

  async addMembership(accountId: string, projectId: string, at: Date): Promise<void> {
    await this.db.query('insert into console_memberships (account_id, project_id, created_at) values (?, ?, ?) on conflict do nothing', [
      accountId,
      projectId,
      at,
    ]);
  }

  async isMember(accountId: string, projectId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(accountId)) return false;
    const rows = await this.db.query('select 1 from console_memberships where account_id = ? and project_id = ?', [accountId, projectId]);
    return rows.length > 0;
  }

  async projectIdsOf(accountId: string): Promise<string[]> {
    const rows = await this.db.query<{ project_id: string }>('select project_id from console_memberships where account_id = ? order by created_at', [
      accountId,
    ]);
    return rows.map((r) => r.project_id);
  }

  async removeMembership(accountId: string, projectId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(accountId)) return false;
    const rows = await this.db.query('delete from console_memberships where account_id = ? and project_id = ? returning account_id', [accountId, projectId]);
    return rows.length > 0;
  }

  async listProjectMembers(projectId: string): Promise<ConsoleProjectMember[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query<{ account_id: string; email: string; role: ConsoleRole; since: Date }>(
      `select a.id as account_id, a.email, a.role, m.created_at as since, 0 as rank
         from console_memberships m join console_accounts a on a.id = m.account_id where m.project_id = ?
       union all
       select a.id, a.email, a.role, a.created_at, 1 from console_accounts a
         where a.role = 'operator' and not exists (select 1 from console_memberships m where m.account_id = a.id and m.project_id = ?)
       order by rank, since, email`,
      [projectId, projectId],
    );
    return rows.map((r) => ({ accountId: r.account_id, email: r.email, role: r.role, since: read.date(r.since) }));
  }

  async countMembers(projectId: string): Promise<number> {
    if (!isUuid(projectId)) return 0;
    // Locks the project's memberships, so two members leaving at once cannot both be "not the last".
    const rows = await this.db.query('select account_id from console_memberships where project_id = ? for update', [projectId]);
    return rows.length;
  }

  async listAccounts(): Promise<Array<ConsoleAccount & { projectIds: string[] }>> {
    const rows = await this.db.query<Record<string, unknown> & { project_ids: string[] | null }>(
      `select ${toAccount.columns},
              (select array_agg(m.project_id::text order by m.created_at) from console_memberships m where m.account_id = console_accounts.id) as project_ids
         from console_accounts order by created_at, email`,
    );
    return rows.map((r) => ({ ...toAccount(r), projectIds: r.project_ids ?? [] }));
  }

  async insertInvitation(i: ConsoleInvitation, emailKey: string, tokenHash: string): Promise<void> {
    await this.db.query(
      `insert into console_invitations (id, project_id, email, email_key, invited_by, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?, ?, ?, ?)`,
      [i.id, i.projectId, i.email, emailKey, i.invitedBy, tokenHash, i.createdAt, i.expiresAt],
    );
  }

  async revokePendingInvitation(projectId: string, emailKey: string, at: Date): Promise<void> {
    await this.db.query('update console_invitations set revoked_at = ? where project_id = ? and email_key = ? and accepted_at is null and revoked_at is null', [
      at,
      projectId,
      emailKey,
    ]);
  }

  async revokeInvitation(projectId: string, invitationId: string, at: Date): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(invitationId)) return false;
    const rows = await this.db.query(
      'update console_invitations set revoked_at = ? where id = ? and project_id = ? and accepted_at is null and revoked_at is null returning id',
      [at, invitationId, projectId],
    );
    return rows.length > 0;
  }

  async listPendingInvitations(projectId: string): Promise<Array<ConsoleInvitation & { invitedByEmail: string | null }>> {
    if (!isUuid(projectId)) return [];
    const rows = await this.db.query<Record<string, unknown>>(
      `select i.id, i.project_id, i.email, i.invited_by, i.created_at, i.expires_at, a.email as invited_by_email
         from console_invitations i left join console_accounts a on a.id = i.invited_by
        where i.project_id = ? and i.accepted_at is null and i.revoked_at is null
        order by i.created_at desc`,
      [projectId],
    );
    return rows.map((r) => ({ ...toInvitation(r), invitedByEmail: read.textOrNull(r.invited_by_email) }));
  }

  async findPendingInvitationEmailKey(tokenHash: string, now: Date): Promise<string | null> {
    const rows = await this.db.query<{ email_key: string }>(
      'select email_key from console_invitations where token_hash = ? and accepted_at is null and revoked_at is null and expires_at > ?',
      [tokenHash, now],
    );
    return rows[0]?.email_key ?? null;
  }

  async consumeInvitation(tokenHash: string, now: Date): Promise<(ConsoleInvitation & { emailKey: string }) | null> {
    const rows = await this.db.query<Record<string, unknown>>(
      `update console_invitations set accepted_at = ?
        where token_hash = ? and accepted_at is null and revoked_at is null and expires_at > ?
        returning id, project_id, email, invited_by, created_at, expires_at, email_key`,
      [now, tokenHash, now],
    );
    const row = rows[0];
    return row ? { ...toInvitation(row), emailKey: read.text(row.email_key) } : null;
  }
}
