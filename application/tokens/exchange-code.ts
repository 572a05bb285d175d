import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { PrimarySignInInput, PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { AuthorizationCodeStore } from '../oauth/authorization-code.store';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { UserStore } from '../users/user.store';
import type { RefreshTokenStore } from './refresh-token.store';

export interface ExchangeCodeDeps {
  codes: Pick<AuthorizationCodeStore, 'consume' | 'markReplayed' | 'wasReplayed'>;
  users: Pick<UserStore, 'findById'>;
  refreshTokens: Pick<RefreshTokenStore, 'revokeByAuthCode'>;
  completePrimarySignIn: (input: PrimarySignInInput) => Promise<PrimarySignInOutcome>;
  crypto: TokenCrypto;
  clock: Clock;
}

export type ExchangeCodeError = 'invalid_authorization_code';

/**
 * Redeems an authorization code (opaque, stored hashed, single use, 60 seconds, bound to its
 * project) through the primary sign-in gate. Redeeming a code that was already used fails and
 * revokes every session minted from it; the check runs again after minting, so a replay that
 * races the first redemption still revokes what it minted. The project server redeems the code,
 * so the session remembers where the browser was at the provider's callback (kept on the code).
 */
export function makeExchangeCode(deps: ExchangeCodeDeps) {
  return async (project: Project, code: string): Promise<Result<PrimarySignInOutcome, ExchangeCodeError>> => {
    if (!code || code.length > 200) return err('invalid_authorization_code');
    const codeHash = deps.crypto.hash(code);
    const now = deps.clock.now();
    const record = await deps.codes.consume(project.id, codeHash, now);
    if (!record) {
      const replayed = await deps.codes.markReplayed(project.id, codeHash, now);
      if (replayed) await deps.refreshTokens.revokeByAuthCode(replayed, now);
      return err('invalid_authorization_code');
    }
    const user = await deps.users.findById(project.id, record.userId);
    if (!user || user.disabled) return err('invalid_authorization_code');
    const outcome = await deps.completePrimarySignIn({
      project,
      user,
      provider: record.provider,
      authCodeId: record.id,
      origin: { ip: record.ip, userAgent: record.userAgent },
    });
    if (await deps.codes.wasReplayed(record.id)) {
      await deps.refreshTokens.revokeByAuthCode(record.id, deps.clock.now());
    }
    return ok(outcome);
  };
}
