import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, userTarget, type AuditLog } from '../audit/audit-log';
import type { PrimarySignInOutcome } from './complete-primary-sign-in';
import type { AuthorizationCodeStore } from '../stores/authorization-code.store';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { UserStore } from '../stores/user.store';
import type { RefreshTokenStore } from '../stores/refresh-token.store';

export interface ExchangeCodeDeps {
  codes: Pick<AuthorizationCodeStore, 'consume' | 'markReplayed' | 'wasReplayed'>;
  users: Pick<UserStore, 'findById'>;
  refreshTokens: Pick<RefreshTokenStore, 'revokeByAuthCode'>;
  completePrimarySignIn: (input: {
    project: Project;
    user: EndUser;
    provider: string;
    authCodeId?: string | null;
    origin: RequestOrigin;
  }) => Promise<PrimarySignInOutcome>;
  audit: AuditLog;
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
  /**
   * `origin` is the project server's request; the sign-in itself is recorded with the browser that
   * came back from the provider (kept with the code), when known.
   */
  return async (project: Project, code: string, origin: RequestOrigin): Promise<Result<PrimarySignInOutcome, ExchangeCodeError>> => {
    const now = deps.clock.now();
    const failed = (reason: string, userId: string | null = null) => {
      const action = reason === 'code_replayed' ? 'token.code.replayed' : 'token.code.exchange.failed';
      deps.audit.record(
        auditEntry(now, project.id, action, {
          actor: userId ? userActor(userId) : { kind: 'user', id: null },
          target: userId ? userTarget(userId) : null,
          origin,
          reason,
        }),
      );
      return err('invalid_authorization_code' as const);
    };
    if (!code || code.length > 200) return failed('invalid_authorization_code');
    const codeHash = deps.crypto.hash(code);
    const record = await deps.codes.consume(project.id, codeHash, now);
    if (!record) {
      const replayed = await deps.codes.markReplayed(project.id, codeHash, now);
      if (replayed) await deps.refreshTokens.revokeByAuthCode(replayed, now);
      return failed(replayed ? 'code_replayed' : 'invalid_authorization_code');
    }
    const user = await deps.users.findById(project.id, record.userId);
    if (!user || user.disabled) return failed(user ? 'account_disabled' : 'invalid_authorization_code', record.userId);
    const signedInFrom: RequestOrigin = record.ip !== null ? { ip: record.ip, userAgent: record.userAgent, requestId: origin.requestId } : origin;
    const outcome = await deps.completePrimarySignIn({ project, user, provider: record.provider, authCodeId: record.id, origin: signedInFrom });
    if (await deps.codes.wasReplayed(record.id)) {
      await deps.refreshTokens.revokeByAuthCode(record.id, deps.clock.now());
    }
    deps.audit.record(auditEntry(now, project.id, 'token.code.exchange', { actor: userActor(user.id), origin, details: { provider: record.provider } }));
    return ok(outcome);
  };
}
