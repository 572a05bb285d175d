import { describe, expect, it } from 'vitest';
import type { MfaMethod } from '../../domain/mfa';
import type { Passkey } from '../../domain/passkeys/passkey';
import type { PasskeySettings } from '../../domain/passkeys/relying-party';
import type { Project, ProjectSettings } from '../../domain/project';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import type { PrimarySignInInput, PrimarySignInOutcome, SignInGate } from '../auth/complete-primary-sign-in';
import type { EmailAccountStore } from '../email/email-account.store';
import type { MfaActor } from '../mfa/actor';
import type { FinishedSignIn } from '../mfa/finish-challenge';
import type { EnrolledMethodsReader, MfaChallengeRecord, MfaChallengeStore } from '../mfa/mfa.store';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { ProjectStore } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import {
  anAnswer,
  aPasskey,
  aRegisteredCredential,
  type CeremonyScript,
  fakePasskeyCeremonies,
  fakePasskeyChallengeStore,
  fakePasskeyStore,
  refused,
  verified,
} from '../testing/passkeys';
import type { PasskeyDeps } from './deps';
import { makeRemovePasskey, makeRenamePasskey, type PasskeyOwner, selfOwner } from './manage-passkeys';
import type { PasskeyStore, SignInMethodsReader } from './passkey.store';
import { makeMfaPasskeyOptions, makePasskeyFactorCheck } from './passkey-factor';
import { makeRegisterPasskey, makeRegisterPasskeyOptions } from './register-passkey';
import { makePasskeySignInOptions, makeSignInWithPasskey } from './sign-in-with-passkey';
import { makeFinishPasskeySignUp, type PasskeySignUpDeps } from './sign-up-with-passkey';

const NOW = '2030-01-01T10:00:00.000Z';

/** Passkeys as a sign-in method and as a second factor (optional policy). */
const passkeyProject = (settings: Partial<ProjectSettings> = {}, passkeys?: Partial<PasskeySettings>, id = 'project-1'): Project =>
  aProject({
    id,
    settings: {
      enabledProviders: ['email', 'passkey'],
      mfaPolicy: 'optional',
      mfaMethods: ['totp', 'passkey'],
      ...(passkeys ? { passkeys: { rpId: null, origins: null, userVerification: 'preferred', ...passkeys } } : {}),
      ...settings,
    },
  });

const ADA = aUser();
const GRACE = aUser({ id: 'user-2', email: 'grace@example.com', name: 'Grace' });

const actorOf = (project: Project, user: EndUser = ADA, enrollmentChallengeId: string | null = null): MfaActor => ({
  project,
  user,
  enrollmentChallengeId,
  origin: TEST_ORIGIN,
  sessionId: enrollmentChallengeId ? null : 'session-1',
});

const anMfaChallenge = (over: Partial<MfaChallengeRecord> = {}): MfaChallengeRecord => ({
  id: 'mfa-ch-1',
  projectId: 'project-1',
  userId: 'user-1',
  enrollment: false,
  provider: 'email',
  ttlSeconds: null,
  authCodeId: null,
  ip: null,
  userAgent: null,
  createdAt: new Date('2030-01-01T09:59:00.000Z'),
  expiresAt: new Date('2030-01-01T10:04:00.000Z'),
  ...over,
});

interface Options {
  passkeys?: Passkey[];
  store?: Partial<PasskeyStore>;
  script?: CeremonyScript;
  users?: EndUser[];
  projects?: Project[];
  /** For remove: what else lets the user sign in. */
  methods?: { password: boolean; identities: number; emailVerified: boolean };
  enrolled?: MfaMethod[];
  /** The MFA challenges live in the store (by hash `h(<token>)` and by id). */
  mfaChallenges?: Record<string, MfaChallengeRecord>;
}

function setup(options: Options = {}) {
  const log = new CallLog();
  const clock = new FixedClock(NOW);
  const audit = fakeAuditLog();
  const passkeys = fakePasskeyStore(log, options.passkeys ?? [], options.store);
  const challenges = fakePasskeyChallengeStore(log);
  const users = options.users ?? [ADA, GRACE];
  const projects = options.projects ?? [passkeyProject()];
  const deps: PasskeyDeps = {
    passkeys,
    challenges,
    ceremonies: fakePasskeyCeremonies(log, options.script),
    crypto: fakeCrypto(),
    clock,
    audit,
    notify: strictFn<NotifySecurityEvent>('notify', log, async () => undefined),
    rateLimiter: fakeRateLimiter(log, clock),
    limit: { points: 60, windowMs: 60_000 },
    uow: fakeUnitOfWork(log),
  };
  const userStore = strictFake<Pick<UserStore, 'findById'>>(
    'users',
    { findById: async (projectId, id) => users.find((u) => u.projectId === projectId && u.id === id) ?? null },
    log,
  );
  const projectStore = strictFake<Pick<ProjectStore, 'findById'>>('projects', { findById: async (id) => projects.find((p) => p.id === id) ?? null }, log);
  const session = { token: 'jwt', refreshToken: 'rt_1', expiresAt: clock.now(), sessionId: 's1' };
  const signInGate = strictFn<SignInGate>(
    'signInGate',
    log,
    async (input: PrimarySignInInput): Promise<PrimarySignInOutcome> => ({ kind: 'session', session, user: input.user }),
  );
  const live = options.mfaChallenges ?? {};
  const mfaChallenges = strictFake<Pick<MfaChallengeStore, 'findLive' | 'findLiveById'>>(
    'mfaChallenges',
    {
      findLive: async (hash) => Object.entries(live).find(([token]) => `h(${token})` === hash)?.[1] ?? null,
      findLiveById: async (id) => Object.values(live).find((c) => c.id === id) ?? null,
    },
    log,
  );
  const finished: FinishedSignIn = { session, user: ADA };
  const finish = strictFn('finish', log, async () => finished);
  const methods = strictFake<SignInMethodsReader>('methods', options.methods ? { otherSignInMethods: async () => options.methods! } : {}, log);
  const enrollment = strictFake<EnrolledMethodsReader>('enrollment', options.enrolled ? { enrolledMethods: async () => options.enrolled! } : {}, log);
  const accounts = strictFake<Pick<EmailAccountStore, 'findByLoginEmail'>>(
    'accounts',
    {
      findByLoginEmail: async (projectId, key) =>
        users.map((user) => ({ user, passwordHash: null })).find((a) => a.user.projectId === projectId && a.user.email === key) ?? null,
    },
    log,
  );
  return {
    log,
    clock,
    audit,
    deps,
    passkeys,
    challenges,
    session,
    finished,
    registerOptions: makeRegisterPasskeyOptions(deps),
    register: makeRegisterPasskey({ ...deps, mfaChallenges, finish }),
    signInOptions: makePasskeySignInOptions({ ...deps, accounts }),
    signIn: makeSignInWithPasskey({ ...deps, users: userStore, signInGate }),
    mfaOptions: makeMfaPasskeyOptions({ ...deps, mfaChallenges, projects: projectStore, users: userStore }),
    factorCheck: makePasskeyFactorCheck({ ...deps, projects: projectStore }),
    rename: makeRenamePasskey(deps),
    remove: makeRemovePasskey({ ...deps, methods, enrollment }),
    signUpDeps: { deps, userStore, signInGate },
  };
}

