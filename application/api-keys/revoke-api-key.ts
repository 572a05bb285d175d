import type { AuditActor } from '../../domain/audit';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { ApiKeyStore } from '../stores/api-key.store';

export interface RevokeApiKeyDeps {
  apiKeys: Pick<ApiKeyStore, 'revoke'>;
  audit: AuditLog;
  /** The operator revoking it. */
  actor: AuditActor;
  clock: Clock;
  /** Tells every process to drop cached lookups of this key. */
  onRevoked?: (keyId: string) => Promise<void>;
}

export function makeRevokeApiKey(deps: RevokeApiKeyDeps) {
  return async (input: { projectId: string; keyId: string }): Promise<Result<true, 'api_key_not_found'>> => {
    const revoked = await deps.apiKeys.revoke(input.projectId, input.keyId, deps.clock.now());
    if (!revoked) return err('api_key_not_found');
    deps.audit.record(
      auditEntry(deps.clock.now(), input.projectId, 'api_key.revoked', {
        actor: deps.actor,
        target: { kind: 'api_key', id: input.keyId },
        origin: SYSTEM_ORIGIN,
      }),
    );
    await deps.onRevoked?.(input.keyId);
    return ok(true);
  };
}
