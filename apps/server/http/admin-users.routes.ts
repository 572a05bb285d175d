import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { contract } from '../../../contract';
import { adminSubscriptionView } from './admin-billing.routes';
import type { ConsoleAccount } from '../../../domain/console';
import type { EndUser } from '../../../domain/user';
import type { Admin } from '../features/admin-use-cases';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { authOf } from './request-context';
import { toPasskeyView } from './passkeys.routes';

const s = initServer();

export interface AdminUserRouteDeps {
  accounts: Pick<ConsoleAccounts, 'projectAccess'>;
  /** The operator's use cases acting as one console account (the audit log names it). */
  adminFor: (
    account: ConsoleAccount,
  ) => Pick<
    Admin,
    'listUsers' | 'showUser' | 'setUserDisabled' | 'signOutEverywhere' | 'endUserSession' | 'removeMfaFactor' | 'listUserPasskeys' | 'removeUserPasskey'
  >;
}

const userView = (u: EndUser) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  provider: u.provider,
  email_verified: u.emailVerified,
  disabled: u.disabled,
  created_at: u.createdAt.toISOString(),
});

/**
 * The console's Users routes over the operator's use cases (`tollgate user ...`), acting as the signed-in account. Each first asks whether the account may
 * see the project (404 `project_not_found` if not).
 */
export function makeAdminUserRoutes(deps: AdminUserRouteDeps) {
  const access = async (res: Response, projectId: string) => {
    const actor = authOf(res).console;
    if (!actor) throw new Error('route has no console session');
    const found = await deps.accounts.projectAccess(actor.account, projectId);
    return found.ok
      ? { ok: true as const, projectId: found.value.id, admin: deps.adminFor(actor.account) }
      : { ok: false as const, response: errorResponse(found.error) };
  };

  const users = s.router(contract.admin.users, {
    list: async ({ res, params, query }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.listUsers({ projectId: p.projectId, search: query.search, limit: query.limit, cursor: query.cursor });
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { users: r.value.users.map(userView), next_cursor: r.value.nextCursor } };
    },
    get: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.showUser({ projectId: p.projectId, userId: params.userId });
      if (!r.ok) return errorResponse(r.error);
      const d = r.value;
      return {
        status: 200,
        body: {
          user: userView(d.user),
          identities: d.identities.map((i) => ({ provider: i.provider, email: i.email, created_at: i.createdAt.toISOString() })),
          mfa_factors: d.mfaFactors.map((f) => ({ kind: f.kind, created_at: f.createdAt.toISOString(), remaining: f.remaining })),
          sessions: d.sessions.map((x) => ({
            id: x.id,
            provider: x.provider,
            created_at: x.createdAt.toISOString(),
            last_used_at: x.lastUsedAt.toISOString(),
            expires_at: x.expiresAt.toISOString(),
            ip: x.ip,
            user_agent: x.userAgent,
          })),
          subscription: d.subscription ? adminSubscriptionView(d.subscription) : null,
        },
      };
    },
    setDisabled: async ({ res, params, body }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.setUserDisabled({ projectId: p.projectId, userId: params.userId, disabled: body.disabled });
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { user: userView(r.value) } };
    },
    signOutEverywhere: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      // The use case answers 0 for an unknown user; the console asks about a user it showed, so say so.
      const shown = await p.admin.showUser({ projectId: p.projectId, userId: params.userId });
      if (!shown.ok) return errorResponse(shown.error);
      const ended = await p.admin.signOutEverywhere({ projectId: p.projectId, userId: params.userId });
      return { status: 200, body: { sessions_ended: ended } };
    },
    endSession: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.endUserSession({ projectId: p.projectId, userId: params.userId, sessionId: params.sessionId });
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
    removeMfaFactor: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.removeMfaFactor({ projectId: p.projectId, userId: params.userId, factor: params.factor });
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { factor: r.value.factor, sessions_ended: r.value.sessionsEnded } };
    },
    listPasskeys: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.listUserPasskeys({ projectId: p.projectId, userId: params.userId });
      return r.ok ? { status: 200, body: { passkeys: r.value.map(toPasskeyView) } } : errorResponse(r.error);
    },
    removePasskey: async ({ res, params }) => {
      const p = await access(res, params.projectId);
      if (!p.ok) return p.response;
      const r = await p.admin.removeUserPasskey({ projectId: p.projectId, userId: params.userId, passkeyId: params.passkeyId });
      return r.ok
        ? { status: 200, body: { success: true as const } }
        : errorResponse(r.error === 'project_not_found' ? 'project_not_found' : 'passkey_not_found');
    },
  });

  return users;
}
