import type { CurrentMembership, MembershipLookup } from '../stores/organization-membership';
import { describe, expect, it } from 'vitest';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { AccessTokenCodec, SignAccessTokenInput } from '../ports/access-tokens';
import type { ProjectSecrets } from '../stores/project.store';
import { aProject, aUser, CallLog, fakeAuditLog, fakeBox, fakeCrypto, FixedClock, strictFake, strictFn, TEST_ORIGIN } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import { makeIssueSession } from './issue-session';
import { makeRefreshSession } from './refresh-session';
import type { RefreshTokenStore, RotateRefreshTokenInput, StoredRefreshToken } from '../stores/refresh-token.store';
import { makeRevokeSession } from './revoke-session';

const DAY = 24 * 3600_000;
const policy = { refreshTokenTtlSeconds: 30 * 24 * 3600, refreshTokenIdleSeconds: 14 * 24 * 3600, reuseGraceSeconds: 10 };
const key = new Uint8Array([1, 2, 3]);
const secrets = (log: CallLog, k: Uint8Array | null = key) => strictFake<Pick<ProjectSecrets, 'signingKey'>>('secrets', { signingKey: async () => k }, log);
const codec = (log: CallLog) =>
  strictFake<Pick<AccessTokenCodec, 'sign'>>(
    'tokens',
    { sign: async (i: SignAccessTokenInput) => `jwt(${i.claims.sub},${i.claims.sid},${i.ttlSeconds})` },
    log,
  );

describe('issue a session', () => {
  function setup(k: Uint8Array | null = key) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const issue = makeIssueSession({
      secrets: secrets(log, k),
      tokens: codec(log),
      refreshTokens: strictFake<Pick<RefreshTokenStore, 'insert'>>('refreshTokens', { insert: async () => undefined }, log),
      crypto: fakeCrypto(),
      clock,
      policy,
    });
    return { issue, log, clock };
  }

  it('signs an access token with the session id and stores the rt_ refresh token hashed, with absolute and idle expiry', async () => {
    const { issue, log, clock } = setup();
    const s = await issue({
      project: aProject(),
      user: aUser(),
      provider: 'github',
      authCodeId: 'code-1',
      origin: { ip: '203.0.113.7', userAgent: 'Firefox/140' },
    });
    expect(s).toEqual({
      token: 'jwt(user-1,uuid-1,300)',
      refreshToken: 'rt_tok2.32',
      expiresAt: new Date(clock.now().getTime() + 300_000),
      sessionId: 'uuid-1',
    });
    expect(log.of('tokens.sign')[0]!.args[0]).toEqual({
      secret: key,
      projectId: 'project-1',
      claims: { sub: 'user-1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'github', email_verified: true, sid: 'uuid-1' },
      ttlSeconds: 300,
      now: clock.now(),
    });
    expect(log.of('refreshTokens.insert')[0]!.args).toEqual([
      {
        id: 'uuid-3',
        projectId: 'project-1',
        userId: 'user-1',
        familyId: 'uuid-1',
        parentId: null,
        provider: 'github',
        authCodeId: 'code-1',
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 30 * DAY),
        idleExpiresAt: new Date(clock.now().getTime() + 14 * DAY),
      },
      'h(rt_tok2.32)',
      { ip: '203.0.113.7', userAgent: 'Firefox/140' },
    ]);
  });

  it('a magic-link session lives 15 minutes; a user without email carries no email_verified claim', async () => {
    const { issue, log } = setup();
    await issue({ project: aProject(), user: aUser({ email: null }), provider: 'magic-link', ttlSeconds: 900, origin: { ip: '203.0.113.7', userAgent: null } });
    const signed = log.of('tokens.sign')[0]!.args[0] as SignAccessTokenInput;
    expect(signed.ttlSeconds).toBe(900);
    expect(signed.claims).not.toHaveProperty('email_verified');
  });

  it('a missing signing key is a fault, not a session', async () => {
    const { issue, log } = setup(null);
    await expect(issue({ project: aProject(), user: aUser(), provider: 'email', origin: { ip: '203.0.113.7', userAgent: null } })).rejects.toThrow(
      /signing key/,
    );
    expect(log.names('refreshTokens')).toEqual([]);
  });
});

