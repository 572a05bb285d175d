import { describe, expect, it } from 'vitest';
import type { MfaMethod, MfaPolicy } from '../../domain/mfa';
import type { MfaChallengeStore } from '../mfa/mfa.store';
import { aProject, aUser, CallLog, fakeAuditLog, fakeCheckNewDevice, fakeCrypto, FixedClock, strictFake, strictFn, TEST_ORIGIN } from '../testing/fakes';
import type { IssuedSession } from '../tokens/issue-session';
import { makeCompletePrimarySignIn } from './complete-primary-sign-in';

function setup(enrolled: MfaMethod[], withMfa = true, newDevice = false) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const session: IssuedSession = { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's1' };
  const audit = fakeAuditLog();
  const gate = makeCompletePrimarySignIn({
    issueSession: strictFn('issueSession', log, async () => session),
    audit,
    checkNewDevice: fakeCheckNewDevice(log, newDevice),
    clock,
    ...(withMfa
      ? {
          mfa: {
            challenges: strictFake<Pick<MfaChallengeStore, 'insert'>>('challenges', { insert: async () => undefined }, log),
            enrollment: strictFake('enrollment', { enrolledMethods: async () => enrolled }, log),
            crypto: fakeCrypto(),
            clock,
          },
        }
      : {}),
  });
  return { gate, log, clock, session, audit };
}

const project = (mfaPolicy: MfaPolicy, mfaMethods: MfaMethod[] = ['totp', 'sms', 'backup_codes']) => aProject({ settings: { mfaPolicy, mfaMethods } });

