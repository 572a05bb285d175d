import { describe, expect, it } from 'vitest';
import type { Invitation } from '../../domain/organizations/invitation';
import type { Membership, Organization } from '../../domain/organizations/organization';
import { type RoleDefinition, roleSetOf } from '../../domain/organizations/roles';
import { err, ok } from '../../domain/result';
import type { EndUser } from '../../domain/user';
import { apiKeyActor } from '../audit/audit-log';
import type { NotifySecurityEvent } from '../notifications/security-notice';
import type { AccessTokenCodec, SignAccessTokenInput } from '../ports/access-tokens';
import type { ProjectSecrets } from '../stores/project.store';
import type { UserStore } from '../stores/user.store';
import {
  aProject,
  aUser,
  CallLog,
  fakeAuditLog,
  fakeCrypto,
  fakeOutbox,
  fakeRateLimiter,
  fakeUnitOfWork,
  FixedClock,
  strictFake,
  strictFn,
  TEST_ORIGIN,
} from '../testing/fakes';
import { makeSwitchOrganization } from './active-organization';
import type { SeatCapacity } from './seats';
import { access, type DnsTxtResolver, type OrganizationActor, type OrganizationDeps, type OrganizationEvents } from './deps';
import { INVITATIONS_PER_HOUR, makeAcceptInvitation, makeInvite } from './invitations';
import { makeRemoveMember, makeSetMemberRole } from './manage-members';
import { makeCreateOrganization, makeDeleteOrganization } from './manage-organizations';
import type { OrganizationSettings, OrganizationStore } from './organization.store';
import { makeDeleteRole } from './roles-and-settings';

const anOrganization = (over: Partial<Organization> = {}): Organization => ({
  id: 'org-1',
  projectId: 'project-1',
  name: 'Acme Corp',
  slug: 'acme-corp',
  imageUrl: null,
  publicMetadata: {},
  privateMetadata: {},
  maxMembers: null,
  requireMfa: false,
  createdAt: new Date('2029-06-01T00:00:00.000Z'),
  updatedAt: new Date('2029-06-01T00:00:00.000Z'),
  ...over,
});

const aMembership = (userId: string, role: string): Membership => ({
  id: `membership-${userId}`,
  organizationId: 'org-1',
  projectId: 'project-1',
  userId,
  role,
  createdAt: new Date('2029-06-01T00:00:00.000Z'),
  updatedAt: new Date('2029-06-01T00:00:00.000Z'),
});

/** Ada owns org-1, Grace administers it, Linus is a plain member; Lin belongs to none. */
const OWNER = aMembership('user-1', 'owner');
const ADMIN = aMembership('user-2', 'admin');
const MEMBER = aMembership('user-3', 'member');
const USERS: EndUser[] = [
  aUser({ id: 'user-1', email: 'ada@example.com', name: 'Ada' }),
  aUser({ id: 'user-2', email: 'grace@example.com', name: 'Grace' }),
  aUser({ id: 'user-3', email: 'linus@example.com', name: 'Linus' }),
  aUser({ id: 'user-4', email: 'lin@example.com', name: 'Lin' }),
];

const SETTINGS: OrganizationSettings = { allowUserCreation: true, required: false, defaultMemberLimit: 100, roles: [] };
const BILLING_ROLE: RoleDefinition = { key: 'billing', name: 'Billing manager', description: '', permissions: ['org:billing:manage'], builtIn: false };

const member = (userId: string): OrganizationActor => ({ kind: 'member', userId });
const PROJECT_ACTOR: OrganizationActor = { kind: 'project', audit: apiKeyActor('key-1') };

type StoreImpl = { [K in keyof OrganizationStore]?: OrganizationStore[K] };

/** org-1 of project-1, found by id only. */
const found = (org = anOrganization()): StoreImpl => ({ findById: async (projectId, id) => (projectId === org.projectId && id === org.id ? org : null) });
/** The memberships the store holds. */
const holding = (...memberships: Membership[]): StoreImpl => ({
  findMembership: async (organizationId, userId) => memberships.find((m) => m.organizationId === organizationId && m.userId === userId) ?? null,
});

