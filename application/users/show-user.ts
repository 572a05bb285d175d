import { isUuid } from '../../domain/ids';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { BillingOutcome } from '../billing/errors';
import type { BillingActor } from '../billing/use-cases';
import type { SubscriptionView } from '../billing/views';
import type { ProjectStore } from '../stores/project.store';
import type { SessionView } from '../sessions/list-sessions';
import type { LinkedIdentity, MfaFactorSummary, UserDirectory } from '../stores/user-directory';
import type { UserStore } from '../stores/user.store';

export interface UserDetail {
  user: EndUser;
  identities: LinkedIdentity[];
  mfaFactors: MfaFactorSummary[];
  /** Live sessions, most recently used first (the sessions feature's list). */
  sessions: SessionView[];
  /** The live subscription (billing's read), or null. */
  subscription: SubscriptionView | null;
}

export interface ShowUserDeps {
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  directory: Pick<UserDirectory, 'identities' | 'mfaFactors'>;
  /** application/sessions/list-sessions. */
  listSessions: (input: { projectId: string; userId: string; currentSessionId: null }) => Promise<Result<SessionView[], 'user_not_found'>>;
  /** application/billing/read-subscription (`currentSubscription`). */
  currentSubscription: (actor: BillingActor) => Promise<BillingOutcome<SubscriptionView | null>>;
}

/**
 * One end user as an operator sees them: the user, the providers linked, the MFA factors (kind and
 * date, never a secret), the live sessions and the live subscription. What the console's user page
 * and `tollgate user show` show.
 */
export function makeShowUser(deps: ShowUserDeps) {
  return async (input: { projectId: string; userId: string }): Promise<Result<UserDetail, 'project_not_found' | 'user_not_found'>> => {
    const project = isUuid(input.projectId) ? await deps.projects.findById(input.projectId) : null;
    if (!project) return err('project_not_found');
    const user = await deps.users.findById(project.id, input.userId);
    if (!user) return err('user_not_found');
    const [identities, mfaFactors, sessions, subscription] = await Promise.all([
      deps.directory.identities(project.id, user.id),
      deps.directory.mfaFactors(project.id, user.id),
      deps.listSessions({ projectId: project.id, userId: user.id, currentSessionId: null }),
      deps.currentSubscription({ project, user }),
    ]);
    return ok({
      user,
      identities,
      mfaFactors,
      sessions: sessions.ok ? sessions.value : [],
      subscription: subscription.ok ? subscription.value : null,
    });
  };
}
