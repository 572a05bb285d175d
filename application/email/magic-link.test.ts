import { describe, expect, it } from 'vitest';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { ProjectStore } from '../stores/project.store';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeOutbox,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeConsumeMagicLink } from './consume-magic-link';
import type { EmailAccount, EmailAccountStore } from './email-account.store';
import { EMAIL_OUTBOX_TOPIC } from '../mail/email-message';
import type { MagicLinkRecord, MagicLinkStore } from './magic-link.store';
import { makeSendMagicLink, type SendMagicLinkInput } from './send-magic-link';

const MINUTE = 60_000;
const magicProject = (over: Parameters<typeof aProject>[0] = {}) =>
  aProject({ ...over, settings: { enabledProviders: ['email', 'magic-link'], ...over.settings } });

describe('send a magic link', () => {
  const limits = { magicLinkPerIp: { points: 30, windowMs: 15 * MINUTE }, magicLinkPerEmail: { points: 5, windowMs: 15 * MINUTE } };
  function setup(account: EmailAccount | null, options: { mailConfigured?: boolean; refuse?: Record<string, number> } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const outbox = fakeOutbox(log);
    const send = makeSendMagicLink({
      accounts: strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'update'>>(
        'accounts',
        { findByLoginEmail: async () => account, update: async () => undefined },
        log,
      ),
      links: strictFake<Pick<MagicLinkStore, 'insert'>>('links', { insert: async () => undefined }, log),
      outbox,
      crypto: fakeCrypto(),
      clock,
      uow: fakeUnitOfWork(log),
      verifyUrl: 'https://auth.example.com/api/proxy/email/magic-link/verify',
      rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
      limits,
      mailConfigured: options.mailConfigured ?? true,
    });
    return { send, log, outbox, clock };
  }
  const input = (over: Partial<SendMagicLinkInput> = {}): SendMagicLinkInput => ({
    project: magicProject(),
    email: 'New@Example.com',
    callbackUrl: 'https://app.example.com/cb',
    locale: null,
    acceptLanguage: 'sv',
    ip: '10.0.0.1',
    origin: TEST_ORIGIN,
    ...over,
  });

  it('needs the magic-link provider (the email provider is not enough), then the other checks in order', async () => {
    const { send, log } = setup(null, { mailConfigured: false });
    expect(await send(input({ project: aProject(), callbackUrl: 'https://x.example/cb' }))).toEqual({ ok: false, error: 'provider_not_enabled' });
    expect(await send(input({ callbackUrl: 'https://x.example/cb' }))).toEqual({ ok: false, error: 'callback_url_not_registered' });
    expect(await send(input({ locale: 'xx' }))).toEqual({ ok: false, error: 'email_delivery_not_configured' });
    expect(log.calls).toEqual([]);
  });

  it('counts per IP then per email, and a refusal records no link', async () => {
    const { send, log, outbox } = setup(null, { refuse: { 'project-1:email-magic-link:email:new@example.com': 60_000 } });
    expect(await send(input())).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 60_000 });
    expect(log.calls.map((c) => c.args[0])).toEqual(['project-1:email-magic-link:ip:10.0.0.1', 'project-1:email-magic-link:email:new@example.com']);
    expect(outbox.messages).toEqual([]);
  });

  it('a disabled account gets the same answer and nothing is sent', async () => {
    const { send, log, outbox } = setup({ user: aUser({ disabled: true }), passwordHash: null });
    expect(await send(input())).toEqual({ ok: true, value: undefined });
    expect(log.names('links')).toEqual([]);
    expect(outbox.messages).toEqual([]);
  });

  it('for a new address: a 15-minute link without a user, mailed in the Accept-Language locale', async () => {
    const { send, log, outbox, clock } = setup(null);
    expect(await send(input())).toEqual({ ok: true, value: undefined });
    const insert = log.of('links.insert')[0]!;
    expect(insert.inTransaction).toBe(true);
    expect(insert.args).toEqual([
      {
        id: 'uuid-2',
        projectId: 'project-1',
        email: 'New@example.com',
        emailKey: 'new@example.com',
        userId: null,
        callbackUrl: 'https://app.example.com/cb',
        locale: 'sv',
        mailLocale: 'sv',
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 15 * MINUTE),
      },
      'h(tok1.32)',
    ]);
    expect(outbox.messages).toEqual([
      {
        topic: EMAIL_OUTBOX_TOPIC,
        payload: {
          kind: 'magic_link',
          to: 'New@example.com',
          locale: 'sv',
          projectName: 'Acme',
          url: 'https://auth.example.com/api/proxy/email/magic-link/verify?token=tok1.32',
          expiresInMinutes: 15,
        },
      },
    ]);
  });

  it('for an existing account: the link names the user and goes to its stored address', async () => {
    const { send, log, outbox } = setup({ user: aUser({ email: 'new@example.com', locale: 'ko' }), passwordHash: 'x' });
    await send(input({ locale: 'fi' }));
    expect(log.of('links.insert')[0]!.args[0]).toMatchObject({ userId: 'user-1', email: 'new@example.com', locale: 'fi', mailLocale: 'fi' });
    expect(log.of('accounts.update')[0]!.args.slice(1, 3)).toEqual(['user-1', { locale: 'fi' }]);
    expect(outbox.messages[0]!.payload).toMatchObject({ to: 'new@example.com', locale: 'fi' });
  });
});