function setup(options: { store?: StoreImpl; roles?: RoleDefinition[]; users?: EndUser[]; secondFactor?: boolean; seats?: number | null } = {}) {
  const log = new CallLog();
  const clock = new FixedClock('2030-01-01T10:00:00.000Z');
  const audit = fakeAuditLog();
  const outbox = fakeOutbox(log);
  const users = options.users ?? USERS;
  const deps: OrganizationDeps = {
    store: strictFake<OrganizationStore>('store', options.store ?? {}, log),
    users: strictFake<Pick<UserStore, 'findById'>>('users', { findById: async (_projectId, id) => users.find((u) => u.id === id) ?? null }, log),
    uow: fakeUnitOfWork(log),
    events: strictFake<OrganizationEvents>('events', { publish: async () => true }, log),
    outbox,
    audit,
    clock,
    crypto: fakeCrypto(),
    rateLimiter: fakeRateLimiter(log, clock),
    notify: strictFn<NotifySecurityEvent>('notify', log, async () => undefined),
    roles: strictFn<OrganizationDeps['roles']>('roles', log, async () => roleSetOf(options.roles ?? [])),
    hasSecondFactor: strictFn<OrganizationDeps['hasSecondFactor']>('hasSecondFactor', log, async () => options.secondFactor ?? false),
    dns: strictFake<DnsTxtResolver>('dns', {}, log),
    seats: strictFake<SeatCapacity>('seats', { capacity: async () => options.seats ?? null }, log),
  };
  /** The types of the events published, each with whether it was inside the unit of work. */
  const published = () => log.of('events.publish').map((c) => [(c.args[0] as { type: string }).type, c.inTransaction]);
  return { deps, log, clock, audit, outbox, published };
}

describe('who may see and change an organization (access)', () => {
  it('a user who is not a member gets organization_not_found, as for an organization that does not exist', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(OWNER) } });
    expect(await access(deps, 'project-1', 'org-1', member('user-4'))).toEqual(err('organization_not_found'));
    expect(await access(deps, 'project-1', 'org-2', member('user-1'))).toEqual(err('organization_not_found'));
  });

  it('an organization of another project is not found, even by its own member', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(OWNER) } });
    expect(await access(deps, 'project-2', 'org-1', member('user-1'))).toEqual(err('organization_not_found'));
  });

  it('a member cannot name an organization by its slug (only by id)', async () => {
    // findBySlug is not implemented: a member's lookup by slug would fail the test.
    const { deps, log } = setup({ store: { ...found(), ...holding(OWNER) } });
    expect(await access(deps, 'project-1', 'acme-corp', member('user-1'))).toEqual(err('organization_not_found'));
    expect(log.names('store')).toEqual(['store.findById']);
  });

  it('a member whose role lacks the permission gets missing_permission naming it', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(MEMBER) } });
    const r = await access(deps, 'project-1', 'org-1', member('user-3'), 'org:members:manage');
    expect(r).toEqual(err('missing_permission', expect.stringContaining('org:members:manage')));
  });

  it('a member whose role holds the permission gets the organization, their membership and the roles', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(ADMIN) } });
    expect(await access(deps, 'project-1', 'org-1', member('user-2'), 'org:members:manage')).toEqual(
      ok({ org: anOrganization(), membership: ADMIN, roles: roleSetOf([]) }),
    );
  });

  it('a member without any permission still sees the organization when none is asked', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(MEMBER) } });
    expect(await access(deps, 'project-1', 'org-1', member('user-3'))).toMatchObject({ ok: true, value: { membership: MEMBER } });
  });

  it('the project sees any organization of its own without a membership', async () => {
    // findMembership is not implemented: the project is never looked up as a member.
    const { deps } = setup({ store: found() });
    expect(await access(deps, 'project-1', 'org-1', PROJECT_ACTOR, 'org:delete')).toEqual(
      ok({ org: anOrganization(), membership: null, roles: roleSetOf([]) }),
    );
  });

  it('the project may name an organization by its slug', async () => {
    const { deps, log } = setup({ store: { ...found(), findBySlug: async (_p, slug) => (slug === 'acme-corp' ? anOrganization() : null) } });
    expect(await access(deps, 'project-1', 'acme-corp', PROJECT_ACTOR)).toMatchObject({ ok: true, value: { org: { id: 'org-1' }, membership: null } });
    expect(log.of('store.findBySlug')[0]!.args).toEqual(['project-1', 'acme-corp']);
  });

  it('a use case stops at the missing permission: an admin cannot delete the organization', async () => {
    // store.delete is not implemented: the deletion is never attempted.
    const { deps, audit } = setup({ store: { ...found(), ...holding(ADMIN) } });
    const r = await makeDeleteOrganization(deps)({ projectId: 'project-1', organizationId: 'org-1', actor: member('user-2'), origin: TEST_ORIGIN });
    expect(r).toEqual(err('missing_permission', expect.stringContaining('org:delete')));
    expect(audit.entries).toEqual([]);
  });
});

