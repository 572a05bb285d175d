import type { Project } from '../../domain/project';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import { REFRESH_TOKEN_PREFIX } from './issue-session';
import type { RefreshTokenStore } from '../stores/refresh-token.store';

export interface RevokeSessionDeps {
  refreshTokens: Pick<RefreshTokenStore, 'findByHash' | 'revokeFamily'>;
  crypto: TokenCrypto;
  audit: AuditLog;
  clock: Clock;
}

/**
 * Signs a session out: the refresh token's whole family is revoked. Like RFC 7009, an unknown or
 * already revoked token is not an error: the answer is the same, so the caller cannot tell them
 * apart.
 */
export function makeRevokeSession(deps: RevokeSessionDeps) {
  return async (project: Project, refreshToken: string, origin: RequestOrigin): Promise<void> => {
    if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || refreshToken.length > 200) return;
    const row = await deps.refreshTokens.findByHash(project.id, deps.crypto.hash(refreshToken));
    if (row) await deps.refreshTokens.revokeFamily(row.familyId, deps.clock.now());
    if (row)
      deps.audit.record(
        auditEntry(deps.clock.now(), project.id, 'session.revoked', {
          actor: { kind: 'user', id: row.userId },
          target: { kind: 'session', id: row.familyId },
          origin,
        }),
      );
  };
}
