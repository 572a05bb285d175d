import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Invitation } from '../../domain/organizations/invitation';
import type { Membership, Organization } from '../../domain/organizations/organization';
import type { RoleDefinition } from '../../domain/organizations/roles';
import type { VerifiedDomain } from '../../domain/organizations/verified-domain';
import type { EndUser } from '../../domain/user';
import { Database } from '../../infrastructure/persistence/database';
import { PostgresEmailAccountStore } from '../../infrastructure/persistence/postgres-email-account.store';
import { PostgresOrganizationStore } from '../../infrastructure/persistence/postgres-organization.store';
import { PostgresRefreshTokenStore } from '../../infrastructure/persistence/postgres-refresh-token.store';
import { PostgresUserStore } from '../../infrastructure/persistence/postgres-user.store';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { inRequestContext, insertTestProject } from '../support/sandbox';

/**
 * The organization store on a migrated PostgreSQL database: round trips, pages and search, and the
 * rules it holds with the organization's row locked (member limits, the last owner, one accept of
 * an invitation) between concurrent callers, each in its own request context as the server runs them.
 */

let database: TestDatabase;
let db: Database;
/** The store with every call in its own request context. */
let orgs: PostgresOrganizationStore;
let users: PostgresUserStore;
let accounts: PostgresEmailAccountStore;
let tokens: PostgresRefreshTokenStore;
let project: string;
let otherProject: string;

const T0 = new Date('2026-12-10T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const DAY = 24 * 3600;

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => db.withContext(() => db.query<T>(text, params));

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url });
  await db.migrate();
  orgs = inRequestContext(db, new PostgresOrganizationStore(db));
  users = inRequestContext(db, new PostgresUserStore(db));
  accounts = inRequestContext(db, new PostgresEmailAccountStore(db));
  tokens = inRequestContext(db, new PostgresRefreshTokenStore(db));
  project = await insertTestProject(db);
  otherProject = await insertTestProject(db);
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

