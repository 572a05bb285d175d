import { makeCreateApiKey } from '../../application/api-keys/create-api-key';
import { makeListApiKeys } from '../../application/api-keys/list-api-keys';
import { makeRevokeApiKey } from '../../application/api-keys/revoke-api-key';
import { makeListConfiguredCredentials } from '../../application/projects/configured-credentials';
import { makeCreateProject } from '../../application/projects/create-project';
import { makeGetProject, makeListProjects } from '../../application/projects/get-project';
import { makeUpdateProject } from '../../application/projects/update-project';
import { makeSetUserDisabled } from '../../application/users/set-user-disabled';
import { makeSignOutEverywhere } from '../../application/users/sign-out-everywhere';
import { buildConsoleAccounts } from './console';
import type { Core } from './core';

/**
 * The operator's actions on a deployment: projects, their settings and API keys, end users, and
 * migrations. The CLI calls these (and the console will), never stores directly. Changes that
 * refuse access return once this process's caches have seen them.
 */
export function buildAdmin(core: Core) {
  const { db, clock, crypto, box, stores, synced } = core;
  return {
    createProject: makeCreateProject({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, box, clock, uow: db }),
    updateProject: synced(makeUpdateProject({ projects: stores.projects, box, clock, uow: db })),
    getProject: makeGetProject({ projects: stores.projects }),
    listProjects: makeListProjects({ projects: stores.projects }),
    listConfiguredCredentials: makeListConfiguredCredentials({ projects: stores.projects }),
    createApiKey: makeCreateApiKey({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, clock }),
    listApiKeys: makeListApiKeys({ apiKeys: stores.apiKeys }),
    revokeApiKey: synced(makeRevokeApiKey({ apiKeys: stores.apiKeys, clock })),
    setUserDisabled: synced(makeSetUserDisabled({ users: stores.users, refreshTokens: stores.refreshTokens, clock, uow: db })),
    signOutEverywhere: makeSignOutEverywhere({ refreshTokens: stores.refreshTokens, clock }),
    migrate: () => db.migrate(),
    /** Console accounts, sessions and project access (`tollgate admin create`, the console's routes). */
    console: buildConsoleAccounts(core),
  };
}

export type Admin = ReturnType<typeof buildAdmin>;
