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
 * provider claim, lifetime, authorization code and origin: where the user was at the primary
 * sign-in), recorded as `mfa.challenge.verified`, with the new-device check on that primary
 * sign-in's device. Call inside the transaction that spent the code.
 */
export function makeFinishChallenge(deps: FinishChallengeDeps) {
  return async (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed): Promise<FinishedSignIn> => {
    if (!(await deps.challenges.consume(challenge.id, deps.clock.now()))) throw new ChallengeAlreadyConsumed();
    // Where the user signed in: the primary sign-in's request, remembered on the challenge (the
    // request passing the challenge where the challenge predates that).
    const signedInFrom: RequestOrigin =
      challenge.ip !== null ? { ip: challenge.ip, userAgent: challenge.userAgent, requestId: passed.origin.requestId } : passed.origin;
    const session = await deps.issueSession({
      project,
      user,
      provider: challenge.provider,
      ...(challenge.ttlSeconds !== null ? { ttlSeconds: challenge.ttlSeconds } : {}),
      authCodeId: challenge.authCodeId,
      origin: signedInFrom,
    });
    const newDevice = await deps.checkNewDevice({ project, userId: user.id, origin: signedInFrom });
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
