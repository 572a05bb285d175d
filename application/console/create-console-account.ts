import type { ConsoleAccount, ConsoleRole } from '../../domain/console';
import { parseEmailAddress } from '../../domain/email-address';
import { checkPassword, type PasswordPolicyError } from '../../domain/password-policy';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { PasswordHasher, TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ConsoleStore } from './console.store';
import { makeIssueSignInLink, type IssuedSignInLink } from './issue-sign-in-link';

export interface CreateConsoleAccountDeps {
  store: Pick<ConsoleStore, 'insertAccount' | 'insertSignInLink'>;
  hasher: PasswordHasher;
  crypto: TokenCrypto;
  clock: Clock;
  uow: UnitOfWork;
}

export type CreateConsoleAccountError = 'invalid_email' | 'console_email_taken' | PasswordPolicyError;

/**
 * Creates a console account. Without a password (an operator made by `tollgate admin create`, the
 * development operator) it comes with a one-time sign-in link; the password is set in the console.
 */
export function makeCreateConsoleAccount(deps: CreateConsoleAccountDeps) {
  const issueLink = makeIssueSignInLink(deps);
  return async (input: {
    email: string;
    role: ConsoleRole;
    password?: string;
  }): Promise<Result<{ account: ConsoleAccount; link: IssuedSignInLink | null }, CreateConsoleAccountError>> => {
    const parsed = parseEmailAddress(input.email);
    if (!parsed.ok) return err('invalid_email');
    if (input.password !== undefined) {
      const policy = checkPassword(input.password);
      if (!policy.ok) return err(policy.error);
    }
    const passwordHash = input.password !== undefined ? await deps.hasher.hash(input.password) : null;
    const account: ConsoleAccount = { id: deps.crypto.uuid(), email: parsed.value.address, role: input.role, createdAt: deps.clock.now(), totpEnabled: false };
    return deps.uow.transaction(async () => {
      const inserted = await deps.store.insertAccount(account, parsed.value.key, passwordHash);
      if (inserted === 'email_taken') return err('console_email_taken');
      const link = passwordHash === null ? await issueLink(account.id) : null;
      return ok({ account, link });
    });
  };
}
