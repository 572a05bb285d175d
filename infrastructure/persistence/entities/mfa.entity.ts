import { defineEntity, p } from '@mikro-orm/core';

export const MfaChallengeEntity = defineEntity({
  name: 'MfaChallengeRow',
  tableName: 'mfa_challenges',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    userId: p.uuid().fieldName('user_id'),
    tokenHash: p.text().fieldName('token_hash'),
    enrollment: p.boolean(),
    provider: p.text(),
    ttlSeconds: p.integer().nullable().fieldName('ttl_seconds'),
    authCodeId: p.text().nullable().fieldName('auth_code_id'),
    createdAt: p.datetime().fieldName('created_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    consumedAt: p.datetime().nullable().fieldName('consumed_at'),
  },
});

export const MfaTotpFactorEntity = defineEntity({
  name: 'MfaTotpFactorRow',
  tableName: 'mfa_totp_factors',
  properties: {
    userId: p.uuid().primary().fieldName('user_id'),
    projectId: p.uuid().fieldName('project_id'),
    secretEnc: p.text().fieldName('secret_enc'),
    createdAt: p.datetime().fieldName('created_at'),
    confirmedAt: p.datetime().nullable().fieldName('confirmed_at'),
    lastUsedStep: p.bigint('number').nullable().fieldName('last_used_step'),
  },
});

export const MfaBackupCodeEntity = defineEntity({
  name: 'MfaBackupCodeRow',
  tableName: 'mfa_backup_codes',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    userId: p.uuid().fieldName('user_id'),
    codeHash: p.text().fieldName('code_hash'),
    createdAt: p.datetime().fieldName('created_at'),
    usedAt: p.datetime().nullable().fieldName('used_at'),
    invalidatedAt: p.datetime().nullable().fieldName('invalidated_at'),
  },
});

export const MfaSmsFactorEntity = defineEntity({
  name: 'MfaSmsFactorRow',
  tableName: 'mfa_sms_factors',
  properties: {
    userId: p.uuid().primary().fieldName('user_id'),
    projectId: p.uuid().fieldName('project_id'),
    enrolledAt: p.datetime().fieldName('enrolled_at'),
  },
});

export const MfaSmsCodeEntity = defineEntity({
  name: 'MfaSmsCodeRow',
  tableName: 'mfa_sms_codes',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    userId: p.uuid().fieldName('user_id'),
    purpose: p.text(),
    challengeId: p.uuid().nullable().fieldName('challenge_id'),
    phone: p.text(),
    codeHash: p.text().fieldName('code_hash'),
    createdAt: p.datetime().fieldName('created_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    failedAttempts: p.integer().fieldName('failed_attempts'),
    consumedAt: p.datetime().nullable().fieldName('consumed_at'),
  },
});

export const MFA_ENTITIES = [MfaChallengeEntity, MfaTotpFactorEntity, MfaBackupCodeEntity, MfaSmsFactorEntity, MfaSmsCodeEntity];
