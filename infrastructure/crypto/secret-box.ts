import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../application/ports/crypto';

/**
 * AES-256-GCM with the deployment key (TOLLGATE_SECRET_KEY). Output: `v1.<iv>.<tag>.<ciphertext>`,
 * base64url parts; the version prefix leaves room for key rotation.
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = key;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(ciphertext: string): string {
    const [version, iv, tag, data] = ciphertext.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unrecognised ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** Parses a deployment key given as base64 / base64url (32 bytes) or 64 hex characters. */
export function parseSecretKey(value: string): Buffer {
  const trimmed = value.trim();
  const asHex = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : null;
  const key = asHex ?? Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
  if (key.length !== 32) throw new Error('TOLLGATE_SECRET_KEY must be 32 bytes, given as base64 or 64 hex characters');
  return key;
}