describe('refresh a session', () => {
  const row = (over: Partial<StoredRefreshToken> = {}): StoredRefreshToken => ({
    id: 'r1',
    projectId: 'project-1',
    userId: 'user-1',
    familyId: 'fam-1',
    parentId: null,
    provider: 'google',
    authCodeId: null,
    createdAt: new Date('2030-01-01T00:00:00.000Z'),
    expiresAt: new Date('2030-01-31T00:00:00.000Z'),
    idleExpiresAt: new Date('2030-01-15T00:00:00.000Z'),
    lastUsedAt: null,
    rotatedAt: null,
    revokedAt: null,
    replacedBy: null,
    successorEncrypted: null,
    ...over,
  });
  function setup(
    options: {
      rows?: StoredRefreshToken[];
      afterRace?: StoredRefreshToken | null;
      rotateWins?: boolean;
      user?: EndUser | null;
      /** The membership lookup's answer; absent: the lookup must not be asked. */
      membership?: CurrentMembership | null;
      secondFactor?: boolean;
    } = {},
  ) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-02T00:00:00.000Z');
    const rows = options.rows ?? [row()];
    let lookups = 0;
    const audit = fakeAuditLog();
    const refresh = makeRefreshSession({
      refreshTokens: strictFake<Pick<RefreshTokenStore, 'findByHash' | 'findById' | 'rotate' | 'revokeFamily'>>(
        'refreshTokens',
        {
          findByHash: async () => (lookups++ > 0 && options.afterRace !== undefined ? options.afterRace : (rows[0] ?? null)),
          findById: async (id) => rows.find((r) => r.id === id) ?? null,
          rotate: async (i: RotateRefreshTokenInput) => ((options.rotateWins ?? true) ? { ...rows[0]!, rotatedAt: i.at } : null),
          revokeFamily: async () => 1,
        },
        log,
      ),
      users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async () => (options.user === undefined ? aUser() : options.user) }, log),
      secrets: secrets(log),
      tokens: codec(log),
      crypto: fakeCrypto(),
      box: fakeBox(),
      audit,
      clock,
      memberships: strictFake<MembershipLookup>('memberships', options.membership === undefined ? {} : { current: async () => options.membership! }, log),
      hasSecondFactor: strictFn('hasSecondFactor', log, async () => options.secondFactor ?? false),
      policy,
    });
    return { refresh: (project: ReturnType<typeof aProject>, token: string) => refresh(project, token, TEST_ORIGIN), log, clock, audit };
  }

  it('refuses tokens without the rt_ prefix, unknown, revoked and expired ones (absolute and idle) without revoking', async () => {
    expect(await setup().refresh(aProject(), 'abc')).toEqual(err('invalid_refresh_token'));
    expect(await setup({ rows: [] }).refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
    expect(await setup({ rows: [row({ revokedAt: new Date(0) })] }).refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
    const idle = setup();
    idle.clock.set(new Date('2030-01-15T00:00:00.000Z'));
    expect(await idle.refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
    const absolute = setup({ rows: [row({ idleExpiresAt: new Date('2030-03-01T00:00:00.000Z') })] });
    absolute.clock.set(new Date('2030-01-31T00:00:00.000Z'));
    expect(await absolute.refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
    expect([idle, absolute].flatMap((s) => s.log.names('refreshTokens.r'))).toEqual([]);
    // Each refusal is recorded, about the session's user when the token named one.
    expect(idle.audit.entries).toEqual([
      expect.objectContaining({
        action: 'token.refresh.failed',
        reason: 'invalid_refresh_token',
        actor: { kind: 'user', id: 'user-1' },
        target: { kind: 'session', id: 'fam-1' },
      }),
    ]);
    const unknown = setup({ rows: [] });
    await unknown.refresh(aProject(), 'rt_x');
    expect(unknown.audit.entries).toEqual([expect.objectContaining({ action: 'token.refresh.failed', actor: { kind: 'user', id: null }, target: null })]);
  });

  it('rotates: a new pair in the same session, recorded with the rotation in one statement', async () => {
    const { refresh, log, clock, audit } = setup();
    const r = await refresh(aProject(), 'rt_x');
    const pair = { token: 'jwt(user-1,fam-1,300)', refreshToken: 'rt_tok2.32' };
    expect(r).toEqual(ok(pair));
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'token.refresh', outcome: 'success', userId: 'user-1', target: { kind: 'session', id: 'fam-1' }, ip: TEST_ORIGIN.ip }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toMatch(/rt_x|rt_tok2|jwt\(/);
    expect(log.of('refreshTokens.rotate')[0]!.args[0]).toEqual({
      projectId: 'project-1',
      tokenHash: 'h(rt_x)',
      at: clock.now(),
      childId: 'uuid-1',
      childTokenHash: 'h(rt_tok2.32)',
      childIdleExpiresAt: new Date(clock.now().getTime() + 14 * DAY),
      successorEncrypted: `box(${JSON.stringify(pair)})`,
    });
  });

  it('a disabled user ends the session', async () => {
    const { refresh, log } = setup({ user: aUser({ disabled: true }) });
    expect(await refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
    expect(log.of('refreshTokens.revokeFamily')[0]!.args[0]).toBe('fam-1');
    expect(log.names('tokens')).toEqual([]);
  });

  const rotated = (rotatedAt: string, successor: object = { token: 'jwt-old', refreshToken: 'rt_next' }) => [
    row({ rotatedAt: new Date(rotatedAt), replacedBy: 'r2', successorEncrypted: `box(${JSON.stringify(successor)})` }),
    row({ id: 'r2' }),
  ];

  it('the previous token within the grace window returns the same successor pair', async () => {
    const { refresh, log } = setup({ rows: rotated('2030-01-01T23:59:50.000Z') });
    expect(await refresh(aProject(), 'rt_x')).toEqual(ok({ token: 'jwt-old', refreshToken: 'rt_next' }));
    expect(log.names('refreshTokens.revokeFamily')).toEqual([]);
    // A pair kept before the pair was camelCase reads the same.
    const legacy = setup({ rows: rotated('2030-01-01T23:59:55.000Z', { token: 'jwt-old', refresh_token: 'rt_legacy' }) });
    expect(await legacy.refresh(aProject(), 'rt_x')).toEqual(ok({ token: 'jwt-old', refreshToken: 'rt_legacy' }));
  });

  it('a retired token outside the grace window revokes the whole session', async () => {
    const { refresh, log, audit } = setup({ rows: rotated('2030-01-01T23:59:49.000Z') });
    expect(await refresh(aProject(), 'rt_x')).toEqual(err('refresh_token_reused'));
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'token.refresh.reused', outcome: 'failure', reason: 'refresh_token_reused', userId: 'user-1' }),
    ]);
    expect(log.of('refreshTokens.revokeFamily')[0]!.args).toEqual(['fam-1', new Date('2030-01-02T00:00:00.000Z')]);
  });

  it('losing the rotation race answers with the winner pair', async () => {
    const [retired] = rotated('2030-01-02T00:00:00.000Z', { token: 'jwt-winner', refreshToken: 'rt_winner' });
    const { refresh } = setup({ rotateWins: false, afterRace: retired!, rows: [row(), row({ id: 'r2' })] });
    expect(await refresh(aProject(), 'rt_x')).toEqual(ok({ token: 'jwt-winner', refreshToken: 'rt_winner' }));
    const revokedMeanwhile = setup({ rotateWins: false, afterRace: row({ revokedAt: new Date(0) }) });
    expect(await revokedMeanwhile.refresh(aProject(), 'rt_x')).toEqual(err('invalid_refresh_token'));
  });

  const inOrg = row({ activeOrganizationId: 'org-1' });
  /** org-1 as it is now: user-1 became an admin since the session switched to it as a member. */
  const adminNow: CurrentMembership = {
    id: 'org-1',
    slug: 'acme-corp',
    role: 'admin',
    permissions: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'],
    requireMfa: false,
  };
  const signedClaims = (log: CallLog) => (log.of('tokens.sign')[0]!.args[0] as SignAccessTokenInput).claims;

  it("re-signs the session's active organization as the lookup answers it now", async () => {
    const { refresh, log } = setup({ rows: [inOrg], membership: adminNow });
    expect((await refresh(aProject(), 'rt_x')).ok).toBe(true);
    expect(log.of('memberships.current')[0]!.args).toEqual(['project-1', 'org-1', 'user-1']);
    expect(signedClaims(log)).toMatchObject({
      sid: 'fam-1',
      org: { id: 'org-1', slg: 'acme-corp', rol: 'admin', per: ['org:billing:manage', 'org:members:manage', 'org:settings:manage'] },
    });
    // Only an organization that requires a second factor asks about one.
    expect(log.names('hasSecondFactor')).toEqual([]);
  });

  it('drops the organization when the lookup answers null (removed, or the organization deleted)', async () => {
    const { refresh, log } = setup({ rows: [inOrg], membership: null });
    expect((await refresh(aProject(), 'rt_x')).ok).toBe(true);
    expect(signedClaims(log)).not.toHaveProperty('org');
    expect(signedClaims(log).sid).toBe('fam-1');
  });

  it('drops an organization that requires MFA when the user has no second factor', async () => {
    const { refresh, log } = setup({ rows: [inOrg], membership: { ...adminNow, requireMfa: true }, secondFactor: false });
    expect((await refresh(aProject(), 'rt_x')).ok).toBe(true);
    expect(log.of('hasSecondFactor')[0]!.args).toEqual(['project-1', 'user-1']);
    expect(signedClaims(log)).not.toHaveProperty('org');
  });

  it('keeps an organization that requires MFA when the user has a second factor', async () => {
    const { refresh, log } = setup({ rows: [inOrg], membership: { ...adminNow, requireMfa: true }, secondFactor: true });
    expect((await refresh(aProject(), 'rt_x')).ok).toBe(true);
    expect(signedClaims(log)).toMatchObject({ org: { id: 'org-1', rol: 'admin' } });
  });

  it('a session acting for no organization does not ask the lookup and signs no org claim', async () => {
    const { refresh, log } = setup({ rows: [row({ activeOrganizationId: null })], membership: adminNow });
    expect((await refresh(aProject(), 'rt_x')).ok).toBe(true);
    expect(log.names('memberships')).toEqual([]);
    expect(signedClaims(log)).not.toHaveProperty('org');
  });
});

