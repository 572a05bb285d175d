import argon2 from 'argon2';
import type { PasswordHasher } from '../../application/ports/crypto';

/** OWASP's minimum for argon2id: 19 MiB, 2 iterations, 1 lane. */
export const ARGON2_PARAMS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * argon2id hashing. argon2 runs on libuv's thread pool, so hashing never blocks the event loop.
 */
export class Argon2PasswordHasher implements PasswordHasher {
  constructor(private readonly params: { memoryCost: number; timeCost: number; parallelism: number } = ARGON2_PARAMS) {}

  hash(password: string): Promise<string> {
    return argon2.hash(password, { ...this.params, type: argon2.argon2id });
  }

  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  needsRehash(hash: string): boolean {
    return argon2.needsRehash(hash, { ...this.params });
  }
}