function endUser(projectId: string, overrides: Partial<EndUser> = {}): EndUser {
  return {
    id: randomUUID(),
    projectId,
    email: null,
    name: null,
    picture: null,
    provider: 'github',
    emailVerified: true,
    locale: null,
    disabled: false,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A user of the project (the user store's insert), with the given email, name and picture. */
async function insertUser(overrides: Partial<EndUser> = {}, projectId = project): Promise<string> {
  const user = endUser(projectId, overrides);
  await users.insert(user);
  return user.id;
}

function organization(overrides: Partial<Organization> = {}): Organization {
  const id = randomUUID();
  return {
    id,
    projectId: project,
    name: `Team ${id.slice(0, 8)}`,
    slug: `team-${id.slice(0, 8)}`,
    imageUrl: null,
    publicMetadata: {},
    privateMetadata: {},
    maxMembers: null,
    requireMfa: false,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

function membership(org: Organization, userId: string, role = 'member', createdAt = T0): Membership {
  return { id: randomUUID(), organizationId: org.id, projectId: org.projectId, userId, role, createdAt, updatedAt: createdAt };
}

function invitation(org: Organization, email: string, overrides: Partial<Invitation> = {}): Invitation {
  return {
    id: randomUUID(),
    organizationId: org.id,
    projectId: org.projectId,
    email,
    emailKey: email.toLowerCase(),
    role: 'member',
    inviterUserId: null,
    status: 'pending',
    createdAt: T0,
    expiresAt: at(7 * DAY),
    endedAt: null,
    acceptedBy: null,
    ...overrides,
  };
}

function domain(org: Organization, name: string): VerifiedDomain {
  return {
    id: randomUUID(),
    organizationId: org.id,
    projectId: org.projectId,
    domain: name,
    verificationToken: randomUUID(),
    verifiedAt: null,
    enrollment: 'none',
    defaultRole: 'member',
    createdAt: T0,
  };
}

/** An organization with its first owner (a new user unless given), created through the store. */
async function createOrg(overrides: Partial<Organization> = {}, ownerId?: string): Promise<{ org: Organization; owner: string }> {
  const org = organization(overrides);
  const owner = ownerId ?? (await insertUser({}, org.projectId));
  expect(await orgs.create(org, membership(org, owner, 'owner'))).toBe('created');
  return { org, owner };
}

async function invite(org: Organization, email: string, overrides: Partial<Invitation> = {}, limit = 100): Promise<Invitation> {
  const inv = invitation(org, email, overrides);
  expect(await orgs.createInvitation(inv, `hash-${inv.id}`, limit, T0)).toBe('created');
  return inv;
}

/** A live session of the user (the refresh-token store's insert, as a sign-in starts one). */
async function startSession(userId: string, projectId = project): Promise<string> {
  const sessionId = randomUUID();
  await tokens.insert(
    {
      id: randomUUID(),
      projectId,
      userId,
      familyId: sessionId,
      parentId: null,
      provider: 'github',
      authCodeId: null,
      createdAt: T0,
      expiresAt: at(30 * DAY),
      idleExpiresAt: at(14 * DAY),
    },
    `hash-${randomUUID()}`,
    { ip: null, userAgent: null },
  );
  return sessionId;
}

const activeOrganizationOf = async (sessionId: string) =>
  (await sql<{ active_organization_id: string | null }>('select active_organization_id from sessions where id = ?', [sessionId]))[0]?.active_organization_id;

describe('organizations', () => {
  it('creates an organization with its first owner and finds it by id and by slug, only in its project', async () => {
    const { org, owner } = await createOrg({
      name: 'Acme',
      imageUrl: 'https://img.example.com/acme.png',
      publicMetadata: { plan: 'team', tags: ['a', 'b'] },
      privateMetadata: { crm: { id: 42 } },
      maxMembers: 25,
      requireMfa: true,
    });
    expect(await orgs.findById(project, org.id)).toEqual(org);
    expect(await orgs.findBySlug(project, org.slug)).toEqual(org);
    expect(await orgs.findById(otherProject, org.id)).toBeNull();
    expect(await orgs.findBySlug(otherProject, org.slug)).toBeNull();
    expect(await orgs.findMembership(org.id, owner)).toMatchObject({ organizationId: org.id, projectId: project, userId: owner, role: 'owner' });
  });

  it('refuses a slug the project already has (no organization, no owner left behind); another project may use it', async () => {
    const { org } = await createOrg();
    const clash = organization({ slug: org.slug });
    const owner = await insertUser();
    expect(await orgs.create(clash, membership(clash, owner, 'owner'))).toBe('slug_taken');
    expect(await orgs.findById(project, clash.id)).toBeNull();
    expect(await orgs.listForUser(project, owner)).toEqual([]);
    await createOrg({ projectId: otherProject, slug: org.slug });
  });

  it('updates the fields a patch names and its update time, leaving the others; an unknown organization gives null', async () => {
    const { org } = await createOrg({ publicMetadata: { keep: false }, maxMembers: 10 });
    const updated = await orgs.update(
      project,
      org.id,
      { name: 'Renamed', slug: `renamed-${org.id.slice(0, 6)}`, publicMetadata: { keep: true }, maxMembers: null },
      at(60),
    );
    const expected = { ...org, name: 'Renamed', slug: `renamed-${org.id.slice(0, 6)}`, publicMetadata: { keep: true }, maxMembers: null, updatedAt: at(60) };
    expect(updated).toEqual(expected);
    expect(await orgs.findById(project, org.id)).toEqual(expected);
    expect(await orgs.update(project, randomUUID(), { name: 'Nobody' }, at(60))).toBeNull();
    expect(await orgs.update(otherProject, org.id, { name: 'Elsewhere' }, at(60))).toBeNull();
  });

  it('refuses an update to a slug another organization of the project has, and changes nothing', async () => {
    const [{ org: a }, { org: b }] = [await createOrg(), await createOrg()];
    expect(await orgs.update(project, b.id, { name: 'Clash', slug: a.slug }, at(60))).toBe('slug_taken');
    expect(await orgs.findById(project, b.id)).toEqual(b);
  });

  it('deletes an organization with its members, invitations and domains; its sessions act for none', async () => {
    const { org, owner } = await createOrg();
    const inv = await invite(org, 'gone@example.com');
    await orgs.addDomain(domain(org, 'gone.example'));
    const session = await startSession(owner);
    expect(await orgs.setActiveOrganization(project, owner, session, org.id)).toBe(true);
    expect(await orgs.delete(otherProject, org.id)).toBe(false);
    expect(await orgs.delete(project, org.id)).toBe(true);
    expect(await orgs.findById(project, org.id)).toBeNull();
    expect(await orgs.findMembership(org.id, owner)).toBeNull();
    expect(await orgs.findInvitation(project, inv.id)).toBeNull();
    expect(await orgs.listDomains(org.id)).toEqual([]);
    expect(await activeOrganizationOf(session)).toBeNull();
    expect(await orgs.delete(project, org.id)).toBe(false);
  });

  it('lists a project’s organizations newest first, a page at a time after (created_at, id), ties in time included', async () => {
    const listed = await insertTestProject(db);
    const made: Organization[] = [];
    for (const seconds of [1, 2, 2, 2, 3]) made.push((await createOrg({ projectId: listed, createdAt: at(seconds), updatedAt: at(seconds) })).org);
    const order = [...made].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1)).map((o) => o.id);
    const seen: string[] = [];
    let after: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const page = await orgs.listForProject(listed, { limit: 2, ...(after ? { after } : {}) });
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page.map((o) => o.id));
      const last = page[page.length - 1]!;
      after = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).toEqual(order);
    expect(await orgs.listForProject(listed, { limit: 10 })).toEqual(made.slice().sort((x, y) => order.indexOf(x.id) - order.indexOf(y.id)));
  });

  it('searches names and slugs by a part of them, whatever the case; % and _ match themselves', async () => {
    const searched = await insertTestProject(db);
    const make = async (name: string, slug: string) => (await createOrg({ projectId: searched, name, slug })).org.id;
    const acmeCorp = await make('Acme Corp', 'corp-one');
    const acmeLabs = await make('Labs', 'acme-labs');
    const percent = await make('100% Fun', 'fun');
    const underscore = await make('snake_case Inc', 'snake');
    await make('Other', 'other-x1');
    const ids = async (search: string) => (await orgs.listForProject(searched, { search, limit: 10 })).map((o) => o.id).sort();
    expect(await ids('ACME')).toEqual([acmeCorp, acmeLabs].sort());
    expect(await ids('%')).toEqual([percent]);
    expect(await ids('_')).toEqual([underscore]);
    expect(await ids('e_c')).toEqual([underscore]);
    expect(await ids('nothing-like-it')).toEqual([]);
    expect(await orgs.listForProject(project, { search: 'acme corp', limit: 10 })).toEqual([]);
  });
});

describe('members', () => {
  it('lists members with their user’s email, name and picture, oldest first, a page at a time after (created_at, id)', async () => {
    const { org, owner } = await createOrg();
    const ada = await insertUser({ email: 'Ada@Example.com', name: 'Ada', picture: 'https://img.example.com/ada.png' });
    const bob = await insertUser({ name: 'Bob' });
    const cy = await insertUser({ email: 'cy@example.com' });
    const [cyM, adaM, bobM] = [membership(org, cy, 'member', at(5)), membership(org, ada, 'member', at(2)), membership(org, bob, 'member', at(2))];
    for (const m of [cyM, adaM, bobM]) expect(await orgs.addMember(m, 100, T0)).toBe('added');
    const all = await orgs.listMembers(org.id, { limit: 10 });
    // Ada and Bob joined in the same instant: the membership id orders them.
    const sameInstant = [adaM, bobM].sort((x, y) => (x.id < y.id ? -1 : 1)).map((m) => m.userId);
    expect(all.map((m) => m.userId)).toEqual([owner, ...sameInstant, cy]);
    expect(all.find((m) => m.userId === ada)).toMatchObject({
      role: 'member',
      user: { email: 'Ada@Example.com', name: 'Ada', picture: 'https://img.example.com/ada.png' },
    });
    expect(all.find((m) => m.userId === bob)?.user).toEqual({ email: null, name: 'Bob', picture: null });
    const first = await orgs.listMembers(org.id, { limit: 2 });
    expect(first).toEqual(all.slice(0, 2));
    const last = first[1]!;
    expect(await orgs.listMembers(org.id, { limit: 10, after: { createdAt: last.createdAt, id: last.id } })).toEqual(all.slice(2));
    expect(await orgs.countMembers(org.id)).toBe(4);
  });

  it('lists a user’s organizations with the membership, oldest membership first, only in the project', async () => {
    const user = await insertUser();
    const { org: second } = await createOrg();
    const { org: first } = await createOrg();
    expect(await orgs.addMember(membership(second, user, 'admin', at(20)), 100, T0)).toBe('added');
    expect(await orgs.addMember(membership(first, user, 'member', at(10)), 100, T0)).toBe('added');
    const mine = await orgs.listForUser(project, user);
    expect(mine.map((e) => [e.organization, e.membership.role])).toEqual([
      [first, 'member'],
      [second, 'admin'],
    ]);
    expect(mine[0]!.membership).toMatchObject({ organizationId: first.id, userId: user, createdAt: at(10) });
    expect(await orgs.listForUser(otherProject, user)).toEqual([]);
  });

  it('adds a member once: a second add of the same user is already_member', async () => {
    const { org } = await createOrg();
    const user = await insertUser();
    expect(await orgs.addMember(membership(org, user), 100, T0)).toBe('added');
    expect(await orgs.addMember(membership(org, user, 'admin'), 100, T0)).toBe('already_member');
    expect((await orgs.findMembership(org.id, user))?.role).toBe('member');
  });

  it('counts pending, unexpired invitations against the member limit', async () => {
    const { org } = await createOrg();
    await invite(org, 'pending@example.com');
    await invite(org, 'expired@example.com', { expiresAt: at(60) });
    // Owner + one pending invitation = 2 of 3; the expired one is not counted.
    expect(await orgs.addMember(membership(org, await insertUser()), 3, at(60))).toBe('added');
    expect(await orgs.addMember(membership(org, await insertUser()), 3, at(60))).toBe('limit_reached');
  });

  it('never goes past the limit under 20 concurrent adds', async () => {
    const { org } = await createOrg();
    await invite(org, 'seat@example.com');
    const candidates = await Promise.all(Array.from({ length: 20 }, () => insertUser()));
    const outcomes = await Promise.all(candidates.map((u) => orgs.addMember(membership(org, u), 5, T0)));
    // Owner and the pending invitation hold 2 of the 5 seats.
    expect(outcomes.filter((o) => o === 'added')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'limit_reached')).toHaveLength(17);
    expect(await orgs.countMembers(org.id)).toBe(4);
  });

  it('refuses to demote or remove the only owner; with a second owner, one of them may go', async () => {
    const { org, owner } = await createOrg();
    expect(await orgs.setRole(org.id, owner, 'admin', at(10))).toBe('last_owner');
    expect(await orgs.removeMember(org.id, owner)).toBe('last_owner');
    const second = await insertUser();
    expect(await orgs.addMember(membership(org, second, 'owner'), 100, T0)).toBe('added');
    const demoted = await orgs.setRole(org.id, owner, 'admin', at(10));
    expect(demoted).toMatchObject({ outcome: 'updated', before: { userId: owner, role: 'owner' }, after: { userId: owner, role: 'admin', updatedAt: at(10) } });
    expect(await orgs.countOwners(org.id)).toBe(1);
    expect(await orgs.removeMember(org.id, second)).toBe('last_owner');
    expect(await orgs.removeMember(org.id, owner)).toMatchObject({ outcome: 'removed', before: { userId: owner, role: 'admin' } });
    expect(await orgs.removeMember(org.id, owner)).toBe('not_found');
    expect(await orgs.setRole(org.id, owner, 'member', at(10))).toBe('not_found');
  });

  it('keeps an owner when two owners demote or remove each other at the same time, round after round', async () => {
    for (let round = 0; round < 30; round++) {
      const { org, owner: a } = await createOrg();
      const b = await insertUser();
      expect(await orgs.addMember(membership(org, b, 'owner'), 100, T0)).toBe('added');
      const act = (target: string, kind: number) => (kind === 0 ? orgs.setRole(org.id, target, 'member', at(round)) : orgs.removeMember(org.id, target));
      const outcomes = await Promise.all([act(b, round % 3 === 1 ? 1 : 0), act(a, round % 3 === 2 ? 1 : 0)]);
      expect(await orgs.countOwners(org.id)).toBe(1);
      expect(outcomes.filter((o) => o === 'last_owner')).toHaveLength(1);
      expect(outcomes.filter((o) => typeof o === 'object')).toHaveLength(1);
    }
  });

  it('takes part in the caller’s transaction: a member added in one that rolls back is not there', async () => {
    const { org } = await createOrg();
    const user = await insertUser();
    const store = new PostgresOrganizationStore(db);
    await expect(
      db.withContext(() =>
        db.transaction(async () => {
          expect(await store.addMember(membership(org, user), 100, T0)).toBe('added');
          throw new Error('the use case fails after the add');
        }),
      ),
    ).rejects.toThrow('the use case fails after the add');
    expect(await orgs.findMembership(org.id, user)).toBeNull();
  });

  it('answers whether any organization of the project has members holding a role', async () => {
    const { org } = await createOrg();
    expect(await orgs.roleInUse(project, 'auditor')).toBe(false);
    await orgs.addMember(membership(org, await insertUser(), 'auditor'), 100, T0);
    expect(await orgs.roleInUse(project, 'auditor')).toBe(true);
    expect(await orgs.roleInUse(otherProject, 'auditor')).toBe(false);
  });
});

