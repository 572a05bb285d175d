import { describe, expect, it } from 'vitest';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeHasher,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { EmailAccount, EmailAccountStore } from './email-account.store';
import { makeSignInWithPassword, type SignInInput } from './sign-in-with-password';

const limits = { signinPerEmail: { points: 2, windowMs: 900_000 }, signinPerIp: { points: 100, windowMs: 900_000 } };

function setup(account: EmailAccount | null, refuse: Record<string, number> = {}) {
  const log = new CallLog();
  const clock = new FixedClock();
  const gateResult = (user: EndUser): PrimarySignInOutcome => ({
    kind: 'session',
    session: { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's1' },
    user,
  });
  const accounts = strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>>(
    'accounts',
    { findByLoginEmail: async () => account, update: async () => undefined },
    log,
  );
  const audit = fakeAuditLog();
  const signIn = makeSignInWithPassword({
    accounts,
    audit,
    completePrimarySignIn: strictFn('completePrimarySignIn', log, async (i: { user: EndUser }) => gateResult(i.user)),
    hasher: fakeHasher(log),
    crypto: fakeCrypto(),
    clock,
    uow: fakeUnitOfWork(log),
    rateLimiter: fakeRateLimiter(log, clock, { refuse }),
    limits,
  });
  return { log, signIn, clock, audit };
}

const input = (over: Partial<SignInInput> = {}): SignInInput => ({
  project: aProject(),
  email: 'ada@example.com',
  password: 'correct horse 1',
  callbackUrl: 'https://app.example.com/cb',
  locale: null,
  ip: '10.0.0.1',
  origin: TEST_ORIGIN,
  ...over,
});

const ada = (over: Partial<EndUser> = {}, passwordHash: string | null = 'hashed:correct horse 1'): EmailAccount => ({ user: aUser(over), passwordHash });

describe('sign-in with password', () => {
  it('checks the request before the limits; a missing mail transport does not matter', async () => {
    const { signIn, log } = setup(ada());
    expect(await signIn(input({ project: aProject({ settings: { enabledProviders: [] } }), locale: 'xx' }))).toEqual({
      ok: false,
      error: 'provider_not_enabled',
    });
    expect(await signIn(input({ callbackUrl: 'https://app.example.com/cb/', locale: 'xx' }))).toEqual({ ok: false, error: 'callback_url_not_registered' });
    expect(await signIn(input({ locale: 'xx', email: 'bad' }))).toEqual({ ok: false, error: 'unsupported_locale' });
    expect(await signIn(input({ email: 'bad' }))).toEqual({ ok: false, error: 'invalid_email' });
    // Only the decoy hash, made once when the use case is built.
    expect(log.names()).toEqual(['hasher.hash']);
  });

  it('counts per IP then per email and refuses the third attempt on one email with its retry time', async () => {
    const { signIn, log, clock, audit } = setup(ada());
    expect((await signIn(input({ password: 'wrong 1' }))).ok).toBe(false);
    clock.advance(100_000);
    expect((await signIn(input({ password: 'wrong 2' }))).ok).toBe(false);
    clock.advance(100_000);
    const before = log.calls.length;
    expect(await signIn(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 700_000 });
    expect(log.calls.slice(before).map((c) => c.args[0])).toEqual(['project-1:email-signin:ip:10.0.0.1', 'project-1:email-signin:email:ada@example.com']);
    expect(audit.entries.map((e) => e.reason)).toEqual(['invalid_credentials', 'invalid_credentials', 'rate_limited']);
    // The window ends with the clock.
    clock.advance(700_000);
    expect((await signIn(input())).ok).toBe(true);
  });

  it('gives an unknown email, a password-less account and a wrong password the same answer and the same work', async () => {
    const runs = [setup(null), setup(ada({}, null)), setup(ada())];
    const results = [];
    for (const [i, run] of runs.entries()) results.push(await run.signIn(input(i === 2 ? { password: 'wrong password 9' } : {})));
    for (const [i, run] of runs.entries()) {
      expect(results[i]).toEqual({ ok: false, error: 'invalid_credentials' });
      expect(run.log.of('hasher.verify')).toHaveLength(1);
      expect(run.log.names('completePrimarySignIn')).toEqual([]);
      expect(run.log.names('accounts.update')).toEqual([]);
    }
    // The unknown email is checked against a decoy hash, not skipped.
    expect(runs[0]!.log.of('hasher.verify')[0]!.args).toEqual(['hashed:tok1.24', 'correct horse 1']);
    // Each failure is recorded with its reason: about the account when there is one, else naming the address tried.
    expect(runs.map((r) => r.audit.entries)).toEqual([
      [
        expect.objectContaining({
          action: 'user.sign_in.failed',
          outcome: 'failure',
          reason: 'invalid_credentials',
          userId: null,
          actor: { kind: 'user', id: null },
          details: { provider: 'email', email: 'ada@example.com' },
        }),
      ],
      [
        expect.objectContaining({
          action: 'user.sign_in.failed',
          reason: 'invalid_credentials',
          userId: 'user-1',
          target: { kind: 'user', id: 'user-1' },
          details: { provider: 'email' },
        }),
      ],
      [expect.objectContaining({ action: 'user.sign_in.failed', reason: 'invalid_credentials', userId: 'user-1', ip: '10.0.0.1', requestId: 'req-1' })],
    ]);
    // No password in any entry.
    expect(JSON.stringify(runs.map((r) => r.audit.entries))).not.toMatch(/correct horse|wrong password/);
  });

  it('tells a disabled account only after the right password', async () => {
    const { signIn, log, audit } = setup(ada({ disabled: true }));
    expect(await signIn(input({ password: 'wrong password 9' }))).toEqual({ ok: false, error: 'invalid_credentials' });
    expect(await signIn(input())).toEqual({ ok: false, error: 'account_disabled' });
    expect(log.names('completePrimarySignIn')).toEqual([]);
    expect(audit.entries.map((e) => e.reason)).toEqual(['invalid_credentials', 'account_disabled']);
  });

  it('the usual sign-in writes nothing and opens no transaction', async () => {
    const { signIn, log } = setup(ada());
    const r = await signIn(input());
    expect(r).toMatchObject({ ok: true, value: { kind: 'session', user: { id: 'user-1' } } });
    expect(log.names('accounts.update')).toEqual([]);
    expect(log.names('uow')).toEqual([]);
    expect(log.of('completePrimarySignIn')[0]!.args[0]).toMatchObject({ provider: 'email', origin: TEST_ORIGIN });
  });

  it('records a new locale, the email provider and a stronger hash in the transaction of the sign-in', async () => {
    const { signIn, log } = setup(ada({ provider: 'github', locale: 'en' }, 'weak:correct horse 1'));
    const r = await signIn(input({ locale: 'de' }));
    expect(r).toMatchObject({ ok: true, value: { user: { provider: 'email', locale: 'de' } } });
    const update = log.of('accounts.update')[0]!;
    expect(update.inTransaction).toBe(true);
    expect(update.args.slice(1, 3)).toEqual(['user-1', { provider: 'email', locale: 'de', passwordHash: 'hashed:correct horse 1' }]);
    expect(log.of('completePrimarySignIn')[0]!.inTransaction).toBe(true);
  });
});