/** The challenge a use case handed to the ceremonies port (the fake echoes it in the options). */
const challengeIn = (options: { ok: boolean; value?: unknown }): string => {
  if (!options.ok) throw new Error(`no options: ${JSON.stringify(options)}`);
  return (options.value as { challenge: string }).challenge;
};

const anAssertion = (over: Partial<{ newCounter: number; userVerified: boolean; backedUp: boolean }> = {}) =>
  verified({ newCounter: 0, userVerified: true, backedUp: true, ...over });

const signInFrom = (ip = '10.0.0.1') => ({ ip, origin: TEST_ORIGIN });

describe('options: a challenge bound to its ceremony and user, stored only as its hash', () => {
  it('registration: creation options for the signed-in user, their passkeys excluded; the record binds the user', async () => {
    const t = setup({ passkeys: [aPasskey()] });
    const options = await t.registerOptions(actorOf(passkeyProject()));
    expect(options).toEqual(
      ok({
        kind: 'creation',
        rpId: 'app.example.com',
        rpName: 'Acme',
        userId: 'user-1',
        userName: 'ada@example.com',
        userDisplayName: 'Ada',
        challenge: 'tok1.32',
        excludeCredentialIds: [{ id: 'cred-1', transports: ['internal'] }],
        userVerification: 'preferred',
        timeoutMs: 120_000,
      }),
    );
    expect(t.challenges.stored).toEqual([
      {
        record: {
          id: 'uuid-2',
          projectId: 'project-1',
          ceremony: 'registration',
          userId: 'user-1',
          mfaChallengeId: null,
          enrollmentChallengeId: null,
          userVerification: 'preferred',
          createdAt: new Date(NOW),
          expiresAt: new Date(Date.parse(NOW) + 5 * 60_000),
        },
        hash: 'h(tok1.32)',
        spent: false,
      },
    ]);
    expect(JSON.stringify(t.challenges.stored[0]!.record)).not.toContain('tok1');
  });

  it('the project’s user verification travels to the options and the record', async () => {
    const t = setup();
    const options = await t.registerOptions(actorOf(passkeyProject({}, { userVerification: 'required' })));
    expect(options).toEqual(ok(expect.objectContaining({ userVerification: 'required' })));
    expect(t.challenges.stored[0]!.record.userVerification).toBe('required');
  });

  it('registration with the enrollment challenge binds it, and needs passkeys as an MFA method (the sign-in method is not enough)', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const t = setup();
    expect((await t.registerOptions(actorOf(required, ADA, 'mfa-ch-1'))).ok).toBe(true);
    expect(t.challenges.stored[0]!.record).toMatchObject({ ceremony: 'registration', userId: 'user-1', enrollmentChallengeId: 'mfa-ch-1' });

    const signInOnly = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['totp'] });
    expect(await setup().registerOptions(actorOf(signInOnly, ADA, 'mfa-ch-1'))).toEqual(err('passkeys_disabled'));
  });

  it('registration with a token: passkeys on as the sign-in method or as an MFA method', async () => {
    expect((await setup().registerOptions(actorOf(passkeyProject({ mfaPolicy: 'off' })))).ok).toBe(true);
    expect((await setup().registerOptions(actorOf(passkeyProject({ enabledProviders: ['email'] })))).ok).toBe(true);
    const off = passkeyProject({ enabledProviders: ['email'], mfaPolicy: 'off' });
    const t = setup();
    expect(await t.registerOptions(actorOf(off))).toEqual(err('passkeys_disabled'));
    // Allowed as an MFA method while the policy is off: still off.
    expect(await t.registerOptions(actorOf(passkeyProject({ enabledProviders: ['email'], mfaPolicy: 'off', mfaMethods: ['passkey'] })))).toEqual(
      err('passkeys_disabled'),
    );
    expect(t.log.names('challenges')).toEqual([]);
  });

  it('no callback URL and no settings: passkey_not_configured; 20 passkeys: passkey_limit_reached; no challenge either way', async () => {
    const t = setup({ passkeys: Array.from({ length: 20 }, (_, i) => aPasskey({ id: `passkey-${i}`, credentialId: `cred-${i}` })) });
    expect(await t.registerOptions(actorOf(passkeyProject({ callbackUrls: [] })))).toEqual(err('passkey_not_configured'));
    expect(await t.registerOptions(actorOf(passkeyProject()))).toEqual(err('passkey_limit_reached'));
    expect(t.log.names('challenges')).toEqual([]);
  });

  it('sign-in without an email: discoverable credentials (none listed), a challenge bound to no user; counted against the IP', async () => {
    const t = setup({ passkeys: [aPasskey()] });
    const options = await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' });
    expect(options).toEqual(
      ok({ kind: 'request', rpId: 'app.example.com', challenge: 'tok1.32', allowCredentials: [], userVerification: 'preferred', timeoutMs: 120_000 }),
    );
    expect(t.challenges.stored).toEqual([
      { record: expect.objectContaining({ ceremony: 'sign_in', userId: null, mfaChallengeId: null }), hash: 'h(tok1.32)', spent: false },
    ]);
    expect(t.log.of('rateLimiter.consume').map((c) => c.args[0])).toEqual(['passkey:ip:10.0.0.9']);
  });

  it('sign-in for an email lists that account’s passkeys; an unknown email answers the same shape with none', async () => {
    const t = setup({ passkeys: [aPasskey(), aPasskey({ id: 'passkey-2', userId: 'user-2', credentialId: 'cred-2' })] });
    expect(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9', email: 'Grace@Example.com' })).toEqual(
      ok(expect.objectContaining({ allowCredentials: [{ id: 'cred-2', transports: ['internal'] }] })),
    );
    expect(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9', email: 'nobody@example.com' })).toEqual(
      ok(expect.objectContaining({ allowCredentials: [] })),
    );
    expect(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9', email: 'not an email' })).toEqual(ok(expect.objectContaining({ allowCredentials: [] })));
  });

  it('sign-in needs the sign-in method (an MFA method is not enough)', async () => {
    const t = setup();
    expect(await t.signInOptions(passkeyProject({ enabledProviders: ['email'] }), { ip: '10.0.0.9' })).toEqual(err('passkeys_disabled'));
    expect(t.log.names('challenges')).toEqual([]);
  });

  it('the second factor: the challenged user’s passkeys, a challenge bound to the user and the MFA challenge', async () => {
    const t = setup({
      passkeys: [aPasskey(), aPasskey({ id: 'passkey-2', userId: 'user-2', credentialId: 'cred-2' })],
      mfaChallenges: { mfa_abc: anMfaChallenge() },
    });
    const options = await t.mfaOptions({ challenge: 'mfa_abc', ip: '10.0.0.9' });
    expect(options).toEqual(ok(expect.objectContaining({ kind: 'request', allowCredentials: [{ id: 'cred-1', transports: ['internal'] }] })));
    expect(t.challenges.stored[0]!.record).toMatchObject({ ceremony: 'mfa', userId: 'user-1', mfaChallengeId: 'mfa-ch-1', enrollmentChallengeId: null });
    expect(t.challenges.stored[0]!.hash).toBe(`h(${challengeIn(options as { ok: boolean; value?: unknown })})`);
  });

  it('the second factor: refused for an enrollment challenge, a passkey sign-in, a user without passkeys, a project that does not allow it', async () => {
    const held = [aPasskey()];
    expect(await setup({ passkeys: held, mfaChallenges: { mfa_x: anMfaChallenge({ enrollment: true }) } }).mfaOptions({ challenge: 'mfa_x', ip: 'i' })).toEqual(
      err('mfa_invalid_challenge'),
    );
    expect(await setup({ passkeys: held }).mfaOptions({ challenge: 'mfa_unknown', ip: 'i' })).toEqual(err('mfa_invalid_challenge'));
    expect(
      await setup({ passkeys: held, mfaChallenges: { mfa_x: anMfaChallenge({ provider: 'passkey' }) } }).mfaOptions({ challenge: 'mfa_x', ip: 'i' }),
    ).toEqual(err('mfa_method_not_allowed'));
    expect(await setup({ mfaChallenges: { mfa_x: anMfaChallenge() } }).mfaOptions({ challenge: 'mfa_x', ip: 'i' })).toEqual(err('mfa_method_not_enrolled'));
    const totpOnly = setup({ passkeys: held, projects: [passkeyProject({ mfaMethods: ['totp'] })], mfaChallenges: { mfa_x: anMfaChallenge() } });
    expect(await totpOnly.mfaOptions({ challenge: 'mfa_x', ip: 'i' })).toEqual(err('mfa_method_not_allowed'));
    expect(totpOnly.log.names('challenges')).toEqual([]);
  });
});

