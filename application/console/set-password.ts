import { checkPassword, type PasswordPolicyError } from '../../domain/password-policy';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { PasswordHasher } from '../ports/crypto';
import type { ConsoleStore } from './console.store';

/** Sets (or changes) a signed-in console account's password, under the same rules as end users' passwords. */
export function makeSetConsolePassword(deps: { store: Pick<ConsoleStore, 'setPasswordHash'>; hasher: PasswordHasher; clock: Clock }) {
  return async (accountId: string, password: string): Promise<Result<true, PasswordPolicyError>> => {
    const policy = checkPassword(password);
    if (!policy.ok) return err(policy.error);
    await deps.store.setPasswordHash(accountId, await deps.hasher.hash(password), deps.clock.now());
    return ok(true);
  };
}
