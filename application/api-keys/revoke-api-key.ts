import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { ApiKeyStore } from './api-key.store';

export interface RevokeApiKeyDeps {
  apiKeys: Pick<ApiKeyStore, 'revoke'>;
  clock: Clock;
  /** Tells every process to drop cached lookups of this key. */
  onRevoked?: (keyId: string) => Promise<void>;
}

export function makeRevokeApiKey(deps: RevokeApiKeyDeps) {
  return async (input: { projectId: string; keyId: string }): Promise<Result<true, 'api_key_not_found'>> => {
    const revoked = await deps.apiKeys.revoke(input.projectId, input.keyId, deps.clock.now());
    if (!revoked) return err('api_key_not_found');
    await deps.onRevoked?.(input.keyId);
    return ok(true);
  };
}