describe('verify: the challenge is spent once, for its own ceremony, user and project', () => {
  it('a sign-in answering a registration challenge: passkey_invalid_challenge, nothing verified', async () => {
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion()] } });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.of('challenges.consume').map((c) => c.args.slice(0, 3))).toEqual([['project-1', 'sign_in', `h(${challenge})`]]);
    expect(t.log.names('ceremonies.verify')).toEqual([]);
    expect(t.log.names('signInGate')).toEqual([]);
  });

  it('a registration answering a sign-in challenge: passkey_invalid_challenge', async () => {
    const t = setup({ script: { registrations: [verified(aRegisteredCredential())] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(challenge) })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('ceremonies.verify')).toEqual([]);
    expect(t.passkeys.rows).toEqual([]);
  });

  it('a registration challenge handed to another user: passkey_invalid_challenge', async () => {
    const t = setup({ script: { registrations: [verified(aRegisteredCredential())] } });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject(), ADA)));
    expect(await t.register(actorOf(passkeyProject(), GRACE), { response: anAnswer(challenge) })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('ceremonies.verify')).toEqual([]);
  });

  it('a registration challenge of a token answering with the enrollment challenge (and the reverse): passkey_invalid_challenge', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const t = setup({ script: { registrations: [verified(aRegisteredCredential())] } });
    const byToken = challengeIn(await t.registerOptions(actorOf(required)));
    expect(await t.register(actorOf(required, ADA, 'mfa-ch-1'), { response: anAnswer(byToken) })).toEqual(err('passkey_invalid_challenge'));
    const byEnrollment = challengeIn(await t.registerOptions(actorOf(required, ADA, 'mfa-ch-1')));
    expect(await t.register(actorOf(required), { response: anAnswer(byEnrollment) })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('ceremonies.verify')).toEqual([]);
  });

  it('a challenge of another project: passkey_invalid_challenge', async () => {
    const other = passkeyProject({}, undefined, 'project-2');
    const t = setup({ passkeys: [aPasskey({ projectId: 'project-2' })], script: { assertions: [anAssertion()] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(other, { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('ceremonies.verify')).toEqual([]);
  });

  it('a spent challenge: the second answer is passkey_invalid_challenge', async () => {
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion({ newCounter: 0 })] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect((await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).ok).toBe(true);
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('ceremonies.verifyAuthentication')).toHaveLength(1);
  });

  it('a challenge lives 5 minutes', async () => {
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion()] } });
    const first = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    const second = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    t.clock.advance(5 * 60_000 - 1);
    expect((await t.signIn(passkeyProject(), { response: anAnswer(first), ...signInFrom() })).ok).toBe(true);
    t.clock.advance(1);
    expect(await t.signIn(passkeyProject(), { response: anAnswer(second), ...signInFrom() })).toEqual(err('passkey_invalid_challenge'));
  });

  it('an answer whose challenge cannot be read spends nothing', async () => {
    const t = setup({ passkeys: [aPasskey()] });
    expect(await t.signIn(passkeyProject(), { response: anAnswer(''), ...signInFrom() })).toEqual(err('passkey_invalid_challenge'));
    expect(t.log.names('challenges')).toEqual([]);
  });

  it('a credential unknown in the project: passkey_unknown_credential, nothing verified', async () => {
    const t = setup({ passkeys: [aPasskey({ projectId: 'project-2' })] });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge, 'cred-1'), ...signInFrom() })).toEqual(err('passkey_unknown_credential'));
    expect(t.log.names('ceremonies.verify')).toEqual([]);
  });

  it('the answer is checked against the relying party and the challenge handed out', async () => {
    const project = passkeyProject({ callbackUrls: ['https://app.example.com/cb'] }, { rpId: 'example.com', userVerification: 'required' });
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion()] } });
    const challenge = challengeIn(await t.signInOptions(project, { ip: '10.0.0.9' }));
    await t.signIn(project, { response: anAnswer(challenge), ...signInFrom() });
    const [response, expected, credential] = t.log.of('ceremonies.verifyAuthentication')[0]!.args;
    expect(response).toEqual(anAnswer(challenge));
    expect(expected).toEqual({ challenge, origins: ['https://app.example.com'], rpId: 'example.com', requireUserVerification: true });
    expect(credential).toMatchObject({ id: 'passkey-1', credentialId: 'cred-1', publicKey: new Uint8Array([1, 2, 3]) });
  });
});

