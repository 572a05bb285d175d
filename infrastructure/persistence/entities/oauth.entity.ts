import { defineEntity, p } from '@mikro-orm/core';

/** A provider account attached to an end user; (project, provider, provider user id) is unique. */
export const IdentityEntity = defineEntity({
  name: 'IdentityRow',
  tableName: 'user_identities',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    userId: p.uuid().fieldName('user_id'),
    provider: p.text(),
    providerUserId: p.text().fieldName('provider_user_id'),
    email: p.text().nullable(),
    emailVerified: p.boolean().fieldName('email_verified'),
    name: p.text().nullable(),
    picture: p.text().nullable(),
    createdAt: p.datetime().fieldName('created_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
});

/** A pending OAuth sign-in (Tollgate's state), stored by the hash of the state value. */
export const OAuthStateEntity = defineEntity({
  name: 'OAuthStateRow',
  tableName: 'oauth_states',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    provider: p.text(),
    stateHash: p.text().fieldName('state_hash'),
    callbackUrl: p.text().fieldName('callback_url'),
    clientState: p.text().nullable().fieldName('client_state'),
    locale: p.text().nullable(),
    linkUserId: p.uuid().nullable().fieldName('link_user_id'),
    secretsEnc: p.text().fieldName('secrets_enc'),
    createdAt: p.datetime().fieldName('created_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    usedAt: p.datetime().nullable().fieldName('used_at'),
  },
});

/** The single-use code handed to the project, stored by its hash. */
export const AuthorizationCodeEntity = defineEntity({
  name: 'AuthorizationCodeRow',
  tableName: 'authorization_codes',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid().fieldName('project_id'),
    userId: p.uuid().fieldName('user_id'),
    provider: p.text(),
    codeHash: p.text().fieldName('code_hash'),
    createdAt: p.datetime().fieldName('created_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    usedAt: p.datetime().nullable().fieldName('used_at'),
    replayedAt: p.datetime().nullable().fieldName('replayed_at'),
  },
});
