import type { BillingConnection, BillingConnectionStore } from '../../application/billing/billing.store';
import type { ProcessorKind } from '../../application/billing/payment-processor';
import type { SecretBox } from '../../application/ports/crypto';
import type { Database } from './database';
import { isUuid, read, rowMapper } from './rows';

/** The row as stored: the two secrets still encrypted. */
const toStoredConnection = rowMapper<BillingConnection>({
  projectId: read.text,
  processor: read.as<ProcessorKind>(),
  secretKey: ['secret_key_enc', read.textOrNull],
  publishableKey: read.textOrNull,
  webhookSecret: ['webhook_secret_enc', read.textOrNull],
  keyLast4: ['key_last4', read.textOrNull],
  livemode: read.bool,
  accountId: read.textOrNull,
  currency: read.text,
  connectedAt: read.date,
  updatedAt: read.date,
});

/**
 * A project's billing connection. The Stripe secret key and webhook signing secret are stored only
 * encrypted with the SecretBox (secret_key_enc, webhook_secret_enc) and decrypted on read, in memory.
 */
export class PostgresBillingConnectionStore implements BillingConnectionStore {
  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {}

  async get(projectId: string): Promise<BillingConnection | null> {
    if (!isUuid(projectId)) return null;
    const stored = toStoredConnection.first(
      await this.db.query(`select ${toStoredConnection.columns} from billing_connections where project_id = ?`, [projectId]),
    );
    if (stored === null) return null;
    return { ...stored, secretKey: this.open(stored.secretKey), webhookSecret: this.open(stored.webhookSecret) };
  }

  async save(c: BillingConnection): Promise<void> {
    await this.db.query(
      `insert into billing_connections (project_id, processor, secret_key_enc, webhook_secret_enc, publishable_key, key_last4,
         livemode, account_id, currency, connected_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (project_id) do update set
         processor = excluded.processor, secret_key_enc = excluded.secret_key_enc, webhook_secret_enc = excluded.webhook_secret_enc,
         publishable_key = excluded.publishable_key, key_last4 = excluded.key_last4, livemode = excluded.livemode,
         account_id = excluded.account_id, currency = excluded.currency, connected_at = excluded.connected_at,
         updated_at = excluded.updated_at`,
      [
        c.projectId,
        c.processor,
        this.seal(c.secretKey),
        this.seal(c.webhookSecret),
        c.publishableKey,
        c.keyLast4,
        c.livemode,
        c.accountId,
        c.currency,
        c.connectedAt,
        c.updatedAt,
      ],
    );
  }

  async remove(projectId: string): Promise<boolean> {
    if (!isUuid(projectId)) return false;
    const rows = await this.db.query('delete from billing_connections where project_id = ? returning project_id', [projectId]);
    return rows.length > 0;
  }

  private seal(secret: string | null): string | null {
    return secret === null ? null : this.box.encrypt(secret);
  }

  private open(encrypted: string | null): string | null {
    return encrypted === null ? null : this.box.decrypt(encrypted);
  }
}
