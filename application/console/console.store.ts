import type { ConsoleAccount, ConsoleRole, ConsoleSession } from '../../domain/console';

/** Console accounts, their sessions, one-time sign-in links and project memberships. */
export interface ConsoleStore {
  insertAccount(account: ConsoleAccount, emailKey: string, passwordHash: string | null): Promise<'inserted' | 'email_taken'>;
  findAccountById(id: string): Promise<ConsoleAccount | null>;
  /** The account with this lookup key, with its password hash (null: none set yet). */
  findAccountByEmailKey(emailKey: string): Promise<{ account: ConsoleAccount; passwordHash: string | null } | null>;
  setPasswordHash(accountId: string, passwordHash: string, at: Date): Promise<void>;
  countAccounts(role?: ConsoleRole): Promise<number>;

  insertSession(session: ConsoleSession, tokenHash: string): Promise<void>;
  /** A session that is not revoked, by the hash of its token. */
  findSessionByTokenHash(tokenHash: string): Promise<ConsoleSession | null>;
  touchSession(sessionId: string, at: Date): Promise<void>;
  revokeSession(sessionId: string, at: Date): Promise<void>;

  insertSignInLink(link: { id: string; accountId: string; expiresAt: Date; createdAt: Date }, tokenHash: string): Promise<void>;
  /** Marks an unused, unexpired link used and answers its account id; null when there is none (atomic: one winner). */
  consumeSignInLink(tokenHash: string, now: Date): Promise<string | null>;

  addMembership(accountId: string, projectId: string, at: Date): Promise<void>;
  isMember(accountId: string, projectId: string): Promise<boolean>;
  projectIdsOf(accountId: string): Promise<string[]>;
}