describe('create an organization', () => {
  const create = (deps: OrganizationDeps, over: { actor?: OrganizationActor; name?: string; slug?: string } = {}) =>
    makeCreateOrganization(deps)({
      projectId: 'project-1',
      actor: over.actor ?? member('user-4'),
      ownerUserId: 'user-4',
      fields: { name: over.name ?? 'Acme Corp', ...(over.slug !== undefined ? { slug: over.slug } : {}) },
      origin: TEST_ORIGIN,
    });

  it('refuses a member when the project does not let users create organizations', async () => {
    const { deps, log } = setup({ store: { settings: async () => ({ ...SETTINGS, allowUserCreation: false }) } });
    expect(await create(deps)).toEqual(err('organization_creation_disabled'));
    expect(log.names()).toEqual(['store.settings']);
  });

  it('the project creates one even when users may not (the setting is not read)', async () => {
    // store.settings is not implemented: reading it would fail the test.
    const { deps, log } = setup({ store: { create: async () => 'created', countMembers: async () => 1 } });
    const r = await create(deps, { actor: PROJECT_ACTOR });
    expect(r).toMatchObject({ ok: true, value: { org: { name: 'Acme Corp', slug: 'acme-corp' }, membersCount: 1, role: null, permissions: [] } });
    expect(log.of('store.create')[0]!.args[1]).toMatchObject({ userId: 'user-4', role: 'owner' });
  });

  it('a generated slug that is taken is retried with a numeric suffix', async () => {
    let attempts = 0;
    const { deps, log } = setup({
      store: { settings: async () => SETTINGS, create: async () => (attempts++ === 0 ? 'slug_taken' : 'created'), countMembers: async () => 1 },
    });
    const r = await create(deps);
    const slugs = log.of('store.create').map((c) => (c.args[0] as Organization).slug);
    expect(slugs).toHaveLength(2);
    expect(slugs[0]).toBe('acme-corp');
    expect(slugs[1]).toMatch(/^acme-corp-\d{6}$/);
    expect(r).toMatchObject({ ok: true, value: { org: { slug: slugs[1] } } });
  });

  it('a generated slug is given up after five taken ones', async () => {
    const { deps, log, audit } = setup({ store: { settings: async () => SETTINGS, create: async () => 'slug_taken' } });
    expect(await create(deps)).toEqual(err('organization_slug_taken'));
    expect(log.of('store.create')).toHaveLength(5);
    expect(audit.entries).toEqual([]);
  });

  it('an explicit slug that is taken is organization_slug_taken, without a retry', async () => {
    const { deps, log } = setup({ store: { settings: async () => SETTINGS, create: async () => 'slug_taken' } });
    expect(await create(deps, { slug: 'acme' })).toEqual(err('organization_slug_taken'));
    expect(log.of('store.create').map((c) => (c.args[0] as Organization).slug)).toEqual(['acme']);
    expect(log.names('events')).toEqual([]);
  });

  it('a name in another script gets a made-up org- slug', async () => {
    const { deps, log } = setup({ store: { settings: async () => SETTINGS, create: async () => 'created', countMembers: async () => 1 } });
    expect((await create(deps, { name: '東京チーム' })).ok).toBe(true);
    expect((log.of('store.create')[0]!.args[0] as Organization).slug).toMatch(/^org-\d{6}$/);
  });

  it('publishes organization.created and organization.member.added in the unit of work of the insert', async () => {
    const { deps, log, published, audit } = setup({
      store: { settings: async () => SETTINGS, create: async () => 'created', countMembers: async () => 1 },
    });
    const r = await create(deps);
    expect(log.names().filter((n) => !n.startsWith('roles'))).toEqual([
      'store.settings',
      'users.findById',
      'uow.transaction',
      'store.create',
      'events.publish',
      'events.publish',
      'store.countMembers',
    ]);
    expect(published()).toEqual([
      ['organization.created', true],
      ['organization.member.added', true],
    ]);
    const [created, added] = log.of('events.publish').map((c) => c.args[0] as { userId: string; payload: { organizationId: string; data: object } });
    const orgId = (log.of('store.create')[0]!.args[0] as Organization).id;
    expect(created!.payload).toMatchObject({ organizationId: orgId, data: { id: orgId, name: 'Acme Corp', slug: 'acme-corp' } });
    expect(added!.payload).toMatchObject({ organizationId: orgId, userId: 'user-4', data: { user_id: 'user-4', role: 'owner' } });
    // The member who created it is its owner, with every permission.
    expect(r).toMatchObject({ ok: true, value: { role: 'owner', permissions: roleSetOf([]).roles[0]!.permissions } });
    expect(audit.actions()).toEqual(['organization.created']);
  });
});

