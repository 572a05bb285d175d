import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ProviderProfile } from '../../domain/oauth/profile';
import type { Project, ProviderCredentials } from '../../domain/project';
import type { OAuthProvider } from '../../domain/providers';
import { err, ok } from '../../domain/result';
import type { ProjectSecrets, ProjectStore } from '../stores/project.store';
import type { TokenCrypto } from '../ports/crypto';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeBox,
  fakeCrypto,
  fakeLogger,
  fakeRateLimiter,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import type { TokenVerification } from '../tokens/verify-access-token';
import type { AuthorizationCodeStore } from '../stores/authorization-code.store';
import { makeCompleteAuthorization, type CompleteAuthorizationInput } from './complete-authorization';
import type { OAuthProviderClient, OAuthProviderRegistry } from './oauth-provider';
import type { OAuthStateRecord, OAuthStateStore } from './oauth-state.store';
import type { ResolveAccountInput } from './resolve-account';
import { makeStartAuthorization, type StartAuthorizationInput } from './start-authorization';

const MINUTE = 60_000;
const googleProject = (over: Parameters<typeof aProject>[0] = {}) =>
  aProject({ ...over, settings: { enabledProviders: ['email', 'google', 'github'], allowAccountLinking: true, ...over.settings } });
const credentials: ProviderCredentials = { clientId: 'cid', clientSecret: 'secret' };

/** One provider client whose authorization URL lists what it was given. */
function registry(log: CallLog, exchange?: OAuthProviderClient['exchange']): OAuthProviderRegistry {
  const client = (id: OAuthProvider) =>
    strictFake<OAuthProviderClient>(
      id,
      {
        id,
        authorizationUrl: (i) => `https://${id}.example/auth?state=${i.state}&challenge=${i.codeChallenge}&nonce=${i.nonce}&redirect=${i.redirectUri}`,
        ...(exchange ? { exchange } : {}),
      },
      log,
    );
  return { google: client('google'), github: client('github'), discord: client('discord'), azure: client('azure'), apple: client('apple') };
}

