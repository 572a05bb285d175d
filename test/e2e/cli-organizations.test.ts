import { type CliRun, killCliProcessesAfterEach, parseCliJson, runCli } from '../support/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { CLI_ADMIN } from '../../domain/audit';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp } from '../support/app';

/**
 * The organization commands of the admin CLI (`tollgate org ...`), run as real child processes
 * against the test app's database and key: each command's output (text and --json), its refusals
 * worded from the error table with exit 1, bad arguments with exit 2, and what the app's own use
 * cases read after each change.
 */

type Run = CliRun;
killCliProcessesAfterEach();

const MISSING = '00000000-0000-4000-8000-000000000000';
const CALLBACK = 'https://app.example.com/callback';

let app: TestApp;
let project: Project;
let P: string;
let ada: EndUser;
let bob: EndUser;
let cy: EndUser;

function cli(args: string[]): Promise<Run> {
  return runCli(args, {
    env: { DATABASE_URL: app.database.url, TOLLGATE_SECRET_KEY: app.secretKey.toString('base64'), NODE_ENV: 'test', PUBLIC_URL: app.baseUrl },
  });
}

/** `tollgate <args> --json`; `T` is what the test reads the output as. */
async function json<T extends object = Record<string, unknown>>(args: string[]) {
  const r = await cli([...args, '--json']);
  return { ...r, json: parseCliJson<T>(r) };
}

/** A refusal: exit 1, the message on stderr, `{error, code}` on stdout with --json. */
async function refused(args: string[], code: string, message: string) {
  const r = await cli([...args, '--json']);
  expect(r.code).toBe(1);
  expect(parseCliJson(r)).toEqual({ error: message, code });
  expect(r.stderr).toContain(`Error: ${message}`);
}

/** The fields of `org ... --json` output these tests read. */
interface OrgJson {
  id: string;
  name: string;
  slug: string;
  maxMembers: number | null;
  requireMfa: boolean;
  membersCount: number;
}
interface MemberJson {
  userId: string;
  email: string | null;
  role: string;
}
interface RoleJson {
  key: string;
  name: string;
  description: string;
  permissions: string[];
  builtIn: boolean;
}

const uc = () => app.tollgate.organizations;
const asProject = { kind: 'project', audit: CLI_ADMIN } as const;

/** The members of an organization as the app's own use case reads them now: [email, role]. */
async function membersNow(organizationId: string): Promise<Array<[string | null, string]>> {
  const r = await app.inContext(() => uc().listMembers({ projectId: P, organizationId, actor: asProject }));
  if (!r.ok) throw new Error(r.error);
  return r.value.members.map((m) => [m.user.email, m.role]);
}

beforeAll(async () => {
  app = await startTestApp({ runWorker: false });
  const created = await app.createProject({ name: 'Orgs', callbackUrls: [CALLBACK] });
  P = created.id;
  project = (await app.inContext(() => app.tollgate.admin.getProject(P)))!;
  ada = await app.seedUser(P, { email: 'ada@acme.example', name: 'Ada' });
  bob = await app.seedUser(P, { email: 'bob@acme.example', name: 'Bob' });
  cy = await app.seedUser(P, { email: 'cy@acme.example', name: null });
});

afterAll(async () => {
  await app?.close();
});