describe("change a member's role", () => {
  const setRole = (deps: OrganizationDeps, actor: OrganizationActor, userId: string, role: string) =>
    makeSetMemberRole(deps)({ project: aProject(), organizationId: 'org-1', userId, role, actor, origin: TEST_ORIGIN });
  const updated = (before: Membership, role: string) => async () => ({ outcome: 'updated' as const, before, after: { ...before, role } });

  it('an admin may not grant owner (owner_required), and nothing is written', async () => {
    // setRole is not implemented: a write would fail the test.
    const { deps, log } = setup({ store: { ...found(), ...holding(OWNER, ADMIN, MEMBER) } });
    expect(await setRole(deps, member('user-2'), 'user-3', 'owner')).toEqual(err('owner_required'));
    expect(log.names('uow')).toEqual([]);
  });

  it('an admin may not take owner away (owner_required)', async () => {
    const { deps, log } = setup({ store: { ...found(), ...holding(OWNER, ADMIN, MEMBER) } });
    expect(await setRole(deps, member('user-2'), 'user-1', 'member')).toEqual(err('owner_required'));
    expect(log.names('uow')).toEqual([]);
  });

  it('an owner may grant owner', async () => {
    const { deps, log } = setup({ store: { ...found(), ...holding(OWNER, ADMIN, MEMBER), setRole: updated(MEMBER, 'owner') } });
    expect(await setRole(deps, member('user-1'), 'user-3', 'owner')).toMatchObject({ ok: true, value: { userId: 'user-3', role: 'owner' } });
    expect(log.of('store.setRole')[0]!.args.slice(0, 3)).toEqual(['org-1', 'user-3', 'owner']);
  });

  it('a member without org:members:manage gets missing_permission', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(OWNER, MEMBER) } });
    expect(await setRole(deps, member('user-3'), 'user-1', 'member')).toEqual(err('missing_permission', expect.stringContaining('org:members:manage')));
  });

  it('an unknown role is invalid_role', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(ADMIN, MEMBER) } });
    expect(await setRole(deps, member('user-2'), 'user-3', 'superuser')).toEqual(err('invalid_role'));
  });

  it('the same role again changes nothing: no write, no event, no notice, no audit', async () => {
    const { deps, log, audit } = setup({ store: { ...found(), ...holding(ADMIN, MEMBER) } });
    const r = await setRole(deps, member('user-2'), 'user-3', 'member');
    expect(r).toEqual(ok({ ...MEMBER, user: { email: 'linus@example.com', name: 'Linus', picture: null } }));
    expect(log.names('store')).toEqual(['store.findById', 'store.findMembership', 'store.findMembership']);
    expect(log.names('uow')).toEqual([]);
    expect(log.names('events')).toEqual([]);
    expect(log.names('notify')).toEqual([]);
    expect(audit.entries).toEqual([]);
  });

  it("tells the member by a security notice naming the organization and the role's display name", async () => {
    const { deps, log } = setup({ roles: [BILLING_ROLE], store: { ...found(), ...holding(OWNER, MEMBER), setRole: updated(MEMBER, 'billing') } });
    expect((await setRole(deps, member('user-1'), 'user-3', 'billing')).ok).toBe(true);
    const notices = log.of('notify');
    expect(notices).toHaveLength(1);
    expect(notices[0]!.args[0]).toMatchObject({
      userId: 'user-3',
      kind: 'organization_role_changed',
      organization: { name: 'Acme Corp', role: 'Billing manager' },
      project: { id: 'project-1' },
    });
    expect(notices[0]!.inTransaction).toBe(true);
  });

  it('publishes organization.member.updated with the previous role and records the change', async () => {
    const { deps, log, published, audit } = setup({ store: { ...found(), ...holding(ADMIN, MEMBER), setRole: updated(MEMBER, 'admin') } });
    await setRole(deps, member('user-2'), 'user-3', 'admin');
    expect(published()).toEqual([['organization.member.updated', true]]);
    expect((log.of('events.publish')[0]!.args[0] as { payload: { data: object } }).payload.data).toMatchObject({ role: 'admin', previous_role: 'member' });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'organization.member.role_changed', details: { role: 'admin', previous_role: 'member' } }),
    ]);
  });

  it('the last owner cannot be demoted: last_owner from the store, without notice or audit', async () => {
    const { deps, log, audit } = setup({ store: { ...found(), ...holding(OWNER), setRole: async () => 'last_owner' } });
    expect(await setRole(deps, member('user-1'), 'user-1', 'admin')).toEqual(err('last_owner'));
    expect(log.names('notify')).toEqual([]);
    expect(audit.entries).toEqual([]);
  });
});