describe('start an OAuth authorization', () => {
  const limits = { initiation: { points: 2, windowMs: MINUTE } };
  /** Real SHA-256, so that the PKCE challenge can be checked against RFC 7636. */
  const sha256Crypto = (log: CallLog): TokenCrypto => {
    const base = fakeCrypto();
    return strictFake<TokenCrypto>(
      'crypto',
      { randomToken: base.randomToken, uuid: base.uuid, hash: (t: string) => createHash('sha256').update(t).digest('hex') },
      log,
    );
  };
  function setup(options: { creds?: ProviderCredentials | null; linkUser?: string | null; refuse?: Record<string, number> } = {}) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const start = makeStartAuthorization({
      states: strictFake<Pick<OAuthStateStore, 'insert'>>('states', { insert: async () => undefined }, log),
      providers: registry(log),
      secrets: strictFake<Pick<ProjectSecrets, 'providerCredentials'>>(
        'secrets',
        { providerCredentials: async () => (options.creds === undefined ? credentials : options.creds) },
        log,
      ),
      verifyAccessToken: strictFn(
        'verifyAccessToken',
        log,
        async (_p: Project, token: string): Promise<TokenVerification> =>
          token === 'good' && options.linkUser
            ? {
                valid: true,
                user: { id: options.linkUser, email: null, name: null, picture: null, provider: 'email', emailVerified: false },
                expiresAt: clock.now(),
                claims: {},
                organization: null,
              }
            : { valid: false },
      ),
      crypto: sha256Crypto(log),
      box: fakeBox(),
      clock,
      publicUrl: 'https://auth.example.com',
      rateLimiter: fakeRateLimiter(log, clock, { refuse: options.refuse ?? {} }),
      limits,
    });
    return { start, log, clock };
  }
  const input = (over: Partial<StartAuthorizationInput> = {}): StartAuthorizationInput => ({
    project: googleProject(),
    apiKeyId: 'key-1',
    ip: '10.0.0.1',
    provider: 'google',
    callbackUrl: 'https://app.example.com/cb',
    clientState: 'xyz',
    locale: null,
    linkTo: null,
    linkToken: null,
    ...over,
  });

  it('checks in the spec order: callback URL present, provider known, project active, callback registered, provider enabled', async () => {
    const { start, log } = setup();
    const inactiveElsewhere = googleProject({ active: false, settings: { callbackUrls: [], enabledProviders: [] } });
    expect(await start(input({ callbackUrl: '', provider: 'myspace', project: inactiveElsewhere }))).toEqual(err('missing_callback_url'));
    expect(await start(input({ provider: 'myspace', project: inactiveElsewhere }))).toEqual(err('unsupported_provider'));
    expect(await start(input({ project: inactiveElsewhere }))).toEqual(err('project_inactive'));
    expect(await start(input({ project: googleProject({ settings: { callbackUrls: [], enabledProviders: [] } }) }))).toEqual(
      err('callback_url_not_registered'),
    );
    expect(await start(input({ project: googleProject({ settings: { enabledProviders: ['github'] } }) }))).toEqual(err('provider_not_enabled'));
    expect(log.calls).toEqual([]);
  });

  it('limits initiations per API key and client IP, before the locale and link checks', async () => {
    const { start, log } = setup();
    expect(await start(input({ locale: 'xx' }))).toEqual(err('unsupported_locale'));
    expect(await start(input({ linkTo: 'u1' }))).toEqual(err('link_request_incomplete'));
    expect(await start(input({ locale: 'xx' }))).toEqual({ ok: false, error: 'rate_limited', retryAfterMs: MINUTE });
    expect(log.of('rateLimiter.consume').map((c) => c.args)).toEqual(Array(3).fill(['oauth-init:key-1:10.0.0.1', limits.initiation]));
    expect(log.names('verifyAccessToken')).toEqual([]);
  });

  it('checks a link request: linking on, both fields, a valid token of that very user', async () => {
    expect(await setup().start(input({ project: googleProject({ settings: { allowAccountLinking: false } }), linkTo: 'u1', linkToken: 'good' }))).toEqual(
      err('account_linking_disabled'),
    );
    expect(await setup().start(input({ linkToken: 'good' }))).toEqual(err('link_request_incomplete'));
    expect(await setup({ linkUser: 'u2' }).start(input({ linkTo: 'u1', linkToken: 'good' }))).toEqual(err('invalid_link_token'));
    expect(await setup({ linkUser: 'u1' }).start(input({ linkTo: 'u1', linkToken: 'bad' }))).toEqual(err('invalid_link_token'));
    // Empty fields count as absent.
    expect((await setup().start(input({ linkTo: '', linkToken: '' }))).ok).toBe(true);
  });

  it('needs the provider credentials of the project', async () => {
    expect(await setup({ creds: null }).start(input())).toEqual(err('provider_not_configured'));
    expect(await setup({ creds: { clientId: 'cid' } }).start(input())).toEqual(err('provider_not_configured'));
  });

  it('stores a hashed, 10-minute state with the encrypted PKCE verifier and nonce, and redirects with the S256 challenge', async () => {
    const { start, log, clock } = setup({ linkUser: 'u1' });
    const r = await start(input({ locale: 'de', linkTo: 'u1', linkToken: 'good' }));
    const state = 'tok1.32';
    const verifier = 'tok2.48';
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(log.of('states.insert')[0]!.args).toEqual([
      {
        id: 'uuid-4',
        projectId: 'project-1',
        provider: 'google',
        callbackUrl: 'https://app.example.com/cb',
        clientState: 'xyz',
        locale: 'de',
        linkUserId: 'u1',
        secretsEncrypted: `box(${JSON.stringify({ codeVerifier: verifier, nonce: 'tok3.24' })})`,
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 10 * MINUTE),
      },
      sha(state),
    ]);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const callback = 'https://auth.example.com/api/proxy/callback/google';
    expect(r).toEqual(
      ok({
        redirectUrl: `https://google.example/auth?state=${state}&challenge=${challenge}&nonce=tok3.24&redirect=${callback}`,
      }),
    );
  });

  it('the PKCE challenge follows RFC 7636 (appendix B)', async () => {
    const log = new CallLog();
    const clock = new FixedClock();
    const start = makeStartAuthorization({
      states: { insert: async () => undefined },
      providers: registry(log),
      secrets: { providerCredentials: async () => credentials },
      verifyAccessToken: strictFn('verifyAccessToken', log),
      crypto: strictFake<TokenCrypto>('crypto', {
        randomToken: (bytes?: number) => (bytes === 48 ? 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' : 'state'),
        uuid: () => 'id',
        hash: (t: string) => createHash('sha256').update(t).digest('hex'),
      }),
      box: fakeBox(),
      clock,
      publicUrl: 'https://auth.example.com',
      rateLimiter: fakeRateLimiter(log, clock),
      limits,
    });
    const r = await start(input({ provider: 'github' }));
    expect(r.ok && new URL(r.value.redirectUrl).searchParams.get('challenge')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});

describe('complete an OAuth authorization (the provider callback)', () => {
  const profile: ProviderProfile = { providerUserId: 'g-1', email: 'ada@example.com', emailVerified: true, name: 'Ada', picture: null };
  const stateRecord = (over: Partial<OAuthStateRecord> = {}): OAuthStateRecord => ({
    id: 's1',
    projectId: 'project-1',
    provider: 'google',
    callbackUrl: 'https://app.example.com/cb?tenant=7',
    clientState: 'xyz',
    locale: 'de',
    linkUserId: null,
    secretsEncrypted: `box(${JSON.stringify({ codeVerifier: 'verifier', nonce: 'nonce' })})`,
    createdAt: new Date('2030-01-01T09:55:00.000Z'),
    expiresAt: new Date('2030-01-01T10:05:00.000Z'),
    ...over,
  });
  function setup(
    options: {
      state?: OAuthStateRecord | null;
      project?: Project | null;
      exchangeFails?: boolean;
      creds?: ProviderCredentials | null;
      resolved?: ReturnType<typeof err> | null;
    } = {},
  ) {
    const log = new CallLog();
    const clock = new FixedClock('2030-01-01T10:00:00.000Z');
    const logger = fakeLogger();
    const audit = fakeAuditLog();
    const complete = makeCompleteAuthorization({
      states: strictFake<Pick<OAuthStateStore, 'consume'>>(
        'states',
        { consume: async () => (options.state === undefined ? stateRecord() : options.state) },
        log,
      ),
      codes: strictFake<Pick<AuthorizationCodeStore, 'insert'>>('codes', { insert: async () => undefined }, log),
      projects: strictFake<Pick<ProjectStore, 'findById'>>(
        'projects',
        {
          findById: async () =>
            options.project === undefined ? googleProject({ settings: { callbackUrls: ['https://app.example.com/cb?tenant=7'] } }) : options.project,
        },
        log,
      ),
      secrets: strictFake<Pick<ProjectSecrets, 'providerCredentials'>>(
        'secrets',
        { providerCredentials: async () => (options.creds === undefined ? credentials : options.creds) },
        log,
      ),
      providers: registry(log, async () => {
        if (options.exchangeFails) throw new Error('bad code');
        return profile;
      }),
      resolveAccount: strictFn('resolveAccount', log, async (i: ResolveAccountInput) =>
        options.resolved ? options.resolved : ok(aUser({ id: 'user-9', email: i.profile.email })),
      ) as never,
      audit,
      crypto: fakeCrypto(),
      box: fakeBox(),
      clock,
      logger,
      publicUrl: 'https://auth.example.com',
    });
    return { complete, log, clock, logger, audit };
  }
  const input = (over: Partial<CompleteAuthorizationInput> = {}): CompleteAuthorizationInput => ({
    provider: 'google',
    code: 'pcode',
    state: 'st',
    userField: null,
    origin: TEST_ORIGIN,
    ...over,
  });

  it('refuses an unknown provider and a missing code or state before touching the state', async () => {
    const { complete, log } = setup();
    expect(await complete(input({ provider: 'myspace', code: null }))).toEqual(err('unsupported_provider'));
    expect(await complete(input({ code: null }))).toEqual(err('missing_code_or_state'));
    expect(await complete(input({ state: '' }))).toEqual(err('missing_code_or_state'));
    expect(log.calls).toEqual([]);
  });

  it('consumes the hashed state for this provider; an unknown one is invalid, an old one expired (at 10 minutes)', async () => {
    const unknown = setup({ state: null });
    expect(await unknown.complete(input())).toEqual(err('invalid_state'));
    expect(unknown.log.of('states.consume')[0]!.args).toEqual(['h(st)', 'google', unknown.clock.now()]);
    const old = setup();
    old.clock.set(new Date('2030-01-01T10:05:00.000Z'));
    expect(await old.complete(input())).toEqual(err('state_expired'));
    expect(old.log.names('projects')).toEqual([]);
  });

  it('checks the project again: it may have changed since the sign-in started', async () => {
    expect(await setup({ project: null }).complete(input())).toEqual(err('project_inactive'));
    expect(await setup({ project: googleProject({ active: false }) }).complete(input())).toEqual(err('project_inactive'));
    expect(await setup({ project: googleProject() }).complete(input())).toEqual(err('callback_url_not_registered'));
    expect(
      await setup({ project: googleProject({ settings: { enabledProviders: ['github'], callbackUrls: ['https://app.example.com/cb?tenant=7'] } }) }).complete(
        input(),
      ),
    ).toEqual(err('provider_not_enabled'));
  });

  it('a failed exchange (or removed credentials) is token_exchange_failed, logged without secrets', async () => {
    const failed = setup({ exchangeFails: true });
    expect(await failed.complete(input())).toEqual(err('token_exchange_failed'));
    expect(failed.logger.lines).toEqual([
      { level: 'warn', obj: { provider: 'google', projectId: 'project-1', reason: 'bad code' }, msg: 'provider code exchange failed' },
    ]);
    expect(failed.log.names('resolveAccount')).toEqual([]);
    expect(await setup({ creds: null }).complete(input())).toEqual(err('token_exchange_failed'));
  });

  it('passes the account resolution refusal through, and issues no code', async () => {
    const { complete, log } = setup({ resolved: err('identity_already_linked') });
    expect(await complete(input())).toEqual(err('identity_already_linked'));
    expect(log.names('codes')).toEqual([]);
  });

  it('exchanges with the PKCE verifier and nonce, then issues a hashed 60-second code and redirects to the callback', async () => {
    const { complete, log, clock, audit } = setup();
    const r = await complete(input({ userField: '{"name":{}}' }));
    expect(log.of('google.exchange')[0]!.args).toEqual([
      {
        credentials,
        code: 'pcode',
        codeVerifier: 'verifier',
        redirectUri: 'https://auth.example.com/api/proxy/callback/google',
        nonce: 'nonce',
        userField: '{"name":{}}',
        now: clock.now(),
      },
    ]);
    expect(log.of('resolveAccount')[0]!.args[0]).toMatchObject({ provider: 'google', profile, linkUserId: null, locale: 'de', origin: TEST_ORIGIN });
    // The code keeps the browser that came back from the provider: the exchange records the sign-in from there.
    expect(log.of('codes.insert')[0]!.args).toEqual([
      {
        id: 'uuid-2',
        projectId: 'project-1',
        userId: 'user-9',
        provider: 'google',
        ip: TEST_ORIGIN.ip,
        userAgent: TEST_ORIGIN.userAgent,
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 60_000),
      },
      'h(tok1.32)',
    ]);
    expect(r).toEqual(ok({ redirectUrl: 'https://app.example.com/cb?tenant=7&code=tok1.32&state=xyz' }));
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'token.code.issued', userId: 'user-9', details: { provider: 'google' } })]);
    expect(JSON.stringify(audit.entries)).not.toContain('tok1.32');
  });
});
