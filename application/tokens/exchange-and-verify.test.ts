import { describe, expect, it } from 'vitest';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInOutcome } from '../auth/complete-primary-sign-in';
import type { AuthorizationCodeRecord, AuthorizationCodeStore } from '../stores/authorization-code.store';
import type { AccessTokenCodec, VerifiedAccessToken } from '../ports/access-tokens';
import type { ProjectSecrets, ProjectStore } from '../stores/project.store';
import type { CurrentMembership, MembershipLookup } from '../stores/organization-membership';
import type { RevokedSessions } from '../stores/session.store';
import { aProject, aUser, CallLog, fakeAuditLog, fakeCrypto, FixedClock, strictFake, strictFn, TEST_ORIGIN } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeAuthenticateAccessToken } from './authenticate-access-token';
import { makeExchangeCode } from '../auth/exchange-code';
import type { RefreshTokenStore } from '../stores/refresh-token.store';
import { makeVerifyAccessToken } from './verify-access-token';

describe('exchange an authorization code', () => {
  const record: AuthorizationCodeRecord = {
    id: 'code-1',
    projectId: 'project-1',
    userId: 'user-1',
    provider: 'github',
    createdAt: new Date('2030-01-01T10:00:00.000Z'),
    ip: '198.51.100.7',
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) Version/17.0 Safari/605.1.15',
    expiresAt: new Date('2030-01-01T10:01:00.000Z'),
  };
  function setup(options: { consumed?: AuthorizationCodeRecord | null; replayedId?: string | null; replayedAfter?: boolean; user?: EndUser | null } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:30.000Z');
    const outcome: PrimarySignInOutcome = { kind: 'mfa', challenge: 'mfa_x', methods: ['totp'], enrollmentRequired: false };
    const audit = fakeAuditLog();
    const exchange = makeExchangeCode({
      codes: strictFake<Pick<AuthorizationCodeStore, 'consume' | 'markReplayed' | 'wasReplayed'>>(
        'codes',
        {
          consume: async () => (options.consumed === undefined ? record : options.consumed),
          markReplayed: async () => options.replayedId ?? null,
          wasReplayed: async () => options.replayedAfter ?? false,
        },
        log,
      ),
      users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => (options.user === undefined ? aUser() : options.user) }, log),
      refreshTokens: strictFake<Pick<RefreshTokenStore, 'revokeByAuthCode'>>('refreshTokens', { revokeByAuthCode: async () => 1 }, log),
      completePrimarySignIn: strictFn('completePrimarySignIn', log, async () => outcome),
      audit,
      crypto: fakeCrypto(),
      clock,
    });
    return { exchange: (project: ReturnType<typeof aProject>, code: string) => exchange(project, code, TEST_ORIGIN), log, clock, outcome, audit };
  }

  it('refuses empty and over-long codes without a lookup', async () => {
    const { exchange, log } = setup();
    expect(await exchange(aProject(), '')).toEqual(err('invalid_authorization_code'));
    expect(await exchange(aProject(), 'x'.repeat(201))).toEqual(err('invalid_authorization_code'));
    expect(log.calls).toEqual([]);
  });

  it('redeems a live code of this project through the primary sign-in gate (the MFA outcome passes through)', async () => {
    const { exchange, log, clock, outcome, audit } = setup();
    expect(await exchange(aProject(), 'c0de')).toEqual(ok(outcome));
    expect(log.of('codes.consume')[0]!.args).toEqual(['project-1', 'h(c0de)', clock.now()]);
    // The sign-in is the browser's that came back from the provider (kept with the code), under the exchange's request id.
    expect(log.of('completePrimarySignIn')[0]!.args[0]).toMatchObject({
      provider: 'github',
      authCodeId: 'code-1',
      user: { id: 'user-1' },
      origin: { ip: '198.51.100.7', userAgent: record.userAgent, requestId: TEST_ORIGIN.requestId },
    });
    expect(log.names('refreshTokens')).toEqual([]);
    // The exchange itself is the project server's request.
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'token.code.exchange', userId: 'user-1', ip: TEST_ORIGIN.ip, details: { provider: 'github' } }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain('c0de');
  });

  it('a reused code fails and revokes every session minted from it', async () => {
    const { exchange, log, clock, audit } = setup({ consumed: null, replayedId: 'code-1' });
    expect(await exchange(aProject(), 'c0de')).toEqual(err('invalid_authorization_code'));
    expect(log.of('refreshTokens.revokeByAuthCode')[0]!.args).toEqual(['code-1', clock.now()]);
    expect(log.names('completePrimarySignIn')).toEqual([]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'token.code.replayed', outcome: 'failure', reason: 'code_replayed' })]);
  });

  it('an unknown or expired code fails and revokes nothing', async () => {
    const { exchange, log, audit } = setup({ consumed: null });
    expect(await exchange(aProject(), 'c0de')).toEqual(err('invalid_authorization_code'));
    expect(log.names('refreshTokens')).toEqual([]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'token.code.exchange.failed', reason: 'invalid_authorization_code', userId: null })]);
  });

  it('a replay racing the redemption still revokes what the redemption minted', async () => {
    const { exchange, log } = setup({ replayedAfter: true });
    expect((await exchange(aProject(), 'c0de')).ok).toBe(true);
    expect(log.names()).toEqual(['codes.consume', 'users.findById', 'completePrimarySignIn', 'codes.wasReplayed', 'refreshTokens.revokeByAuthCode']);
  });

  it('a disabled or deleted user gets no session', async () => {
    for (const user of [aUser({ disabled: true }), null]) {
      const { exchange, log } = setup({ user });
      expect(await exchange(aProject(), 'c0de')).toEqual(err('invalid_authorization_code'));
      expect(log.names('completePrimarySignIn')).toEqual([]);
    }
  });
});

