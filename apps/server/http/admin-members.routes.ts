import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import type { z } from 'zod';
import { contract, type ConsoleSessionSchema } from '../../../contract';
import type { StartedConsoleSession } from '../../../application/console/session-tokens';
import type { ConsoleAccount } from '../../../domain/console';
import type { ConsoleAccounts } from '../features/console';
import { errorResponse } from './errors';
import { failureResponse } from './rate-limit';
import { authOf, originOf } from './request-context';

const s = initServer();

export interface AdminMemberRouteDeps {
  accounts: Pick<
    ConsoleAccounts,
    | 'projectAccess'
    | 'listMembers'
    | 'inviteMember'
    | 'revokeInvitation'
    | 'removeMember'
    | 'acceptInvitation'
    | 'listAccounts'
    | 'issueAccountSignInLink'
    | 'signInLinkUrl'
  >;
  /** Answers a new session (cookie and body), as the other sign-in routes do. */
  started: (res: Response, value: StartedConsoleSession & { account: ConsoleAccount }) => { status: 200; body: z.infer<typeof ConsoleSessionSchema> };
}

const accountOf = (res: Response): ConsoleAccount => {
  const actor = authOf(res).console;
  if (!actor) throw new Error('route has no console session');
  return actor.account;
};

/**
 * The console's Members and Accounts routes over the console accounts' use cases. Each project
 * route first asks whether the signed-in account may see the project (404 `project_not_found` if not).
 */
export function makeAdminMemberRoutes(deps: AdminMemberRouteDeps) {
  const { accounts } = deps;
  return s.router(contract.admin.members, {
    list: async ({ res, params }) => {
      const found = await accounts.projectAccess(accountOf(res), params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const view = await accounts.listMembers(found.value.id);
      return {
        status: 200,
        body: {
          members: view.members.map((m) => ({ account_id: m.accountId, email: m.email, role: m.role, since: m.since.toISOString() })),
          invitations: view.invitations.map((i) => ({
            id: i.id,
            email: i.email,
            invited_by: i.invitedByEmail,
            created_at: i.createdAt.toISOString(),
            expires_at: i.expiresAt.toISOString(),
          })),
        },
      };
    },
    invite: async ({ req, res, params, body }) => {
      const inviter = accountOf(res);
      const found = await accounts.projectAccess(inviter, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const r = await accounts.inviteMember({ inviter, project: found.value, email: body.email, origin: originOf(req, res) });
      if (!r.ok) return failureResponse(res, r);
      const i = r.value;
      return {
        status: 201,
        body: {
          invitation: { id: i.id, email: i.email, invited_by: inviter.email, created_at: i.createdAt.toISOString(), expires_at: i.expiresAt.toISOString() },
        },
      };
    },
    revokeInvitation: async ({ res, params }) => {
      const found = await accounts.projectAccess(accountOf(res), params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const r = await accounts.revokeInvitation(found.value.id, params.invitationId);
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
    remove: async ({ req, res, params }) => {
      const by = accountOf(res);
      const found = await accounts.projectAccess(by, params.projectId);
      if (!found.ok) return errorResponse(found.error);
      const r = await accounts.removeMember({ by, projectId: found.value.id, accountId: params.accountId, origin: originOf(req, res) });
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
    acceptInvitation: async ({ req, res, body }) => {
      const r = await accounts.acceptInvitation(body.token, originOf(req, res), body.code);
      if (!r.ok) return failureResponse(res, r);
      return deps.started(res, r.value);
    },
    listAccounts: async ({ res }) => {
      const r = await accounts.listAccounts(accountOf(res));
      if (!r.ok) return errorResponse(r.error);
      return {
        status: 200,
        body: {
          accounts: r.value.map((a) => ({
            id: a.id,
            email: a.email,
            role: a.role,
            projects: a.projects,
            totp_enabled: a.totpEnabled,
            created_at: a.createdAt.toISOString(),
          })),
        },
      };
    },
    accountSignInLink: async ({ res, params }) => {
      const r = await accounts.issueAccountSignInLink(accountOf(res), params.accountId);
      if (!r.ok) return errorResponse(r.error);
      return { status: 201, body: { url: accounts.signInLinkUrl(r.value.token), expires_at: r.value.expiresAt.toISOString() } };
    },
  });
}