describe('the primary sign-in gate', () => {
  it('policy off: a session, without reading enrollment; the sign-in is recorded and its device checked', async () => {
    const { gate, log, session, audit, clock } = setup(['totp']);
    const user = aUser();
    expect(await gate({ project: project('off'), user, provider: 'email', origin: TEST_ORIGIN })).toEqual({ kind: 'session', session, user });
    expect(log.names()).toEqual(['issueSession', 'checkNewDevice']);
    expect(log.of('issueSession')[0]!.args[0]).toMatchObject({ origin: TEST_ORIGIN });
    expect(audit.entries).toEqual([
      {
        at: clock.now(),
        projectId: 'project-1',
        action: 'user.sign_in',
        actor: { kind: 'user', id: 'user-1' },
        target: null,
        userId: 'user-1',
        ip: TEST_ORIGIN.ip,
        userAgent: TEST_ORIGIN.userAgent,
        requestId: TEST_ORIGIN.requestId,
        outcome: 'success',
        reason: null,
        details: { provider: 'email', mfa: 'none', session_id: 's1' },
      },
    ]);
  });

  it('a session from a device new to the user says so in the entry', async () => {
    const { gate, audit } = setup([], true, true);
    await gate({ project: project('off'), user: aUser(), provider: 'email', origin: TEST_ORIGIN });
    expect(audit.entries[0]!.details).toEqual({ provider: 'email', mfa: 'none', session_id: 's1', new_device: true });
  });

  it('optional with nothing usable enrolled: a session (backup codes alone, or a method the project no longer allows)', async () => {
    for (const [enrolled, allowed] of [
      [[], undefined],
      [['backup_codes'], undefined],
      [['sms', 'backup_codes'], ['totp']],
    ] as const) {
      const { gate, log } = setup([...enrolled]);
      expect(
        (await gate({ project: project('optional', allowed ? [...allowed] : undefined), user: aUser(), provider: 'email', origin: TEST_ORIGIN })).kind,
      ).toBe('session');
      expect(log.names('challenges')).toEqual([]);
    }
  });

  it('an enrolled method: a 5-minute challenge, stored hashed, remembering what the session must carry', async () => {
    const { gate, log, clock, audit } = setup(['totp', 'backup_codes']);
    const outcome = await gate({
      project: project('required'),
      user: aUser(),
      provider: 'magic-link',
      ttlSeconds: 900,
      authCodeId: 'code-1',
      origin: TEST_ORIGIN,
    });
    expect(outcome).toEqual({ kind: 'mfa', challenge: 'mfa_tok1.32', methods: ['totp', 'backup_codes'], enrollmentRequired: false });
    expect(log.of('challenges.insert')[0]!.args).toEqual([
      {
        id: 'uuid-2',
        projectId: 'project-1',
        userId: 'user-1',
        enrollment: false,
        provider: 'magic-link',
        ttlSeconds: 900,
        authCodeId: 'code-1',
        ip: TEST_ORIGIN.ip,
        userAgent: TEST_ORIGIN.userAgent,
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 5 * 60_000),
      },
      'h(mfa_tok1.32)',
    ]);
    expect(log.names('issueSession')).toEqual([]);
    expect(log.names('checkNewDevice')).toEqual([]);
    expect(audit.actions()).toEqual(['user.sign_in', 'mfa.challenge.issued']);
    expect(audit.entries.map((e) => e.details)).toEqual([
      { provider: 'magic-link', mfa: 'challenge', methods: ['totp', 'backup_codes'] },
      { provider: 'magic-link', enrollment: false, methods: ['totp', 'backup_codes'] },
    ]);
  });

  it('required with nothing enrolled: an enrollment challenge and no session', async () => {
    const { gate, log } = setup([]);
    expect(await gate({ project: project('required'), user: aUser(), provider: 'google', origin: TEST_ORIGIN })).toEqual({
      kind: 'mfa',
      challenge: 'mfa_tok1.32',
      methods: [],
      enrollmentRequired: true,
    });
    expect(log.of('challenges.insert')[0]!.args[0]).toMatchObject({ enrollment: true, ttlSeconds: null, authCodeId: null });
    expect(log.names('issueSession')).toEqual([]);
  });

  it('a multi-factor primary sign-in (a passkey with user verification): a session under every policy, enrollment not read', async () => {
    for (const policy of ['optional', 'required'] as const) {
      for (const enrolled of [['totp', 'backup_codes'], [], ['passkey']] as MfaMethod[][]) {
        const { gate, log, session, audit } = setup(enrolled);
        const user = aUser();
        const outcome = await gate({ project: project(policy, ['totp', 'passkey']), user, provider: 'passkey', origin: TEST_ORIGIN, multiFactor: true });
        expect(outcome).toEqual({ kind: 'session', session, user });
        expect(log.names()).toEqual(['issueSession', 'checkNewDevice']);
        expect(audit.entries.map((e) => [e.action, e.details])).toEqual([
          ['user.sign_in', { provider: 'passkey', mfa: 'none', session_id: 's1', multi_factor: true }],
        ]);
      }
    }
  });

  it('multiFactor false is an ordinary primary sign-in: the policy applies', async () => {
    const { gate, log } = setup(['totp']);
    const outcome = await gate({ project: project('required'), user: aUser(), provider: 'passkey', origin: TEST_ORIGIN, multiFactor: false });
    expect(outcome).toMatchObject({ kind: 'mfa', methods: ['totp'], enrollmentRequired: false });
    expect(log.names('issueSession')).toEqual([]);
  });

  it('another primary sign-in lists the passkey among the methods when the project allows it', async () => {
    const { gate } = setup(['totp', 'backup_codes', 'passkey']);
    expect(await gate({ project: project('optional', ['totp', 'passkey']), user: aUser(), provider: 'email', origin: TEST_ORIGIN })).toMatchObject({
      kind: 'mfa',
      methods: ['totp', 'backup_codes', 'passkey'],
    });
  });

  it('a passkey sign-in without user verification never lists the passkey among the challenge methods', async () => {
    const { gate, log, audit } = setup(['totp', 'backup_codes', 'passkey']);
    const outcome = await gate({ project: project('optional', ['totp', 'passkey']), user: aUser(), provider: 'passkey', origin: TEST_ORIGIN });
    expect(outcome).toMatchObject({ kind: 'mfa', methods: ['totp', 'backup_codes'], enrollmentRequired: false });
    expect(log.of('challenges.insert')[0]!.args[0]).toMatchObject({ provider: 'passkey', enrollment: false });
    expect(audit.entries.map((e) => e.details)).toEqual([
      { provider: 'passkey', mfa: 'challenge', methods: ['totp', 'backup_codes'] },
      { provider: 'passkey', enrollment: false, methods: ['totp', 'backup_codes'] },
    ]);
  });

  it('a passkey sign-in without user verification whose only factor is the passkey: as if nothing were enrolled (backup codes alone are not)', async () => {
    const optional = setup(['backup_codes', 'passkey']);
    expect((await optional.gate({ project: project('optional', ['passkey']), user: aUser(), provider: 'passkey', origin: TEST_ORIGIN })).kind).toBe('session');
    expect(optional.log.names('challenges')).toEqual([]);
    const required = setup(['backup_codes', 'passkey']);
    expect(await required.gate({ project: project('required', ['passkey']), user: aUser(), provider: 'passkey', origin: TEST_ORIGIN })).toMatchObject({
      kind: 'mfa',
      methods: [],
      enrollmentRequired: true,
    });
  });

  it('without the MFA feature every sign-in is a session', async () => {
    const { gate, log } = setup(['totp'], false);
    expect((await gate({ project: project('required'), user: aUser(), provider: 'email', origin: TEST_ORIGIN })).kind).toBe('session');
    expect(log.names()).toEqual(['issueSession', 'checkNewDevice']);
  });
});
