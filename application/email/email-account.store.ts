import type { Locale } from '../../domain/locale';
import type { EndUser } from '../../domain/user';

/** A user that signs in with an email address (password and/or magic link). */
export interface EmailAccount {
  user: EndUser;
  /** argon2id hash; null for accounts that only ever used magic links. */
  passwordHash: string | null;
}

export interface EmailAccountChanges {
  provider?: string;
  emailVerified?: boolean;
  locale?: Locale;
  passwordHash?: string;
}

/**
 * Persistence of email sign-in accounts. An account is an end user with a login email: the
 * lower-cased canonical address, unique per project. Users of OAuth providers carry no login
 * email, so the same address can exist on several users without clashing.
 */
export interface EmailAccountStore {
  findByLoginEmail(projectId: string, emailKey: string): Promise<EmailAccount | null>;
  /** Inserts the user with its login email; false (and nothing written) when the email is taken. */
  insertWithLoginEmail(user: EndUser, emailKey: string, passwordHash: string | null): Promise<boolean>;
  /** The oldest enabled user without a login email whose verified address matches, for account linking. */
  findLinkCandidate(projectId: string, emailKey: string): Promise<EndUser | null>;
  /** Gives an existing user this login email; false when it already has one or the email is taken. */
  attachLoginEmail(projectId: string, userId: string, emailKey: string): Promise<boolean>;
  update(projectId: string, userId: string, changes: EmailAccountChanges, at: Date): Promise<void>;
}
