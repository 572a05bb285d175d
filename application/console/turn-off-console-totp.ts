import type { ConsoleAccount } from '../../domain/console';
import { parseEmailAddress } from '../../domain/email-address';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { RateLimited } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CheckConsoleTotp, ConsoleTotpError } from './check-console-totp';
import type { NotifyConsoleAccount } from './account-notice';
import type { ConsoleStore } from './console.store';

export interface TurnOffConsoleTotpDeps {
  store: Pick<ConsoleStore, 'clearTotp' | 'findAccountByEmailKey' | 'revokeAccountSessions'>;
  checkTotp: CheckConsoleTotp;
  clock: Clock;
  uow: UnitOfWork;
  notify: NotifyConsoleAccount;
}

/**
 * Turning an account's authenticator app off. The account itself must send a current code (a
 * session left open on someone's desk cannot remove the second step). Someone with shell access
 * to the deployment removes it for an account that lost its app (`tollgate admin totp-remove`),
 * which also ends the account's sessions. Either way the account is told by email.
 */
export function makeTurnOffConsoleTotp(deps: TurnOffConsoleTotpDeps) {
  const byAccount = async (
    account: Pick<ConsoleAccount, 'id' | 'email' | 'totpEnabled'>,
    code: string,
  ): Promise<Result<void, ConsoleTotpError | 'console_totp_not_enabled'> | RateLimited> => {
    if (!account.totpEnabled) return err('console_totp_not_enabled');
    const checked = await deps.checkTotp(account, code);
    if (!checked.ok) return checked;
    const now = deps.clock.now();
    await deps.uow.transaction(async () => {
      if (await deps.store.clearTotp(account.id, now)) await deps.notify(account, 'totp_disabled', now);
    });
    return ok(undefined);
  };

  const byEmail = async (email: string): Promise<Result<{ account: ConsoleAccount }, 'console_account_not_found' | 'console_totp_not_enabled'>> => {
    const parsed = parseEmailAddress(email);
    const found = parsed.ok ? await deps.store.findAccountByEmailKey(parsed.value.key) : null;
    if (!found) return err('console_account_not_found');
    const now = deps.clock.now();
    return deps.uow.transaction(async () => {
      if (!(await deps.store.clearTotp(found.account.id, now))) return err('console_totp_not_enabled');
      await deps.store.revokeAccountSessions(found.account.id, now);
      await deps.notify(found.account, 'totp_removed', now);
      return ok({ account: { ...found.account, totpEnabled: false } });
    });
  };

  return { byAccount, byEmail };
}