describe('remove a member', () => {
  const remove = (deps: OrganizationDeps, actor: OrganizationActor, userId: string) =>
    makeRemoveMember(deps)({ project: aProject(), organizationId: 'org-1', userId, actor, origin: TEST_ORIGIN });
  const removed = (before: Membership) => async () => ({ outcome: 'removed' as const, before });

  it('a member may leave without any permission', async () => {
    const { deps, log, audit } = setup({ store: { ...found(), ...holding(MEMBER), removeMember: removed(MEMBER) } });
    expect(await remove(deps, member('user-3'), 'user-3')).toEqual(ok(undefined));
    expect(log.of('store.removeMember')[0]!.args).toEqual(['org-1', 'user-3']);
    expect(log.of('store.findMembership')).toHaveLength(1);
    expect(audit.entries).toEqual([expect.objectContaining({ action: 'organization.member.left', userId: 'user-3' })]);
  });

  it('another member needs org:members:manage to remove someone', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(OWNER, MEMBER) } });
    expect(await remove(deps, member('user-3'), 'user-1')).toEqual(err('missing_permission', expect.stringContaining('org:members:manage')));
  });

  it('removing an owner needs an owner: an admin gets owner_required', async () => {
    // removeMember is not implemented: the removal is never attempted.
    const { deps, log } = setup({ store: { ...found(), ...holding(OWNER, ADMIN) } });
    expect(await remove(deps, member('user-2'), 'user-1')).toEqual(err('owner_required'));
    expect(log.names('uow')).toEqual([]);
  });

  it('an owner may remove another owner', async () => {
    const other = { ...OWNER, id: 'membership-user-5', userId: 'user-5' };
    const { deps } = setup({ store: { ...found(), ...holding(OWNER, other), removeMember: removed(other) } });
    expect(await remove(deps, member('user-1'), 'user-5')).toEqual(ok(undefined));
  });

  it('the removed member is told (organization_removed), in the unit of work of the removal', async () => {
    const { deps, log, published } = setup({ store: { ...found(), ...holding(ADMIN, MEMBER), removeMember: removed(MEMBER) } });
    expect(await remove(deps, member('user-2'), 'user-3')).toEqual(ok(undefined));
    expect(log.of('notify').map((c) => [c.args[0], c.inTransaction])).toEqual([
      [expect.objectContaining({ userId: 'user-3', kind: 'organization_removed', organization: { name: 'Acme Corp', role: null } }), true],
    ]);
    expect(published()).toEqual([['organization.member.removed', true]]);
  });

  it('a member who leaves is not told', async () => {
    const { deps, log } = setup({ store: { ...found(), ...holding(MEMBER), removeMember: removed(MEMBER) } });
    await remove(deps, member('user-3'), 'user-3');
    expect(log.names('notify')).toEqual([]);
    expect((log.of('events.publish')[0]!.args[0] as { payload: { data: object } }).payload.data).toMatchObject({ left: true });
  });

  it('the last owner can neither leave nor be removed: last_owner', async () => {
    const { deps, audit } = setup({ store: { ...found(), ...holding(OWNER), removeMember: async () => 'last_owner' } });
    expect(await remove(deps, member('user-1'), 'user-1')).toEqual(err('last_owner'));
    expect(audit.entries).toEqual([]);
  });
});

