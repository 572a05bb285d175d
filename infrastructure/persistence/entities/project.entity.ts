import { defineEntity, p } from '@mikro-orm/core';
import type { ProjectSettings } from '../../../domain/project';

export const ProjectEntity = defineEntity({
  name: 'ProjectRow',
  tableName: 'projects',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    active: p.boolean(),
    signingSecretEnc: p.text().fieldName('signing_secret_enc'),
    settings: p.json<ProjectSettings>(),
    /** provider -> encrypted JSON credentials */
    providerCredentials: p.json<Record<string, string>>().fieldName('provider_credentials'),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

export const ApiKeyEntity = defineEntity({
  name: 'ApiKeyRow',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    prefix: p.text(),
    keyHash: p.text().fieldName('key_hash'),
    label: p.text().nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    lastUsedAt: p.datetime().nullable().fieldName('last_used_at'),
    revokedAt: p.datetime().nullable().fieldName('revoked_at'),
  },
});
