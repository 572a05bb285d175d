import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { AccessTokenCodec } from '../ports/access-tokens';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import type { TokenVerification } from './verify-access-token';

export interface AuthenticateAccessTokenDeps {
  tokens: Pick<AccessTokenCodec, 'peekAudience'>;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  verify: (project: Project, token: string) => Promise<TokenVerification>;
}

/**
 * Authenticates an end user by an access token alone (user-scoped routes): the audience names the
 * project, whose key must then verify the token.
 */
export function makeAuthenticateAccessToken(deps: AuthenticateAccessTokenDeps) {
  return async (token: string): Promise<{ project: Project; user: EndUser; claims: Record<string, unknown> } | null> => {
    const projectId = deps.tokens.peekAudience(token);
    if (!projectId) return null;
    const project = await deps.projects.findById(projectId);
    if (!project?.active) return null;
    const verified = await deps.verify(project, token);
    if (!verified.valid) return null;
    const user = await deps.users.findById(project.id, verified.user.id);
    if (!user) return null;
    return { project, user, claims: verified.claims };
  };
}