describe('invite to an organization', () => {
  const base = {
    project: aProject(),
    organizationId: 'org-1',
    email: 'New.Person@Example.com',
    role: 'member',
    callbackUrl: 'https://app.example.com/cb',
    locale: null as string | null,
    actor: member('user-2'),
    origin: TEST_ORIGIN,
  };
  const inviting = (over: StoreImpl = {}) => ({
    ...found(),
    ...holding(OWNER, ADMIN, MEMBER),
    settings: async () => SETTINGS,
    createInvitation: async () => 'created' as const,
    ...over,
  });

  it('an admin may not invite an owner (owner_required); nothing is sent', async () => {
    const { deps, log, outbox } = setup({ store: { ...found(), ...holding(ADMIN) } });
    expect(await makeInvite(deps)({ ...base, role: 'owner' })).toEqual(err('owner_required'));
    expect(log.names('rateLimiter')).toEqual([]);
    expect(outbox.messages).toEqual([]);
  });

  it('an owner may invite an owner', async () => {
    const { deps } = setup({ store: inviting() });
    expect(await makeInvite(deps)({ ...base, role: 'owner', actor: member('user-1') })).toMatchObject({ ok: true, value: { role: 'owner' } });
  });

  it('a role the project does not have is invalid_role', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(ADMIN) } });
    expect(await makeInvite(deps)({ ...base, role: 'superuser' })).toEqual(err('invalid_role'));
  });

  it('a callback URL the project did not register is callback_url_not_registered', async () => {
    const { deps } = setup({ store: { ...found(), ...holding(ADMIN) } });
    expect(await makeInvite(deps)({ ...base, callbackUrl: 'https://evil.example.net/cb' })).toEqual(err('callback_url_not_registered'));
  });

  it('a locale Tollgate does not write is unsupported_locale', async () => {
    for (const locale of ['xx', 'tlh', 'english!']) {
      const { deps } = setup({ store: { ...found(), ...holding(ADMIN) } });
      expect(await makeInvite(deps)({ ...base, locale }), locale).toEqual(err('unsupported_locale'));
    }
  });

  it('records the mail in the outbox with the locale, the role name and a link carrying an inv_ token', async () => {
    const { deps, log, outbox } = setup({ store: inviting() });
    const r = await makeInvite(deps)({ ...base, locale: 'fr-CA' });
    expect(r.ok).toBe(true);
    // The mail, then the seats billing may follow (both in the invitation's transaction).
    expect(outbox.messages.map((m) => m.topic.name)).toEqual(['email.organization_invitation', 'organization.seats']);
    expect(log.of('outbox.enqueue').every((c) => c.inTransaction)).toBe(true);
    const mail = outbox.messages[0]!;
    expect(mail.topic.name).toBe('email.organization_invitation');
    expect(mail.payload).toMatchObject({
      to: 'New.Person@example.com',
      locale: 'fr',
      projectName: 'Acme',
      organizationName: 'Acme Corp',
      invitedBy: 'Grace',
      roleName: 'Member',
      expiresInDays: 7,
    });
    const url = new URL((mail.payload as { url: string }).url);
    expect(url.origin + url.pathname).toBe('https://app.example.com/cb');
    expect([...url.searchParams.keys()]).toEqual(['tollgate_invitation']);
    expect(url.searchParams.get('tollgate_invitation')).toMatch(/^inv_.+/);
    expect((mail.payload as { url: string }).url).toContain('tollgate_invitation=inv_');
  });

  it("without a locale the mail is in the project's default locale", async () => {
    const { deps, outbox } = setup({ store: inviting() });
    await makeInvite(deps)({ ...base, project: aProject({ settings: { defaultLocale: 'de' } }) });
    expect(outbox.messages[0]!.payload).toMatchObject({ locale: 'de' });
  });

  it("stores the token only as crypto.hash of the link's token", async () => {
    const { deps, log, outbox, audit } = setup({ store: inviting() });
    const r = await makeInvite(deps)(base);
    const token = new URL((outbox.messages[0]!.payload as { url: string }).url).searchParams.get('tollgate_invitation')!;
    const [invitation, tokenHash, limit] = log.of('store.createInvitation')[0]!.args as [Invitation, string, number];
    expect(tokenHash).toBe(deps.crypto.hash(token));
    expect(tokenHash).not.toBe(token);
    expect(limit).toBe(SETTINGS.defaultMemberLimit);
    expect(invitation).toMatchObject({ emailKey: 'new.person@example.com', status: 'pending', inviterUserId: 'user-2', organizationId: 'org-1' });
    expect(invitation.expiresAt.getTime() - invitation.createdAt.getTime()).toBe(7 * 24 * 3600_000);
    // The token is in the mail only: not in the answer, the event or the audit log.
    expect(JSON.stringify([r, log.of('events.publish'), audit.entries])).not.toContain(token);
  });

  it(`allows ${INVITATIONS_PER_HOUR} invitations an hour per organization; the next is rate_limited and not recorded`, async () => {
    const { deps, log, clock } = setup({ store: inviting() });
    const invite = makeInvite(deps);
    for (let i = 0; i < INVITATIONS_PER_HOUR; i++) expect((await invite({ ...base, email: `p${i}@example.com` })).ok).toBe(true);
    expect(await invite({ ...base, email: 'one-more@example.com' })).toMatchObject({ ok: false, error: 'rate_limited' });
    expect(log.of('store.createInvitation')).toHaveLength(INVITATIONS_PER_HOUR);
    expect(log.of('rateLimiter.consume')[0]!.args[0]).toBe('org-invite:org-1');
    clock.advance(3_600_000);
    expect((await invite({ ...base, email: 'next-hour@example.com' })).ok).toBe(true);
  });

  it('within the seats bought: the store holds members and invitations within them, and a full one is seats_exhausted', async () => {
    const limits: number[] = [];
    const store = inviting({
      createInvitation: async (_i: unknown, _h: unknown, limit: number) => {
        limits.push(limit);
        return 'limit_reached' as const;
      },
    });
    const { deps, outbox } = setup({ store, seats: 3 });
    expect(await makeInvite(deps)(base)).toEqual(err('seats_exhausted'));
    expect(limits).toEqual([3]);
    expect(outbox.messages).toEqual([]);
    // More seats than the member limit: the member limit applies, and its own refusal.
    const roomy = setup({ store: inviting({ createInvitation: async () => 'limit_reached' as const }), seats: 10_000 });
    expect(await makeInvite(roomy.deps)(base)).toEqual(err('member_limit_reached'));
  });

  it('a full organization is member_limit_reached and sends nothing', async () => {
    const { deps, outbox, published } = setup({ store: inviting({ createInvitation: async () => 'limit_reached' }) });
    expect(await makeInvite(deps)(base)).toEqual(err('member_limit_reached'));
    expect(outbox.messages).toEqual([]);
    expect(published()).toEqual([]);
  });
});

