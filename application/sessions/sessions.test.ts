import { describe, expect, it } from 'vitest';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { apiKeyActor, userActor } from '../audit/audit-log';
import { aUser, CallLog, fakeAuditLog, FixedClock, strictFake, TEST_ORIGIN } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeEndOtherSessions } from './end-other-sessions';
import { makeEndSession } from './end-session';
import { makeListSessions, SESSION_LIST_LIMIT } from './list-sessions';
import type { SessionRecord, SessionStore } from '../stores/session.store';

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
  const audit = fakeAuditLog();
  return {
    log,
    clock,
    audit,
    list: makeListSessions({ sessions, users, clock }),
    end: makeEndSession({ sessions, users, audit, clock }),
    endOthers: makeEndOtherSessions({ sessions, users, audit, clock }),
  };
}

/** The user asking with their access token; the project server asking with its API key. */
const byUser = { actor: userActor('user-1'), origin: TEST_ORIGIN };
const byServer = { actor: apiKeyActor('key-1'), origin: TEST_ORIGIN };

describe("a user's sessions", () => {
  it("lists the live ones at the current time, marking the caller's own", async () => {
    const { list, log, clock } = setup();
    const r = await list({ projectId: 'project-1', userId: 'user-1', currentSessionId: 's-1' });
    expect(r).toEqual(
      ok([
        { ...session('s-2'), current: false },
        { ...session('s-1'), current: true },
      ]),
    );
    expect(log.of('sessions.listLive')[0]!.args).toEqual(['project-1', 'user-1', clock.now(), SESSION_LIST_LIMIT]);
    // Through the API key nothing is current.
    const server = await setup().list({ projectId: 'project-1', userId: 'user-1', currentSessionId: null });
    expect(server.ok && server.value.map((s) => s.current)).toEqual([false, false]);
  });

  it('ends one session of the user, recorded with who asked; one that is not theirs is session_not_found', async () => {
    const { end, log, clock, audit } = setup();
    expect(await end({ projectId: 'project-1', userId: 'user-1', sessionId: 's-1', ...byUser })).toEqual(ok(undefined));
    expect(log.of('sessions.revoke')[0]!.args).toEqual(['project-1', 'user-1', 's-1', clock.now()]);
    expect(await end({ projectId: 'project-1', userId: 'user-1', sessionId: 's-2', ...byServer })).toEqual(ok(undefined));
    expect(audit.entries).toEqual([
      expect.objectContaining({
        at: clock.now(),
        action: 'session.revoked',
        actor: { kind: 'user', id: 'user-1' },
        target: { kind: 'session', id: 's-1' },
        userId: 'user-1',
        ip: TEST_ORIGIN.ip,
        requestId: TEST_ORIGIN.requestId,
      }),
      // The project server is an operator named by its key; the entry is still about the session's user.
      expect.objectContaining({
        action: 'session.revoked',
        actor: { kind: 'admin', id: 'api_key:key-1' },
        target: { kind: 'session', id: 's-2' },
        userId: 'user-1',
      }),
    ]);
    const other = setup({ found: false });
    expect(await other.end({ projectId: 'project-1', userId: 'user-1', sessionId: 's-9', ...byUser })).toEqual(err('session_not_found'));
    expect(other.audit.entries).toEqual([]);
  });

  it('ends all sessions but the one kept (none: all of them), answering how many and recording it', async () => {
    const { endOthers, log, clock, audit } = setup();
    expect(await endOthers({ projectId: 'project-1', userId: 'user-1', keepSessionId: 's-1', ...byUser })).toEqual(ok(3));
    expect(await endOthers({ projectId: 'project-1', userId: 'user-1', keepSessionId: null, ...byServer })).toEqual(ok(3));
    expect(log.of('sessions.revokeAllBut').map((c) => c.args)).toEqual([
      ['project-1', 'user-1', 's-1', clock.now()],
      ['project-1', 'user-1', null, clock.now()],
    ]);
    expect(audit.entries.map((e) => [e.action, e.actor, e.target, e.userId, e.details])).toEqual([
      ['session.revoked.others', { kind: 'user', id: 'user-1' }, { kind: 'user', id: 'user-1' }, 'user-1', { sessions_ended: 3, kept_session_id: 's-1' }],
      ['user.sign_out_everywhere', { kind: 'admin', id: 'api_key:key-1' }, { kind: 'user', id: 'user-1' }, 'user-1', { sessions_ended: 3 }],
    ]);
  });

  it('an unknown user (the project server names one) is user_not_found, and no session is touched', async () => {
    const { list, end, endOthers, log, audit } = setup({ user: null });
    expect(await list({ projectId: 'project-1', userId: 'nobody', currentSessionId: null })).toEqual(err('user_not_found'));
    expect(await end({ projectId: 'project-1', userId: 'nobody', sessionId: 's-1', ...byServer })).toEqual(err('user_not_found'));
    expect(await endOthers({ projectId: 'project-1', userId: 'nobody', keepSessionId: null, ...byServer })).toEqual(err('user_not_found'));
    expect(log.names('sessions')).toEqual([]);
    expect(audit.entries).toEqual([]);
  });
});
