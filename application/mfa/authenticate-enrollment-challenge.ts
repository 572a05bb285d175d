import { MFA_CHALLENGE_PREFIX } from '../../domain/mfa';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import type { MfaChallengeStore } from './mfa.store';

export interface AuthenticateEnrollmentChallengeDeps {
  challenges: Pick<MfaChallengeStore, 'findLive'>;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  crypto: Pick<TokenCrypto, 'hash'>;
  clock: Clock;
}

/**
 * A user under the required policy with nothing enrolled holds an enrollment challenge instead of
 * an access token. For its 5 minutes it stands in for the access token on the setup endpoints.
 * Challenges of users who already have a method (ordinary sign-in challenges) never do.
 */
export function makeAuthenticateEnrollmentChallenge(deps: AuthenticateEnrollmentChallengeDeps) {
  return async (token: string): Promise<{ project: Project; user: EndUser; challengeId: string } | null> => {
    if (!token.startsWith(MFA_CHALLENGE_PREFIX)) return null;
    const challenge = await deps.challenges.findLive(deps.crypto.hash(token), deps.clock.now());
    if (!challenge?.enrollment) return null;
    const project = await deps.projects.findById(challenge.projectId);
    if (!project?.active) return null;
    const user = await deps.users.findById(project.id, challenge.userId);
    if (!user || user.disabled) return null;
    return { project, user, challengeId: challenge.id };
  };
}
