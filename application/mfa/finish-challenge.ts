import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { MfaMethod } from '../../domain/mfa';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { CheckNewDevice } from '../notifications/new-device';
import type { Clock } from '../ports/clock';
import type { RequestOrigin } from '../ports/request-origin';
import type { IssueSessionInput, IssuedSession } from '../tokens/issue-session';
import type { MfaChallengeRecord, MfaChallengeStore } from './mfa.store';

export interface FinishChallengeDeps {
  challenges: Pick<MfaChallengeStore, 'consume'>;
  issueSession: (input: IssueSessionInput) => Promise<IssuedSession>;
  audit: AuditLog;
  checkNewDevice: CheckNewDevice;
  clock: Clock;
}

/** How the challenge was passed: the method of the code, or `enrollment` (a factor set up under the required policy). */
export interface ChallengePassed {
  method: MfaMethod | 'enrollment';
  origin: RequestOrigin;
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
 * provider claim, lifetime and authorization code), recorded as `mfa.challenge.verified`, with the
 * new-device check. Call inside the transaction that spent the code.
 */
export function makeFinishChallenge(deps: FinishChallengeDeps) {
  return async (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed): Promise<FinishedSignIn> => {
    if (!(await deps.challenges.consume(challenge.id, deps.clock.now()))) throw new ChallengeAlreadyConsumed();
    const session = await deps.issueSession({
      project,
      user,
      provider: challenge.provider,
      ...(challenge.ttlSeconds !== null ? { ttlSeconds: challenge.ttlSeconds } : {}),
      authCodeId: challenge.authCodeId,
    });
    const newDevice = await deps.checkNewDevice({ project, userId: user.id, origin: passed.origin });
    deps.audit.record(
      auditEntry(deps.clock.now(), project.id, 'mfa.challenge.verified', {
        actor: userActor(user.id),
        origin: passed.origin,
        details: { method: passed.method, provider: challenge.provider, session_id: session.sessionId, ...(newDevice ? { new_device: true } : {}) },
      }),
    );
    return { session, user };
  };
}
