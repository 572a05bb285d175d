import { describe, expect, it } from 'vitest';
import type { ConsoleAccount, ConsoleInvitation } from '../../domain/console';
import { err, ok } from '../../domain/result';
import {
  aConsoleAccount,
  aProject,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeOutbox,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
} from '../testing/fakes';
import { makeAcceptConsoleInvitation } from './accept-console-invitation';
import type { CheckConsoleTotp } from './check-console-totp';
import type { ConsoleStore } from './console.store';
import { makeInviteConsoleMember } from './invite-console-member';

const actor = (account: ConsoleAccount) => ({ kind: 'admin' as const, id: account.id });
const inviter = aConsoleAccount({ id: 'member-1', email: 'grace@example.com' });
const project = aProject({ id: 'project-a', name: 'Acme' });

describe('inviting someone to a project', () => {
  function setup(options: { existing?: ConsoleAccount; memberOfProject?: boolean; refuse?: boolean } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T00:00:00.000Z');
    const outbox = fakeOutbox(log);
    const audit = fakeAuditLog();
    const invite = makeInviteConsoleMember({
      store: strictFake<ConsoleStore>(
        'store',
        {
          findAccountByEmailKey: async () => (options.existing ? { account: options.existing, passwordHash: null } : null),
          isMember: async () => options.memberOfProject ?? false,
          revokePendingInvitation: async () => undefined,
          insertInvitation: async () => undefined,
        },
        log,
      ),
      outbox,
      crypto: fakeCrypto(log),
      clock,
      uow: fakeUnitOfWork(log),
      rateLimiter: fakeRateLimiter(log, clock, options.refuse ? { refuse: { 'console-invite:account:member-1': 60_000 } } : {}),
      audit,
      invitationUrl: (token) => `https://console.example.com/invitation#${token}`,
      actor,
    });
    return { invite, log, clock, outbox, audit };
  }

  it('a new address gets a single-use invitation for 7 days, replacing a pending one, its mail sent with it in one transaction', async () => {
    const { invite, log, outbox, audit } = setup();
    const invited = await invite({ inviter, project, email: ' New.Person@Example.COM ' });
    expect(invited).toEqual(
      ok({
        id: expect.any(String),
        projectId: 'project-a',
        email: 'New.Person@example.com',
        invitedBy: 'member-1',
        createdAt: new Date('2030-01-01T00:00:00.000Z'),
        expiresAt: new Date('2030-01-08T00:00:00.000Z'),
      }),
    );
    expect(log.calls.filter((c) => c.inTransaction && !c.call.startsWith('crypto')).map((c) => c.call)).toEqual([
      'store.revokePendingInvitation',
      'store.insertInvitation',
      'outbox.enqueue',
    ]);
    // The pending invitation is looked up by the address's lower-cased key; only the token's hash is stored.
    expect(log.of('store.revokePendingInvitation')[0]!.args.slice(0, 2)).toEqual(['project-a', 'new.person@example.com']);
    const token = /#(tgi_.+)$/.exec((outbox.messages[0]!.payload as { url: string }).url)![1]!;
    expect(log.of('store.insertInvitation')[0]!.args.slice(1)).toEqual(['new.person@example.com', `h(${token})`]);
    expect(outbox.messages[0]!.payload).toMatchObject({ to: 'New.Person@example.com', projectName: 'Acme', invitedBy: 'grace@example.com', expiresInDays: 7 });
    expect(audit.actions()).toEqual(['console.member.invited']);
  });

  it('someone who already sees the project (a member of it, or any operator) is not invited', async () => {
    const other = aConsoleAccount({ id: 'member-2', email: 'ada@example.com' });
    for (const [existing, memberOfProject] of [
      [other, true],
      [aConsoleAccount({ id: 'operator-1', role: 'operator', email: 'ada@example.com' }), false],
    ] as const) {
      const { invite, log, audit } = setup({ existing, memberOfProject });
      expect(await invite({ inviter, project, email: 'ada@example.com' })).toEqual(err('console_already_member'));
      expect(log.names('store.insertInvitation')).toEqual([]);
      expect(audit.entries).toEqual([]);
    }
  });

  it('an account that is a member of other projects only is invited to this one', async () => {
    const { invite } = setup({ existing: aConsoleAccount({ id: 'member-2', email: 'ada@example.com' }), memberOfProject: false });
    expect(await invite({ inviter, project, email: 'ada@example.com' })).toMatchObject({ ok: true });
  });

  it('an invalid address is refused before the rate limit counts it; a limited inviter is refused before anything is stored', async () => {
    const invalid = setup();
    expect(await invalid.invite({ inviter, project, email: 'not an address' })).toEqual(err('invalid_email'));
    expect(invalid.log.names()).toEqual([]);

    const limited = setup({ refuse: true });
    expect(await limited.invite({ inviter, project, email: 'ada@example.com' })).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: 60_000 });
    expect(limited.log.names()).toEqual(['rateLimiter.consume']);
  });
});

