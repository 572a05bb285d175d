import { initServer } from '@ts-rest/express';
import { sessionContract } from '../../../contract/session.contract';
import type { PrimarySignInOutcome } from '../../../application/auth/complete-primary-sign-in';
import type { ExchangeCodeError } from '../../../application/tokens/exchange-code';
import type { RefreshedSession, RefreshSessionError } from '../../../application/tokens/refresh-session';
import type { Project } from '../../../domain/project';
import type { Result } from '../../../domain/result';
import { errorResponse } from './errors';
import { projectOf } from './request-context';
import { toSignInResponse } from './sign-in-response';

const s = initServer();

export interface SessionRouteDeps {
  exchangeCode: (project: Project, code: string) => Promise<Result<PrimarySignInOutcome, ExchangeCodeError>>;
  refreshSession: (project: Project, refreshToken: string) => Promise<Result<RefreshedSession, RefreshSessionError>>;
  revokeSession: (project: Project, refreshToken: string) => Promise<void>;
}

export function makeSessionRoutes(deps: SessionRouteDeps) {
  return s.router(sessionContract, {
    exchange: async ({ body, res }) => {
      const r = await deps.exchangeCode(projectOf(res), body.code);
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: toSignInResponse(r.value) };
    },
    refresh: async ({ body, res }) => {
      const r = await deps.refreshSession(projectOf(res), body.refresh_token);
      if (!r.ok) return errorResponse(r.error);
      return { status: 200, body: { token: r.value.token, refresh_token: r.value.refreshToken } };
    },
    revoke: async ({ body, res }) => {
      await deps.revokeSession(projectOf(res), body.refresh_token);
      return { status: 200, body: { success: true as const } };
    },
  });
}
