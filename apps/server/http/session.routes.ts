import { initServer } from '@ts-rest/express';
import { sessionContract } from '../../../contract/session.contract';
import type { PrimarySignInOutcome } from '../../../application/auth/complete-primary-sign-in';
import type { ExchangeCodeError } from '../../../application/auth/exchange-code';
import type { RefreshedSession, RefreshSessionError } from '../../../application/tokens/refresh-session';
import type { RequestOrigin } from '../../../application/ports/request-origin';
import type { Project } from '../../../domain/project';
import type { Result } from '../../../domain/result';
import { errorResponse } from './errors';
import { originOf, projectOf } from './request-context';
import { toSignInResponse } from './sign-in-response';

const s = initServer();

export interface SessionRouteDeps {
  exchangeCode: (project: Project, code: string, origin: RequestOrigin) => Promise<Result<PrimarySignInOutcome, ExchangeCodeError>>;
  refreshSession: (project: Project, refreshToken: string, origin: RequestOrigin) => Promise<Result<RefreshedSession, RefreshSessionError>>;
  revokeSession: (project: Project, refreshToken: string, origin: RequestOrigin) => Promise<void>;
}

export function makeSessionRoutes(deps: SessionRouteDeps) {
  return s.router(sessionContract, {
    exchange: async ({ body, req, res }) => {
      const r = await deps.exchangeCode(projectOf(res), body.code, originOf(req, res));
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: toSignInResponse(r.value) };
    },
    refresh: async ({ body, req, res }) => {
      const r = await deps.refreshSession(projectOf(res), body.refresh_token, originOf(req, res));
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { token: r.value.token, refresh_token: r.value.refreshToken } };
    },
    revoke: async ({ body, req, res }) => {
      await deps.revokeSession(projectOf(res), body.refresh_token, originOf(req, res));
      return { status: 200, body: { success: true as const } };
    },
  });
}