describe('consume a magic link', () => {
  const link = (over: Partial<MagicLinkRecord> = {}): MagicLinkRecord => ({
    id: 'l1',
    projectId: 'project-1',
    email: 'new@example.com',
    emailKey: 'new@example.com',
    userId: null,
    callbackUrl: 'https://app.example.com/cb',
    locale: 'sv',
    mailLocale: 'sv',
    createdAt: new Date('2030-01-01T10:00:00.000Z'),
    expiresAt: new Date('2030-01-01T10:15:00.000Z'),
    usedAt: null,
    ...over,
  });

  function setup(
    options: {
      consumed?: MagicLinkRecord | null;
      found?: MagicLinkRecord | null;
      project?: Project | null;
      existing?: EmailAccount | null;
      candidate?: EndUser | null;
    } = {},
  ) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:05:00.000Z');
    const outcome = (user: EndUser): PrimarySignInOutcome => ({
      kind: 'session',
      session: { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's' },
      user,
    });
    const audit = fakeAuditLog();
    const consume = makeConsumeMagicLink({
      links: strictFake<MagicLinkStore>(
        'links',
        { consume: async () => (options.consumed === undefined ? link() : options.consumed), findByHash: async () => options.found ?? null },
        log,
      ),
      accounts: strictFake<Pick<EmailAccountStore, 'findByLoginEmail' | 'insertWithLoginEmail' | 'findLinkCandidate' | 'attachLoginEmail' | 'update'>>(
        'accounts',
        {
          findByLoginEmail: async () => options.existing ?? null,
          insertWithLoginEmail: async () => true,
          findLinkCandidate: async () => options.candidate ?? null,
          attachLoginEmail: async () => true,
          update: async () => undefined,
        },
        log,
      ),
      users: strictFake<Pick<UserStore, 'findById'>>('users', {}, log),
      projects: strictFake<Pick<ProjectStore, 'findById'>>(
        'projects',
        { findById: async () => (options.project === undefined ? magicProject() : options.project) },
        log,
      ),
      completePrimarySignIn: strictFn('completePrimarySignIn', log, async (i: { user: EndUser }) => outcome(i.user)),
      crypto: fakeCrypto(),
      audit,
      clock,
      uow: fakeUnitOfWork(log),
    });
    return { consume: (token: string) => consume(token, TEST_ORIGIN), log, clock, audit };
  }

  it('tells an unknown, used and expired link apart, in the locale of its email', async () => {
    expect(await setup({ consumed: null, found: null }).consume('t')).toEqual({ result: { ok: false, error: 'link_invalid' }, locale: null });
    expect(await setup({ consumed: null, found: link({ usedAt: new Date(0) }) }).consume('t')).toEqual({
      result: { ok: false, error: 'link_used' },
      locale: 'sv',
    });
    const expired = setup({ consumed: null, found: link() });
    expired.clock.set(new Date('2030-01-01T10:15:00.000Z'));
    expect(await expired.consume('t')).toEqual({ result: { ok: false, error: 'link_expired' }, locale: 'sv' });
    expect(expired.log.of('links.consume')[0]!.args).toEqual(['h(t)', new Date('2030-01-01T10:15:00.000Z')]);
  });

  it('is unavailable once the project is inactive, the provider off or the callback URL removed', async () => {
    for (const project of [null, magicProject({ active: false }), aProject(), magicProject({ settings: { callbackUrls: [] } })]) {
      const { consume, log } = setup({ project });
      expect((await consume('t')).result).toEqual({ ok: false, error: 'link_unavailable' });
      expect(log.names('completePrimarySignIn')).toEqual([]);
    }
  });

  it('creates a verified account for a new address and signs in through the gate with a 15-minute token', async () => {
    const { consume, log, audit } = setup();
    const { result } = await consume('t');
    expect(result).toMatchObject({ ok: true, value: { callbackUrl: 'https://app.example.com/cb', locale: 'sv', outcome: { kind: 'session' } } });
    const inserted = log.of('accounts.insertWithLoginEmail')[0]!;
    expect(inserted.args).toEqual([
      expect.objectContaining({ email: 'new@example.com', provider: 'magic-link', emailVerified: true, locale: 'sv' }),
      'new@example.com',
      null,
    ]);
    const gate = log.of('completePrimarySignIn')[0]!;
    expect(gate.inTransaction).toBe(true);
    expect(gate.args[0]).toMatchObject({ provider: 'magic-link', ttlSeconds: 900, user: { emailVerified: true }, origin: TEST_ORIGIN });
    // The sign-up is recorded (the sign-in itself by the gate).
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'user.sign_up', userId: (inserted.args[0] as EndUser).id, ip: TEST_ORIGIN.ip, details: { provider: 'magic-link' } }),
    ]);
  });

  it('a disabled account is unavailable', async () => {
    const { consume, log } = setup({ existing: { user: aUser({ disabled: true }), passwordHash: null } });
    expect((await consume('t')).result).toEqual({ ok: false, error: 'link_unavailable' });
    expect(log.names('accounts.update')).toEqual([]);
  });

  it('links to an existing user of another provider only when account linking is on', async () => {
    const octo = aUser({ id: 'octo', provider: 'github', email: 'new@example.com' });
    const off = setup({ candidate: octo });
    await off.consume('t');
    expect(off.log.names('accounts.findLinkCandidate')).toEqual([]);
    expect(off.log.names('accounts.insertWithLoginEmail')).toHaveLength(1);

    expect(off.audit.actions()).toEqual(['user.sign_up']);

    const on = setup({ candidate: octo, project: magicProject({ settings: { allowAccountLinking: true } }) });
    const { result } = await on.consume('t');
    expect(on.audit.entries).toEqual([]);
    expect(result).toMatchObject({ ok: true, value: { outcome: { user: { id: 'octo', provider: 'magic-link', emailVerified: true } } } });
    expect(on.log.of('accounts.attachLoginEmail')[0]!.args).toEqual(['project-1', 'octo', 'new@example.com']);
    expect(on.log.names('accounts.insertWithLoginEmail')).toEqual([]);
  });
});