describe('accepting an invitation', () => {
  const TOKEN = 'tgi_token';
  const invitation: ConsoleInvitation & { emailKey: string } = {
    id: 'invitation-1',
    projectId: 'project-a',
    email: 'Ada@example.com',
    invitedBy: 'member-1',
    createdAt: new Date('2029-12-30T00:00:00.000Z'),
    expiresAt: new Date('2030-01-06T00:00:00.000Z'),
    emailKey: 'ada@example.com',
  };

  function setup(options: { pending?: boolean; existing?: ConsoleAccount; wins?: boolean; taken?: boolean; totp?: 'ok' | 'console_totp_required' } = {}) {
    const log = new CallLog();
    const audit = fakeAuditLog();
    const store = strictFake<ConsoleStore>(
      'store',
      {
        findPendingInvitationEmailKey: async () => (options.pending === false ? null : invitation.emailKey),
        findAccountByEmailKey: async () => (options.existing ? { account: options.existing, passwordHash: 'hashed' } : null),
        consumeInvitation: async () => (options.wins === false ? null : invitation),
        insertAccount: async () => (options.taken ? 'email_taken' : 'inserted'),
        addMembership: async () => undefined,
        insertSession: async () => undefined,
      },
      log,
    );
    const checkTotp = strictFn<CheckConsoleTotp>('checkTotp', log, async () =>
      options.totp === 'console_totp_required' ? err('console_totp_required') : ok(undefined),
    );
    const accept = makeAcceptConsoleInvitation({ store, checkTotp, crypto: fakeCrypto(log), clock: new FixedClock(), uow: fakeUnitOfWork(log), audit, actor });
    return { accept, log, audit };
  }

  it('a new address gets a member account without a password, the membership and a session, in one transaction', async () => {
    const { accept, log, audit } = setup();
    const accepted = await accept(TOKEN);
    expect(accepted).toMatchObject({ ok: true, value: { projectId: 'project-a', account: { email: 'Ada@example.com', role: 'member', totpEnabled: false } } });
    const account = (accepted as { value: { account: ConsoleAccount } }).value.account;
    expect(log.of('store.insertAccount')[0]!.args).toEqual([account, 'ada@example.com', null]);
    expect(log.of('store.addMembership')[0]!.args.slice(0, 2)).toEqual([account.id, 'project-a']);
    expect(
      log.calls
        .filter((c) => c.inTransaction)
        .map((c) => c.call)
        .filter((c) => !c.startsWith('crypto')),
    ).toEqual(['store.consumeInvitation', 'store.findAccountByEmailKey', 'store.insertAccount', 'store.addMembership', 'store.insertSession']);
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'console.invitation.accepted', target: { kind: 'console_invitation', id: 'invitation-1' } }),
    ]);
  });

  it('an existing account keeps its role and gets the membership; no account is created', async () => {
    const existing = aConsoleAccount({ id: 'member-2', email: 'Ada@example.com' });
    const { accept, log } = setup({ existing });
    expect(await accept(TOKEN)).toMatchObject({ ok: true, value: { account: existing, projectId: 'project-a' } });
    expect(log.names('store.insertAccount')).toEqual([]);
    expect(log.of('store.addMembership')[0]!.args.slice(0, 2)).toEqual(['member-2', 'project-a']);
  });

  it('an existing account with an authenticator app must send its code; without it the invitation is not used up', async () => {
    const existing = aConsoleAccount({ id: 'member-2', email: 'Ada@example.com', totpEnabled: true });
    const { accept, log } = setup({ existing, totp: 'console_totp_required' });
    expect(await accept(TOKEN)).toEqual(err('console_totp_required'));
    expect(log.of('checkTotp')[0]!.args).toEqual([existing, undefined]);
    expect(log.names('store.consumeInvitation')).toEqual([]);
  });

  it('a malformed token is refused without a lookup; an unknown, used or expired one is refused', async () => {
    for (const token of ['tgc_session-token', `tgi_${'x'.repeat(200)}`]) {
      const { accept, log } = setup();
      expect(await accept(token)).toEqual(err('console_invitation_invalid'));
      expect(log.names('store')).toEqual([]);
    }
    const { accept, log } = setup({ pending: false });
    expect(await accept(TOKEN)).toEqual(err('console_invitation_invalid'));
    expect(log.names('store')).toEqual(['store.findPendingInvitationEmailKey']);
  });

  it('an invitation another request used up first, or an address taken meanwhile, gives no session and no audit entry', async () => {
    for (const options of [{ wins: false }, { taken: true }]) {
      const { accept, log, audit } = setup(options);
      expect(await accept(TOKEN)).toEqual(err('console_invitation_invalid'));
      expect(log.names('store.addMembership')).toEqual([]);
      expect(log.names('store.insertSession')).toEqual([]);
      expect(audit.entries).toEqual([]);
    }
  });
});