// Each test runs several CLI processes (a Node start-up and a database connection each): the bound
// is for a hang, generous enough for a machine loaded by other work.
describe('tollgate org CLI', { timeout: 120_000 }, () => {
  let acme: OrgJson;
  let beta: OrgJson;

  it('help lists the org commands', async () => {
    const [help, group, roleGroup] = await Promise.all([cli(['--help']), cli(['org', '--help']), cli(['org', 'role'])]);
    expect(help.code).toBe(0);
    for (const c of ['org list', 'org show <org>', 'org create', 'org add-member <org>', 'org set-role <org>', 'org role set <key>', 'org settings']) {
      expect(help.stdout).toContain(c);
    }
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('tollgate org remove-member <org> --project <projectId> --user <email|userId> [--json]');
    expect(roleGroup.code).toBe(2);
    expect(roleGroup.stderr).toContain('Missing org role command: one of set, delete.');
  });

  it('org create makes an organization with its owner, found by email or id', async () => {
    const created = await json<{ projectId: string; organization: OrgJson; ownerUserId: string }>([
      'org',
      'create',
      '--project',
      P,
      '--name',
      'Acme Labs',
      '--owner',
      'ADA@acme.example',
    ]);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({
      projectId: P,
      ownerUserId: ada.id,
      organization: { name: 'Acme Labs', slug: 'acme-labs', maxMembers: null, requireMfa: false, membersCount: 1, privateMetadata: {} },
    });
    acme = created.json.organization;

    const text = await cli([
      'org',
      'create',
      '--project',
      P,
      '--name',
      'Beta Team',
      '--owner',
      bob.id,
      '--slug',
      'beta',
      '--max-members',
      '5',
      '--require-mfa',
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Created organization Beta Team (beta) with owner ${bob.id}.`);
    expect(text.stdout).toMatch(/members\s+: 1 of at most 5\n/);
    expect(text.stdout).toMatch(/require MFA\s+: yes/);

    const create = (...more: string[]) => ['org', 'create', '--project', P, '--name', 'X', ...more];
    await Promise.all([
      refused(create('--owner', ada.id, '--slug', 'beta'), 'organization_slug_taken', 'Another organization of the project has this slug: "beta".'),
      refused(create('--owner', 'nobody@acme.example'), 'user_not_found', `No such user nobody@acme.example in project ${P}.`),
      refused(create('--owner', MISSING), 'user_not_found', `No such user ${MISSING} in project ${P}.`),
      refused(['org', 'create', '--project', MISSING, '--name', 'X', '--owner', ada.id], 'project_not_found', `Project not found: ${MISSING}.`),
    ]);
    const [badLimit, noOwner] = await Promise.all([cli(create('--owner', ada.id, '--max-members', '0')), cli(create())]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain('--max-members must be a whole number from 1 to 100000, got "0".');
    expect(noOwner.code).toBe(2);
    expect(noOwner.stderr).toContain('Missing --owner <email|userId>.');

    const [list, search, page, textList] = await Promise.all([
      json<{ organizations: OrgJson[]; nextCursor: string | null }>(['org', 'list', '--project', P]),
      json<{ organizations: OrgJson[] }>(['org', 'list', '--project', P, '--search', 'ACME']),
      json<{ organizations: OrgJson[]; nextCursor: string | null }>(['org', 'list', '--project', P, '--limit', '1']),
      cli(['org', 'list', '--project', P, '--search', 'zzz']),
    ]);
    expect(list.json.organizations.map((o) => o.slug)).toEqual(['beta', 'acme-labs']);
    beta = list.json.organizations[0]!;
    expect(list.json.nextCursor).toBeNull();
    expect(search.json.organizations.map((o) => o.slug)).toEqual(['acme-labs']);
    expect(page.json.organizations.map((o) => o.slug)).toEqual(['beta']);
    const next = await json<{ organizations: OrgJson[]; nextCursor: string | null }>([
      'org',
      'list',
      '--project',
      P,
      '--limit',
      '1',
      '--cursor',
      page.json.nextCursor!,
    ]);
    expect(next.json.organizations.map((o) => o.slug)).toEqual(['acme-labs']);
    expect(textList.stdout.trim()).toBe(`No organization of project ${P} has a name or slug containing "zzz".`);
    const table = await cli(['org', 'list', '--project', P]);
    expect(table.stdout).toMatch(/^ID\s+SLUG\s+MEMBERS\s+CREATED\s+NAME$/m);
    expect(table.stdout).toMatch(new RegExp(`^${beta.id}\\s+beta\\s+1/5\\s+\\S+\\s+Beta Team$`, 'm'));
  });

  it('org add-member adds by email or id with a role; org show lists members and pending invitations', async () => {
    const added = await json<{ member: MemberJson; organizationId: string }>(['org', 'add-member', '--project', P, 'acme-labs', '--user', bob.email!]);
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({ projectId: P, organizationId: acme.id, member: { userId: bob.id, email: bob.email, role: 'member' } });
    const byId = await cli(['org', 'add-member', '--project', P, acme.id, '--user', cy.id, '--role', 'admin']);
    expect(byId.code).toBe(0);
    expect(byId.stdout.trim()).toBe(`Added cy@acme.example (${cy.id}) to Acme Labs (acme-labs) as admin.`);
    expect(await membersNow(acme.id)).toEqual([
      ['ada@acme.example', 'owner'],
      ['bob@acme.example', 'member'],
      ['cy@acme.example', 'admin'],
    ]);

    await Promise.all([
      refused(['org', 'add-member', '--project', P, 'acme-labs', '--user', bob.id], 'already_member', 'The user is already a member of the organization.'),
      refused(['org', 'add-member', '--project', P, 'acme-labs', '--user', ada.id, '--role', 'boss'], 'invalid_role', 'No such role in this project: "boss".'),
      refused(['org', 'add-member', '--project', P, 'nope', '--user', ada.id], 'organization_not_found', `No such organization: nope in project ${P}.`),
      refused(['org', 'add-member', '--project', P, 'beta', '--user', 'not an@email'], 'invalid_email', 'Invalid email address "not an@email".'),
    ]);

    const invited = await app.inContext(() =>
      uc().invite({
        project,
        organizationId: acme.id,
        email: 'dora@acme.example',
        role: 'member',
        callbackUrl: CALLBACK,
        locale: null,
        actor: asProject,
        origin: SYSTEM_ORIGIN,
      }),
    );
    expect(invited.ok).toBe(true);

    const [shown, text] = await Promise.all([
      json<{ organization: OrgJson; members: MemberJson[]; invitations: Array<{ email: string; role: string; status: string }> }>([
        'org',
        'show',
        '--project',
        P,
        'acme-labs',
      ]),
      cli(['org', 'show', '--project', P, acme.id]),
    ]);
    expect(shown.code).toBe(0);
    expect(shown.json.organization).toMatchObject({ id: acme.id, slug: 'acme-labs', membersCount: 3 });
    expect(shown.json.members.map((m) => [m.email, m.role])).toEqual([
      ['ada@acme.example', 'owner'],
      ['bob@acme.example', 'member'],
      ['cy@acme.example', 'admin'],
    ]);
    expect(shown.json.invitations).toEqual([expect.objectContaining({ email: 'dora@acme.example', role: 'member', status: 'pending' })]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/slug\s+: acme-labs/);
    expect(text.stdout).toMatch(/members\s+: 3 of at most 100 \(the project's default\)/);
    expect(text.stdout).toMatch(new RegExp(`^${ada.id}\\s+ada@acme\\.example\\s+owner\\s+\\S+\\s+Ada$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^${cy.id}\\s+cy@acme\\.example\\s+admin\\s+\\S+\\s+-$`, 'm'));
    expect(text.stdout).toMatch(/Pending invitations:\nID\s+EMAIL\s+ROLE\s+EXPIRES\n\S+\s+dora@acme\.example\s+member\s+\S+/);
    const betaShown = await cli(['org', 'show', '--project', P, 'beta']);
    expect(betaShown.stdout).toContain('No pending invitations.');
  });

  it('org set-role changes a role; demoting the only owner is refused with the table message', async () => {
    const changed = await json<{ member: MemberJson }>(['org', 'set-role', '--project', P, 'acme-labs', '--user', bob.email!, '--role', 'admin']);
    expect(changed.code).toBe(0);
    expect(changed.json.member).toMatchObject({ userId: bob.id, role: 'admin' });
    const text = await cli(['org', 'set-role', '--project', P, 'acme-labs', '--user', bob.id, '--role', 'member']);
    expect(text.stdout.trim()).toBe(`bob@acme.example (${bob.id}) is now member of Acme Labs (acme-labs).`);

    const demote = await cli(['org', 'set-role', '--project', P, 'acme-labs', '--user', ada.email!, '--role', 'member']);
    expect(demote.code).toBe(1);
    expect(demote.stderr).toContain('Error: An organization keeps at least one owner: make someone else owner first.');
    expect(demote.stdout).toBe('');
    await Promise.all([
      refused(
        ['org', 'set-role', '--project', P, 'acme-labs', '--user', ada.id, '--role', 'member'],
        'last_owner',
        'An organization keeps at least one owner: make someone else owner first.',
      ),
      refused(
        ['org', 'set-role', '--project', P, 'beta', '--user', ada.id, '--role', 'admin'],
        'member_not_found',
        `No such member: ${ada.id} in organization beta.`,
      ),
    ]);
    const noRole = await cli(['org', 'set-role', '--project', P, 'acme-labs', '--user', ada.id]);
    expect(noRole.code).toBe(2);
    expect(await membersNow(acme.id)).toEqual([
      ['ada@acme.example', 'owner'],
      ['bob@acme.example', 'member'],
      ['cy@acme.example', 'admin'],
    ]);
  });

  it('org remove-member removes a member, never the last owner', async () => {
    const removed = await json(['org', 'remove-member', '--project', P, 'acme-labs', '--user', bob.email!]);
    expect(removed.code).toBe(0);
    expect(removed.json).toEqual({ projectId: P, organizationId: acme.id, userId: bob.id, removed: true });
    expect(await membersNow(acme.id)).toEqual([
      ['ada@acme.example', 'owner'],
      ['cy@acme.example', 'admin'],
    ]);
    await Promise.all([
      refused(
        ['org', 'remove-member', '--project', P, 'acme-labs', '--user', bob.id],
        'member_not_found',
        `No such member: ${bob.id} in organization acme-labs.`,
      ),
      refused(
        ['org', 'remove-member', '--project', P, 'acme-labs', '--user', ada.id],
        'last_owner',
        'An organization keeps at least one owner: make someone else owner first.',
      ),
    ]);
    const text = await cli(['org', 'remove-member', '--project', P, 'acme-labs', '--user', cy.id]);
    expect(text.stdout.trim()).toBe(`Removed ${cy.id} from Acme Labs (acme-labs).`);
    // Added back for the role tests.
    expect((await cli(['org', 'add-member', '--project', P, 'acme-labs', '--user', cy.id, '--role', 'admin'])).code).toBe(0);
  });

  it('org roles lists the role table; org role set and delete change it', async () => {
    const [roles, text] = await Promise.all([json<{ roles: RoleJson[] }>(['org', 'roles', '--project', P]), cli(['org', 'roles', '--project', P])]);
    expect(roles.json.roles.map((r) => [r.key, r.builtIn])).toEqual([
      ['owner', true],
      ['admin', true],
      ['member', true],
    ]);
    expect(roles.json.roles[0]!.permissions).toEqual(['org:billing:manage', 'org:delete', 'org:members:manage', 'org:settings:manage']);
    expect(text.stdout).toMatch(/^KEY\s+NAME\s+BUILT-IN\s+PERMISSIONS\s+DESCRIPTION$/m);
    expect(text.stdout).toMatch(/^admin\s+Admin\s+yes\s+org:billing:manage, org:members:manage, org:settings:manage\s+Manages members, settings and billing$/m);
    expect(text.stdout).toMatch(/^member\s+Member\s+yes\s+\(none\)\s+Belongs to the organization$/m);

    const created = await json<{ role: RoleJson; roles: RoleJson[] }>([
      'org',
      'role',
      'set',
      '--project',
      P,
      'auditor',
      '--name',
      'Auditor',
      '--permissions',
      'reports:read, org:billing:manage',
      '--description',
      'Reads reports',
    ]);
    expect(created.code).toBe(0);
    expect(created.json.role).toEqual({
      key: 'auditor',
      name: 'Auditor',
      description: 'Reads reports',
      permissions: ['org:billing:manage', 'reports:read'],
      builtIn: false,
    });
    expect(created.json.roles.map((r) => r.key)).toEqual(['owner', 'admin', 'member', 'auditor']);
    // Changing a built-in role without --description keeps its description.
    const admin = await cli(['org', 'role', 'set', '--project', P, 'admin', '--name', 'Admin', '--permissions', 'org:members:manage']);
    expect(admin.code).toBe(0);
    expect(admin.stdout).toContain('Changed role admin (Admin): org:members:manage.');
    const listed = await app.inContext(() => uc().listRoles(P));
    expect(listed.find((r) => r.key === 'admin')).toMatchObject({ permissions: ['org:members:manage'], description: 'Manages members, settings and billing' });
    expect(listed.find((r) => r.key === 'owner')!.permissions).toContain('reports:read');

    await Promise.all([
      refused(
        ['org', 'role', 'set', '--project', P, 'x', '--name', 'X', '--permissions', 'Bad Perm'],
        'invalid_permission',
        'Invalid permission "Bad Perm": 2 to 4 parts of a-z, 0-9, _ and - separated by ":" ' +
          '(org: ones are org:settings:manage, org:members:manage, org:billing:manage, org:delete).',
      ),
      refused(
        ['org', 'role', 'set', '--project', P, 'owner', '--name', 'O', '--permissions', ''],
        'role_not_editable',
        'The owner role holds every permission and cannot be changed.',
      ),
      refused(['org', 'role', 'delete', '--project', P, 'member'], 'role_not_editable', 'Built-in roles cannot be deleted.'),
      refused(['org', 'role', 'delete', '--project', P, 'ghost'], 'invalid_role', 'No such role in this project: "ghost".'),
    ]);

    expect((await cli(['org', 'set-role', '--project', P, 'acme-labs', '--user', cy.id, '--role', 'auditor'])).code).toBe(0);
    await refused(['org', 'role', 'delete', '--project', P, 'auditor'], 'role_in_use', 'Members hold this role "auditor": give them another one first.');
    expect((await cli(['org', 'set-role', '--project', P, 'acme-labs', '--user', cy.id, '--role', 'member'])).code).toBe(0);
    const deleted = await json<{ deleted: boolean; roles: RoleJson[] }>(['org', 'role', 'delete', '--project', P, 'auditor']);
    expect(deleted.code).toBe(0);
    expect(deleted.json).toMatchObject({ projectId: P, key: 'auditor', deleted: true });
    expect(deleted.json.roles.map((r) => r.key)).toEqual(['owner', 'admin', 'member']);
  });

  it('org settings shows the settings and changes the ones given', async () => {
    const [shown, text] = await Promise.all([
      json<{ settings: Record<string, unknown> }>(['org', 'settings', '--project', P]),
      cli(['org', 'settings', '--project', P]),
    ]);
    expect(shown.json).toEqual({ projectId: P, settings: { allowUserCreation: true, required: false, defaultMemberLimit: 100 } });
    expect(text.stdout).toMatch(/user creation\s+: on /);
    expect(text.stdout).toMatch(/member limit\s+: 100 /);

    const changed = await json(['org', 'settings', '--project', P, '--allow-user-creation', 'off', '--default-member-limit', '3']);
    expect(changed.code).toBe(0);
    expect(changed.json).toEqual({ projectId: P, settings: { allowUserCreation: false, required: false, defaultMemberLimit: 3 } });
    expect((await app.inContext(() => uc().getSettings(P))).settings).toEqual({ allowUserCreation: false, required: false, defaultMemberLimit: 3 });
    const required = await cli(['org', 'settings', '--project', P, '--required', 'on']);
    expect(required.stdout).toContain(`Updated the organization settings of project ${P}.`);
    expect(required.stdout).toMatch(/required\s+: on /);
    expect(required.stdout).toMatch(/user creation\s+: off /);

    // Acme Labs has ada and cy and dora's pending invitation: the new default limit of 3 is reached.
    await refused(
      ['org', 'add-member', '--project', P, 'acme-labs', '--user', bob.id],
      'member_limit_reached',
      'The organization has reached its member limit (members and pending invitations).',
    );

    const [badSwitch, badLimit, noProject] = await Promise.all([
      cli(['org', 'settings', '--project', P, '--required', 'yes']),
      cli(['org', 'settings', '--project', P, '--default-member-limit', '100001']),
      cli(['org', 'settings']),
    ]);
    expect(badSwitch.code).toBe(2);
    expect(badSwitch.stderr).toContain('--required must be "on" or "off", got "yes".');
    expect(badLimit.code).toBe(2);
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toContain('Missing --project <projectId>.');
  });

  it('the changes are in the audit log as made by the operator cli', async () => {
    const log = await json<{ entries: Array<{ action: string; actor: { kind: string; id: string | null } }> }>([
      'audit',
      'list',
      '--project',
      P,
      '--action',
      'organization',
      '--limit',
      '100',
    ]);
    const actions = new Set(log.json.entries.map((e) => e.action));
    for (const a of [
      'organization.created',
      'organization.member.added',
      'organization.member.role_changed',
      'organization.member.removed',
      'organization.roles.changed',
      'organization.settings.changed',
    ]) {
      expect(actions).toContain(a);
    }
    expect(log.json.entries.every((e) => e.actor.kind === 'admin' && e.actor.id === 'cli')).toBe(true);
  });
});
