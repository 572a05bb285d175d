import type { ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ConsoleStore } from './console.store';
import { startConsoleSession, type StartedConsoleSession } from './session-tokens';

export interface RedeemSignInLinkDeps {
  store: Pick<ConsoleStore, 'consumeSignInLink' | 'findAccountById' | 'insertSession'>;
  crypto: TokenCrypto;
  clock: Clock;
  uow: UnitOfWork;
}

/** Signs in with a one-time link: the link is used up atomically (one winner) and a session starts. */
export function makeRedeemSignInLink(deps: RedeemSignInLinkDeps) {
  return async (token: string): Promise<Result<StartedConsoleSession & { account: ConsoleAccount }, 'sign_in_link_invalid'>> =>
    deps.uow.transaction(async () => {
      const accountId = await deps.store.consumeSignInLink(deps.crypto.hash(token), deps.clock.now());
      if (!accountId) return err('sign_in_link_invalid');
      const account = await deps.store.findAccountById(accountId);
      if (!account) return err('sign_in_link_invalid');
      const started = await startConsoleSession(deps, account.id);
      return ok({ ...started, account });
    });
}
