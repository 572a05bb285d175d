import { describe, expect, it } from 'vitest';
import type { MfaMethod } from '../../domain/mfa';
import type { Project } from '../../domain/project';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { ProjectStore } from '../stores/project.store';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeBox,
  fakeCrypto,
  fakeNotify,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { ChallengeAlreadyConsumed, type FinishedSignIn } from './finish-challenge';
import type { BackupCodeStore, MfaChallengeRecord, MfaChallengeStore, SmsStore, TotpStore } from './mfa.store';
import type { TotpAuthenticator } from './ports';
import { makeVerifyFactorCode, type FactorCodeCheck } from './verify-factor-code';
import { makeVerifyMfaChallenge } from './verify-mfa-challenge';

const limits = { verify: { points: 2, windowMs: 15 * 60_000 } };
const challenge: MfaChallengeRecord = {
  id: 'ch-1',
  projectId: 'project-1',
  userId: 'user-1',
  enrollment: false,
  provider: 'email',
  ttlSeconds: null,
  authCodeId: null,
  ip: null,
  userAgent: null,
  createdAt: new Date('2030-01-01T09:59:00.000Z'),
  expiresAt: new Date('2030-01-01T10:04:00.000Z'),
};
const mfaProject = (over: Parameters<typeof aProject>[0] = {}) =>
  aProject({ ...over, settings: { mfaPolicy: 'optional', mfaMethods: ['totp'], ...over.settings } });

function setup(
  options: {
    live?: MfaChallengeRecord | null;
    project?: Project | null;
    user?: EndUser | null;
    enrolled?: MfaMethod[];
    code?: FactorCodeCheck;
    finishThrows?: boolean;
    refuse?: Record<string, number>;
  } = {},
) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const finished = { session: { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's' }, user: aUser() } satisfies FinishedSignIn;
  const audit = fakeAuditLog();
  const verify = makeVerifyMfaChallenge({
    challenges: strictFake<Pick<MfaChallengeStore, 'findLive'>>(
      'challenges',
      { findLive: async () => (options.live === undefined ? challenge : options.live) },
      log,
    ),
    projects: strictFake<Pick<ProjectStore, 'findById'>>(
      'projects',
      { findById: async () => (options.project === undefined ? mfaProject() : options.project) },
      log,
    ),
    users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => (options.user === undefined ? aUser() : options.user) }, log),
    enrollment: strictFake('enrollment', { enrolledMethods: async () => options.enrolled ?? ['totp', 'backup_codes'] }, log),
    verifyCode: strictFn('verifyCode', log, async () => options.code ?? ok(undefined)),
    finish: strictFn('finish', log, async () => {
      if (options.finishThrows) throw new ChallengeAlreadyConsumed();
      return finished;
    }),
    audit,
    notify: fakeNotify(log),
    rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
    limits,
    crypto: fakeCrypto(),
    clock,
    uow: fakeUnitOfWork(log),
  });
  return { verify, log, clock, finished, audit };
}
const input = { challenge: 'mfa_abc', code: '123456', method: 'totp' as const, ip: '10.0.0.1', origin: TEST_ORIGIN };

