import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ProjectStore } from '../stores/project.store';
import type { ApiKeyStore } from '../stores/api-key.store';
import { API_KEY_PREFIX } from './create-api-key';

export interface AuthenticateApiKeyDeps {
  apiKeys: Pick<ApiKeyStore, 'findActiveByHash' | 'touch'>;
  projects: Pick<ProjectStore, 'findById'>;
  crypto: TokenCrypto;
  clock: Clock;
}

/** last_used_at is written at most once a minute per key, so the hot path stays read-only. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Resolves the project of an API key. The project is returned even when inactive: callers decide
 * where in their order of checks an inactive project is refused.
 */
export function makeAuthenticateApiKey(deps: AuthenticateApiKeyDeps) {
  return async (apiKey: string | null | undefined): Promise<Result<{ project: Project; keyId: string }, 'invalid_api_key'>> => {
    if (!apiKey?.startsWith(API_KEY_PREFIX) || apiKey.length > 200) return err('invalid_api_key');
    const record = await deps.apiKeys.findActiveByHash(deps.crypto.hash(apiKey));
    if (!record) return err('invalid_api_key');
    const project = await deps.projects.findById(record.projectId);
    if (!project) return err('invalid_api_key');
    const now = deps.clock.now();
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      await deps.apiKeys.touch(record.id, now);
    }
    return ok({ project, keyId: record.id });
  };
}
