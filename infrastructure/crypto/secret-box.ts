import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../application/ports/crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM with the deployment key (TOLLGATE_SECRET_KEY). Output: `v1.<iv>.<tag>.<ciphertext>`,
 * base64url parts; the version prefix leaves room for key rotation. Decryption accepts only a
 * full 16-byte tag and a 12-byte IV: GCM would otherwise verify a truncated tag, which makes
 * forgeries cheap.
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = key;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(ciphertext: string): string {
    const parts = ciphertext.split('.');
    const [version, ivText, tagText, dataText] = parts;
    if (parts.length !== 4 || version !== 'v1' || !isBase64Url(ivText!) || !isBase64Url(tagText!) || !isBase64Url(dataText!)) {
      throw new Error('unrecognised ciphertext');
    }
    const iv = Buffer.from(ivText!, 'base64url');
    const tag = Buffer.from(tagText!, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('unrecognised ciphertext');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(dataText!, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('ciphertext could not be authenticated (tampered, or encrypted with another key)');
    }
  }
}

function isBase64Url(value: string): boolean {
  return /^[A-Za-z0-9_-]*$/.test(value);
}

const KEY_FORMAT_MESSAGE = 'TOLLGATE_SECRET_KEY must be 32 bytes, given as base64, base64url or 64 hex characters';

/**
 * Parses a deployment key given as base64 / base64url (32 bytes, padding optional) or 64 hex
 * characters. Anything else is refused, including characters outside those alphabets, which
 * Node's decoder would otherwise skip silently.
 */
export function parseSecretKey(value: string): Buffer {
  const trimmed = value.trim();
  let key: Buffer;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  else if (/^[A-Za-z0-9_-]+={0,2}$/.test(trimmed)) key = Buffer.from(trimmed, 'base64url');
  else throw new Error(KEY_FORMAT_MESSAGE);
  if (key.length !== 32) throw new Error(KEY_FORMAT_MESSAGE);
  return key;
}
