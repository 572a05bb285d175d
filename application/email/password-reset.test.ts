import { describe, expect, it } from 'vitest';
import type { RefreshTokenStore } from '../stores/refresh-token.store';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeHasher,
  fakeNotify,
  fakeOutbox,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  TEST_ORIGIN,
} from '../testing/fakes';
import { makeConfirmPasswordReset, type ConfirmPasswordResetInput } from './confirm-password-reset';
import type { EmailAccount, EmailAccountStore } from './email-account.store';
import { EMAIL_OUTBOX_TOPIC } from '../mail/email-message';
import { makeIssuePasswordReset } from './issue-password-reset';
import type { PasswordResetRecord, PasswordResetStore } from './password-reset.store';
import { makeRequestPasswordReset, PASSWORD_RESET_REQUEST_TOPIC, type RequestPasswordResetInput } from './request-password-reset';
import type { ProjectStore } from '../stores/project.store';

const HOUR = 3600_000;

describe('request a password reset', () => {
  const limits = { resetPerIp: { points: 30, windowMs: 900_000 }, resetPerEmail: { points: 2, windowMs: HOUR } };
  function setup(options: { mailConfigured?: boolean; refuse?: Record<string, number> } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const outbox = fakeOutbox(log);
    const audit = fakeAuditLog();
    const request = makeRequestPasswordReset({
      outbox,
      audit,
      clock,
      uow: fakeUnitOfWork(log),
      rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
      limits,
      mailConfigured: options.mailConfigured ?? true,
    });
    return { log, request, outbox, audit };
  }
  const input = (over: Partial<RequestPasswordResetInput> = {}): RequestPasswordResetInput => ({
    project: aProject(),
    email: 'Ada@Example.com',
    callbackUrl: 'https://app.example.com/cb',
    locale: null,
    acceptLanguage: 'de',
    ip: '10.0.0.1',
    origin: TEST_ORIGIN,
    ...over,
  });

  it('checks provider, callback URL, mail, locale and email first', async () => {
    const { request, log } = setup({ mailConfigured: false });
    expect(await request(input({ project: aProject({ settings: { enabledProviders: ['magic-link'] } }) }))).toEqual({
      ok: false,
      error: 'provider_not_enabled',
    });
    expect(await request(input({ callbackUrl: 'https://app.example.com/other' }))).toEqual({ ok: false, error: 'callback_url_not_registered' });
    expect(await request(input({ locale: 'xx' }))).toEqual({ ok: false, error: 'email_delivery_not_configured' });
    const mail = setup();
    expect(await mail.request(input({ locale: 'xx', email: 'x' }))).toEqual({ ok: false, error: 'unsupported_locale' });
    expect(await mail.request(input({ email: 'x' }))).toEqual({ ok: false, error: 'invalid_email' });
    expect([...log.calls, ...mail.log.calls]).toEqual([]);
  });

  it('records the request for the job in a transaction, whether or not the email has an account', async () => {
    const { request, outbox, log, audit } = setup();
    expect(await request(input({ locale: 'fr' }))).toEqual({ ok: true, value: undefined });
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'password.reset.requested',
        target: { kind: 'email', id: 'ada@example.com' },
        userId: null,
        requestId: TEST_ORIGIN.requestId,
      }),
    ]);
    expect(outbox.messages).toEqual([
      {
        topic: PASSWORD_RESET_REQUEST_TOPIC,
        payload: {
          projectId: 'project-1',
          emailKey: 'ada@example.com',
          callbackUrl: 'https://app.example.com/cb',
          locale: 'fr',
          acceptLanguage: 'de',
          requestedAt: '2030-01-01T10:00:00.000Z',
        },
      },
    ]);
    expect(log.of('outbox.enqueue')[0]!.inTransaction).toBe(true);
  });

  it('over the per-IP limit: 429 with the retry time, and the email is not counted', async () => {
    const { request, outbox, log } = setup({ refuse: { 'project-1:email-reset:ip:10.0.0.1': 9_000 } });
    expect(await request(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 9_000 });
    expect(log.of('rateLimiter.consume')).toHaveLength(1);
    expect(outbox.messages).toEqual([]);
  });

  it('over the per-email limit: the same success, and nothing is recorded', async () => {
    const { request, outbox, log } = setup();
    for (let i = 0; i < 3; i++) expect(await request(input())).toEqual({ ok: true, value: undefined });
    expect(outbox.messages).toHaveLength(2);
    expect(
      log
        .of('rateLimiter.consume')
        .map((c) => c.args[0])
        .slice(-2),
    ).toEqual(['project-1:email-reset:ip:10.0.0.1', 'project-1:email-reset:email:ada@example.com']);
  });
});

