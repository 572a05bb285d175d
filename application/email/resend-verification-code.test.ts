import { describe, expect, it } from 'vitest';
import type { EndUser } from '../../domain/user';
import { aProject, aUser, CallLog, fakeRateLimiter, fakeUnitOfWork, FixedClock, strictFake, strictFn, TEST_ORIGIN } from '../testing/fakes';
import type { EmailAccount, EmailAccountStore } from './email-account.store';
import { makeResendVerificationCode, type ResendVerificationCodeInput } from './resend-verification-code';

const limits = { resendPerEmail: { points: 3, windowMs: 900_000 } };

function setup(account: EmailAccount | null, options: { mailConfigured?: boolean } = {}) {
  const log = new CallLog();
  const clock = new FixedClock();
  const resend = makeResendVerificationCode({
    accounts: strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>>(
      'accounts',
      { findByLoginEmail: async () => account, update: async () => undefined },
      log,
    ),
    issueVerificationCode: strictFn('issueVerificationCode', log, async () => undefined),
    clock,
    uow: fakeUnitOfWork(log),
    rateLimiter: fakeRateLimiter(log, clock),
    limits,
    mailConfigured: options.mailConfigured ?? true,
  });
  return { log, resend };
}

const input = (over: Partial<ResendVerificationCodeInput> = {}): ResendVerificationCodeInput => ({
  project: aProject({ settings: { defaultLocale: 'ja' } }),
  email: 'ada@example.com',
  callbackUrl: 'https://app.example.com/cb',
  locale: null,
  acceptLanguage: null,
  origin: TEST_ORIGIN,
  ...over,
});

const unverified = (over: Partial<EndUser> = {}): EmailAccount => ({ user: aUser({ emailVerified: false, ...over }), passwordHash: 'x' });

describe('resend a verification code', () => {
  it('refuses without mail delivery, after the provider and callback checks and before the locale', async () => {
    const { resend, log } = setup(unverified(), { mailConfigured: false });
    expect(await resend(input({ callbackUrl: 'https://other.example/cb', locale: 'xx' }))).toEqual({ ok: false, error: 'callback_url_not_registered' });
    expect(await resend(input({ locale: 'xx' }))).toEqual({ ok: false, error: 'email_delivery_not_configured' });
    expect(log.calls).toEqual([]);
  });

  it('answers the same for unknown, verified and disabled accounts, and sends nothing', async () => {
    for (const account of [null, unverified({ emailVerified: true }), unverified({ disabled: true })]) {
      const { resend, log } = setup(account);
      expect(await resend(input())).toEqual({ ok: true, value: undefined });
      expect(log.names()).toEqual(['rateLimiter.consume', 'accounts.findByLoginEmail']);
    }
  });

  it('allows three per email per window, counted before the account is looked up', async () => {
    const { resend, log } = setup(null);
    for (let i = 0; i < 3; i++) expect((await resend(input({ email: 'ADA@example.com' }))).ok).toBe(true);
    expect(await resend(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 900_000 });
    expect(log.of('rateLimiter.consume').map((c) => c.args[0])).toEqual(Array(4).fill('project-1:email-resend:email:ada@example.com'));
    expect(log.of('accounts.findByLoginEmail')).toHaveLength(3);
  });

  it('issues the code in the request locale, stored preference, Accept-Language or project default, in a transaction', async () => {
    const cases: Array<[Partial<ResendVerificationCodeInput>, Partial<EndUser>, string]> = [
      [{ locale: 'es', acceptLanguage: 'fr' }, { locale: 'de' }, 'es'],
      [{ acceptLanguage: 'fr' }, { locale: 'de' }, 'de'],
      [{ acceptLanguage: 'fr' }, {}, 'fr'],
      [{}, {}, 'ja'],
    ];
    for (const [over, user, locale] of cases) {
      const { resend, log } = setup(unverified(user));
      expect((await resend(input(over))).ok).toBe(true);
      const issued = log.of('issueVerificationCode')[0]!;
      expect(issued.inTransaction).toBe(true);
      expect(issued.args[0]).toMatchObject({ locale, user: { id: 'user-1', email: 'ada@example.com' } });
      // Only an explicit request locale becomes the stored preference.
      expect(log.of('accounts.update').map((c) => c.args[2])).toEqual(over.locale ? [{ locale: over.locale }] : []);
    }
  });
});
