import { describe, expect, it } from 'vitest';
import type { LinkCandidate } from '../../domain/oauth/linking';
import type { ProviderProfile } from '../../domain/oauth/profile';
import { err } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { aProject, aUser, CallLog, fakeAuditLog, fakeCrypto, fakeUnitOfWork, FixedClock, strictFake, TEST_ORIGIN } from '../testing/fakes';
import type { UserStore } from '../stores/user.store';
import type { Identity, IdentityStore } from './identity.store';
import { makeResolveAccount, type ResolveAccountInput } from './resolve-account';

const profile: ProviderProfile = { providerUserId: 'gh-7', email: 'Ada@Example.com', emailVerified: true, name: 'Ada L.', picture: 'https://img/ada' };

function setup(options: { identity?: Partial<Identity> | null; candidates?: LinkCandidate[]; users?: EndUser[]; insertRaces?: number } = {}) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  let races = options.insertRaces ?? 0;
  const identity: Identity | null = options.identity
    ? {
        id: 'i1',
        projectId: 'project-1',
        userId: 'user-1',
        provider: 'github',
        providerUserId: 'gh-7',
        email: null,
        emailVerified: false,
        name: null,
        picture: null,
        createdAt: new Date(0),
        updatedAt: new Date(0),
        ...options.identity,
      }
    : null;
  const audit = fakeAuditLog();
  const resolve = makeResolveAccount({
    identities: strictFake<IdentityStore>(
      'identities',
      {
        find: async () => identity,
        insert: async () => !(races-- > 0),
        update: async () => undefined,
        linkCandidates: async () => options.candidates ?? [],
      },
      log,
    ),
    users: strictFake<Pick<UserStore, 'findById' | 'insert' | 'update'>>(
      'users',
      { findById: async (_p, id) => (options.users ?? []).find((u) => u.id === id) ?? null, insert: async () => undefined, update: async () => undefined },
      log,
    ),
    crypto: fakeCrypto(),
    audit,
    clock,
    uow: fakeUnitOfWork(log),
  });
  return { resolve, log, clock, audit };
}

const input = (over: Partial<ResolveAccountInput> = {}): ResolveAccountInput => ({
  project: aProject({ settings: { allowAccountLinking: false } }),
  provider: 'github',
  profile,
  linkUserId: null,
  locale: 'de',
  origin: TEST_ORIGIN,
  ...over,
});
const linking = aProject({ settings: { allowAccountLinking: true } });

describe('resolve the account of a provider sign-in', () => {
  it('linking off: a new identity creates a user, even when the email matches one', async () => {
    const { resolve, log, clock, audit } = setup({ candidates: [{ userId: 'user-1', emailVerified: true, disabled: false, providers: [] }] });
    const r = await resolve(input());
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'user.sign_up', userId: 'uuid-1', details: { provider: 'github' } })]);
    expect(r).toMatchObject({
      ok: true,
      value: { id: 'uuid-1', email: 'Ada@Example.com', emailVerified: true, provider: 'github', locale: 'de', createdAt: clock.now() },
    });
    expect(log.names('identities.linkCandidates')).toEqual([]);
    expect(log.of('identities.insert')[0]!.args[0]).toMatchObject({ userId: 'uuid-1', provider: 'github', providerUserId: 'gh-7' });
    expect(log.calls.filter((c) => c.call !== 'uow.transaction').every((c) => c.inTransaction)).toBe(true);
  });

  it('a known identity signs its user in and refreshes the profile, never replacing the email', async () => {
    const user = aUser({ email: 'other@example.com', emailVerified: false });
    const { resolve, log, audit } = setup({ identity: {}, users: [user] });
    const r = await resolve(input());
    expect(audit.entries).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      value: { id: 'user-1', email: 'other@example.com', emailVerified: false, name: 'Ada L.', picture: 'https://img/ada', provider: 'github' },
    });
    expect(log.of('identities.update')[0]!.args[0]).toMatchObject({ id: 'i1', email: 'Ada@Example.com', emailVerified: true, name: 'Ada L.' });
    expect(log.names('identities.insert')).toEqual([]);
  });

  it('a matching verified email marks the stored one verified', async () => {
    const { resolve } = setup({ identity: {}, users: [aUser({ email: 'ada@example.com', emailVerified: false })] });
    expect(await resolve(input())).toMatchObject({ ok: true, value: { emailVerified: true } });
  });

  it('email linking: joins exactly one eligible verified user', async () => {
    const { resolve, log, audit } = setup({
      candidates: [{ userId: 'user-1', emailVerified: true, disabled: false, providers: ['google'] }],
      users: [aUser()],
    });
    expect(await resolve(input({ project: linking }))).toMatchObject({ ok: true, value: { id: 'user-1', provider: 'github' } });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'user.identity.linked', userId: 'user-1', details: { provider: 'github', via: 'email' } }),
    ]);
    expect(log.of('identities.linkCandidates')[0]!.args).toEqual(['project-1', 'Ada@Example.com']);
    expect(log.of('identities.insert')[0]!.args[0]).toMatchObject({ userId: 'user-1' });
    expect(log.names('users.insert')).toEqual([]);
  });

  it('an identity of another user than the link target is a conflict; a disabled user cannot sign in', async () => {
    const conflict = setup({ identity: { userId: 'user-2' } });
    expect(await conflict.resolve(input({ project: linking, linkUserId: 'user-1' }))).toEqual(err('identity_already_linked'));
    expect(conflict.log.names('users')).toEqual([]);
    const disabled = setup({ identity: {}, users: [aUser({ disabled: true })] });
    expect(await disabled.resolve(input())).toEqual(err('user_disabled'));
    expect(disabled.log.names('identities.update')).toEqual([]);
  });

  it('when a parallel sign-in inserts the same identity first, the resolution runs once more', async () => {
    const { resolve, log, audit } = setup({ insertRaces: 1 });
    expect((await resolve(input())).ok).toBe(true);
    expect(audit.actions()).toEqual(['user.sign_up']);
    expect(log.names('uow')).toEqual(['uow.transaction', 'uow.transaction']);
    expect(log.of('identities.insert')).toHaveLength(2);
  });
});