describe('sessions acting for an organization', () => {
  it('removing a member clears the organization from that user’s sessions, and from no one else’s', async () => {
    const { org, owner } = await createOrg();
    const { org: elsewhere } = await createOrg();
    const user = await insertUser();
    await orgs.addMember(membership(org, user), 100, T0);
    await orgs.addMember(membership(elsewhere, user), 100, T0);
    const [onOrg, onElsewhere, ownerSession] = [await startSession(user), await startSession(user), await startSession(owner)];
    expect(await orgs.setActiveOrganization(project, user, onOrg, org.id)).toBe(true);
    expect(await orgs.setActiveOrganization(project, user, onElsewhere, elsewhere.id)).toBe(true);
    expect(await orgs.setActiveOrganization(project, owner, ownerSession, org.id)).toBe(true);
    expect(await orgs.removeMember(org.id, user)).toMatchObject({ outcome: 'removed' });
    expect(await activeOrganizationOf(onOrg)).toBeNull();
    expect(await activeOrganizationOf(onElsewhere)).toBe(elsewhere.id);
    expect(await activeOrganizationOf(ownerSession)).toBe(org.id);
  });

  it('sets the active organization only on the user’s live session in the project, and clears it with null', async () => {
    const { org, owner } = await createOrg();
    const { org: foreign } = await createOrg({ projectId: otherProject });
    const other = await insertUser();
    const session = await startSession(owner);
    expect(await orgs.setActiveOrganization(project, other, session, org.id)).toBe(false);
    expect(await orgs.setActiveOrganization(otherProject, owner, session, foreign.id)).toBe(false);
    expect(await orgs.setActiveOrganization(project, owner, session, foreign.id)).toBe(false);
    expect(await orgs.setActiveOrganization(project, owner, session, randomUUID())).toBe(false);
    expect(await activeOrganizationOf(session)).toBeNull();
    expect(await orgs.setActiveOrganization(project, owner, session, org.id)).toBe(true);
    expect(await activeOrganizationOf(session)).toBe(org.id);
    expect(await orgs.setActiveOrganization(project, owner, session, null)).toBe(true);
    expect(await activeOrganizationOf(session)).toBeNull();
    await sql('update sessions set revoked_at = ? where id = ?', [at(5), session]);
    expect(await orgs.setActiveOrganization(project, owner, session, org.id)).toBe(false);
    expect(await activeOrganizationOf(session)).toBeNull();
  });
});

