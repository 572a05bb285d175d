import { initServer } from '@ts-rest/express';
import { tokenContract } from '../../../contract/token.contract';
import type { Project } from '../../../domain/project';
import type { TokenVerification } from '../../../application/tokens/verify-access-token';
import { projectOf } from './request-context';
import type { Entitlements } from '../../../domain/billing/entitlements';
import { renderEntitlements } from './billing.routes';
import { type BillingSubject, organizationSubject, userSubject } from '../../../domain/billing/subject';

const s = initServer();

export interface TokenRouteDeps {
  verifyAccessToken: (project: Project, token: string) => Promise<TokenVerification>;
  /** A subject's entitlements now (billing), read only when a verification asks for them. */
  subjectEntitlements: (projectId: string, subject: BillingSubject) => Promise<Entitlements | null>;
}

export function makeTokenRoutes(deps: TokenRouteDeps) {
  return s.router(tokenContract, {
    verify: async ({ body, res }) => {
      const project = projectOf(res);
      const result = await deps.verifyAccessToken(project, body.token);
      if (!result.valid) return { status: 200, body: { valid: false, user: null, expiresAt: null } };
      const u = result.user;
      const user = { id: u.id, email: u.email, name: u.name, picture: u.picture, provider: u.provider, email_verified: u.emailVerified };
      const answer = { valid: true as const, user, expiresAt: result.expiresAt.toISOString(), organization: result.organization };
      if (!body.include?.includes('entitlements')) return { status: 200, body: answer };
      // The context's entitlements: the active organization (as verified now: a member still), else the user.
      const subject = result.organization ? organizationSubject(result.organization.id) : userSubject(u.id);
      const e = await deps.subjectEntitlements(project.id, subject);
      return { status: 200, body: { ...answer, entitlements: e === null ? null : renderEntitlements(e) } };
    },
  });
}
