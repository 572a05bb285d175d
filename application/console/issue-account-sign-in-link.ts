import type { ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import type { ConsoleStore } from './console.store';
import { makeIssueSignInLink, type IssueSignInLinkDeps, type IssuedSignInLink } from './issue-sign-in-link';

/**
 * An operator makes a one-time sign-in link for a console account from the Accounts page, as
 * `tollgate admin link --email E` does (single use, one hour, stored hashed; shown once).
 */
export function makeIssueAccountSignInLink(deps: IssueSignInLinkDeps & { store: Pick<ConsoleStore, 'findAccountById' | 'insertSignInLink'> }) {
  const issue = makeIssueSignInLink(deps);
  return async (
    by: ConsoleAccount,
    accountId: string,
  ): Promise<Result<IssuedSignInLink & { account: ConsoleAccount }, 'console_operator_only' | 'console_account_id_not_found'>> => {
    if (by.role !== 'operator') return err('console_operator_only');
    const account = await deps.store.findAccountById(accountId);
    if (!account) return err('console_account_id_not_found');
    return ok({ ...(await issue(account.id)), account });
  };
}
