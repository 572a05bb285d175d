import type { OAuthProvider } from '../../domain/providers';

/** A pending OAuth sign-in, created at initiation and consumed once by the callback. */
export interface OAuthStateRecord {
  id: string;
  projectId: string;
  provider: OAuthProvider;
  callbackUrl: string;
  /** The client's opaque state, passed back unchanged. */
  clientState: string | null;
  locale: string | null;
  /** Explicit link target (already checked against its link_token). */
  linkUserId: string | null;
  /** PKCE verifier and nonce, encrypted with the deployment key. */
  secretsEncrypted: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface OAuthStateStore {
  insert(record: OAuthStateRecord, stateHash: string): Promise<void>;
  /**
   * Marks the state used, in one statement, and returns it; null when unknown, already used, or
   * issued for another provider. Expired states are returned (and consumed) so the caller can say so.
   */
  consume(stateHash: string, provider: OAuthProvider, at: Date): Promise<OAuthStateRecord | null>;
}
