import { effectiveMfaMethods } from '../../domain/mfa';
import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { RateLimiter } from '../ports/rate-limiter';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import { consumeLimits, type MfaLimits, type RateLimited } from './limits';
import type { MfaChallengeStore, SmsStore } from './mfa.store';
import type { makeIssueSmsCode } from './issue-sms-code';

export interface SendSignInSmsCodeDeps {
  challenges: Pick<MfaChallengeStore, 'findLive'>;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  sms: Pick<SmsStore, 'isEnrolled' | 'phoneOf'>;
  issueCode: ReturnType<typeof makeIssueSmsCode>;
  smsAvailable: boolean;
  rateLimiter: Pick<RateLimiter, 'consumeInOrder'>;
  limits: Pick<MfaLimits, 'smsSend'>;
  crypto: Pick<TokenCrypto, 'hash'>;
  clock: Clock;
  uow: UnitOfWork;
}

/** POST mfa/sms/send-code: texts a 6-digit code for this challenge to the user's verified phone. */
export function makeSendSignInSmsCode(deps: SendSignInSmsCodeDeps) {
  return async (input: {
    challenge: string;
    ip: string;
  }): Promise<
    Result<void, 'mfa_invalid_challenge' | 'project_inactive' | 'mfa_method_not_allowed' | 'mfa_method_not_enrolled' | 'sms_unavailable'> | RateLimited
  > => {
    const byIp = await consumeLimits(deps.rateLimiter, [`mfa-sms:ip:${input.ip}`], { ...deps.limits.smsSend, points: deps.limits.smsSend.points * 4 });
    if (byIp) return byIp;
    const challenge = await deps.challenges.findLive(deps.crypto.hash(input.challenge), deps.clock.now());
    if (!challenge) return err('mfa_invalid_challenge');
    const project = await deps.projects.findById(challenge.projectId);
    if (!project?.active) return err('project_inactive');
    const user = await deps.users.findById(project.id, challenge.userId);
    if (!user || user.disabled) return err('mfa_invalid_challenge');
    if (!effectiveMfaMethods(project.settings.mfaMethods).includes('sms')) return err('mfa_method_not_allowed');
    const phone = await deps.sms.phoneOf(project.id, user.id);
    if (!(await deps.sms.isEnrolled(project.id, user.id)) || !phone.phone || !phone.verified) return err('mfa_method_not_enrolled');
    if (!deps.smsAvailable) return err('sms_unavailable');
    const limited = await consumeLimits(deps.rateLimiter, [`mfa-sms:challenge:${challenge.id}`, `mfa-sms:user:${project.id}:${user.id}`], deps.limits.smsSend);
    if (limited) return limited;
    await deps.uow.transaction(() =>
      deps.issueCode({
        projectId: project.id,
        projectName: project.name,
        userId: user.id,
        purpose: 'sign_in',
        challengeId: challenge.id,
        phone: phone.phone!,
      }),
    );
    return ok(undefined);
  };
}
