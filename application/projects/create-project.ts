import { defaultProjectSettings, validateCallbackUrl, type Project } from '../../domain/project';
import type { AuditActor } from '../../domain/audit';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, type AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { SecretBox, TokenCrypto } from '../ports/crypto';
import { SYSTEM_ORIGIN } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ApiKeyStore } from '../stores/api-key.store';
import { makeCreateApiKey } from '../api-keys/create-api-key';
import type { ProjectStore } from '../stores/project.store';

export interface CreateProjectDeps {
  projects: Pick<ProjectStore, 'insert' | 'findById'>;
  apiKeys: Pick<ApiKeyStore, 'insert'>;
  crypto: TokenCrypto;
  box: SecretBox;
  audit: AuditLog;
  /** The operator creating it. */
  actor: AuditActor;
  clock: Clock;
  uow: UnitOfWork;
}

export interface CreatedProject {
  project: Project;
  apiKey: string;
  apiKeyId: string;
  /** base64url of the 256-bit JWT signing secret; shown once. */
  signingSecret: string;
}

export type CreateProjectError = 'invalid_project_name' | 'invalid_callback_url';

/** Creates a project with a fresh 256-bit signing secret and its first API key. */
export function makeCreateProject(deps: CreateProjectDeps) {
  const createApiKey = makeCreateApiKey(deps);
  return async (input: { name: string; callbackUrls?: string[] }): Promise<Result<CreatedProject, CreateProjectError>> => {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) return err('invalid_project_name');
    const callbackUrls = [...new Set(input.callbackUrls ?? [])];
    if (!callbackUrls.every(validateCallbackUrl)) return err('invalid_callback_url');
    const now = deps.clock.now();
    const project: Project = {
      id: deps.crypto.uuid(),
      name,
      active: true,
      settings: { ...defaultProjectSettings(), callbackUrls },
      createdAt: now,
      updatedAt: now,
    };
    const signingSecret = deps.crypto.randomToken(32);
    const created = await deps.uow.transaction(async () => {
      await deps.projects.insert(project, deps.box.encrypt(signingSecret));
      const key = await createApiKey({ projectId: project.id, label: 'default' });
      if (!key.ok) throw new Error('project vanished inside its own transaction');
      return { project, apiKey: key.value.apiKey, apiKeyId: key.value.record.id, signingSecret };
    });
    deps.audit.record(
      auditEntry(now, project.id, 'project.created', {
        actor: deps.actor,
        target: { kind: 'project', id: project.id },
        origin: SYSTEM_ORIGIN,
        details: { name },
      }),
    );
    return ok(created);
  };
}
