import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { Clock } from '../ports/clock';
import type { IssueSessionInput, IssuedSession } from '../tokens/issue-session';
import type { MfaChallengeRecord, MfaChallengeStore } from './mfa.store';

export interface FinishChallengeDeps {
  challenges: Pick<MfaChallengeStore, 'consume'>;
  issueSession: (input: IssueSessionInput) => Promise<IssuedSession>;
  clock: Clock;
}

export interface FinishedSignIn {
  session: IssuedSession;
  user: EndUser;
}

/** Thrown inside a transaction when the challenge was spent meanwhile, to undo the code's use. */
export class ChallengeAlreadyConsumed extends Error {
  constructor() {
    super('MFA challenge consumed concurrently');
  }
}

/**
 * Consumes a passed challenge and issues the session the primary sign-in would have issued (same
 * provider claim, lifetime, authorization code and origin: where the user was at the primary
 * sign-in). Call inside the transaction that spent the code.
 */
export function makeFinishChallenge(deps: FinishChallengeDeps) {
  return async (challenge: MfaChallengeRecord, project: Project, user: EndUser): Promise<FinishedSignIn> => {
    if (!(await deps.challenges.consume(challenge.id, deps.clock.now()))) throw new ChallengeAlreadyConsumed();
    const session = await deps.issueSession({
      project,
      user,
      provider: challenge.provider,
      ...(challenge.ttlSeconds !== null ? { ttlSeconds: challenge.ttlSeconds } : {}),
      authCodeId: challenge.authCodeId,
      origin: { ip: challenge.ip, userAgent: challenge.userAgent },
    });
    return { session, user };
  };
}
