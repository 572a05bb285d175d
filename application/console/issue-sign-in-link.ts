import { CONSOLE_SIGN_IN_LINK_TTL_SECONDS } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import { parseEmailAddress } from '../../domain/email-address';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ConsoleStore } from './console.store';

export interface IssueSignInLinkDeps {
  store: Pick<ConsoleStore, 'insertSignInLink'>;
  crypto: TokenCrypto;
  clock: Clock;
}

export interface IssuedSignInLink {
  token: string;
  expiresAt: Date;
}

/** A one-time sign-in link's token for a console account (single use, one hour, stored hashed). */
export function makeIssueSignInLink(deps: IssueSignInLinkDeps) {
  return async (accountId: string): Promise<IssuedSignInLink> => {
    const now = deps.clock.now();
    const token = `tgl_${deps.crypto.randomToken(32)}`;
    const expiresAt = new Date(now.getTime() + CONSOLE_SIGN_IN_LINK_TTL_SECONDS * 1000);
    await deps.store.insertSignInLink({ id: deps.crypto.uuid(), accountId, expiresAt, createdAt: now }, deps.crypto.hash(token));
    return { token, expiresAt };
  };
}

/** A new one-time sign-in link for the account with this email (`tollgate admin link`). */
export function makeIssueSignInLinkByEmail(deps: IssueSignInLinkDeps & { store: Pick<ConsoleStore, 'findAccountByEmailKey' | 'insertSignInLink'> }) {
  const issue = makeIssueSignInLink(deps);
  return async (email: string): Promise<Result<IssuedSignInLink, 'invalid_email' | 'console_account_not_found'>> => {
    const parsed = parseEmailAddress(email);
    if (!parsed.ok) return err('invalid_email');
    const found = await deps.store.findAccountByEmailKey(parsed.value.key);
    if (!found) return err('console_account_not_found');
    return ok(await issue(found.account.id));
  };
}
