import type { ConsoleAccount } from '../../domain/console';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RateLimited } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { CheckConsoleTotp, ConsoleTotpError } from './check-console-totp';
import type { ConsoleStore } from './console.store';
import { startConsoleSession, type StartedConsoleSession } from './session-tokens';

export interface RedeemSignInLinkDeps {
  store: Pick<ConsoleStore, 'findSignInLink' | 'consumeSignInLink' | 'findAccountById' | 'insertSession'>;
  checkTotp: CheckConsoleTotp;
  crypto: TokenCrypto;
  clock: Clock;
  uow: UnitOfWork;
}

/**
 * Signs in with a one-time link: the link is used up atomically (one winner) and a session starts.
 * An account with an authenticator app also needs its code; a link sent without one, or with a
 * wrong one, is not used up, so the same link works with the right code.
 */
export function makeRedeemSignInLink(deps: RedeemSignInLinkDeps) {
  return async (
    token: string,
    code?: string,
  ): Promise<Result<StartedConsoleSession & { account: ConsoleAccount }, 'sign_in_link_invalid' | ConsoleTotpError> | RateLimited> => {
    const tokenHash = deps.crypto.hash(token);
    const pending = await deps.store.findSignInLink(tokenHash, deps.clock.now());
    const owner = pending ? await deps.store.findAccountById(pending) : null;
    if (!owner) return err('sign_in_link_invalid');
    const second = await deps.checkTotp(owner, code);
    if (!second.ok) return second;
    return deps.uow.transaction(async () => {
      const accountId = await deps.store.consumeSignInLink(tokenHash, deps.clock.now());
      if (accountId !== owner.id) return err('sign_in_link_invalid');
      const started = await startConsoleSession(deps, owner.id);
      return ok({ ...started, account: owner });
    });
  };
}
