export interface VerificationCodeRecord {
  projectId: string;
  userId: string;
  codeHash: string;
  createdAt: Date;
  expiresAt: Date;
  failedAttempts: number;
  consumedAt: Date | null;
}

/** One email verification code per user at a time, stored as a hash. */
export interface VerificationCodeStore {
  /** Stores a new code for the user, replacing any earlier one (its failures are forgotten). */
  replace(record: Omit<VerificationCodeRecord, 'failedAttempts' | 'consumedAt'>): Promise<void>;
  find(projectId: string, userId: string): Promise<VerificationCodeRecord | null>;
  /**
   * Consumes the code in one atomic statement: only when it is still this code, unused, unexpired
   * at `now` and below `maxFailures`. Exactly one of any number of concurrent callers gets true.
   */
  consume(projectId: string, userId: string, codeHash: string, now: Date, maxFailures: number): Promise<boolean>;
  /** Counts a failed attempt against this code; the new count, or null when the code changed or was used. */
  recordFailure(projectId: string, userId: string, codeHash: string, maxFailures: number): Promise<number | null>;
}