describe('revoke a session', () => {
  function setup(found: boolean) {
    const log = new CallLog();
    const clock = new FixedClock();
    const audit = fakeAuditLog();
    const revoke = makeRevokeSession({
      refreshTokens: strictFake<Pick<RefreshTokenStore, 'findByHash' | 'revokeFamily'>>(
        'refreshTokens',
        { findByHash: async () => (found ? ({ familyId: 'fam-1', userId: 'user-1' } as StoredRefreshToken) : null), revokeFamily: async () => 2 },
        log,
      ),
      crypto: fakeCrypto(),
      audit,
      clock,
    });
    return { revoke: (project: ReturnType<typeof aProject>, token: string) => revoke(project, token, TEST_ORIGIN), log, clock, audit };
  }

  it('revokes the whole family of a known token of this project', async () => {
    const { revoke, log, clock, audit } = setup(true);
    await revoke(aProject(), 'rt_x');
    expect(log.calls.map((c) => [c.call, ...c.args])).toEqual([
      ['refreshTokens.findByHash', 'project-1', 'h(rt_x)'],
      ['refreshTokens.revokeFamily', 'fam-1', clock.now()],
    ]);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'session.revoked', userId: 'user-1', target: { kind: 'session', id: 'fam-1' } })]);
  });

  it('an unknown or malformed token is not an error and changes nothing', async () => {
    const unknown = setup(false);
    await expect(unknown.revoke(aProject(), 'rt_x')).resolves.toBeUndefined();
    expect(unknown.log.names()).toEqual(['refreshTokens.findByHash']);
    expect(unknown.audit.entries).toEqual([]);
    const malformed = setup(true);
    await malformed.revoke(aProject(), 'x'.repeat(10));
    expect(malformed.log.calls).toEqual([]);
  });
});