describe('sign-in with a passkey', () => {
  it('with user verification: the gate gets multiFactor true; the use moves the counter', async () => {
    const t = setup({ passkeys: [aPasskey({ counter: 7 })], script: { assertions: [anAssertion({ newCounter: 8, userVerified: true, backedUp: false })] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    t.clock.advance(1000);
    const outcome = await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() });
    expect(outcome).toEqual(ok({ kind: 'session', session: t.session, user: ADA }));
    expect(t.log.of('signInGate')[0]!.args).toEqual([{ project: passkeyProject(), user: ADA, provider: 'passkey', origin: TEST_ORIGIN, multiFactor: true }]);
    expect(t.log.of('passkeys.recordUse')[0]!.args).toEqual(['passkey-1', 7, { counter: 8, backedUp: false, at: t.clock.now() }]);
    expect(t.passkeys.rows[0]).toMatchObject({ counter: 8, backedUp: false, lastUsedAt: t.clock.now() });
  });

  it('without user verification: the gate gets multiFactor false (the MFA policy applies)', async () => {
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion({ userVerified: false })] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect((await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).ok).toBe(true);
    expect(t.log.of('signInGate')[0]!.args[0]).toMatchObject({ provider: 'passkey', multiFactor: false });
  });

  it.each([
    [5, 5],
    [5, 3],
    [5, 0],
  ])('a counter that went from %i to %i: passkey_counter_regressed, recorded as user.passkey.clone_detected, no use, no sign-in', async (stored, received) => {
    const t = setup({ passkeys: [aPasskey({ counter: stored })], script: { assertions: [anAssertion({ newCounter: received })] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('passkey_counter_regressed'));
    expect(t.log.names('passkeys.recordUse')).toEqual([]);
    expect(t.log.names('signInGate')).toEqual([]);
    expect(t.passkeys.rows[0]!.counter).toBe(stored);
    expect(t.audit.entries).toEqual([
      expect.objectContaining({
        action: 'user.passkey.clone_detected',
        outcome: 'failure',
        reason: 'passkey_counter_regressed',
        userId: 'user-1',
        details: { ceremony: 'sign_in', key_id: 'passkey-1', stored_counter: stored, counter: received },
      }),
    ]);
  });

  it('a later use of the passkey moved the counter to or past this one meanwhile (the store refuses the use): refused as a regressed counter', async () => {
    const t = setup({
      passkeys: [aPasskey({ counter: 5 })],
      store: { recordUse: async () => false },
      script: { assertions: [anAssertion({ newCounter: 6 })] },
    });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('passkey_counter_regressed'));
    expect(t.audit.actions()).toEqual(['user.passkey.clone_detected']);
    expect(t.log.names('signInGate')).toEqual([]);
  });

  it('a refused verification: passkey_verification_failed, or passkey_user_verification_required; recorded with what the library said', async () => {
    const t = setup({
      passkeys: [aPasskey()],
      script: { assertions: [refused('Unexpected authentication response origin "https://evil.example"'), refused('User verification was required')] },
    });
    const first = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    const second = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(first), ...signInFrom() })).toEqual(err('passkey_verification_failed'));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(second), ...signInFrom() })).toEqual(err('passkey_user_verification_required'));
    expect(t.audit.entries.map((e) => [e.action, e.reason, e.details])).toEqual([
      [
        'user.passkey.failed',
        'passkey_verification_failed',
        { ceremony: 'sign_in', key_id: 'passkey-1', detail: 'Unexpected authentication response origin "https://evil.example"' },
      ],
      ['user.passkey.failed', 'passkey_user_verification_required', { ceremony: 'sign_in', key_id: 'passkey-1', detail: 'User verification was required' }],
    ]);
    expect(t.log.names('passkeys.recordUse')).toEqual([]);
  });

  it('a disabled account: account_disabled, recorded, no sign-in', async () => {
    const t = setup({ passkeys: [aPasskey()], users: [aUser({ disabled: true })], script: { assertions: [anAssertion()] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.signIn(passkeyProject(), { response: anAnswer(challenge), ...signInFrom() })).toEqual(err('account_disabled'));
    expect(t.audit.entries).toEqual([expect.objectContaining({ action: 'user.sign_in.failed', reason: 'account_disabled', details: { provider: 'passkey' } })]);
    expect(t.log.names('signInGate')).toEqual([]);
  });

  it('the sign-in method off: passkeys_disabled before anything is counted or spent', async () => {
    const t = setup({ passkeys: [aPasskey()] });
    expect(await t.signIn(passkeyProject({ enabledProviders: ['email'] }), { response: anAnswer('tok1.32'), ...signInFrom() })).toEqual(
      err('passkeys_disabled'),
    );
    expect(t.log.calls).toEqual([]);
  });
});

