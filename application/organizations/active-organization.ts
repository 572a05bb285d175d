import { ACCESS_TOKEN_TTL_SECONDS } from '../../domain/access-token';
import type { ActiveOrganization } from '../../domain/organizations/claims';
import { permissionsOf } from '../../domain/organizations/roles';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import { auditEntry, userActor } from '../audit/audit-log';
import type { AccessTokenCodec } from '../ports/access-tokens';
import type { RequestOrigin } from '../ports/request-origin';
import type { ProjectSecrets } from '../stores/project.store';
import { accessClaims } from '../tokens/issue-session';
import { access, type OrganizationDeps } from './deps';

export interface SwitchOrganizationDeps extends OrganizationDeps {
  secrets: Pick<ProjectSecrets, 'signingKey'>;
  tokens: Pick<AccessTokenCodec, 'sign'>;
}

export type SwitchOrganizationError = 'organization_not_found' | 'organization_mfa_required' | 'invalid_access_token';

/**
 * Makes an organization the active one of the signed-in user's session (or none) and answers a new
 * access token carrying it (claim `org`); the session and its refresh token stay, and refreshing
 * keeps the organization. An organization that requires a second factor is refused to a user who
 * has none enrolled (`organization_mfa_required`: enroll, then switch again).
 */
export function makeSwitchOrganization(deps: SwitchOrganizationDeps) {
  return async (input: {
    project: Project;
    userId: string;
    /** The session of the access token that asks (its `sid`), and the provider it names. */
    sessionId: string | null;
    provider: string;
    organizationId: string | null;
    origin: RequestOrigin;
  }): Promise<Result<{ token: string; organization: ActiveOrganization | null }, SwitchOrganizationError>> => {
    const user = await deps.users.findById(input.project.id, input.userId);
    if (!user || input.sessionId === null) return err('invalid_access_token');
    let active: ActiveOrganization | null = null;
    if (input.organizationId !== null) {
      const a = await access(deps, input.project.id, input.organizationId, { kind: 'member', userId: user.id });
      if (!a.ok) return err('organization_not_found');
      const { org, membership, roles } = a.value;
      if (org.requireMfa && !(await deps.hasSecondFactor(input.project.id, user.id))) return err('organization_mfa_required');
      active = { id: org.id, slug: org.slug, role: membership!.role, permissions: permissionsOf(roles, membership!.role) };
    }
    if (!(await deps.store.setActiveOrganization(input.project.id, user.id, input.sessionId, active?.id ?? null))) return err('invalid_access_token');
    const secret = await deps.secrets.signingKey(input.project.id);
    if (!secret) throw new Error(`signing key of project ${input.project.id} is missing`);
    const now = deps.clock.now();
    const token = await deps.tokens.sign({
      secret,
      projectId: input.project.id,
      claims: { ...accessClaims(user, input.provider, active), sid: input.sessionId },
      ttlSeconds: ACCESS_TOKEN_TTL_SECONDS,
      now,
    });
    deps.audit.record(
      auditEntry(now, input.project.id, 'organization.switched', {
        actor: userActor(user.id),
        target: active ? { kind: 'organization', id: active.id } : null,
        origin: input.origin,
        details: { session_id: input.sessionId },
      }),
    );
    return ok({ token, organization: active });
  };
}
