import type { Project } from '../../domain/project';
import { decidePrimarySignIn, MFA_CHALLENGE_PREFIX, MFA_CHALLENGE_TTL_SECONDS, usableMfaMethods, type MfaMethod } from '../../domain/mfa';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { MfaChallengeStore, EnrolledMethodsReader } from '../mfa/mfa.store';
import type { CheckNewDevice } from '../notifications/new-device';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RequestOrigin } from '../ports/request-origin';
import type { IssueSessionInput, IssuedSession } from '../tokens/issue-session';

/**
 * What a primary sign-in (email signup/signin, magic-link click, OAuth code exchange) ends in:
 * a session, or a multi-factor challenge that must be passed first (no JWT then).
 */
export type PrimarySignInOutcome =
  | { kind: 'session'; session: IssuedSession; user: EndUser }
  | { kind: 'mfa'; challenge: string; methods: MfaMethod[]; enrollmentRequired: boolean };

export interface PrimarySignInInput {
  project: Project;
  user: EndUser;
  provider: string;
  ttlSeconds?: number;
  authCodeId?: string | null;
  /** Where the user signed in from (for an OAuth code, the browser that came back from the provider). */
  origin: RequestOrigin;
  /**
   * The primary authentication was multi-factor on its own (a passkey with user verification: a
   * device the user holds, unlocked by their PIN or biometrics): no challenge follows, whatever the policy.
   */
  multiFactor?: boolean;
}

/** The gate every primary sign-in passes through, given to the features that sign users in. */
export type SignInGate = (input: PrimarySignInInput) => Promise<PrimarySignInOutcome>;

export interface CompletePrimarySignInDeps {
  issueSession: (input: IssueSessionInput) => Promise<IssuedSession>;
  /** Records `user.sign_in` (and `mfa.challenge.issued`). */
  audit: AuditLog;
  /** The new-device notice, when a session is issued. */
  checkNewDevice: CheckNewDevice;
  clock: Clock;
  /** Multi-factor policy. Without it every sign-in yields a session. */
  mfa?: {
    challenges: Pick<MfaChallengeStore, 'insert'>;
    enrollment: EnrolledMethodsReader;
    crypto: Pick<TokenCrypto, 'randomToken' | 'hash' | 'uuid'>;
    clock: Clock;
  };
}

/**
 * The one gate every primary authentication passes through. It applies the project's MFA policy
 * to the user's enrolled methods (domain/mfa.ts `decidePrimarySignIn`): a session, a challenge
 * listing the usable methods, or (required policy, nothing enrolled) an enrollment challenge. A
 * challenge remembers what the session must carry once it is passed (provider, lifetime, code,
 * where the user was). Every sign-in is recorded in the audit log; a session's device is checked
 * for the new-device notice.
 */
export function makeCompletePrimarySignIn(deps: CompletePrimarySignInDeps): SignInGate {
  /** `user.sign_in`: the primary authentication passed; with MFA, `mfa.challenge.issued` too. */
  const record = (
    input: PrimarySignInInput,
    details: { mfa: 'none' | 'challenge' | 'enrollment'; methods?: MfaMethod[]; session_id?: string; new_device?: boolean; multi_factor?: boolean },
  ) => {
    const at = deps.clock.now();
    const facts = { actor: userActor(input.user.id), origin: input.origin };
    deps.audit.record(auditEntry(at, input.project.id, 'user.sign_in', { ...facts, details: { provider: input.provider, ...details } }));
    if (details.mfa !== 'none') {
      deps.audit.record(
        auditEntry(at, input.project.id, 'mfa.challenge.issued', {
          ...facts,
          details: { provider: input.provider, enrollment: details.mfa === 'enrollment', methods: details.methods ?? [] },
        }),
      );
    }
  };
  return async (input: PrimarySignInInput): Promise<PrimarySignInOutcome> => {
    const mfa = deps.mfa;
    if (mfa && input.project.settings.mfaPolicy !== 'off' && input.multiFactor !== true) {
      // A passkey that signed in without user verification cannot also be the second factor.
      const enrolled = (await mfa.enrollment.enrolledMethods(input.project.id, input.user.id)).filter((m) => input.provider !== 'passkey' || m !== 'passkey');
      const decision = decidePrimarySignIn(input.project.settings.mfaPolicy, usableMfaMethods(enrolled, input.project.settings.mfaMethods));
      if (decision.kind !== 'session') {
        const challenge = MFA_CHALLENGE_PREFIX + mfa.crypto.randomToken(32);
        const now = mfa.clock.now();
        await mfa.challenges.insert(
          {
            id: mfa.crypto.uuid(),
            projectId: input.project.id,
            userId: input.user.id,
            enrollment: decision.kind === 'enroll',
            provider: input.provider,
            ttlSeconds: input.ttlSeconds ?? null,
            authCodeId: input.authCodeId ?? null,
            ip: input.origin.ip,
            userAgent: input.origin.userAgent,
            createdAt: now,
            expiresAt: new Date(now.getTime() + MFA_CHALLENGE_TTL_SECONDS * 1000),
          },
          mfa.crypto.hash(challenge),
        );
        const methods = decision.kind === 'enroll' ? [] : decision.methods;
        record(input, { mfa: decision.kind === 'enroll' ? 'enrollment' : 'challenge', methods });
        return decision.kind === 'enroll'
          ? { kind: 'mfa', challenge, methods: [], enrollmentRequired: true }
          : { kind: 'mfa', challenge, methods: decision.methods, enrollmentRequired: false };
      }
    }
    const session = await deps.issueSession(input);
    const newDevice = await deps.checkNewDevice({ project: input.project, userId: input.user.id, origin: input.origin });
    record(input, {
      mfa: 'none',
      session_id: session.sessionId,
      ...(input.multiFactor === true ? { multi_factor: true } : {}),
      ...(newDevice ? { new_device: true } : {}),
    });
    return { kind: 'session', session, user: input.user };
  };
}
