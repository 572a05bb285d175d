import { initServer } from '@ts-rest/express';
import type { Response } from 'express';
import { sessionsContract } from '../../../contract/sessions.contract';
import type { SessionView } from '../../../application/sessions/list-sessions';
import type { makeEndOtherSessions } from '../../../application/sessions/end-other-sessions';
import type { makeEndSession } from '../../../application/sessions/end-session';
import type { makeListSessions } from '../../../application/sessions/list-sessions';
import { apiKeyActor, userActor } from '../../../application/audit/audit-log';
import { errorResponse } from './errors';
import { authOf, originOf, projectOf } from './request-context';

const s = initServer();

/** The project server of an `apiKey` route, named by its key in the audit log. */
function projectServerOf(res: Response) {
  const keyId = authOf(res).apiKeyId;
  if (!keyId) throw new Error('route has no API key');
  return apiKeyActor(keyId);
}

export interface SessionsRouteDeps {
  listSessions: ReturnType<typeof makeListSessions>;
  endSession: ReturnType<typeof makeEndSession>;
  endOtherSessions: ReturnType<typeof makeEndOtherSessions>;
}

/** The signed-in user of a `user` route and the session of their access token (its `sid`). */
function signedInOf(res: Response): { projectId: string; userId: string; sessionId: string | null } {
  const auth = authOf(res);
  if (!auth.project || !auth.user) throw new Error('route has no authenticated user');
  const sid = auth.claims?.sid;
  return { projectId: auth.project.id, userId: auth.user.id, sessionId: typeof sid === 'string' ? sid : null };
}

/** The user of the access token was deleted since it was checked: the token is no longer valid. */
const userGone = () => errorResponse('invalid_access_token');

const toSessionBody = (v: SessionView) => ({
  id: v.id,
  created_at: v.createdAt.toISOString(),
  last_used_at: v.lastUsedAt.toISOString(),
  expires_at: v.expiresAt.toISOString(),
  ip: v.ip,
  user_agent: v.userAgent,
  provider: v.provider,
  current: v.current,
});

/** A user's sessions: listed and ended by the user (access token) or by the project server (API key). */
export function makeSessionsRoutes(deps: SessionsRouteDeps) {
  return s.router(sessionsContract, {
    list: async ({ res }) => {
      const me = signedInOf(res);
      const r = await deps.listSessions({ projectId: me.projectId, userId: me.userId, currentSessionId: me.sessionId });
      return r.ok ? { status: 200, body: { sessions: r.value.map(toSessionBody) } } : userGone();
    },
    end: async ({ body, req, res }) => {
      const me = signedInOf(res);
      const r = await deps.endSession({
        projectId: me.projectId,
        userId: me.userId,
        sessionId: body.session_id,
        actor: userActor(me.userId),
        origin: originOf(req, res),
      });
      if (r.ok) return { status: 200, body: { success: true as const } };
      return r.error === 'user_not_found' ? userGone() : errorResponse(r.error);
    },
    endOthers: async ({ req, res }) => {
      const me = signedInOf(res);
      const r = await deps.endOtherSessions({
        projectId: me.projectId,
        userId: me.userId,
        keepSessionId: me.sessionId,
        actor: userActor(me.userId),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: { success: true as const, ended: r.value } } : userGone();
    },
    listForUser: async ({ params, res }) => {
      const r = await deps.listSessions({ projectId: projectOf(res).id, userId: params.userId, currentSessionId: null });
      return r.ok ? { status: 200, body: { sessions: r.value.map(toSessionBody) } } : errorResponse(r.error);
    },
    endForUser: async ({ params, body, req, res }) => {
      const r = await deps.endSession({
        projectId: projectOf(res).id,
        userId: params.userId,
        sessionId: body.session_id,
        actor: projectServerOf(res),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: { success: true as const } } : errorResponse(r.error);
    },
    endAllForUser: async ({ params, req, res }) => {
      const r = await deps.endOtherSessions({
        projectId: projectOf(res).id,
        userId: params.userId,
        keepSessionId: null,
        actor: projectServerOf(res),
        origin: originOf(req, res),
      });
      return r.ok ? { status: 200, body: { success: true as const, ended: r.value } } : errorResponse(r.error);
    },
  });
}