describe('the passkey as a second factor', () => {
  async function challenged(options: Options = {}) {
    const t = setup({ mfaChallenges: { mfa_abc: anMfaChallenge() }, script: { assertions: [anAssertion({ newCounter: 1 })] }, ...options });
    const challenge = challengeIn(await t.mfaOptions({ challenge: 'mfa_abc', ip: '10.0.0.9' }));
    return { ...t, challenge };
  }

  it('an assertion of the challenged user’s passkey, for the options of this MFA challenge: passes', async () => {
    const t = await challenged({ passkeys: [aPasskey()] });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer(t.challenge), mfaChallengeId: 'mfa-ch-1' })).toEqual(
      ok(undefined),
    );
    expect(t.log.of('challenges.consume')[0]!.args.slice(0, 2)).toEqual(['project-1', 'mfa']);
    expect(t.passkeys.rows[0]!.counter).toBe(1);
  });

  it('another user’s passkey: mfa_invalid_code, nothing verified, their passkey untouched', async () => {
    const t = await challenged({ passkeys: [aPasskey(), aPasskey({ id: 'passkey-2', userId: 'user-2', credentialId: 'cred-2', counter: 4 })] });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer(t.challenge, 'cred-2'), mfaChallengeId: 'mfa-ch-1' })).toEqual(
      err('mfa_invalid_code'),
    );
    expect(t.log.names('ceremonies.verify')).toEqual([]);
    expect(t.passkeys.rows[1]).toMatchObject({ counter: 4, lastUsedAt: null });
  });

  it('options handed out for another user’s MFA challenge: mfa_invalid_code', async () => {
    const t = await challenged({ passkeys: [aPasskey(), aPasskey({ id: 'passkey-2', userId: 'user-2', credentialId: 'cred-2' })] });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-2', assertion: anAnswer(t.challenge, 'cred-2'), mfaChallengeId: 'mfa-ch-2' })).toEqual(
      err('mfa_invalid_code'),
    );
    expect(t.log.names('ceremonies.verify')).toEqual([]);
  });

  it('the ceremony of another MFA challenge of the same user: mfa_invalid_code, and the use is not recorded', async () => {
    const t = await challenged({ passkeys: [aPasskey()] });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer(t.challenge), mfaChallengeId: 'mfa-ch-2' })).toEqual(
      err('mfa_invalid_code'),
    );
    expect(t.log.names('ceremonies.verify')).toEqual([]);
    expect(t.passkeys.rows[0]).toMatchObject({ counter: 0, lastUsedAt: null });
  });

  it('a sign-in challenge answered as a second factor: mfa_invalid_code', async () => {
    const t = setup({ passkeys: [aPasskey()], script: { assertions: [anAssertion()] } });
    const challenge = challengeIn(await t.signInOptions(passkeyProject(), { ip: '10.0.0.9' }));
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer(challenge), mfaChallengeId: 'mfa-ch-1' })).toEqual(
      err('mfa_invalid_code'),
    );
  });

  it('a regressed counter as a second factor: mfa_invalid_code, recorded as user.passkey.clone_detected', async () => {
    const t = await challenged({ passkeys: [aPasskey({ counter: 3 })], script: { assertions: [anAssertion({ newCounter: 2 })] } });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer(t.challenge), mfaChallengeId: 'mfa-ch-1' })).toEqual(
      err('mfa_invalid_code'),
    );
    expect(t.audit.actions()).toEqual(['user.passkey.clone_detected']);
  });

  it('passkeys no longer an MFA method of the project: mfa_method_not_enrolled', async () => {
    const t = setup({ passkeys: [aPasskey()], projects: [passkeyProject({ mfaMethods: ['totp'] })] });
    expect(await t.factorCheck({ projectId: 'project-1', userId: 'user-1', assertion: anAnswer('x'), mfaChallengeId: 'mfa-ch-1' })).toEqual(
      err('mfa_method_not_enrolled'),
    );
    expect(t.log.names('challenges')).toEqual([]);
  });
});

