import type { FactorMethod } from '../../domain/mfa';
import type { EndUser } from '../../domain/user';

/** A provider linked to an end user (an OAuth account, or email for a password or magic-link sign-in). */
export interface LinkedIdentity {
  provider: string;
  /** The email that provider gave, when it gave one. */
  email: string | null;
  createdAt: Date;
}

/** An MFA factor of an end user as an operator sees it: its kind and when it was set up, never a secret. */
export interface MfaFactorSummary {
  kind: FactorMethod;
  createdAt: Date;
  /** Backup codes: how many are still unused; null for the other kinds. */
  remaining: number | null;
}

/** Where a page of users starts: after this user in newest-first order. */
export interface UserListPosition {
  createdAt: Date;
  id: string;
}

/** The operator's read view of a project's end users (the console's Users page, `tollgate user list|show`). */
export interface UserDirectory {
  /**
   * Users of the project, newest first (created, then id), whose email contains `emailContains`
   * (lower case, matched case-insensitively), after `after`, at most `limit`.
   */
  search(projectId: string, query: { emailContains?: string; after?: UserListPosition; limit: number }): Promise<EndUser[]>;
  /** The providers linked to the user, oldest first. */
  identities(projectId: string, userId: string): Promise<LinkedIdentity[]>;
  /** The user's enrolled factors: confirmed TOTP, SMS on a verified phone, unused backup codes. */
  mfaFactors(projectId: string, userId: string): Promise<MfaFactorSummary[]>;
  /** The emails of these users of the project, by user id (a user without an email, or deleted, is absent). */
  emails(projectId: string, userIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}
