/** Symmetric encryption of secrets at rest (project signing secrets, provider credentials, TOTP seeds). */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
}

/** Randomness and one-way hashing of opaque tokens (API keys, codes, refresh tokens). */
export interface TokenCrypto {
  /** `bytes` random bytes from a CSPRNG, base64url encoded. */
  randomToken(bytes?: number): string;
  /** A uniformly random string of `length` decimal digits. */
  randomDigits(length: number): string;
  /** Hex SHA-256 of a token; tokens are stored only as this. */
  hash(token: string): string;
  /** Constant-time comparison of two strings. */
  safeEqual(a: string, b: string): boolean;
  uuid(): string;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** True when the hash was made with weaker parameters than the current ones. */
  needsRehash(hash: string): boolean;
}