describe('invitations', () => {
  it('records an invitation found by id (in its project) and by token hash, listed newest first', async () => {
    const { org } = await createOrg();
    const older = await invite(org, 'older@example.com', { createdAt: at(1) });
    const newer = await invite(org, 'Newer@Example.com', { createdAt: at(2), role: 'admin' });
    expect(await orgs.findInvitation(project, newer.id)).toEqual(newer);
    expect(await orgs.findInvitation(otherProject, newer.id)).toBeNull();
    expect(await orgs.findInvitationByTokenHash(`hash-${older.id}`)).toEqual(older);
    expect(await orgs.findInvitationByTokenHash('hash-unknown')).toBeNull();
    expect(await orgs.listInvitations(org.id, { pendingOnly: false, now: T0 })).toEqual([newer, older]);
  });

  it('replaces a pending invitation to the same address: the earlier one is revoked, and does not count against the limit', async () => {
    const { org } = await createOrg();
    const first = await invite(org, 'Dana@Example.com');
    // Owner + the first invitation = 2 of 2: the replacement still fits, another address does not.
    const second = invitation(org, 'dana@example.com', { createdAt: at(10), role: 'admin' });
    expect(await orgs.createInvitation(second, `hash-${second.id}`, 2, at(10))).toBe('created');
    expect(await orgs.findInvitation(project, first.id)).toEqual({ ...first, status: 'revoked', endedAt: at(10) });
    expect(await orgs.listInvitations(org.id, { pendingOnly: true, now: at(10) })).toEqual([second]);
    const third = invitation(org, 'erin@example.com');
    expect(await orgs.createInvitation(third, `hash-${third.id}`, 2, at(10))).toBe('limit_reached');
    expect(await orgs.findInvitation(project, third.id)).toBeNull();
  });

  it('refuses to invite an address whose user is already a member (its email or its sign-in email, whatever the case)', async () => {
    const { org } = await createOrg();
    const oauthUser = await insertUser({ email: 'Grace@Example.com' });
    await orgs.addMember(membership(org, oauthUser), 100, T0);
    const emailUser = endUser(project, { email: 'Linus@Example.com', provider: 'email' });
    expect(await accounts.insertWithLoginEmail(emailUser, 'linus@example.com', null)).toBe(true);
    await orgs.addMember(membership(org, emailUser.id), 100, T0);
    for (const address of ['grace@example.com', 'LINUS@example.com']) {
      const inv = invitation(org, address);
      expect(await orgs.createInvitation(inv, `hash-${inv.id}`, 100, T0)).toBe('already_member');
    }
    // A non-member with that address in another organization is no reason to refuse.
    const { org: another } = await createOrg();
    await invite(another, 'grace@example.com');
    expect(await orgs.listInvitations(org.id, { pendingOnly: false, now: T0 })).toEqual([]);
  });

  it('accepts a pending invitation once: accepted by the user, who becomes a member with the role given', async () => {
    const { org } = await createOrg();
    const inv = await invite(org, 'new@example.com', { role: 'admin' });
    const user = await insertUser({ email: 'new@example.com' });
    expect(await orgs.acceptInvitation(inv.id, membership(org, user, 'admin'), at(30))).toBe('accepted');
    expect(await orgs.findInvitation(project, inv.id)).toEqual({ ...inv, status: 'accepted', endedAt: at(30), acceptedBy: user });
    expect((await orgs.findMembership(org.id, user))?.role).toBe('admin');
    expect(await orgs.acceptInvitation(inv.id, membership(org, user, 'admin'), at(31))).toBe('not_pending');
  });

  it('lets exactly one of 50 concurrent accepts of one invitation win, with one membership', async () => {
    const { org } = await createOrg();
    const inv = await invite(org, 'race@example.com');
    const candidates = await Promise.all(Array.from({ length: 50 }, () => insertUser()));
    const outcomes = await Promise.all(candidates.map((u) => orgs.acceptInvitation(inv.id, membership(org, u), at(5))));
    expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'not_pending')).toHaveLength(49);
    const winner = candidates[outcomes.indexOf('accepted')]!;
    expect(await orgs.findInvitation(project, inv.id)).toMatchObject({ status: 'accepted', acceptedBy: winner });
    const rows = await sql<{ user_id: string }>(`select user_id from organization_members where organization_id = ? and role = 'member'`, [org.id]);
    expect(rows).toEqual([{ user_id: winner }]);
  });

  it('refuses an expired invitation: nothing changes', async () => {
    const { org } = await createOrg();
    const inv = await invite(org, 'late@example.com', { expiresAt: at(100) });
    const user = await insertUser();
    expect(await orgs.acceptInvitation(inv.id, membership(org, user), at(100))).toBe('not_pending');
    expect(await orgs.findInvitation(project, inv.id)).toEqual(inv);
    expect(await orgs.findMembership(org.id, user)).toBeNull();
  });

  it('accepting as an existing member marks the invitation accepted and keeps the member’s role', async () => {
    const { org } = await createOrg();
    const user = await insertUser();
    await orgs.addMember(membership(org, user, 'admin'), 100, T0);
    const inv = await invite(org, 'already@example.com');
    expect(await orgs.acceptInvitation(inv.id, membership(org, user, 'member'), at(10))).toBe('already_member');
    expect(await orgs.findInvitation(project, inv.id)).toMatchObject({ status: 'accepted', acceptedBy: user, endedAt: at(10) });
    expect((await orgs.findMembership(org.id, user))?.role).toBe('admin');
  });

  it('revokes or declines a pending invitation once', async () => {
    const { org } = await createOrg();
    const inv = await invite(org, 'no@example.com');
    expect(await orgs.endInvitation(inv.id, 'declined', at(3))).toBe(true);
    expect(await orgs.findInvitation(project, inv.id)).toEqual({ ...inv, status: 'declined', endedAt: at(3) });
    expect(await orgs.endInvitation(inv.id, 'revoked', at(4))).toBe(false);
    expect(await orgs.acceptInvitation(inv.id, membership(org, await insertUser()), at(5))).toBe('not_pending');
  });

  it('lists the pending, unexpired invitations to an address across the project’s organizations, with each organization', async () => {
    const { org: a } = await createOrg();
    const { org: b } = await createOrg();
    const { org: foreign } = await createOrg({ projectId: otherProject });
    const older = await invite(a, 'Lee@Example.com', { createdAt: at(1) });
    const newer = await invite(b, 'lee@example.com', { createdAt: at(2) });
    await invite(b, 'lee@example.org');
    const { org: revoking } = await createOrg();
    expect(await orgs.endInvitation((await invite(revoking, 'lee@example.com', { createdAt: at(3) })).id, 'revoked', at(4))).toBe(true);
    const { org: expiring } = await createOrg();
    await invite(expiring, 'lee@example.com', { createdAt: at(3), expiresAt: at(60) });
    await invite(foreign, 'lee@example.com');
    expect(await orgs.listPendingForEmail(project, 'lee@example.com', at(60))).toEqual([
      { invitation: newer, organization: b },
      { invitation: older, organization: a },
    ]);
  });
});

