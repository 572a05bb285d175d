import { describe, expect, it } from 'vitest';
import { aProject, aUser, CallLog, fakeCrypto, fakeRateLimiter, fakeUnitOfWork, FixedClock, strictFake } from '../testing/fakes';
import type { EmailAccount, EmailAccountStore } from './email-account.store';
import type { VerificationCodeRecord, VerificationCodeStore } from './verification-code.store';
import { makeVerifyEmailCode, type VerifyEmailCodeInput } from './verify-email-code';

const limits = { verifyPerIp: { points: 100, windowMs: 900_000 } };

function setup(
  options: { account?: EmailAccount | null; record?: Partial<VerificationCodeRecord> | null; consumeWins?: boolean; refuse?: Record<string, number> } = {},
) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T00:00:00.000Z');
  const account = options.account === undefined ? { user: aUser({ emailVerified: false }), passwordHash: 'x' } : options.account;
  let record: VerificationCodeRecord | null =
    options.record === null
      ? null
      : {
          projectId: 'project-1',
          userId: 'user-1',
          codeHash: 'h(123456)',
          createdAt: clock.now(),
          expiresAt: new Date(clock.now().getTime() + 5 * 60_000),
          failedAttempts: 0,
          consumedAt: null,
          ...options.record,
        };
  const codes = strictFake<VerificationCodeStore>(
    'codes',
    {
      find: async () => (record ? { ...record } : null),
      recordFailure: async () => {
        if (!record) return null;
        record = { ...record, failedAttempts: record.failedAttempts + 1 };
        return record.failedAttempts;
      },
      consume: async () => options.consumeWins ?? true,
    },
    log,
  );
  const accounts = strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>>(
    'accounts',
    { findByLoginEmail: async () => account, update: async () => undefined },
    log,
  );
  const verify = makeVerifyEmailCode({
    accounts,
    codes,
    crypto: fakeCrypto(),
    clock,
    uow: fakeUnitOfWork(log),
    rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
    limits,
  });
  return { log, verify, clock };
}

const input = (over: Partial<VerifyEmailCodeInput> = {}): VerifyEmailCodeInput => ({
  project: aProject(),
  email: 'ada@example.com',
  code: '123456',
  locale: null,
  ip: '10.0.0.1',
  ...over,
});

describe('verify an email code', () => {
  it('checks provider, locale and email before the per-IP limit, which refuses with its retry time', async () => {
    const { verify, log } = setup({ refuse: { 'project-1:email-verify:ip:10.0.0.1': 5_000 } });
    expect(await verify(input({ project: aProject({ settings: { enabledProviders: [] } }), locale: 'xx' }))).toEqual({
      ok: false,
      error: 'provider_not_enabled',
    });
    expect(await verify(input({ locale: 'xx', email: '' }))).toEqual({ ok: false, error: 'unsupported_locale' });
    expect(await verify(input({ email: 'a@@b' }))).toEqual({ ok: false, error: 'invalid_email' });
    expect(log.calls).toEqual([]);
    expect(await verify(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 5_000 });
    expect(log.names()).toEqual(['rateLimiter.consume']);
  });

  it('answers an unknown email like a wrong code', async () => {
    const { verify } = setup({ account: null });
    expect(await verify(input())).toEqual({ ok: false, error: 'invalid_verification_code' });
  });

  it('expires at exactly five minutes', async () => {
    const early = setup();
    early.clock.advance(5 * 60_000 - 1);
    expect((await early.verify(input())).ok).toBe(true);

    const late = setup();
    late.clock.advance(5 * 60_000);
    expect(await late.verify(input())).toEqual({ ok: false, error: 'verification_code_expired' });
    expect(late.log.names('codes.consume')).toEqual([]);
  });

  it('the third wrong code invalidates it; the right code then fails too', async () => {
    const { verify, log } = setup();
    expect(await verify(input({ code: '000000' }))).toEqual({ ok: false, error: 'invalid_verification_code' });
    expect(await verify(input({ code: 'abc' }))).toEqual({ ok: false, error: 'invalid_verification_code' });
    expect(await verify(input({ code: '111111' }))).toEqual({ ok: false, error: 'verification_code_invalidated' });
    expect(await verify(input())).toEqual({ ok: false, error: 'verification_code_invalidated' });
    expect(log.of('codes.recordFailure').map((c) => c.args)).toEqual([
      ['project-1', 'user-1', 'h(123456)', 3],
      ['project-1', 'user-1', 'h(123456)', 3],
      ['project-1', 'user-1', 'h(123456)', 3],
    ]);
    expect(log.names('accounts.update')).toEqual([]);
  });

  it('a used code, or one a parallel request consumed first, is invalid', async () => {
    const used = setup({ record: { consumedAt: new Date(0) } });
    expect(await used.verify(input())).toEqual({ ok: false, error: 'invalid_verification_code' });
    const lost = setup({ consumeWins: false });
    expect(await lost.verify(input())).toEqual({ ok: false, error: 'invalid_verification_code' });
    expect(lost.log.names('accounts.update')).toEqual([]);
  });

  it('consumes the code and marks the email verified (with a new locale) in one transaction', async () => {
    const { verify, log, clock } = setup();
    const r = await verify(input({ locale: 'it' }));
    expect(r).toEqual({ ok: true, value: expect.objectContaining({ id: 'user-1', emailVerified: true, locale: 'it', updatedAt: clock.now() }) });
    const consume = log.of('codes.consume')[0]!;
    expect(consume.inTransaction).toBe(true);
    expect(consume.args).toEqual(['project-1', 'user-1', 'h(123456)', clock.now(), 3]);
    const update = log.of('accounts.update')[0]!;
    expect(update.inTransaction).toBe(true);
    expect(update.args.slice(1, 3)).toEqual(['user-1', { emailVerified: true, locale: 'it' }]);
  });
});
