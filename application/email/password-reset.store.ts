export interface PasswordResetRecord {
  id: string;
  projectId: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** Password reset tokens, stored as hashes, single use. */
export interface PasswordResetStore {
  insert(record: Omit<PasswordResetRecord, 'usedAt'>, tokenHash: string): Promise<void>;
  exists(id: string): Promise<boolean>;
  findByHash(projectId: string, tokenHash: string): Promise<PasswordResetRecord | null>;
  /** Marks the token used in one atomic statement when unused and unexpired at `now`; its record or null. */
  consume(projectId: string, tokenHash: string, now: Date): Promise<PasswordResetRecord | null>;
  /** Ends every outstanding token of the user (a newer request or a completed reset). */
  invalidateAllForUser(projectId: string, userId: string, at: Date): Promise<void>;
}