describe('verified domains', () => {
  it('adds a domain once per organization and lists, finds, updates and deletes it', async () => {
    const { org } = await createOrg();
    const d = domain(org, 'acme.example');
    expect(await orgs.addDomain(d)).toBe('added');
    expect(await orgs.addDomain({ ...d, id: randomUUID() })).toBe('exists');
    expect(await orgs.listDomains(org.id)).toEqual([d]);
    expect(await orgs.findDomain(org.id, d.id)).toEqual(d);
    const updated = { ...d, enrollment: 'automatic' as const, defaultRole: 'admin' };
    expect(await orgs.updateDomain(d.id, { enrollment: 'automatic', defaultRole: 'admin' })).toEqual(updated);
    expect(await orgs.updateDomain(d.id, { enrollment: 'suggest' })).toEqual({ ...updated, enrollment: 'suggest' });
    expect(await orgs.deleteDomain(randomUUID(), d.id)).toBe(false);
    expect(await orgs.deleteDomain(org.id, d.id)).toBe(true);
    expect(await orgs.findDomain(org.id, d.id)).toBeNull();
  });

  it('verifies a domain for one organization of a project: another one is refused as taken; another project may verify it', async () => {
    const { org: first } = await createOrg();
    const { org: second } = await createOrg();
    const { org: foreign } = await createOrg({ projectId: otherProject });
    const [d1, d2, d3] = [domain(first, 'taken.example'), domain(second, 'taken.example'), domain(foreign, 'taken.example')];
    for (const d of [d1, d2, d3]) expect(await orgs.addDomain(d)).toBe('added');
    expect(await orgs.verifiedDomain(project, 'taken.example')).toBeNull();
    expect(await orgs.markDomainVerified(d1.id, at(10))).toBe('verified');
    expect(await orgs.markDomainVerified(d2.id, at(11))).toBe('taken');
    expect(await orgs.markDomainVerified(d3.id, at(12))).toBe('verified');
    expect(await orgs.verifiedDomain(project, 'taken.example')).toEqual({ ...d1, verifiedAt: at(10) });
    expect(await orgs.findDomain(second.id, d2.id)).toEqual(d2);
    expect(await orgs.markDomainVerified(randomUUID(), at(13))).toBe('taken');
  });
});