describe('accept an invitation', () => {
  const anInvitation = (over: Partial<Invitation> = {}): Invitation => ({
    id: 'inv-1',
    organizationId: 'org-1',
    projectId: 'project-1',
    email: 'lin@example.com',
    emailKey: 'lin@example.com',
    role: 'admin',
    inviterUserId: 'user-1',
    status: 'pending',
    createdAt: new Date('2030-01-01T00:00:00.000Z'),
    expiresAt: new Date('2030-01-08T00:00:00.000Z'),
    endedAt: null,
    acceptedBy: null,
    ...over,
  });
  const byToken = (inv: Invitation | null): StoreImpl => ({ findInvitationByTokenHash: async () => inv });
  const accept = (deps: OrganizationDeps, over: { userId?: string; token?: string } = {}) =>
    makeAcceptInvitation(deps)({ projectId: 'project-1', userId: over.userId ?? 'user-4', token: over.token ?? 'inv_secret', origin: TEST_ORIGIN });

  it('joins with the invited role; the invitation.accepted and member.added events are in the unit of work', async () => {
    const { deps, log, published } = setup({ store: { ...byToken(anInvitation()), ...found(), acceptInvitation: async () => 'accepted' } });
    const r = await accept(deps);
    expect(r).toMatchObject({ ok: true, value: { organization: { id: 'org-1' }, membership: { userId: 'user-4', role: 'admin', organizationId: 'org-1' } } });
    expect(log.of('store.findInvitationByTokenHash')[0]!.args).toEqual(['h(inv_secret)']);
    expect(log.of('store.acceptInvitation')[0]!.args[0]).toBe('inv-1');
    expect(published()).toEqual([
      ['organization.invitation.accepted', true],
      ['organization.member.added', true],
    ]);
  });

  it('past its expiry (at the exact instant) it is invitation_expired', async () => {
    const { deps, log, clock } = setup({ store: byToken(anInvitation()) });
    clock.set(new Date('2030-01-08T00:00:00.000Z'));
    expect(await accept(deps)).toEqual(err('invitation_expired'));
    expect(log.names('uow')).toEqual([]);
  });

  it("a user whose email is another one's gets invitation_email_mismatch", async () => {
    const { deps, log } = setup({ store: byToken(anInvitation()) });
    expect(await accept(deps, { userId: 'user-3' })).toEqual(err('invitation_email_mismatch'));
    expect(log.names('uow')).toEqual([]);
  });

  it('the invited address in another case is the same address', async () => {
    const users = [aUser({ id: 'user-4', email: 'Lin@Example.com' })];
    const { deps } = setup({ users, store: { ...byToken(anInvitation()), ...found(), acceptInvitation: async () => 'accepted' } });
    expect((await accept(deps)).ok).toBe(true);
  });

  it('the invited address not yet verified is email_not_verified', async () => {
    const users = [aUser({ id: 'user-4', email: 'lin@example.com', emailVerified: false })];
    const { deps, log } = setup({ users, store: byToken(anInvitation()) });
    expect(await accept(deps)).toEqual(err('email_not_verified'));
    expect(log.names('uow')).toEqual([]);
  });

  it("another project's invitation is invitation_not_found (the user is not even looked up)", async () => {
    const { deps, log } = setup({ store: byToken(anInvitation({ projectId: 'project-2' })) });
    expect(await accept(deps)).toEqual(err('invitation_not_found'));
    expect(log.names('users')).toEqual([]);
  });

  it('a token without the inv_ prefix is invitation_not_found without a lookup', async () => {
    const { deps, log } = setup();
    expect(await accept(deps, { token: 'tok_secret' })).toEqual(err('invitation_not_found'));
    expect(log.calls).toEqual([]);
  });

  it('an invitation already ended is invitation_not_pending', async () => {
    const { deps } = setup({ store: byToken(anInvitation({ status: 'revoked' })) });
    expect(await accept(deps)).toEqual(err('invitation_not_pending'));
  });

  it('losing the race (not_pending from the store) is invitation_not_pending, with no event and no audit', async () => {
    const { deps, audit, published } = setup({ store: { ...byToken(anInvitation()), ...found(), acceptInvitation: async () => 'not_pending' } });
    expect(await accept(deps)).toEqual(err('invitation_not_pending'));
    expect(published()).toEqual([]);
    expect(audit.entries).toEqual([]);
  });
});

