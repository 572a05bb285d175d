import { describe, expect, it } from 'vitest';
import type { Project } from '../../domain/project';
import { err, ok } from '../../domain/result';
import type { ProjectStore } from '../stores/project.store';
import { SMS_OUTBOX_TOPIC } from './ports';
import { aProject, aUser, CallLog, fakeCrypto, fakeOutbox, fakeRateLimiter, fakeUnitOfWork, FixedClock, strictFake } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeIssueSmsCode } from './issue-sms-code';
import type { MfaChallengeRecord, MfaChallengeStore, SmsStore } from './mfa.store';
import { makeSendSignInSmsCode } from './send-sign-in-sms-code';

const limits = { smsSend: { points: 1, windowMs: 15 * 60_000 } };
const challenge = { id: 'ch-1', projectId: 'project-1', userId: 'user-1' } as MfaChallengeRecord;
const smsProject = (over: Parameters<typeof aProject>[0] = {}) =>
  aProject({ ...over, settings: { mfaPolicy: 'optional', mfaMethods: ['sms'], ...over.settings } });

function setup(
  options: {
    live?: MfaChallengeRecord | null;
    project?: Project;
    enrolled?: boolean;
    phone?: { phone: string | null; verified: boolean };
    smsAvailable?: boolean;
    refuse?: Record<string, number>;
  } = {},
) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const outbox = fakeOutbox(log);
  const sms = strictFake<Pick<SmsStore, 'isEnrolled' | 'phoneOf' | 'insertCode'>>(
    'sms',
    {
      isEnrolled: async () => options.enrolled ?? true,
      phoneOf: async () => options.phone ?? { phone: '+15550001111', verified: true },
      insertCode: async () => undefined,
    },
    log,
  );
  const send = makeSendSignInSmsCode({
    challenges: strictFake<Pick<MfaChallengeStore, 'findLive'>>(
      'challenges',
      { findLive: async () => (options.live === undefined ? challenge : options.live) },
      log,
    ),
    projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async () => options.project ?? smsProject() }, log),
    users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => aUser() }, log),
    sms,
    issueCode: makeIssueSmsCode({ sms, outbox, crypto: fakeCrypto(), clock }),
    smsAvailable: options.smsAvailable ?? true,
    rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
    limits,
    crypto: fakeCrypto(),
    clock,
    uow: fakeUnitOfWork(log),
  });
  return { send, log, outbox, clock };
}
const input = { challenge: 'mfa_abc', ip: '10.0.0.1' };

describe('send a sign-in SMS code', () => {
  it('counts the IP first, with four times the per-user allowance', async () => {
    const { send, log } = setup({ refuse: { 'mfa-sms:ip:10.0.0.1': 1_000 } });
    expect(await send(input)).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 1_000 });
    expect(log.calls.map((c) => c.args)).toEqual([['mfa-sms:ip:10.0.0.1', { points: 4, windowMs: 15 * 60_000 }]]);
  });

  it('checks challenge, project, allowed method, a verified enrolled phone and SMS delivery, in order', async () => {
    expect(await setup({ live: null }).send(input)).toEqual(err('mfa_invalid_challenge'));
    expect(await setup({ project: smsProject({ active: false }) }).send(input)).toEqual(err('project_inactive'));
    expect(await setup({ project: smsProject({ settings: { mfaMethods: ['totp'] } }), smsAvailable: false }).send(input)).toEqual(
      err('mfa_method_not_allowed'),
    );
    expect(await setup({ enrolled: false, smsAvailable: false }).send(input)).toEqual(err('mfa_method_not_enrolled'));
    expect(await setup({ phone: { phone: '+15550001111', verified: false } }).send(input)).toEqual(err('mfa_method_not_enrolled'));
    const unavailable = setup({ smsAvailable: false });
    expect(await unavailable.send(input)).toEqual(err('sms_unavailable'));
    expect(unavailable.log.of('rateLimiter.consume')).toHaveLength(1);
  });

  it('stores a hashed 5-minute code for this challenge and texts it, in one transaction', async () => {
    const { send, log, outbox, clock } = setup();
    expect(await send(input)).toEqual(ok(undefined));
    expect(log.of('rateLimiter.consume').map((c) => c.args[0])).toEqual(['mfa-sms:ip:10.0.0.1', 'mfa-sms:challenge:ch-1', 'mfa-sms:user:project-1:user-1']);
    const insert = log.of('sms.insertCode')[0]!;
    expect(insert.inTransaction).toBe(true);
    expect(insert.args).toEqual([
      expect.objectContaining({
        purpose: 'sign_in',
        challengeId: 'ch-1',
        phone: '+15550001111',
        expiresAt: new Date(clock.now().getTime() + 5 * 60_000),
        failedAttempts: 0,
      }),
      'h(100001)',
      clock.now(),
    ]);
    expect(outbox.messages).toEqual([
      { topic: SMS_OUTBOX_TOPIC, payload: { to: '+15550001111', body: '100001 is your Acme verification code. It expires in 5 minutes.' } },
    ]);
  });

  it('a second code for the same challenge within the window is refused', async () => {
    const { send, outbox } = setup();
    expect((await send(input)).ok).toBe(true);
    expect(await send(input)).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 15 * 60_000 });
    expect(outbox.messages).toHaveLength(1);
  });
});