describe('settings', () => {
  it('answers the defaults until the project saves its own, then what it saved (saved again: replaced)', async () => {
    const configured = await insertTestProject(db);
    expect(await orgs.settings(configured)).toEqual({ allowUserCreation: true, required: false, defaultMemberLimit: 100, roles: [] });
    const auditor: RoleDefinition = { key: 'auditor', name: 'Auditor', description: 'Reads reports', permissions: ['reports:read'], builtIn: false };
    const saved = { allowUserCreation: false, required: true, defaultMemberLimit: 12, roles: [auditor] };
    await orgs.saveSettings(configured, saved, at(1));
    expect(await orgs.settings(configured)).toEqual(saved);
    const again = { ...saved, defaultMemberLimit: 40, roles: [] };
    await orgs.saveSettings(configured, again, at(2));
    expect(await orgs.settings(configured)).toEqual(again);
  });
});

describe('ids that are not uuids (from a path)', () => {
  it('find nothing and change nothing, without an error', async () => {
    const { org, owner } = await createOrg();
    const bad = 'not-a-uuid';
    expect(await orgs.findById(bad, org.id)).toBeNull();
    expect(await orgs.findById(project, bad)).toBeNull();
    expect(await orgs.findBySlug(bad, org.slug)).toBeNull();
    expect(await orgs.update(project, bad, { name: 'X' }, T0)).toBeNull();
    expect(await orgs.delete(project, bad)).toBe(false);
    expect(await orgs.listForProject(bad, { limit: 10 })).toEqual([]);
    expect(await orgs.listForProject(project, { limit: 10, after: { createdAt: T0, id: bad } })).toEqual([]);
    expect(await orgs.listForUser(project, bad)).toEqual([]);
    expect(await orgs.findMembership(bad, owner)).toBeNull();
    expect(await orgs.findMembership(org.id, bad)).toBeNull();
    expect(await orgs.listMembers(bad, { limit: 10 })).toEqual([]);
    expect(await orgs.listMembers(org.id, { limit: 10, after: { createdAt: T0, id: bad } })).toEqual([]);
    expect(await orgs.countMembers(bad)).toBe(0);
    expect(await orgs.countOwners(bad)).toBe(0);
    expect(await orgs.setRole(bad, owner, 'member', T0)).toBe('not_found');
    expect(await orgs.setRole(org.id, bad, 'member', T0)).toBe('not_found');
    expect(await orgs.removeMember(bad, owner)).toBe('not_found');
    expect(await orgs.removeMember(org.id, bad)).toBe('not_found');
    expect(await orgs.findInvitation(project, bad)).toBeNull();
    expect(await orgs.listInvitations(bad, { pendingOnly: false, now: T0 })).toEqual([]);
    expect(await orgs.listPendingForEmail(bad, 'a@example.com', T0)).toEqual([]);
    expect(await orgs.acceptInvitation(bad, membership(org, owner), T0)).toBe('not_pending');
    expect(await orgs.endInvitation(bad, 'revoked', T0)).toBe(false);
    expect(await orgs.listDomains(bad)).toEqual([]);
    expect(await orgs.findDomain(org.id, bad)).toBeNull();
    expect(await orgs.markDomainVerified(bad, T0)).toBe('taken');
    expect(await orgs.updateDomain(bad, { enrollment: 'none' })).toBeNull();
    expect(await orgs.deleteDomain(org.id, bad)).toBe(false);
    expect(await orgs.verifiedDomain(bad, 'acme.example')).toBeNull();
    expect(await orgs.settings(bad)).toEqual({ allowUserCreation: true, required: false, defaultMemberLimit: 100, roles: [] });
    expect(await orgs.roleInUse(bad, 'owner')).toBe(false);
    const session = await startSession(owner);
    expect(await orgs.setActiveOrganization(bad, owner, session, org.id)).toBe(false);
    expect(await orgs.setActiveOrganization(project, bad, session, org.id)).toBe(false);
    expect(await orgs.setActiveOrganization(project, owner, bad, org.id)).toBe(false);
    expect(await orgs.setActiveOrganization(project, owner, session, bad)).toBe(false);
    expect(await orgs.findById(project, org.id)).toEqual(org);
    expect(await orgs.countMembers(org.id)).toBe(1);
  });
});
