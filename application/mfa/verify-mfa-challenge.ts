import { effectiveMfaMethods, usableMfaMethods, type MfaMethod } from '../../domain/mfa';
import type { Project } from '../../domain/project';
import { err, ok, type Result } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { auditEntry, userActor, type AuditLog } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RateLimiter } from '../ports/rate-limiter';
import type { RequestOrigin } from '../ports/request-origin';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import { ChallengeAlreadyConsumed, type ChallengePassed, type FinishedSignIn } from './finish-challenge';
import { consumeLimits, type MfaLimits, type RateLimited } from './limits';
import type { EnrolledMethodsReader, MfaChallengeRecord, MfaChallengeStore } from './mfa.store';
import type { FactorCodeCheck } from './verify-factor-code';

export interface VerifyMfaChallengeDeps {
  challenges: Pick<MfaChallengeStore, 'findLive'>;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  enrollment: EnrolledMethodsReader;
  verifyCode: (input: {
    projectId: string;
    userId: string;
    method: MfaMethod;
    code: string;
    sms?: { purpose: 'sign_in'; challengeId: string };
  }) => Promise<FactorCodeCheck>;
  finish: (challenge: MfaChallengeRecord, project: Project, user: EndUser, passed: ChallengePassed) => Promise<FinishedSignIn>;
  audit: AuditLog;
  notify: NotifySecurityEvent;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<MfaLimits, 'verify'>;
  crypto: Pick<TokenCrypto, 'hash'>;
  clock: Clock;
  uow: UnitOfWork;
}

export type VerifyMfaChallengeError =
  | 'mfa_invalid_challenge'
  | 'mfa_method_not_allowed'
  | 'mfa_method_not_enrolled'
  | 'mfa_invalid_code'
  | 'mfa_code_expired'
  | 'project_inactive';

/**
 * POST mfa/verify: the second step of a sign-in. Attempts are limited per IP, per challenge and per
 * user (so rotating addresses does not help); a correct code for an enrolled, allowed method
 * consumes the challenge and issues the session, all in one transaction.
 */
export function makeVerifyMfaChallenge(deps: VerifyMfaChallengeDeps) {
  return async (input: {
    challenge: string;
    /** The code; empty for method passkey, which gives `assertion`. */
    code: string;
    method: MfaMethod;
    assertion?: unknown;
    ip: string;
    origin: RequestOrigin;
  }): Promise<Result<FinishedSignIn, VerifyMfaChallengeError> | RateLimited> => {
    const byIp = await consumeLimits(deps.rateLimiter, [`mfa-verify:ip:${input.ip}`], deps.limits.verify);
    if (byIp) return byIp;
    const challenge = await deps.challenges.findLive(deps.crypto.hash(input.challenge), deps.clock.now());
    if (!challenge) return err('mfa_invalid_challenge');
    const limited = await consumeLimits(
      deps.rateLimiter,
      [`mfa-verify:challenge:${challenge.id}`, `mfa-verify:user:${challenge.projectId}:${challenge.userId}`],
      deps.limits.verify,
    );
    if (limited) return limited;

    const project = await deps.projects.findById(challenge.projectId);
    if (!project?.active) return err('project_inactive');
    const user = await deps.users.findById(project.id, challenge.userId);
    if (!user || user.disabled) return err('mfa_invalid_challenge');

    if (!effectiveMfaMethods(project.settings.mfaMethods).includes(input.method)) return err('mfa_method_not_allowed');
    const usable = usableMfaMethods(await deps.enrollment.enrolledMethods(project.id, user.id), project.settings.mfaMethods);
    if (!usable.includes(input.method)) return err('mfa_method_not_enrolled');

    try {
      return await deps.uow.transaction(async () => {
        const checked = await deps.verifyCode({
          projectId: project.id,
          userId: user.id,
          method: input.method,
          code: input.code,
          sms: { purpose: 'sign_in', challengeId: challenge.id },
          ...(input.assertion !== undefined ? { assertion: input.assertion } : {}),
        });
        if (!checked.ok) {
          const facts = { actor: userActor(user.id), origin: input.origin, reason: checked.error, details: { method: input.method } };
          deps.audit.record(auditEntry(deps.clock.now(), project.id, 'replayed' in checked ? 'mfa.totp.replayed' : 'mfa.challenge.failed', facts));
          if ('replayed' in checked) await deps.notify({ project, userId: user.id, kind: 'totp_replayed', origin: input.origin });
          return err(checked.error);
        }
        return ok(await deps.finish(challenge, project, user, { method: input.method, origin: input.origin }));
      });
    } catch (e) {
      if (e instanceof ChallengeAlreadyConsumed) return err('mfa_invalid_challenge');
      throw e;
    }
  };
}
