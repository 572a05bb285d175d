/** The single-use code handed to the project in the callback redirect. */
export interface AuthorizationCodeRecord {
  id: string;
  projectId: string;
  userId: string;
  provider: string;
  /** Where the user was at the provider's callback (the browser); null for codes from before it was kept. */
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface AuthorizationCodeStore {
  insert(record: AuthorizationCodeRecord, codeHash: string): Promise<void>;
  /** Marks an unused, unexpired code of the project used, in one statement; null otherwise. */
  consume(projectId: string, codeHash: string, at: Date): Promise<AuthorizationCodeRecord | null>;
  /** Flags an already-used code of the project as replayed; returns its id, or null when it was never used. */
  markReplayed(projectId: string, codeHash: string, at: Date): Promise<string | null>;
  wasReplayed(codeId: string): Promise<boolean>;
}