describe('registering a passkey', () => {
  it('with the access token: stored with the model’s name, the user told and the addition recorded; no session', async () => {
    const t = setup({
      passkeys: [aPasskey()],
      script: { registrations: [verified(aRegisteredCredential())], names: { 'adce0002-35bc-c60a-648b-0b25f1f05503': 'Chrome on Mac' } },
    });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    const result = await t.register(actorOf(passkeyProject()), { response: anAnswer(challenge, 'cred-new') });
    const passkey = {
      id: 'uuid-3',
      projectId: 'project-1',
      userId: 'user-1',
      credentialId: 'cred-new',
      publicKey: new Uint8Array([9, 9, 9]),
      counter: 0,
      transports: ['internal', 'hybrid'],
      aaguid: 'adce0002-35bc-c60a-648b-0b25f1f05503',
      authenticatorName: 'Chrome on Mac',
      deviceType: 'multiDevice',
      backedUp: true,
      name: 'Chrome on Mac',
      createdAt: t.clock.now(),
      lastUsedAt: null,
    };
    expect(result).toEqual(ok({ passkey, session: null }));
    expect(t.passkeys.rows[1]).toEqual(passkey);
    expect(t.log.of('passkeys.insert')[0]!.inTransaction).toBe(true);
    expect(t.log.of('notify')[0]!.args[0]).toMatchObject({ kind: 'passkey_added', userId: 'user-1', passkey: { name: 'Chrome on Mac' } });
    expect(t.audit.entries).toEqual([
      expect.objectContaining({
        action: 'user.passkey.added',
        userId: 'user-1',
        details: { key_id: 'uuid-3', name: 'Chrome on Mac', authenticator: 'Chrome on Mac' },
      }),
    ]);
    expect(t.log.of('ceremonies.verifyRegistration')[0]!.args[1]).toEqual({
      challenge,
      origins: ['https://app.example.com'],
      rpId: 'app.example.com',
      requireUserVerification: false,
    });
  });

  it('an unknown model: "Passkey" and its number; a given name is trimmed', async () => {
    const t = setup({
      passkeys: [aPasskey()],
      script: { registrations: [verified(aRegisteredCredential({ credentialId: 'cred-a' })), verified(aRegisteredCredential({ credentialId: 'cred-b' }))] },
    });
    const first = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(first) })).toEqual(
      ok(expect.objectContaining({ passkey: expect.objectContaining({ name: 'Passkey 2', authenticatorName: null }) })),
    );
    const second = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(second), name: '  YubiKey  ' })).toEqual(
      ok(expect.objectContaining({ passkey: expect.objectContaining({ name: 'YubiKey' }) })),
    );
  });

  it('an invalid name: invalid_passkey_name before the challenge is spent', async () => {
    const t = setup({ script: { registrations: [verified(aRegisteredCredential())] } });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    for (const name of ['', '   ', 'a'.repeat(65), 'two\nlines']) {
      expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(challenge), name })).toEqual(err('invalid_passkey_name'));
    }
    expect(t.log.names('challenges.consume')).toEqual([]);
    expect((await t.register(actorOf(passkeyProject()), { response: anAnswer(challenge), name: 'Work' })).ok).toBe(true);
  });

  it('with the enrollment challenge: the passkey is stored and the sign-in finished, in one transaction', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const enrollment = anMfaChallenge({ enrollment: true });
    const t = setup({ mfaChallenges: { mfa_enroll: enrollment }, script: { registrations: [verified(aRegisteredCredential())] } });
    const actor = actorOf(required, ADA, 'mfa-ch-1');
    const challenge = challengeIn(await t.registerOptions(actor));
    const result = await t.register(actor, { response: anAnswer(challenge) });
    expect(result).toEqual(ok({ passkey: expect.objectContaining({ userId: 'user-1' }), session: t.finished }));
    expect(t.log.of('finish')[0]!.args).toEqual([enrollment, required, ADA, { method: 'enrollment', origin: TEST_ORIGIN }]);
    expect(
      t.log.calls.filter((c) => ['passkeys.insert', 'mfaChallenges.findLiveById', 'finish'].includes(c.call)).map((c) => [c.call, c.inTransaction]),
    ).toEqual([
      ['passkeys.insert', true],
      ['mfaChallenges.findLiveById', true],
      ['finish', true],
    ]);
    expect(t.audit.actions()).toEqual(['user.passkey.added']);
  });

  it('the enrollment challenge spent meanwhile: mfa_invalid_challenge, nothing recorded', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const t = setup({ script: { registrations: [verified(aRegisteredCredential())] } });
    const actor = actorOf(required, ADA, 'mfa-ch-1');
    const challenge = challengeIn(await t.registerOptions(actor));
    expect(await t.register(actor, { response: anAnswer(challenge) })).toEqual(err('mfa_invalid_challenge'));
    expect(t.log.names('finish')).toEqual([]);
    expect(t.audit.entries).toEqual([]);
  });

  it('a credential already registered in the project: passkey_already_registered, nobody told', async () => {
    const t = setup({
      passkeys: [aPasskey({ userId: 'user-2', credentialId: 'cred-new' })],
      script: { registrations: [verified(aRegisteredCredential({ credentialId: 'cred-new' }))] },
    });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(challenge) })).toEqual(err('passkey_already_registered'));
    expect(t.log.names('notify')).toEqual([]);
    expect(t.audit.entries).toEqual([]);
  });

  it('a refused registration: passkey_verification_failed or passkey_user_verification_required, recorded', async () => {
    const t = setup({
      script: { registrations: [refused('Unexpected registration response challenge'), refused('User verification required, but user could not be verified')] },
    });
    const first = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    const second = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(first) })).toEqual(err('passkey_verification_failed'));
    expect(await t.register(actorOf(passkeyProject()), { response: anAnswer(second) })).toEqual(err('passkey_user_verification_required'));
    expect(t.audit.entries.map((e) => [e.action, e.details])).toEqual([
      ['user.passkey.failed', { ceremony: 'registration', detail: 'Unexpected registration response challenge' }],
      ['user.passkey.failed', { ceremony: 'registration', detail: 'User verification required, but user could not be verified' }],
    ]);
    expect(t.passkeys.rows).toEqual([]);
  });
});

