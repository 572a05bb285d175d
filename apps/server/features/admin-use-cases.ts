import { makeCreateApiKey } from '../../../application/api-keys/create-api-key';
import { makeListApiKeys } from '../../../application/api-keys/list-api-keys';
import { makeRevokeApiKey } from '../../../application/api-keys/revoke-api-key';
import { makeListConfiguredCredentials } from '../../../application/projects/configured-credentials';
import { makeCreateProject } from '../../../application/projects/create-project';
import { makeGetProject, makeListProjects } from '../../../application/projects/get-project';
import { makeUpdateProject } from '../../../application/projects/update-project';
import { makeCurrentSubscription } from '../../../application/billing/read-subscription';
import { makeEnrolledMethods } from '../../../application/mfa/enrolled-methods';
import { makeRemoveFactor } from '../../../application/mfa/remove-factor';
import { makeRemovePasskey } from '../../../application/passkeys/manage-passkeys';
import { err, ok } from '../../../domain/result';
import { SYSTEM_ORIGIN } from '../../../application/ports/request-origin';
import { makeEndSession } from '../../../application/sessions/end-session';
import { makeListSessions } from '../../../application/sessions/list-sessions';
import { makeListUsers } from '../../../application/users/list-users';
import { makeSetUserDisabled } from '../../../application/users/set-user-disabled';
import { makeShowUser } from '../../../application/users/show-user';
import { makeSignOutEverywhere } from '../../../application/users/sign-out-everywhere';
import type { AuditActor } from '../../../domain/audit';
import type { Core } from '../core';
import type { ConsoleAccounts } from './console';

/**
 * The operator's actions on a deployment: projects, their settings and API keys, end users (list,
 * detail, disable, sign out, end a session, remove an MFA factor), and migrations. Changes that
 * refuse access return once this process's caches have seen them. Changes are recorded in the
 * audit log with `actor` as the one who made them.
 */
export function operatorActions(core: Core, actor: AuditActor) {
  const { db, clock, crypto, box, stores, synced, audit } = core;
  const { directory } = stores;
  const mfa = { totp: stores.mfa.totp, sms: stores.mfa.sms, backupCodes: stores.mfa.backupCodes };
  const endSession = makeEndSession({ sessions: stores.sessions, users: stores.users, audit, clock });
  const removePasskey = makeRemovePasskey({
    passkeys: stores.passkeys.passkeys,
    methods: stores.passkeys.passkeys,
    enrollment: core.enrolledMethods,
    audit,
    notify: core.securityNotices.notify,
    clock,
    uow: db,
  });
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
      currentSubscription: makeCurrentSubscription({
        subscriptions: stores.billing.subscriptions,
        catalog: stores.billing.catalog,
        organizations: { memberships: core.memberships, store: stores.organizations },
      }),
    }),
    /** Ends one session of an end user, as the operator (recorded as `session.revoked`). */
    endUserSession: (input: { projectId: string; userId: string; sessionId: string }) => endSession({ ...input, actor, origin: SYSTEM_ORIGIN }),
    removeMfaFactor: makeRemoveFactor({
      projects: stores.projects,
      users: stores.users,
      enrollment: makeEnrolledMethods({ ...mfa, passkeys: stores.passkeys.passkeys }),
      ...mfa,
      sessions: stores.sessions,
      audit,
      notify: core.securityNotices.notify,
      actor,
      clock,
      uow: db,
    }),
    /** The user's passkeys (the console's user page). */
    listUserPasskeys: async (input: { projectId: string; userId: string }) => {
      const user = await stores.users.findById(input.projectId, input.userId);
      return user ? ok(await stores.passkeys.passkeys.listForUser(input.projectId, input.userId)) : err('user_not_found' as const);
    },
    /** Removes one passkey of a user as the operator (the user is told; no last-method rule: they sign in again by another way). */
    removeUserPasskey: async (input: { projectId: string; userId: string; passkeyId: string }) => {
      const project = await stores.projects.findById(input.projectId);
      if (!project) return err('project_not_found' as const);
      return removePasskey({ project, userId: input.userId, origin: SYSTEM_ORIGIN, actor }, input.passkeyId, { byOperator: true });
    },
    migrate: () => db.migrate(),
  };
}

/**
 * The operator's use cases, which the CLI and the console call (no admin action reads a store
 * itself), with the console accounts' (`console`: `tollgate admin create`, the console's routes).
 * Declared apart from the admin feature so that its route files can name it without importing the
 * feature that mounts them.
 */
export type Admin = ReturnType<typeof operatorActions> & { console: ConsoleAccounts };