describe('the password reset job', () => {
  function setup(account: EmailAccount | null, existing = false) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:05:00.000Z');
    const outbox = fakeOutbox(log);
    const issue = makeIssuePasswordReset({
      projects: strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async (id) => (id === 'project-1' ? aProject() : null) }, log),
      accounts: strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>>(
        'accounts',
        { findByLoginEmail: async () => account, update: async () => undefined },
        log,
      ),
      resets: strictFake<Pick<PasswordResetStore, 'insert' | 'invalidateAllForUser' | 'exists'>>(
        'resets',
        { exists: async () => existing, invalidateAllForUser: async () => undefined, insert: async () => undefined },
        log,
      ),
      outbox,
      crypto: fakeCrypto(),
      clock,
      uow: fakeUnitOfWork(log),
    });
    return { issue, log, outbox };
  }
  const payload = {
    projectId: 'project-1',
    emailKey: 'ada@example.com',
    callbackUrl: 'https://app.example.com/cb?x=1',
    locale: null,
    acceptLanguage: 'it',
    requestedAt: '2030-01-01T10:00:00.000Z',
  };

  it('an unknown or disabled account gets nothing', async () => {
    for (const account of [null, { user: aUser({ disabled: true }), passwordHash: 'x' }]) {
      const { issue, log } = setup(account);
      await issue(payload, 'req-1');
      expect(log.names()).toEqual(['projects.findById', 'accounts.findByLoginEmail']);
    }
  });

  it('stores the token hashed, valid one hour from the request, and mails the link in the resolved locale', async () => {
    const { issue, log, outbox } = setup({ user: aUser(), passwordHash: 'x' });
    await issue(payload, 'req-1');
    expect(log.of('resets.invalidateAllForUser')[0]!.args).toEqual(['project-1', 'user-1', new Date(payload.requestedAt)]);
    expect(log.of('resets.insert')[0]!.args).toEqual([
      {
        id: 'req-1',
        projectId: 'project-1',
        userId: 'user-1',
        createdAt: new Date('2030-01-01T10:00:00.000Z'),
        expiresAt: new Date('2030-01-01T11:00:00.000Z'),
      },
      'h(tok1.32)',
    ]);
    expect(outbox.messages).toEqual([
      {
        topic: EMAIL_OUTBOX_TOPIC,
        payload: {
          kind: 'password_reset',
          to: 'ada@example.com',
          locale: 'it',
          projectName: 'Acme',
          url: 'https://app.example.com/cb?x=1&token=tok1.32',
          expiresInMinutes: 60,
        },
      },
    ]);
  });

  it('is idempotent per request: a retried job mails nothing new', async () => {
    const { issue, log, outbox } = setup({ user: aUser(), passwordHash: 'x' }, true);
    await issue(payload, 'req-1');
    expect(log.names('resets')).toEqual(['resets.exists']);
    expect(outbox.messages).toEqual([]);
  });
});

