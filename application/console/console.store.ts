import type { ConsoleAccount, ConsoleInvitation, ConsoleProjectMember, ConsoleRole, ConsoleSession, ConsoleTotp } from '../../domain/console';

/** Console accounts, their sessions, one-time sign-in links and project memberships. */
export interface ConsoleStore {
  insertAccount(account: ConsoleAccount, emailKey: string, passwordHash: string | null): Promise<'inserted' | 'email_taken'>;
  findAccountById(id: string): Promise<ConsoleAccount | null>;
  /** The account with this lookup key, with its password hash (null: none set yet). */
  findAccountByEmailKey(emailKey: string): Promise<{ account: ConsoleAccount; passwordHash: string | null } | null>;
  setPasswordHash(accountId: string, passwordHash: string, at: Date): Promise<void>;
  countAccounts(role?: ConsoleRole): Promise<number>;

  /** The account's authenticator app, pending or confirmed; null when it has none. */
  findTotp(accountId: string): Promise<ConsoleTotp | null>;
  /** Stores a new pending secret (replacing a pending one); false when a confirmed one exists. */
  savePendingTotp(accountId: string, secretEncrypted: string, at: Date): Promise<boolean>;
  /** Confirms the pending secret with the step of its first code; false when there is none pending. */
  confirmTotp(accountId: string, step: number, at: Date): Promise<boolean>;
  /** Spends a time step: true only when it is later than the last one accepted (atomic: one winner). */
  useTotpStep(accountId: string, step: number): Promise<boolean>;
  /** Forgets the account's authenticator app; false when it had none. */
  clearTotp(accountId: string, at: Date): Promise<boolean>;

  insertSession(session: ConsoleSession, tokenHash: string): Promise<void>;
  /** A session that is not revoked, by the hash of its token. */
  findSessionByTokenHash(tokenHash: string): Promise<ConsoleSession | null>;
  touchSession(sessionId: string, at: Date): Promise<void>;
  revokeSession(sessionId: string, at: Date): Promise<void>;
  /** Ends every session of the account. */
  revokeAccountSessions(accountId: string, at: Date): Promise<void>;

  insertSignInLink(link: { id: string; accountId: string; expiresAt: Date; createdAt: Date }, tokenHash: string): Promise<void>;
  /** Marks an unused, unexpired link used and answers its account id; null when there is none (atomic: one winner). */
  consumeSignInLink(tokenHash: string, now: Date): Promise<string | null>;
  /** The account id of an unused, unexpired link, without using it up; null when there is none. */
  findSignInLink(tokenHash: string, now: Date): Promise<string | null>;

  addMembership(accountId: string, projectId: string, at: Date): Promise<void>;
  isMember(accountId: string, projectId: string): Promise<boolean>;
  projectIdsOf(accountId: string): Promise<string[]>;
  /** Ends a membership; false when there was none. */
  removeMembership(accountId: string, projectId: string): Promise<boolean>;
  /** The project's members (by membership, oldest first), then every operator. */
  listProjectMembers(projectId: string): Promise<ConsoleProjectMember[]>;
  countMembers(projectId: string): Promise<number>;
  /** Every console account, oldest first, with the projects it is a member of. */
  listAccounts(): Promise<Array<ConsoleAccount & { projectIds: string[] }>>;

  insertInvitation(invitation: ConsoleInvitation, emailKey: string, tokenHash: string): Promise<void>;
  /** Revokes the pending invitation (if any) of this address to this project. */
  revokePendingInvitation(projectId: string, emailKey: string, at: Date): Promise<void>;
  /** Revokes one pending invitation of the project; false when there is none. */
  revokeInvitation(projectId: string, invitationId: string, at: Date): Promise<boolean>;
  /** The project's invitations neither accepted nor revoked (expired ones too), newest first, with the inviter's email. */
  listPendingInvitations(projectId: string): Promise<Array<ConsoleInvitation & { invitedByEmail: string | null }>>;
  /** The lookup key of the address a pending, unexpired invitation is for, without using it up; null when there is none. */
  findPendingInvitationEmailKey(tokenHash: string, now: Date): Promise<string | null>;
  /** Marks a pending, unexpired invitation accepted and answers it; null when there is none (atomic: one winner). */
  consumeInvitation(tokenHash: string, now: Date): Promise<(ConsoleInvitation & { emailKey: string }) | null>;
}