describe('verify an access token', () => {
  const verified: VerifiedAccessToken = {
    claims: { sub: 'user-1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'google', email_verified: true, sid: 'session-1', iat: 1, exp: 2 },
    expiresAt: new Date('2030-01-01T10:05:00.000Z'),
  };
  function setup(
    options: {
      key?: Uint8Array | null;
      token?: VerifiedAccessToken | null;
      user?: EndUser | null;
      audience?: string | null;
      project?: ReturnType<typeof aProject> | null;
      /** Ended sessions, and whether the set answers at once (current) or asks the database. */
      ended?: { ids: string[]; current: boolean };
      /** The membership lookup's answer, at once (a cache hit) or as a promise; absent: the lookup must not be asked. */
      membership?: { current: CurrentMembership | null; cached: boolean };
    } = {},
  ) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const tokens = strictFake<Pick<AccessTokenCodec, 'verify' | 'peekAudience'>>(
      'tokens',
      {
        verify: async () => (options.token === undefined ? verified : options.token),
        peekAudience: () => (options.audience === undefined ? 'project-1' : options.audience),
      },
      log,
    );
    const users = strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => (options.user === undefined ? aUser() : options.user) }, log);
    const verify = makeVerifyAccessToken({
      secrets: strictFake<Pick<ProjectSecrets, 'signingKey'>>(
        'secrets',
        { signingKey: async () => (options.key === undefined ? new Uint8Array([7]) : options.key) },
        log,
      ),
      tokens,
      users,
      sessions: strictFake<RevokedSessions>(
        'sessions',
        {
          isRevoked: (sid: string) => {
            const ended = options.ended ?? { ids: [], current: true };
            return ended.current ? ended.ids.includes(sid) : Promise.resolve(ended.ids.includes(sid));
          },
        },
        log,
      ),
      memberships: strictFake<MembershipLookup>(
        'memberships',
        options.membership === undefined
          ? {}
          : { current: () => (options.membership!.cached ? options.membership!.current : Promise.resolve(options.membership!.current)) },
        log,
      ),
      clock,
    });
    const authenticate = makeAuthenticateAccessToken({
      tokens,
      projects: strictFake<Pick<ProjectStore, 'findById'>>(
        'projects',
        { findById: async () => (options.project === undefined ? aProject() : options.project) },
        log,
      ),
      users,
      verify,
    });
    return { verify, authenticate, log, clock };
  }

  it('is valid with the current user, the provider of the token and its expiry', async () => {
    const { verify, log, clock } = setup();
    const r = await verify(aProject(), 'jwt');
    expect(r).toEqual({
      valid: true,
      organization: null,
      expiresAt: verified.expiresAt,
      claims: verified.claims,
      user: { id: 'user-1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'google', emailVerified: true },
    });
    expect(log.of('tokens.verify')[0]!.args).toEqual(['jwt', new Uint8Array([7]), 'project-1', clock.now()]);
  });

  it('every failure is valid:false: no key, a bad token, a deleted or disabled user', async () => {
    for (const options of [{ key: null }, { token: null }, { user: null }, { user: aUser({ disabled: true }) }]) {
      expect(await setup(options).verify(aProject(), 'jwt')).toEqual({ valid: false });
    }
  });

  it('a token of an ended session is valid:false, whether the revoked-session set answers or the database does', async () => {
    for (const current of [true, false]) {
      const ended = setup({ ended: { ids: ['session-1'], current } });
      expect(await ended.verify(aProject(), 'jwt')).toEqual({ valid: false });
      expect(ended.log.of('sessions.isRevoked')[0]!.args).toEqual(['session-1']);
      expect(ended.log.names('users')).toEqual([]);
      const other = setup({ ended: { ids: ['session-2'], current } });
      expect((await other.verify(aProject(), 'jwt')).valid).toBe(true);
    }
    // A token without a session id (none is issued so) is judged by its user alone.
    const { sid: _sid, ...claims } = verified.claims;
    const noSid = setup({ token: { ...verified, claims }, ended: { ids: ['session-1'], current: true } });
    expect((await noSid.verify(aProject(), 'jwt')).valid).toBe(true);
    expect(noSid.log.names('sessions')).toEqual([]);
  });

  it('authenticates a user-scoped request by the token alone: the audience picks an active project', async () => {
    const ok = setup();
    expect(await ok.authenticate('jwt')).toMatchObject({ project: { id: 'project-1' }, user: { id: 'user-1' }, claims: { sub: 'user-1' } });
    expect(await setup({ audience: null }).authenticate('jwt')).toBeNull();
    expect(await setup({ project: aProject({ active: false }) }).authenticate('jwt')).toBeNull();
    const invalid = setup({ token: null });
    expect(await invalid.authenticate('jwt')).toBeNull();
    expect(invalid.log.names('users')).toEqual([]);
  });

  /** A token signed while user-1 was a member of org-1 with the role member. */
  const withOrg: VerifiedAccessToken = { ...verified, claims: { ...verified.claims, org: { id: 'org-1', slg: 'acme', rol: 'member', per: [] } } };
  const nowAdmin: CurrentMembership = {
    id: 'org-1',
    slug: 'acme-corp',
    role: 'admin',
    permissions: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'],
    requireMfa: false,
  };

  it('a token with an org claim answers the membership as it is now, not as the token says (a cache hit or not)', async () => {
    for (const cached of [true, false]) {
      const { verify, log } = setup({ token: withOrg, membership: { current: nowAdmin, cached } });
      const r = await verify(aProject(), 'jwt');
      expect(r).toMatchObject({ valid: true, user: { id: 'user-1' } });
      expect(r.valid && r.organization).toEqual({
        id: 'org-1',
        slug: 'acme-corp',
        role: 'admin',
        permissions: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'],
      });
      expect(log.of('memberships.current').map((c) => c.args)).toEqual([['project-1', 'org-1', 'user-1']]);
    }
  });

  it('a token with an org claim the lookup answers null for (removed, organization deleted) is valid with organization null', async () => {
    const { verify } = setup({ token: withOrg, membership: { current: null, cached: true } });
    expect(await verify(aProject(), 'jwt')).toMatchObject({ valid: true, organization: null, user: { id: 'user-1' } });
  });

  it('a token without an org claim does not ask the membership lookup', async () => {
    const { verify, log } = setup({ membership: { current: nowAdmin, cached: true } });
    expect(await verify(aProject(), 'jwt')).toMatchObject({ valid: true, organization: null });
    expect(log.names('memberships')).toEqual([]);
  });

  it('a malformed org claim is no organization, without a lookup', async () => {
    const { verify, log } = setup({
      token: { ...verified, claims: { ...verified.claims, org: { id: 'org-1' } as VerifiedAccessToken['claims']['org'] } },
      membership: { current: nowAdmin, cached: true },
    });
    expect(await verify(aProject(), 'jwt')).toMatchObject({ valid: true, organization: null });
    expect(log.names('memberships')).toEqual([]);
  });

  it('an ended session with an org claim is valid:false before any membership lookup', async () => {
    const { verify, log } = setup({ token: withOrg, ended: { ids: ['session-1'], current: true }, membership: { current: nowAdmin, cached: true } });
    expect(await verify(aProject(), 'jwt')).toEqual({ valid: false });
    expect(log.names('memberships')).toEqual([]);
  });
});