describe('confirm a password reset', () => {
  function setup(record: Partial<PasswordResetRecord> | null, consumeWins = true) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const stored: PasswordResetRecord | null =
      record === null
        ? null
        : {
            id: 'r1',
            projectId: 'project-1',
            userId: 'user-1',
            createdAt: new Date(clock.now().getTime() - HOUR / 2),
            expiresAt: new Date(clock.now().getTime() + HOUR / 2),
            usedAt: null,
            ...record,
          };
    let lookups = 0;
    const audit = fakeAuditLog();
    const confirm = makeConfirmPasswordReset({
      accounts: strictFake<Pick<EmailAccountStore, 'update'>>('accounts', { update: async () => undefined }, log),
      resets: strictFake<PasswordResetStore>(
        'resets',
        {
          // After a lost race the second lookup sees the token used.
          findByHash: async () => (stored && lookups++ > 0 ? { ...stored, usedAt: clock.now() } : stored),
          consume: async () => (consumeWins ? stored : null),
          invalidateAllForUser: async () => undefined,
        },
        log,
      ),
      refreshTokens: strictFake<Pick<RefreshTokenStore, 'revokeAllForUser'>>('refreshTokens', { revokeAllForUser: async () => 1 }, log),
      hasher: fakeHasher(log),
      crypto: fakeCrypto(),
      audit,
      notify: fakeNotify(log),
      clock,
      uow: fakeUnitOfWork(log),
    });
    return { confirm, log, clock, audit };
  }
  const input = (over: Partial<ConfirmPasswordResetInput> = {}): ConfirmPasswordResetInput => ({
    project: aProject(),
    token: 'reset-token',
    password: 'new password 2',
    locale: null,
    origin: TEST_ORIGIN,
    ...over,
  });

  it('checks the provider, the locale and the password policy before the token', async () => {
    const { confirm, log } = setup({});
    expect(await confirm(input({ project: aProject({ settings: { enabledProviders: [] } }), locale: 'xx', password: 'x' }))).toEqual({
      ok: false,
      error: 'provider_not_enabled',
    });
    expect(await confirm(input({ locale: 'xx', password: 'x' }))).toEqual({ ok: false, error: 'unsupported_locale' });
    expect(await confirm(input({ password: 'x' }))).toEqual({ ok: false, error: 'password_too_short' });
    expect(log.calls).toEqual([]);
  });

  it('tells unknown, used and expired tokens apart, expiring at exactly one hour', async () => {
    const unknown = setup(null);
    expect(await unknown.confirm(input())).toEqual({ ok: false, error: 'invalid_reset_token' });
    expect(unknown.audit.entries).toEqual([
      expect.objectContaining({ action: 'password.reset.failed', outcome: 'failure', reason: 'invalid_reset_token', userId: null }),
    ]);
    const used = setup({ usedAt: new Date(0) });
    expect(await used.confirm(input())).toEqual({ ok: false, error: 'reset_token_used' });
    expect(used.audit.entries).toEqual([expect.objectContaining({ action: 'password.reset.failed', reason: 'reset_token_used', userId: 'user-1' })]);
    const expired = setup({});
    expired.clock.advance(HOUR / 2);
    expect(await expired.confirm(input())).toEqual({ ok: false, error: 'reset_token_expired' });
    expect(expired.log.names('hasher')).toEqual([]);
  });

  it('a token consumed by a parallel request is used', async () => {
    const { confirm, log } = setup({}, false);
    expect(await confirm(input())).toEqual({ ok: false, error: 'reset_token_used' });
    expect(log.names('accounts')).toEqual([]);
    expect(log.names('refreshTokens')).toEqual([]);
    expect(log.names('notify')).toEqual([]);
  });

  it('sets the password, ends other reset tokens and every session, in the transaction that consumes the token', async () => {
    const { confirm, log, clock, audit } = setup({});
    expect(await confirm(input({ locale: 'nl' }))).toEqual({ ok: true, value: undefined });
    // The user is told (the notice is recorded in the same transaction).
    const inTx = ['resets.consume', 'accounts.update', 'resets.invalidateAllForUser', 'refreshTokens.revokeAllForUser', 'notify'];
    expect(log.calls.filter((c) => c.inTransaction).map((c) => c.call)).toEqual(inTx);
    expect(log.of('resets.findByHash')[0]!.args).toEqual(['project-1', 'h(reset-token)']);
    expect(log.of('accounts.update')[0]!.args).toEqual(['project-1', 'user-1', { passwordHash: 'hashed:new password 2', locale: 'nl' }, clock.now()]);
    expect(log.of('refreshTokens.revokeAllForUser')[0]!.args).toEqual(['project-1', 'user-1', clock.now()]);
    expect(log.of('notify')[0]!.args).toEqual([{ kind: 'password_changed', userId: 'user-1' }]);
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'password.reset.completed', outcome: 'success', userId: 'user-1', ip: TEST_ORIGIN.ip, details: { sessions_ended: 1 } }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain('reset-token');
    expect(JSON.stringify(audit.entries)).not.toContain('new password 2');
  });
});
