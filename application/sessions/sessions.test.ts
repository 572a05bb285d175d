import { describe, expect, it } from 'vitest';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { aUser, CallLog, FixedClock, strictFake } from '../testing/fakes';
import type { UserStore } from '../users/user.store';
import { makeEndOtherSessions } from './end-other-sessions';
import { makeEndSession } from './end-session';
import { makeListSessions, SESSION_LIST_LIMIT } from './list-sessions';
import type { SessionRecord, SessionStore } from './session.store';

const session = (id: string): SessionRecord => ({
  id,
  projectId: 'project-1',
  userId: 'user-1',
  provider: 'google',
  createdAt: new Date('2030-01-01T09:00:00.000Z'),
  lastUsedAt: new Date('2030-01-01T09:30:00.000Z'),
  expiresAt: new Date('2030-01-31T09:00:00.000Z'),
  idleExpiresAt: new Date('2030-01-15T09:30:00.000Z'),
  ip: '203.0.113.7',
  userAgent: 'Firefox/140',
  revokedAt: null,
});

function setup(options: { user?: EndUser | null; found?: boolean } = {}) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const sessions = strictFake<SessionStore>(
    'sessions',
    {
      listLive: async () => [session('s-2'), session('s-1')],
      revoke: async () => options.found ?? true,
      revokeAllBut: async () => 3,
    },
    log,
  );
  const users = strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => (options.user === undefined ? aUser() : options.user) }, log);
  return {
    log,
    clock,
    list: makeListSessions({ sessions, users, clock }),
    end: makeEndSession({ sessions, users, clock }),
    endOthers: makeEndOtherSessions({ sessions, users, clock }),
  };
}

describe("a user's sessions", () => {
  it('lists the live ones at the current time, marking the caller\'s own', async () => {
    const { list, log, clock } = setup();
    const r = await list({ projectId: 'project-1', userId: 'user-1', currentSessionId: 's-1' });
    expect(r).toEqual(ok([{ ...session('s-2'), current: false }, { ...session('s-1'), current: true }]));
    expect(log.of('sessions.listLive')[0]!.args).toEqual(['project-1', 'user-1', clock.now(), SESSION_LIST_LIMIT]);
    // Through the API key nothing is current.
    const server = await setup().list({ projectId: 'project-1', userId: 'user-1', currentSessionId: null });
    expect(server.ok && server.value.map((s) => s.current)).toEqual([false, false]);
  });

  it('ends one session of the user; one that is not theirs is session_not_found', async () => {
    const { end, log, clock } = setup();
    expect(await end({ projectId: 'project-1', userId: 'user-1', sessionId: 's-1' })).toEqual(ok(undefined));
    expect(log.of('sessions.revoke')[0]!.args).toEqual(['project-1', 'user-1', 's-1', clock.now()]);
    expect(await setup({ found: false }).end({ projectId: 'project-1', userId: 'user-1', sessionId: 's-9' })).toEqual(err('session_not_found'));
  });

  it('ends all sessions but the one kept (none: all of them), answering how many', async () => {
    const { endOthers, log, clock } = setup();
    expect(await endOthers({ projectId: 'project-1', userId: 'user-1', keepSessionId: 's-1' })).toEqual(ok(3));
    expect(await endOthers({ projectId: 'project-1', userId: 'user-1', keepSessionId: null })).toEqual(ok(3));
    expect(log.of('sessions.revokeAllBut').map((c) => c.args)).toEqual([
      ['project-1', 'user-1', 's-1', clock.now()],
      ['project-1', 'user-1', null, clock.now()],
    ]);
  });

  it('an unknown user (the project server names one) is user_not_found, and no session is touched', async () => {
    const { list, end, endOthers, log } = setup({ user: null });
    expect(await list({ projectId: 'project-1', userId: 'nobody', currentSessionId: null })).toEqual(err('user_not_found'));
    expect(await end({ projectId: 'project-1', userId: 'nobody', sessionId: 's-1' })).toEqual(err('user_not_found'));
    expect(await endOthers({ projectId: 'project-1', userId: 'nobody', keepSessionId: null })).toEqual(err('user_not_found'));
    expect(log.names('sessions')).toEqual([]);
  });
});
