import { describe, expect, it } from 'vitest';
import type { MfaPolicy } from '../../domain/mfa';
import { ok } from '../../domain/result';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeNotify,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { MfaActor } from './actor';
import { makeDisableFactor } from './disable-factor';

const limits = { verify: { points: 5, windowMs: 15 * 60_000 } };

function setup(policy: MfaPolicy) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const audit = fakeAuditLog();
  const disable = makeDisableFactor({
    enrollment: strictFake('enrollment', { enrolledMethods: async () => ['totp', 'sms', 'backup_codes'] }, log),
    verifyCode: strictFn('verifyCode', log, async () => ok(undefined)),
    totp: strictFake('totp', { remove: async () => undefined }, log),
    sms: strictFake('sms', {}, log),
    backupCodes: strictFake('backupCodes', {}, log),
    sessions: strictFake('sessions', { revokeAllBut: async () => 2 }, log),
    rateLimiter: fakeRateLimiter(log, clock),
    limits,
    audit,
    notify: fakeNotify(log),
    clock,
    uow: fakeUnitOfWork(log),
  });
  const actor: MfaActor = {
    project: aProject({ settings: { mfaPolicy: policy, mfaMethods: ['totp', 'sms'] } }),
    user: aUser(),
    enrollmentChallengeId: null,
    sessionId: 'session-mine',
    origin: TEST_ORIGIN,
  };
  return { disable, actor, log, clock, audit };
}

describe('removing an MFA factor', () => {
  it('while MFA guards sign-ins (optional or required), ends every other session of the user in the same transaction', async () => {
    for (const policy of ['optional', 'required'] as const) {
      const { disable, actor, log, clock, audit } = setup(policy);
      expect(await disable(actor, 'totp', { code: '123456' })).toEqual(ok(undefined));
      const revoked = log.of('sessions.revokeAllBut')[0]!;
      expect(revoked.args).toEqual(['project-1', 'user-1', 'session-mine', clock.now()]);
      expect(revoked.inTransaction).toBe(true);
      // The removal's audit entry says how many other sessions it ended.
      expect(audit.entries).toEqual([
        expect.objectContaining({ action: 'mfa.factor.removed', details: { method: 'totp', verified_with: 'totp', other_sessions_ended: 2 } }),
      ]);
    }
  });

  it('with the policy off (enrollments kept, not enforced), sessions are left alone', async () => {
    const { disable, actor, log, audit } = setup('off');
    expect(await disable(actor, 'totp', { code: '123456' })).toEqual(ok(undefined));
    expect(log.names('totp.remove')).toHaveLength(1);
    expect(log.names('sessions')).toEqual([]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'mfa.factor.removed', details: { method: 'totp', verified_with: 'totp' } })]);
  });
});