describe('pass an MFA challenge', () => {
  it('counts the IP before looking the challenge up, and refuses with the retry time', async () => {
    const { verify, log } = setup({ refuse: { 'mfa-verify:ip:10.0.0.1': 30_000 } });
    expect(await verify(input)).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 30_000 });
    expect(log.names()).toEqual(['rateLimiter.consume']);
  });

  it('an unknown or expired challenge is invalid; the lookup is by hash at the current time', async () => {
    const { verify, log, clock } = setup({ live: null });
    expect(await verify(input)).toEqual(err('mfa_invalid_challenge'));
    expect(log.of('challenges.findLive')[0]!.args).toEqual(['h(mfa_abc)', clock.now()]);
  });

  it('also counts per challenge and per user, so rotating addresses does not help', async () => {
    const { verify, log } = setup({ code: err('mfa_invalid_code') });
    expect(await verify({ ...input, ip: '1.1.1.1' })).toEqual(err('mfa_invalid_code'));
    expect(await verify({ ...input, ip: '2.2.2.2' })).toEqual(err('mfa_invalid_code'));
    expect(await verify({ ...input, ip: '3.3.3.3' })).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 15 * 60_000 });
    expect(
      log
        .of('rateLimiter.consume')
        .slice(-2)
        .map((c) => c.args[0]),
    ).toEqual(['mfa-verify:ip:3.3.3.3', 'mfa-verify:challenge:ch-1']);
    expect(log.of('verifyCode')).toHaveLength(2);
  });

  it('checks project, user, allowed method and enrollment before the code', async () => {
    expect(await setup({ project: mfaProject({ active: false }) }).verify(input)).toEqual(err('project_inactive'));
    expect(await setup({ user: aUser({ disabled: true }) }).verify(input)).toEqual(err('mfa_invalid_challenge'));
    expect(await setup().verify({ ...input, method: 'sms' })).toEqual(err('mfa_method_not_allowed'));
    const notEnrolled = setup({ enrolled: ['backup_codes'] });
    expect(await notEnrolled.verify(input)).toEqual(err('mfa_method_not_enrolled'));
    expect(notEnrolled.log.names('verifyCode')).toEqual([]);
  });

  it('a correct code spends the code and finishes the sign-in in one transaction', async () => {
    const { verify, log, finished } = setup();
    expect(await verify(input)).toEqual(ok(finished));
    expect(log.of('verifyCode')[0]).toMatchObject({
      inTransaction: true,
      args: [{ projectId: 'project-1', userId: 'user-1', method: 'totp', code: '123456', sms: { purpose: 'sign_in', challengeId: 'ch-1' } }],
    });
    expect(log.of('finish')[0]).toMatchObject({
      inTransaction: true,
      args: [expect.anything(), expect.anything(), expect.anything(), { method: 'totp', origin: TEST_ORIGIN }],
    });
  });

  it('a wrong code does not finish; a challenge spent meanwhile is invalid', async () => {
    const wrong = setup({ code: err('mfa_code_expired') });
    expect(await wrong.verify(input)).toEqual(err('mfa_code_expired'));
    expect(wrong.log.names('finish')).toEqual([]);
    expect(wrong.log.names('notify')).toEqual([]);
    expect(wrong.audit.entries).toEqual([
      expect.objectContaining({
        action: 'mfa.challenge.failed',
        outcome: 'failure',
        reason: 'mfa_code_expired',
        userId: 'user-1',
        details: { method: 'totp' },
      }),
    ]);
    expect(await setup({ finishThrows: true }).verify(input)).toEqual(err('mfa_invalid_challenge'));
  });

  it('a replayed TOTP code answers like a wrong one, is recorded as a replay and tells the user, in the transaction', async () => {
    const { verify, log, audit } = setup({ code: { ok: false, error: 'mfa_invalid_code', replayed: true } });
    expect(await verify(input)).toEqual(err('mfa_invalid_code'));
    expect(log.names('finish')).toEqual([]);
    expect(log.of('notify')).toEqual([expect.objectContaining({ inTransaction: true, args: [{ kind: 'totp_replayed', userId: 'user-1' }] })]);
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'mfa.totp.replayed', outcome: 'failure', reason: 'mfa_invalid_code', ip: TEST_ORIGIN.ip }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain('123456');
  });
});

describe('check a factor code', () => {
  function setup(options: { lastUsedStep?: number | null; confirmed?: boolean; step?: number | null; backupOk?: boolean } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    let lastUsed = options.lastUsedStep ?? null;
    const verify = makeVerifyFactorCode({
      totp: strictFake<Pick<TotpStore, 'find' | 'useStep'>>(
        'totp',
        {
          find: async () => ({ secretEncrypted: 'box(SECRET)', confirmedAt: options.confirmed === false ? null : new Date(0), lastUsedStep: lastUsed }),
          useStep: async (_p, _u, step) => {
            if (lastUsed !== null && step <= lastUsed) return false;
            lastUsed = step;
            return true;
          },
        },
        log,
      ),
      backupCodes: strictFake<Pick<BackupCodeStore, 'consume'>>('backupCodes', { consume: async () => options.backupOk ?? true }, log),
      sms: strictFake<Pick<SmsStore, 'findLatestCode' | 'consumeCode' | 'recordFailure'>>('sms', {}, log),
      authenticator: strictFake<Pick<TotpAuthenticator, 'matchStep'>>(
        'authenticator',
        { matchStep: () => (options.step === undefined ? 1000 : options.step) },
        log,
      ),
      box: fakeBox(),
      crypto: fakeCrypto(),
      clock,
    });
    return { verify, log, clock };
  }
  const totp = { projectId: 'project-1', userId: 'user-1', method: 'totp' as const, code: ' 123456 ' };

  it('accepts a TOTP step once: the same code again is refused', async () => {
    const { verify, log, clock } = setup();
    expect(await verify(totp)).toEqual(ok(undefined));
    // Refused like a wrong code; the caller learns it was a replay.
    expect(await verify(totp)).toEqual({ ok: false, error: 'mfa_invalid_code', replayed: true });
    expect(log.of('authenticator.matchStep')[0]!.args).toEqual(['SECRET', '123456', clock.now()]);
  });

  it('refuses TOTP codes of the wrong shape without computing, and TOTP that is not confirmed', async () => {
    const { verify, log } = setup();
    expect(await verify({ ...totp, code: '12345a' })).toEqual(err('mfa_invalid_code'));
    expect(log.names('authenticator')).toEqual([]);
    expect(await setup({ confirmed: false }).verify(totp)).toEqual(err('mfa_method_not_enrolled'));
    expect(await setup({ step: null }).verify(totp)).toEqual(err('mfa_invalid_code'));
  });

  it('normalizes a backup code and consumes it by hash', async () => {
    const { verify, log } = setup();
    expect(await verify({ ...totp, method: 'backup_codes', code: 'ABCDE FGHJK' })).toEqual(ok(undefined));
    expect(log.of('backupCodes.consume')[0]!.args.slice(0, 3)).toEqual(['project-1', 'user-1', 'h(abcde-fghjk)']);
    expect(await setup({ backupOk: false }).verify({ ...totp, method: 'backup_codes', code: 'abcde-fghjk' })).toEqual(err('mfa_invalid_code'));
  });
});
