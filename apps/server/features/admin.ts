import { makeCreateApiKey } from '../../application/api-keys/create-api-key';
import { makeListApiKeys } from '../../application/api-keys/list-api-keys';
import { makeRevokeApiKey } from '../../application/api-keys/revoke-api-key';
import { makeListConfiguredCredentials } from '../../application/projects/configured-credentials';
import { makeCreateProject } from '../../application/projects/create-project';
import { makeGetProject, makeListProjects } from '../../application/projects/get-project';
import { makeUpdateProject } from '../../application/projects/update-project';
import { makeCurrentSubscription } from '../../application/billing/read-subscription';
import { makeEnrolledMethods } from '../../application/mfa/enrolled-methods';
import { makeRemoveFactor } from '../../application/mfa/remove-factor';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { makeEndSession } from '../../application/sessions/end-session';
import { makeListSessions } from '../../application/sessions/list-sessions';
import { makeListUsers } from '../../application/users/list-users';
import { makeSetUserDisabled } from '../../application/users/set-user-disabled';
import { makeShowUser } from '../../application/users/show-user';
import { makeSignOutEverywhere } from '../../application/users/sign-out-everywhere';
import { UNKNOWN_ADMIN, type AuditActor } from '../../domain/audit';
import { PostgresCatalogStore } from '../../infrastructure/persistence/postgres-catalog.store';
import { PostgresBackupCodeStore, PostgresSmsStore, PostgresTotpStore } from '../../infrastructure/persistence/postgres-mfa.store';
import { PostgresSubscriptionStore } from '../../infrastructure/persistence/postgres-subscription.store';
import { PostgresUserDirectory } from '../../infrastructure/persistence/postgres-user-directory';
import { buildConsoleAccounts } from './console';
import type { Core } from './core';

/**
 * The operator's actions on a deployment: projects, their settings and API keys, end users (list,
 * detail, disable, sign out, end a session, remove an MFA factor), and
 * migrations. The CLI calls these (and the console will), never stores directly. Changes that
 * refuse access return once this process's caches have seen them. Changes are recorded in the
 * audit log with `actor` as the one who made them (the CLI passes CLI_ADMIN; the console will
 * build one per signed-in account).
 */
export function buildAdmin(core: Core, options: { actor?: AuditActor } = {}) {
  const { db, clock, crypto, box, stores, synced, audit } = core;
  const actor = options.actor ?? UNKNOWN_ADMIN;
  const directory = new PostgresUserDirectory(db);
  const mfa = { totp: new PostgresTotpStore(db), sms: new PostgresSmsStore(db), backupCodes: new PostgresBackupCodeStore(db) };
  const endSession = makeEndSession({ sessions: stores.sessions, users: stores.users, audit, clock });
  return {
    createProject: makeCreateProject({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, box, audit, actor, clock, uow: db }),
    updateProject: synced(makeUpdateProject({ projects: stores.projects, box, audit, actor, clock, uow: db })),
    getProject: makeGetProject({ projects: stores.projects }),
    listProjects: makeListProjects({ projects: stores.projects }),
    listConfiguredCredentials: makeListConfiguredCredentials({ projects: stores.projects }),
    createApiKey: makeCreateApiKey({ projects: stores.projects, apiKeys: stores.apiKeys, crypto, audit, actor, clock }),
    listApiKeys: makeListApiKeys({ apiKeys: stores.apiKeys }),
    revokeApiKey: synced(makeRevokeApiKey({ apiKeys: stores.apiKeys, audit, actor, clock })),
    setUserDisabled: synced(makeSetUserDisabled({ users: stores.users, refreshTokens: stores.refreshTokens, audit, actor, clock, uow: db })),
    signOutEverywhere: makeSignOutEverywhere({ refreshTokens: stores.refreshTokens, audit, actor, clock }),
    listUsers: makeListUsers({ projects: stores.projects, directory }),
    showUser: makeShowUser({
      projects: stores.projects,
      users: stores.users,
      directory,
      listSessions: makeListSessions({ sessions: stores.sessions, users: stores.users, clock }),
      currentSubscription: makeCurrentSubscription({ subscriptions: new PostgresSubscriptionStore(db), catalog: new PostgresCatalogStore(db) }),
    }),
    /** Ends one session of an end user, as the operator (recorded as `session.revoked`). */
    endUserSession: (input: { projectId: string; userId: string; sessionId: string }) => endSession({ ...input, actor, origin: SYSTEM_ORIGIN }),
    removeMfaFactor: makeRemoveFactor({
      projects: stores.projects,
      users: stores.users,
      enrollment: makeEnrolledMethods(mfa),
      ...mfa,
      sessions: stores.sessions,
      audit,
      notify: core.securityNotices.notify,
      actor,
      clock,
      uow: db,
    }),
    migrate: () => db.migrate(),
    /** Console accounts, sessions and project access (`tollgate admin create`, the console's routes). */
    console: buildConsoleAccounts(core),
  };
}

export type Admin = ReturnType<typeof buildAdmin>;