describe('renaming and removing', () => {
  const owner = (project: Project = passkeyProject(), userId = 'user-1'): PasskeyOwner => selfOwner(project, userId, TEST_ORIGIN);
  const operator = (project: Project = passkeyProject()): PasskeyOwner => ({
    project,
    userId: 'user-1',
    origin: TEST_ORIGIN,
    actor: { kind: 'admin', id: 'account-1' },
  });
  const noOther = { password: false, identities: 0, emailVerified: true };

  it('rename: 1 to 64 characters without control characters, trimmed; recorded', async () => {
    const t = setup({ passkeys: [aPasskey()] });
    for (const name of ['', ' ', 'a'.repeat(65), 'a\u0000b']) expect(await t.rename(owner(), 'passkey-1', name)).toEqual(err('invalid_passkey_name'));
    expect(t.log.names('passkeys')).toEqual([]);
    expect(await t.rename(owner(), 'passkey-1', ' Laptop ')).toEqual(ok(expect.objectContaining({ id: 'passkey-1', name: 'Laptop' })));
    expect(t.audit.entries).toEqual([expect.objectContaining({ action: 'user.passkey.renamed', details: { key_id: 'passkey-1', name: 'Laptop' } })]);
    expect(await t.rename(owner(passkeyProject(), 'user-2'), 'passkey-1', 'Mine now')).toEqual(err('passkey_not_found'));
  });

  it('the last way to sign in (no password, no identity, no other passkey, magic link off): passkey_last_sign_in_method', async () => {
    const t = setup({ passkeys: [aPasskey()], methods: noOther });
    expect(await t.remove(owner(), 'passkey-1', { byOperator: false })).toEqual(err('passkey_last_sign_in_method'));
    expect(t.log.names('passkeys.remove')).toEqual([]);
    expect(t.log.names('notify')).toEqual([]);
    expect(t.passkeys.rows).toHaveLength(1);
  });

  it('magic link on with a verified address is a way to sign in; with an unverified one it is not', async () => {
    const magicLink = passkeyProject({ enabledProviders: ['email', 'passkey', 'magic-link'] });
    expect(await setup({ passkeys: [aPasskey()], methods: noOther }).remove(owner(magicLink), 'passkey-1', { byOperator: false })).toEqual(ok(undefined));
    expect(
      await setup({ passkeys: [aPasskey()], methods: { ...noOther, emailVerified: false } }).remove(owner(magicLink), 'passkey-1', { byOperator: false }),
    ).toEqual(err('passkey_last_sign_in_method'));
  });

  it('a password, a linked identity or another passkey: removed, the user told, recorded', async () => {
    for (const [methods, held] of [
      [{ ...noOther, password: true }, [aPasskey()]],
      [{ ...noOther, identities: 1 }, [aPasskey()]],
      [noOther, [aPasskey(), aPasskey({ id: 'passkey-2', credentialId: 'cred-2' })]],
    ] as const) {
      const t = setup({ passkeys: [...held], methods });
      expect(await t.remove(owner(), 'passkey-1', { byOperator: false })).toEqual(ok(undefined));
      expect(t.passkeys.rows.map((p) => p.id)).toEqual(held.filter((p) => p.id !== 'passkey-1').map((p) => p.id));
      expect(t.log.of('notify')[0]).toMatchObject({
        args: [expect.objectContaining({ kind: 'passkey_removed', passkey: { name: 'Passkey 1' } })],
        inTransaction: true,
      });
      expect(t.audit.entries).toEqual([expect.objectContaining({ action: 'user.passkey.removed', details: { key_id: 'passkey-1', name: 'Passkey 1' } })]);
    }
  });

  it('required policy, the passkey the last usable factor (backup codes do not count): mfa_last_method', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['totp', 'passkey'] });
    const t = setup({ passkeys: [aPasskey()], methods: { ...noOther, password: true }, enrolled: ['backup_codes', 'passkey'] });
    expect(await t.remove(owner(required), 'passkey-1', { byOperator: false })).toEqual(err('mfa_last_method'));
    expect(t.log.names('passkeys.remove')).toEqual([]);
  });

  it('required policy with another usable factor, or passkeys not an MFA method, or the optional policy: removed', async () => {
    const cases: Array<[Project, MfaMethod[]]> = [
      [passkeyProject({ mfaPolicy: 'required', mfaMethods: ['totp', 'passkey'] }), ['totp', 'backup_codes', 'passkey']],
      [passkeyProject({ mfaPolicy: 'required', mfaMethods: ['totp'] }), ['passkey']],
      [passkeyProject({ mfaPolicy: 'optional', mfaMethods: ['passkey'] }), ['passkey']],
    ];
    for (const [project, enrolled] of cases) {
      const t = setup({ passkeys: [aPasskey()], methods: { ...noOther, password: true }, enrolled });
      expect(await t.remove(owner(project), 'passkey-1', { byOperator: false })).toEqual(ok(undefined));
    }
  });

  it('required policy with another passkey left: removed (the factor stays)', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const t = setup({ passkeys: [aPasskey(), aPasskey({ id: 'passkey-2', credentialId: 'cred-2' })], methods: noOther, enrolled: ['passkey'] });
    expect(await t.remove(owner(required), 'passkey-1', { byOperator: false })).toEqual(ok(undefined));
  });

  it('an operator skips both rules (neither is read); the user is still told', async () => {
    const required = passkeyProject({ mfaPolicy: 'required', mfaMethods: ['passkey'] });
    const t = setup({ passkeys: [aPasskey()] });
    expect(await t.remove(operator(required), 'passkey-1', { byOperator: true })).toEqual(ok(undefined));
    expect(t.log.names('methods')).toEqual([]);
    expect(t.log.names('enrollment')).toEqual([]);
    expect(t.log.names('notify')).toEqual(['notify']);
    expect(t.audit.entries).toEqual([expect.objectContaining({ action: 'user.passkey.removed', actor: { kind: 'admin', id: 'account-1' } })]);
  });

  it('a passkey of another user, or none: passkey_not_found', async () => {
    const t = setup({ passkeys: [aPasskey({ userId: 'user-2' })], methods: { ...noOther, password: true } });
    expect(await t.remove(owner(), 'passkey-1', { byOperator: false })).toEqual(err('passkey_not_found'));
    expect(await t.remove(owner(), 'passkey-9', { byOperator: true })).toEqual(err('passkey_not_found'));
    expect(t.passkeys.rows).toHaveLength(1);
  });
});

