import type { MagicLinkRecord, MagicLinkStore } from '../../application/email/magic-link.store';
import { DEFAULT_LOCALE, isSupportedLocale } from '../../domain/locale';
import type { Database } from './database';

interface Row {
  id: string;
  project_id: string;
  email: string;
  email_key: string;
  user_id: string | null;
  callback_url: string;
  locale: string | null;
  mail_locale: string;
  created_at: Date | string;
  expires_at: Date | string;
  used_at: Date | string | null;
}

const toRecord = (r: Row): MagicLinkRecord => ({
  id: r.id,
  projectId: r.project_id,
  email: r.email,
  emailKey: r.email_key,
  userId: r.user_id,
  callbackUrl: r.callback_url,
  locale: r.locale && isSupportedLocale(r.locale) ? r.locale : null,
  mailLocale: isSupportedLocale(r.mail_locale) ? r.mail_locale : DEFAULT_LOCALE,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  usedAt: r.used_at ? new Date(r.used_at) : null,
});

const COLUMNS = 'id, project_id, email, email_key, user_id, callback_url, locale, mail_locale, created_at, expires_at, used_at';

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
    const rows = await this.db.query<Row>(`select ${COLUMNS} from email_magic_links where token_hash = ?`, [tokenHash]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async consume(tokenHash: string, now: Date): Promise<MagicLinkRecord | null> {
    const rows = await this.db.query<Row>(
      `update email_magic_links set used_at = ? where token_hash = ? and used_at is null and expires_at > ? returning ${COLUMNS}`,
      [now, tokenHash, now],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }
}
