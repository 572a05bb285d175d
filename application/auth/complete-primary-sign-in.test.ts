import { describe, expect, it } from 'vitest';
import type { MfaMethod, MfaPolicy } from '../../domain/mfa';
import type { MfaChallengeStore } from '../mfa/mfa.store';
import { aProject, aUser, CallLog, fakeCrypto, FixedClock, strictFake, strictFn } from '../testing/fakes';
import type { IssuedSession } from '../tokens/issue-session';
import { makeCompletePrimarySignIn } from './complete-primary-sign-in';

function setup(enrolled: MfaMethod[], withMfa = true) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const session: IssuedSession = { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's1' };
  const gate = makeCompletePrimarySignIn({
    issueSession: strictFn('issueSession', log, async () => session),
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
  return { gate, log, clock, session };
}

/** Where the user signed in from. */
const origin = { ip: '203.0.113.7', userAgent: 'Firefox/140' };

const project = (mfaPolicy: MfaPolicy, mfaMethods: MfaMethod[] = ['totp', 'sms', 'backup_codes']) => aProject({ settings: { mfaPolicy, mfaMethods } });

describe('the primary sign-in gate', () => {
  it('policy off: a session, without reading enrollment', async () => {
    const { gate, log, session } = setup(['totp']);
    const user = aUser();
    expect(await gate({ project: project('off'), user, provider: 'email', origin })).toEqual({ kind: 'session', session, user });
    expect(log.names()).toEqual(['issueSession']);
    expect(log.of('issueSession')[0]!.args[0]).toMatchObject({ origin });
  });

  it('optional with nothing usable enrolled: a session (backup codes alone, or a method the project no longer allows)', async () => {
    for (const [enrolled, allowed] of [[[], undefined], [['backup_codes'], undefined], [['sms', 'backup_codes'], ['totp']]] as const) {
      const { gate, log } = setup([...enrolled]);
      expect((await gate({ project: project('optional', allowed ? [...allowed] : undefined), user: aUser(), provider: 'email', origin })).kind).toBe('session');
      expect(log.names('challenges')).toEqual([]);
    }
  });

  it('an enrolled method: a 5-minute challenge, stored hashed, remembering what the session must carry', async () => {
    const { gate, log, clock } = setup(['totp', 'backup_codes']);
    const outcome = await gate({ project: project('required'), user: aUser(), provider: 'magic-link', ttlSeconds: 900, authCodeId: 'code-1', origin });
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
        ip: '203.0.113.7',
        userAgent: 'Firefox/140',
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 5 * 60_000),
      },
      'h(mfa_tok1.32)',
    ]);
    expect(log.names('issueSession')).toEqual([]);
  });

  it('required with nothing enrolled: an enrollment challenge and no session', async () => {
    const { gate, log } = setup([]);
    expect(await gate({ project: project('required'), user: aUser(), provider: 'google', origin })).toEqual({ kind: 'mfa', challenge: 'mfa_tok1.32', methods: [], enrollmentRequired: true });
    expect(log.of('challenges.insert')[0]!.args[0]).toMatchObject({ enrollment: true, ttlSeconds: null, authCodeId: null });
    expect(log.names('issueSession')).toEqual([]);
  });

  it('without the MFA feature every sign-in is a session', async () => {
    const { gate, log } = setup(['totp'], false);
    expect((await gate({ project: project('required'), user: aUser(), provider: 'email', origin })).kind).toBe('session');
    expect(log.names()).toEqual(['issueSession']);
  });
});
