import type { MagicLinkRecord, MagicLinkStore } from '../../application/email/magic-link.store';
import { DEFAULT_LOCALE, isSupportedLocale } from '../../domain/locale';
import type { Database } from './database';
import { read, rowMapper } from './rows';

const toRecord = rowMapper<MagicLinkRecord>({
  id: read.text,
  projectId: read.text,
  email: read.text,
  emailKey: read.text,
  userId: read.textOrNull,
  callbackUrl: read.text,
  locale: (v) => (typeof v === 'string' && isSupportedLocale(v) ? v : null),
  mailLocale: (v) => (typeof v === 'string' && isSupportedLocale(v) ? v : DEFAULT_LOCALE),
  createdAt: read.date,
  expiresAt: read.date,
  usedAt: read.dateOrNull,
});

export class PostgresEmailMagicLinkStore implements MagicLinkStore {
  constructor(private readonly db: Database) {}

  async insert(r: Omit<MagicLinkRecord, 'usedAt'>, tokenHash: string): Promise<void> {
    await this.db.query(
      `insert into email_magic_links (id, project_id, email, email_key, user_id, token_hash, callback_url, locale, mail_locale, created_at, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.projectId, r.email, r.emailKey, r.userId, tokenHash, r.callbackUrl, r.locale, r.mailLocale, r.createdAt, r.expiresAt],
    );
  }

  async findByHash(tokenHash: string): Promise<MagicLinkRecord | null> {
    const rows = await this.db.query(`select ${toRecord.columns} from email_magic_links where token_hash = ?`, [tokenHash]);
    return toRecord.first(rows);
  }

  async consume(tokenHash: string, now: Date): Promise<MagicLinkRecord | null> {
    const rows = await this.db.query(
      `update email_magic_links set used_at = ? where token_hash = ? and used_at is null and expires_at > ? returning ${toRecord.columns}`,
      [now, tokenHash, now],
    );
    return toRecord.first(rows);
  }
}