describe('switch the active organization', () => {
  function switching(options: { org?: Organization; secondFactor?: boolean; memberships?: Membership[] } = {}) {
    const org = options.org ?? anOrganization();
    const s = setup({
      secondFactor: options.secondFactor ?? false,
      store: { ...found(org), ...holding(...(options.memberships ?? [OWNER, ADMIN, MEMBER])), setActiveOrganization: async () => true },
    });
    const switchOrganization = makeSwitchOrganization({
      ...s.deps,
      secrets: strictFake<Pick<ProjectSecrets, 'signingKey'>>('secrets', { signingKey: async () => new Uint8Array([7]) }, s.log),
      tokens: strictFake<Pick<AccessTokenCodec, 'sign'>>('tokens', { sign: async () => 'jwt-new' }, s.log),
    });
    const run = (userId: string, organizationId: string | null) =>
      switchOrganization({ project: aProject(), userId, sessionId: 'session-1', provider: 'google', organizationId, origin: TEST_ORIGIN });
    const signed = () => s.log.of('tokens.sign')[0]!.args[0] as SignAccessTokenInput;
    return { ...s, run, signed };
  }

  it('an organization that requires MFA is refused to a user without a second factor, and the session is not changed', async () => {
    const { run, log } = switching({ org: anOrganization({ requireMfa: true }), secondFactor: false });
    expect(await run('user-2', 'org-1')).toEqual(err('organization_mfa_required'));
    expect(log.of('hasSecondFactor')[0]!.args).toEqual(['project-1', 'user-2']);
    expect(log.names('store.setActiveOrganization')).toEqual([]);
    expect(log.names('tokens')).toEqual([]);
  });

  it('an organization that requires MFA is taken by a user with a second factor', async () => {
    const { run } = switching({ org: anOrganization({ requireMfa: true }), secondFactor: true });
    expect((await run('user-2', 'org-1')).ok).toBe(true);
  });

  it('signs a new token of the same session carrying org {id, slg, rol, per}', async () => {
    const { run, log, signed } = switching();
    const r = await run('user-2', 'org-1');
    const permissions = ['org:billing:manage', 'org:members:manage', 'org:settings:manage'];
    expect(r).toEqual(ok({ token: 'jwt-new', organization: { id: 'org-1', slug: 'acme-corp', role: 'admin', permissions } }));
    expect(log.of('store.setActiveOrganization')[0]!.args).toEqual(['project-1', 'user-2', 'session-1', 'org-1']);
    expect(signed().claims).toMatchObject({
      sub: 'user-2',
      sid: 'session-1',
      provider: 'google',
      org: { id: 'org-1', slg: 'acme-corp', rol: 'admin', per: permissions },
    });
    // An organization that does not require MFA does not ask about second factors.
    expect(log.names('hasSecondFactor')).toEqual([]);
  });

  it('a user who is not a member gets organization_not_found', async () => {
    const { run, log } = switching({ memberships: [OWNER] });
    expect(await run('user-4', 'org-1')).toEqual(err('organization_not_found'));
    expect(log.names('store.setActiveOrganization')).toEqual([]);
  });

  it('null clears the active organization: the session is set to none and the token has no org claim', async () => {
    const { run, log, signed } = switching();
    expect(await run('user-2', null)).toEqual(ok({ token: 'jwt-new', organization: null }));
    expect(log.of('store.setActiveOrganization')[0]!.args).toEqual(['project-1', 'user-2', 'session-1', null]);
    expect(log.names('store.find')).toEqual([]);
    expect(signed().claims).not.toHaveProperty('org');
    expect(signed().claims.sid).toBe('session-1');
  });
});

describe('delete a role', () => {
  const del = (deps: OrganizationDeps, key: string) => makeDeleteRole(deps)({ projectId: 'project-1', key, actor: apiKeyActor('key-1'), origin: TEST_ORIGIN });

  it('refuses the built-in roles without reading the settings', async () => {
    for (const key of ['owner', 'admin', 'member']) {
      const { deps, log } = setup();
      expect(await del(deps, key), key).toEqual(err('role_not_editable', expect.any(String)));
      expect(log.calls).toEqual([]);
    }
  });

  it('refuses a role members hold (role_in_use), saving nothing', async () => {
    const { deps, log } = setup({ store: { settings: async () => ({ ...SETTINGS, roles: [BILLING_ROLE] }), roleInUse: async () => true } });
    expect(await del(deps, 'billing')).toEqual(err('role_in_use'));
    expect(log.of('store.roleInUse')[0]!.args).toEqual(['project-1', 'billing']);
  });

  it('an unknown role is invalid_role', async () => {
    const { deps } = setup({ store: { settings: async () => SETTINGS } });
    expect(await del(deps, 'billing')).toEqual(err('invalid_role'));
  });

  it('deletes a custom role nobody holds and answers the roles left', async () => {
    const { deps, log } = setup({
      store: { settings: async () => ({ ...SETTINGS, roles: [BILLING_ROLE] }), roleInUse: async () => false, saveSettings: async () => undefined },
    });
    const r = await del(deps, 'billing');
    expect(r.ok && r.value.map((role) => role.key)).toEqual(['owner', 'admin', 'member']);
    expect((log.of('store.saveSettings')[0]!.args[1] as OrganizationSettings).roles).toEqual([]);
  });
});
