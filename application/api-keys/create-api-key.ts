import type { AuditActor } from '../../domain/audit';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { ProjectStore } from '../stores/project.store';
import type { ApiKeyRecord, ApiKeyStore } from '../stores/api-key.store';

export const API_KEY_PREFIX = 'tg_';

export interface CreateApiKeyDeps {
  projects: Pick<ProjectStore, 'findById'>;
  apiKeys: Pick<ApiKeyStore, 'insert'>;
  crypto: TokenCrypto;
  audit: AuditLog;
  /** The operator creating it. */
  actor: AuditActor;
  clock: Clock;
}

/** Creates an API key; the key itself is returned once and only its hash is stored. */
export function makeCreateApiKey(deps: CreateApiKeyDeps) {
  return async (input: { projectId: string; label?: string | null }): Promise<Result<{ apiKey: string; record: ApiKeyRecord }, 'project_not_found'>> => {
    const project = await deps.projects.findById(input.projectId);
    if (!project) return err('project_not_found');
    const apiKey = API_KEY_PREFIX + deps.crypto.randomToken(32);
    const record: ApiKeyRecord = {
      id: deps.crypto.uuid(),
      projectId: project.id,
      prefix: apiKey.slice(0, 10),
      label: input.label ?? null,
      createdAt: deps.clock.now(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await deps.apiKeys.insert(record, deps.crypto.hash(apiKey));
    deps.audit.record(
      auditEntry(record.createdAt, project.id, 'api_key.created', {
        actor: deps.actor,
        target: { kind: 'api_key', id: record.id },
        origin: SYSTEM_ORIGIN,
        details: { label: record.label },
      }),
    );
    return ok({ apiKey, record });
  };
}
