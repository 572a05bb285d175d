import { initServer } from '@ts-rest/express';
import { tokenContract } from '../../../contract/token.contract';
import type { Project } from '../../../domain/project';
import type { TokenVerification } from '../../../application/tokens/verify-access-token';
import { projectOf } from './request-context';

const s = initServer();

export interface TokenRouteDeps {
  verifyAccessToken: (project: Project, token: string) => Promise<TokenVerification>;
}

export function makeTokenRoutes(deps: TokenRouteDeps) {
  return s.router(tokenContract, {
    verify: async ({ body, res }) => {
      const result = await deps.verifyAccessToken(projectOf(res), body.token);
      if (!result.valid) return { status: 200, body: { valid: false, user: null, expiresAt: null } };
      const u = result.user;
      const user = { id: u.id, email: u.email, name: u.name, picture: u.picture, provider: u.provider, email_verified: u.emailVerified };
      return { status: 200, body: { valid: true, user, expiresAt: result.expiresAt.toISOString(), organization: result.organization } };
    },
  });
}
