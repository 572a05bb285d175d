import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseSecretKey } from '../../infrastructure/crypto/secret-box';
import type { EmbeddedDatabase } from '../../infrastructure/persistence/embedded-postgres';
import type { CoreConfig } from './config';

/**
 * The deployment key. Production requires TOLLGATE_SECRET_KEY (checked by the config); development
 * generates one once and keeps it under the data directory.
 */
export function resolveSecretKey(config: CoreConfig): Buffer {
  if (config.TOLLGATE_SECRET_KEY) return parseSecretKey(config.TOLLGATE_SECRET_KEY);
  const file = path.resolve(config.TOLLGATE_DATA_DIR, 'secret.key');
  if (existsSync(file)) return parseSecretKey(readFileSync(file, 'utf8'));
  mkdirSync(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}

/**
 * DATABASE_URL when set; otherwise an embedded PostgreSQL with its data under the data directory
 * (loaded only then: a deployment with DATABASE_URL never loads the embedded-postgres package).
 */
export async function resolveDatabase(config: CoreConfig, log: (msg: string) => void): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  log(`DATABASE_URL is not set: starting embedded PostgreSQL (data in ${path.resolve(config.TOLLGATE_DATA_DIR, 'pgdata')})`);
  const { startEmbeddedPostgres } = await import('../../infrastructure/persistence/embedded-postgres');
  const embedded = await startEmbeddedPostgres(path.join(config.TOLLGATE_DATA_DIR, 'pgdata'));
  return { url: embedded.url, embedded };
}
