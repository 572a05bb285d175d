import type { Locale } from '../../domain/locale';

export interface MagicLinkRecord {
  id: string;
  projectId: string;
  /** Canonical address the link was sent to. */
  email: string;
  emailKey: string;
  /** The account that existed when the link was sent; null when the click should create one. */
  userId: string | null;
  callbackUrl: string;
  /** Explicit locale preference to store on a user created by the click. */
  locale: Locale | null;
  /** Locale the email was written in; the pages answering the click use it too. */
  mailLocale: Locale;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** One-time magic-link tokens, stored as hashes. */
export interface MagicLinkStore {
  insert(record: Omit<MagicLinkRecord, 'usedAt'>, tokenHash: string): Promise<void>;
  findByHash(tokenHash: string): Promise<MagicLinkRecord | null>;
  /** Marks the link used in one atomic statement when unused and unexpired at `now`; its record or null. */
  consume(tokenHash: string, now: Date): Promise<MagicLinkRecord | null>;
}
