import { describe, expect, it } from 'vitest';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import {
  aProject,
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
import type { EmailAccountStore } from './email-account.store';
import type { EmailLimits } from './limits';
import { makeSignUpWithPassword, type SignUpInput } from './sign-up-with-password';

const limits: Pick<EmailLimits, 'signupPerEmail' | 'signupPerIp'> = {
  signupPerEmail: { points: 2, windowMs: 60_000 },
  signupPerIp: { points: 3, windowMs: 60_000 },
};

const session: PrimarySignInOutcome = {
  kind: 'session',
  session: { token: 'jwt', refreshToken: 'rt_1', expiresAt: new Date(0), sessionId: 's1' },
  user: {} as EndUser,
};

function setup(options: { mailConfigured?: boolean; taken?: boolean; insertLoses?: boolean; refuse?: Record<string, number> } = {}) {
  const log = new CallLog();
  const clock = new FixedClock();
  const inserted: EndUser[] = [];
  const accounts = strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'insertWithLoginEmail'>>(
    'accounts',
    {
      findByLoginEmail: async () => (options.taken ? { user: {} as EndUser, passwordHash: 'x' } : null),
      insertWithLoginEmail: async (user) => {
        if (options.insertLoses) return false;
        inserted.push(user);
        return true;
      },
    },
    log,
  );
  const audit = fakeAuditLog();
  const signUp = makeSignUpWithPassword({
    accounts,
    audit,
    issueVerificationCode: strictFn('issueVerificationCode', log, async () => undefined),
    completePrimarySignIn: strictFn('completePrimarySignIn', log, async () => session),
    hasher: fakeHasher(log),
    crypto: fakeCrypto(),
    clock,
    uow: fakeUnitOfWork(log),
    rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
    limits,
    mailConfigured: options.mailConfigured ?? true,
  });
  return { log, signUp, inserted, audit };
}

const input = (over: Partial<SignUpInput> = {}): SignUpInput => ({
  project: aProject(),
  email: 'Ada@Example.COM',
  password: 'correct horse 1',
  name: '  Ada  ',
  callbackUrl: 'https://app.example.com/cb',
  locale: null,
  acceptLanguage: 'fr-CA,fr;q=0.9',
  ip: '10.0.0.1',
  origin: TEST_ORIGIN,
  ...over,
});

describe('sign-up with password', () => {
  it('checks provider, callback URL, mail, locale and email in that order, before counting anything', async () => {
    // Every field is wrong: the first check decides, and no port is touched.
    const everythingWrong = { email: 'not-an-email', locale: 'xx', callbackUrl: 'https://evil.example/cb' };
    const cases: Array<[string, ReturnType<typeof setup>, Partial<SignUpInput>]> = [
      ['provider_not_enabled', setup({ mailConfigured: false }), { ...everythingWrong, project: aProject({ settings: { enabledProviders: ['magic-link'] } }) }],
      ['callback_url_not_registered', setup({ mailConfigured: false }), everythingWrong],
      ['email_delivery_not_configured', setup({ mailConfigured: false }), { ...everythingWrong, callbackUrl: 'https://app.example.com/cb' }],
      ['unsupported_locale', setup(), { ...everythingWrong, callbackUrl: 'https://app.example.com/cb' }],
      ['invalid_email', setup(), { email: 'not-an-email' }],
    ];
    for (const [error, { signUp, log }, over] of cases) {
      expect(await signUp(input(over))).toEqual({ ok: false, error });
      expect(log.calls).toEqual([]);
    }
  });

  it('counts per IP, then per email (lower-cased key), and refuses with the retry time; nothing else happens', async () => {
    const { signUp, log } = setup({ refuse: { 'project-1:email-signup:email:ada@example.com': 42_000 } });
    expect(await signUp(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 42_000 });
    expect(log.calls.map((c) => [c.call, c.args[0]])).toEqual([
      ['rateLimiter.consume', 'project-1:email-signup:ip:10.0.0.1'],
      ['rateLimiter.consume', 'project-1:email-signup:email:ada@example.com'],
    ]);
    expect(log.of('rateLimiter.consume').map((c) => c.args[1])).toEqual([limits.signupPerIp, limits.signupPerEmail]);
  });

  it('stops at the per-IP limit without counting the email', async () => {
    const { signUp, log } = setup();
    for (let i = 0; i < 3; i++) expect((await signUp(input({ email: `u${i}@example.com` }))).ok).toBe(true);
    const refused = await signUp(input({ email: 'u9@example.com' }));
    expect(refused).toMatchObject({ ok: false, error: 'rate_limited' });
    expect(log.of('rateLimiter.consume').at(-1)!.args[0]).toBe('project-1:email-signup:ip:10.0.0.1');
  });

  it('applies the password policy after the limits', async () => {
    const { signUp, log } = setup();
    expect(await signUp(input({ password: 'short' }))).toEqual({ ok: false, error: 'password_too_short' });
    expect(log.names()).toEqual(['rateLimiter.consume', 'rateLimiter.consume']);
  });

  it('refuses a registered email, also when a parallel sign-up wins the insert', async () => {
    const taken = setup({ taken: true });
    expect(await taken.signUp(input())).toEqual({ ok: false, error: 'email_already_registered' });
    expect(taken.log.names('hasher')).toEqual([]);

    const raced = setup({ insertLoses: true });
    expect(await raced.signUp(input())).toEqual({ ok: false, error: 'email_already_registered' });
    expect(raced.log.names('issueVerificationCode')).toEqual([]);
    expect(raced.log.names('completePrimarySignIn')).toEqual([]);
  });

  it('creates the unverified account, sends the code and passes the gate, all in one transaction', async () => {
    const { signUp, log, inserted, audit } = setup();
    const result = await signUp(input());
    expect(result).toEqual({ ok: true, value: session });
    expect(inserted).toEqual([expect.objectContaining({ email: 'Ada@example.com', name: 'Ada', provider: 'email', emailVerified: false, locale: 'fr' })]);
    expect(log.of('accounts.insertWithLoginEmail')[0]!.args.slice(1)).toEqual(['ada@example.com', 'hashed:correct horse 1']);
    const code = log.of('issueVerificationCode')[0]!;
    expect(code.inTransaction).toBe(true);
    expect(code.args[0]).toMatchObject({ locale: 'fr', user: { id: inserted[0]!.id } });
    const gate = log.of('completePrimarySignIn')[0]!;
    expect(gate.inTransaction).toBe(true);
    expect(gate.args[0]).toMatchObject({ provider: 'email', user: { id: inserted[0]!.id }, origin: TEST_ORIGIN });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'user.sign_up', userId: inserted[0]!.id, outcome: 'success', details: { provider: 'email' } }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain('correct horse');
  });

  it('stores the body locale over Accept-Language, and a blank name as null', async () => {
    const { signUp, inserted, log } = setup();
    await signUp(input({ locale: 'pt-BR', name: '   ' }));
    expect(inserted[0]).toMatchObject({ locale: 'pt', name: null });
    expect(log.of('issueVerificationCode')[0]!.args[0]).toMatchObject({ locale: 'pt' });
  });
});