describe('finishing a passkey sign-up', () => {
  function signUp(options: Options = {}) {
    const t = setup(options);
    const { deps, userStore, signInGate } = t.signUpDeps;
    const unused = <T extends object>(name: string) => strictFake<T>(name, {}, t.log);
    const signUpDeps: PasskeySignUpDeps = {
      ...deps,
      accounts: unused('accounts'),
      methods: unused('methods'),
      issueVerificationCode: strictFn('issueVerificationCode', t.log),
      verifyEmailCode: strictFn('verifyEmailCode', t.log),
      users: userStore,
      signInGate,
      limits: { signupPerEmail: { points: 5, windowMs: 60_000 }, signupPerIp: { points: 5, windowMs: 60_000 } },
      mailConfigured: true,
    };
    return { ...t, finishSignUp: makeFinishPasskeySignUp(signUpDeps) };
  }

  /** A sign-up challenge bound to Ada, as passkeys/sign-up/options leaves it. */
  const signUpChallenge = async (t: ReturnType<typeof setup>) => {
    const { issueChallenge, passkeysFor } = await import('./deps');
    const rp = passkeysFor(passkeyProject(), 'sign_in');
    if (!rp.ok) throw new Error(rp.error);
    return issueChallenge(t.deps, passkeyProject(), rp.value, 'sign_up', { userId: 'user-1' });
  };

  it('stores the first passkey and signs in through the gate (multi-factor with user verification)', async () => {
    const t = signUp({ script: { registrations: [verified(aRegisteredCredential({ userVerified: true }))] } });
    const challenge = await signUpChallenge(t);
    const result = await t.finishSignUp({ project: passkeyProject(), response: anAnswer(challenge), ip: '10.0.0.9', origin: TEST_ORIGIN });
    expect(result).toEqual(ok({ kind: 'session', session: t.session, user: ADA }));
    expect(t.log.of('signInGate')[0]!.args[0]).toMatchObject({ provider: 'passkey', multiFactor: true });
    expect(t.audit.actions()).toEqual(['user.sign_up', 'user.passkey.added']);
    expect(t.passkeys.rows).toEqual([expect.objectContaining({ userId: 'user-1', name: 'Passkey 1' })]);
  });

  it('a registration challenge (not a sign-up one): passkey_invalid_challenge', async () => {
    const t = signUp({ script: { registrations: [verified(aRegisteredCredential())] } });
    const challenge = challengeIn(await t.registerOptions(actorOf(passkeyProject())));
    expect(await t.finishSignUp({ project: passkeyProject(), response: anAnswer(challenge), ip: '10.0.0.9', origin: TEST_ORIGIN })).toEqual(
      err('passkey_invalid_challenge'),
    );
    expect(t.passkeys.rows).toEqual([]);
  });

  it('an invalid name: invalid_passkey_name before the challenge is spent', async () => {
    const t = signUp();
    const challenge = await signUpChallenge(t);
    expect(
      await t.finishSignUp({ project: passkeyProject(), response: anAnswer(challenge), name: 'a'.repeat(65), ip: '10.0.0.9', origin: TEST_ORIGIN }),
    ).toEqual(err('invalid_passkey_name'));
    expect(t.log.names('challenges.consume')).toEqual([]);
  });
});
