import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp, TestProject } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * The Organizations page and its Roles & settings view in a real browser against the real server
 * (one server, one browser). Organizations are created by the project server (its API key, as an
 * app does); the operator then finds one, adds a member by email, changes their role and removes
 * them, is refused demoting the only owner, revokes an invitation, edits the roles and their
 * permissions, and switches the settings. After each step the API (the project server's routes,
 * or the admin API for the settings) answers what the page shows.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(() => walk?.close());

const open = consoleOpener(() => walk, 'organizations@example.com');

/** An organization made by the project server with its API key (POST /api/v1/organizations). */
async function createOrganization(project: TestProject, body: Parameters<TestProject['client']['serverOrganizations']['create']>[0]['body']) {
  const r = await project.client.serverOrganizations.create({ body });
  if (r.status !== 201) throw new Error(`creating ${body.name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The members as the project server's API answers them: [email, role], oldest first. */
async function membersOf(project: TestProject, orgId: string) {
  const r = await project.client.serverOrganizations.listMembers({ params: { orgId }, query: {} });
  if (r.status !== 200) throw new Error(`members: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.members.map((m) => [m.email, m.role]);
}

/** The project's roles as the project server's API answers them. */
async function rolesOf(project: TestProject) {
  const r = await project.client.serverOrganizations.roles();
  if (r.status !== 200) throw new Error(`roles: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.roles;
}

/** The organization settings as the admin API answers them (GET, with the page's own session cookie). */
async function settingsOf(projectId: string) {
  const r = await page.request.get(`${t.baseUrl}/api/admin/projects/${projectId}/organization-settings`);
  expect(r.status()).toBe(200);
  return ((await r.json()) as { settings: { allow_user_creation: boolean; required: boolean; default_member_limit: number } }).settings;
}

const status = () => page.getByRole('status').first();

it('finds an organization, adds a member by email, changes their role and removes them; the only owner stays owner; an invitation is revoked', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Rocket shop' });
  const ada = await t.seedUser(project.id, { email: 'ada@rockets.example', name: 'Ada Lovelace' });
  const bea = await t.seedUser(project.id, { email: 'bea@rockets.example', name: 'Bea Smith' });
  const acme = await createOrganization(project, {
    name: 'Acme Rockets',
    owner_user_id: ada.id,
    public_metadata: { tier: 'gold' },
    private_metadata: { crm_id: 'C-42' },
  });
  t.clock.advanceSeconds(1);
  await createOrganization(project, { name: 'Globex Corporation', owner_user_id: bea.id, max_members: 5 });
  const invited = await project.client.serverOrganizations.invite({
    params: { orgId: acme.id },
    body: { email: 'carol@rockets.example', role: 'member', callback_url: project.callbackUrl },
  });
  expect(invited.status).toBe(201);

  // The list, newest first; a search by name, then by slug.
  await open(`/projects/${project.id}/organizations`, 'Organizations');
  const list = page.getByRole('table', { name: 'Organizations, newest first' });
  await see(list.locator('tbody tr')).toHaveCount(2);
  await see(list.locator('tbody tr').nth(0)).toContainText('Globex Corporation');
  await see(list.locator('tbody tr').nth(1)).toContainText('acme-rockets');
  await see(list.locator('tbody tr').nth(1).locator('td').nth(2)).toHaveText('1');
  await page.getByLabel('Search by name or slug').fill('globex-corp');
  await page.getByRole('button', { name: 'Search' }).click();
  await see(list.locator('tbody tr')).toHaveCount(1);
  await see(list).toContainText('Globex Corporation');
  await page.getByLabel('Search by name or slug').fill('Rockets');
  await page.getByRole('button', { name: 'Search' }).click();
  await see(list.locator('tbody tr')).toHaveCount(1);
  await see(list).toContainText('Acme Rockets');
  await page.getByLabel('Search by name or slug').fill('nothing-like-it');
  await page.getByRole('button', { name: 'Search' }).click();
  await see(page.getByText("No organization's name or slug contains “nothing-like-it”.")).toBeVisible();
  await page.getByLabel('Search by name or slug').fill('acme');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'Acme Rockets' }).click();

  // The organization: facts, metadata (both), its owner, the invitation, no domain.
  await see(page.getByRole('heading', { name: 'Acme Rockets', level: 1 })).toBeVisible();
  await see(page.getByTestId('public-metadata')).toContainText('"tier": "gold"');
  await see(page.getByTestId('private-metadata')).toContainText('"crm_id": "C-42"');
  await see(page.getByTestId('member-limit')).toContainText("(the project's default)");
  await see(page.getByText('No domains.')).toBeVisible();
  const members = page.getByRole('table', { name: 'Members, oldest first' });
  await see(members.locator('tbody tr')).toHaveCount(1);
  await see(members).toContainText('Ada Lovelace');
  expect(await page.getByLabel('Role of ada@rockets.example').inputValue()).toBe('owner');

  // Add a member by email: an address no user of the project has is refused with the API's message.
  // (The test clock stands still unless moved: a second later, she is the newer member.)
  t.clock.advanceSeconds(1);
  const addForm = page.getByRole('form', { name: 'Add member' });
  await addForm.getByLabel('Email', { exact: true }).fill('nobody@rockets.example');
  await addForm.getByRole('button', { name: 'Add member' }).click();
  await see(addForm.getByRole('alert')).toContainText('No such user');
  await addForm.getByLabel('Email', { exact: true }).fill('bea@rockets.example');
  await addForm.getByRole('button', { name: 'Add member' }).click();
  await see(status()).toContainText('bea@rockets.example added as Member.');
  await see(members.locator('tbody tr')).toHaveCount(2);
  expect(await page.getByLabel('Role of bea@rockets.example').inputValue()).toBe('member');
  expect(await membersOf(project, acme.id)).toEqual([
    ['ada@rockets.example', 'owner'],
    ['bea@rockets.example', 'member'],
  ]);

  // Change her role.
  await page.getByLabel('Role of bea@rockets.example').selectOption('admin');
  await see(status()).toContainText('bea@rockets.example is now Admin.');
  expect(await membersOf(project, acme.id)).toEqual([
    ['ada@rockets.example', 'owner'],
    ['bea@rockets.example', 'admin'],
  ]);

  // The only owner cannot be demoted: the API's message, and the selector back on owner.
  await page.getByLabel('Role of ada@rockets.example').selectOption('member');
  await see(page.getByRole('alert').first()).toContainText('An organization keeps at least one owner: make someone else owner first');
  await expect.poll(() => page.getByLabel('Role of ada@rockets.example').inputValue()).toBe('owner');
  expect(await membersOf(project, acme.id)).toEqual([
    ['ada@rockets.example', 'owner'],
    ['bea@rockets.example', 'admin'],
  ]);

  // Remove her, after the confirmation.
  const beaRow = members.getByRole('row').filter({ hasText: 'bea@rockets.example' });
  await beaRow.getByRole('button', { name: 'Remove bea@rockets.example' }).click();
  await see(beaRow.getByRole('group', { name: 'Remove bea@rockets.example?' })).toContainText('They no longer belong to this organization.');
  await beaRow.getByRole('button', { name: 'Yes, remove' }).click();
  await see(status()).toContainText('bea@rockets.example removed.');
  await see(members.locator('tbody tr')).toHaveCount(1);
  expect(await membersOf(project, acme.id)).toEqual([['ada@rockets.example', 'owner']]);

  // Revoke the pending invitation.
  const invitations = page.getByRole('table', { name: 'Invitations, newest first' });
  const carolRow = invitations.getByRole('row').filter({ hasText: 'carol@rockets.example' });
  await see(carolRow).toContainText('pending');
  await carolRow.getByRole('button', { name: 'Revoke the invitation of carol@rockets.example' }).click();
  await carolRow.getByRole('button', { name: 'Yes, revoke' }).click();
  await see(status()).toContainText('The invitation of carol@rockets.example is revoked.');
  await see(carolRow).toContainText('revoked');
  await see(carolRow.getByRole('button')).toHaveCount(0);
  const after = await project.client.serverOrganizations.listInvitations({ params: { orgId: acme.id } });
  if (after.status !== 200) throw new Error(`invitations: ${after.status}`);
  expect(after.body.invitations.map((i) => [i.email, i.status])).toEqual([['carol@rockets.example', 'revoked']]);

  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, 'organization.png'), fullPage: true });
  expect(cspErrors).toEqual([]);
});

it("edits a role's permissions (an invalid one refused), adds a custom role and deletes it once no member holds it; switches the settings", async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Roles shop' });
  const ada = await t.seedUser(project.id, { email: 'ada@roles.example' });
  const bea = await t.seedUser(project.id, { email: 'bea@roles.example' });
  const org = await createOrganization(project, { name: 'Initech', owner_user_id: ada.id });

  await open(`/projects/${project.id}/organizations`, 'Organizations');
  await page.getByRole('navigation', { name: 'Organizations' }).getByRole('link', { name: 'Roles & settings' }).click();
  await see(page.getByRole('heading', { name: 'Roles & settings', level: 1 })).toBeVisible();
  const roles = page.getByRole('table', { name: 'Roles' });
  const row = (key: string) => roles.locator('tbody tr').filter({ has: page.locator('td:first-child code', { hasText: new RegExp(`^${key}$`) }) });
  await see(roles.locator('tbody tr')).toHaveCount(3);
  await see(row('owner')).toContainText('read-only');
  await see(page.getByRole('button', { name: 'Edit role owner' })).toHaveCount(0);
  await see(row('admin')).toContainText('org:members:manage');

  // Edit member's permissions (comma- and newline-separated).
  await page.getByRole('button', { name: 'Edit role member' }).click();
  const edit = page.getByRole('form', { name: 'Edit role member' });
  await edit.getByLabel('Description').fill('Reads the reports');
  await edit.getByLabel('Permissions (separated by commas or new lines)').fill('reports:read, reports:export\ninvoices:read');
  await edit.getByRole('button', { name: 'Save role' }).click();
  await see(status()).toContainText('Role Member saved.');
  await see(page.getByRole('form', { name: 'Edit role member' })).toHaveCount(0);
  await see(row('member')).toContainText('reports:export');
  await see(row('member')).toContainText('Reads the reports');
  const member = (await rolesOf(project)).find((r) => r.key === 'member');
  expect(member).toMatchObject({ description: 'Reads the reports', permissions: ['invoices:read', 'reports:export', 'reports:read'] });

  // An invalid permission: the server's message, and nothing changes.
  await page.getByRole('button', { name: 'Edit role member' }).click();
  await edit.getByLabel('Permissions (separated by commas or new lines)').fill('reports:read\nReports Everything');
  await edit.getByRole('button', { name: 'Save role' }).click();
  await see(edit.getByRole('alert')).toContainText('Invalid permission');
  expect((await rolesOf(project)).find((r) => r.key === 'member')?.permissions).toEqual(['invoices:read', 'reports:export', 'reports:read']);
  await edit.getByRole('button', { name: 'Cancel' }).click();
  await see(page.getByRole('form', { name: 'Edit role member' })).toHaveCount(0);

  // A custom role.
  const add = page.getByRole('form', { name: 'Add a custom role' });
  await add.getByLabel('Key').fill('billing-viewer');
  await add.getByLabel('Name').fill('Billing viewer');
  await add.getByLabel('Description').fill('Sees invoices');
  await add.getByLabel('Permissions (separated by commas or new lines)').fill('invoices:read');
  await add.getByRole('button', { name: 'Add role' }).click();
  await see(status()).toContainText('Role Billing viewer (billing-viewer) added.');
  await see(roles.locator('tbody tr')).toHaveCount(4);
  await see(row('billing-viewer')).toContainText('custom');
  expect((await rolesOf(project)).find((r) => r.key === 'billing-viewer')).toMatchObject({
    name: 'Billing viewer',
    description: 'Sees invoices',
    permissions: ['invoices:read'],
    built_in: false,
  });

  // The organization's role selectors offer it: add Bea with it.
  t.clock.advanceSeconds(1);
  await open(`/projects/${project.id}/organizations/${org.id}`, 'Initech');
  const addMember = page.getByRole('form', { name: 'Add member' });
  await addMember.getByLabel('Email', { exact: true }).fill('bea@roles.example');
  await addMember.getByLabel('Role', { exact: true }).selectOption('billing-viewer');
  await addMember.getByRole('button', { name: 'Add member' }).click();
  await see(status()).toContainText('bea@roles.example added as Billing viewer.');
  expect(await membersOf(project, org.id)).toEqual([
    ['ada@roles.example', 'owner'],
    ['bea@roles.example', 'billing-viewer'],
  ]);

  // A role a member holds is not deleted: the API's message.
  await open(`/projects/${project.id}/organization-settings`, 'Roles & settings');
  await page.getByRole('button', { name: 'Delete role billing-viewer' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await see(page.getByRole('alert').first()).toContainText('Members hold this role: give them another one first');
  await see(roles.locator('tbody tr')).toHaveCount(4);
  expect((await rolesOf(project)).map((r) => r.key)).toContain('billing-viewer');

  // Once nobody holds it, it is deleted.
  const removed = await project.client.serverOrganizations.removeMember({ params: { orgId: org.id, userId: bea.id } });
  expect(removed.status).toBe(200);
  await page.getByRole('button', { name: 'Delete role billing-viewer' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await see(status()).toContainText('Role Billing viewer deleted.');
  await see(roles.locator('tbody tr')).toHaveCount(3);
  expect((await rolesOf(project)).map((r) => r.key)).toEqual(['owner', 'admin', 'member']);

  // The settings: each switch saves at once; the default member limit with its button.
  const before = await settingsOf(project.id);
  const creation = page.getByRole('switch', { name: /Users may create organizations/ });
  expect(await creation.isChecked()).toBe(before.allow_user_creation);
  await creation.click();
  await see(status()).toContainText(`Users may create organizations: ${before.allow_user_creation ? 'off' : 'on'}.`);
  await expect.poll(() => creation.isChecked()).toBe(!before.allow_user_creation);
  expect((await settingsOf(project.id)).allow_user_creation).toBe(!before.allow_user_creation);

  const required = page.getByRole('switch', { name: /Organizations are required/ });
  expect(await required.isChecked()).toBe(before.required);
  await required.click();
  await see(status()).toContainText(`Organizations are required: ${before.required ? 'off' : 'on'}.`);
  expect((await settingsOf(project.id)).required).toBe(!before.required);

  const limit = before.default_member_limit === 25 ? 26 : 25;
  await page.getByLabel(/Default member limit/).fill(String(limit));
  await page.getByRole('button', { name: 'Save member limit' }).click();
  await see(status()).toContainText(`Default member limit: ${limit}.`);
  expect(await settingsOf(project.id)).toEqual({ allow_user_creation: !before.allow_user_creation, required: !before.required, default_member_limit: limit });

  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, 'organization-roles.png'), fullPage: true });

  // The organization without a limit of its own shows the project's new default.
  await open(`/projects/${project.id}/organizations/${org.id}`, 'Initech');
  await see(page.getByTestId('member-limit')).toContainText(`${limit} (the project's default)`);

  // At a phone's width neither view scrolls sideways (their tables scroll inside their own box).
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    const sideways = () =>
      page.evaluate(() => {
        const view = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
        return view.document.documentElement.scrollWidth - view.innerWidth;
      });
    expect(await sideways()).toBeLessThanOrEqual(0);
    await open(`/projects/${project.id}/organization-settings`, 'Roles & settings');
    await see(roles.locator('tbody tr')).toHaveCount(3);
    expect(await sideways()).toBeLessThanOrEqual(0);
  } finally {
    await page.setViewportSize({ width: 1100, height: 900 });
  }
  expect(cspErrors).toEqual([]);
});

it('pages the list: 25 organizations, then "Load more" the rest; a search starts over', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Many teams' });
  const owner = await t.seedUser(project.id, { email: 'owner@teams.example' });
  for (let i = 0; i < 27; i++) await createOrganization(project, { name: `Team ${i}`, slug: `team-${i}`, owner_user_id: owner.id });
  await open(`/projects/${project.id}/organizations`, 'Organizations');
  const rows = page.getByRole('table', { name: 'Organizations, newest first' }).locator('tbody tr');
  await see(rows).toHaveCount(25);
  await page.getByRole('button', { name: 'Load more organizations' }).click();
  await see(rows).toHaveCount(27);
  await see(page.getByRole('button', { name: 'Load more organizations' })).toHaveCount(0);
  const names = await rows.getByRole('link').allTextContents();
  expect(new Set(names)).toEqual(new Set(Array.from({ length: 27 }, (_, i) => `Team ${i}`)));
  // team-1 and team-10 to team-19.
  await page.getByLabel('Search by name or slug').fill('team-1');
  await page.getByRole('button', { name: 'Search' }).click();
  await see(rows).toHaveCount(11);
  const listed = await project.client.serverOrganizations.list({ query: { search: 'team-1', limit: 100 } });
  if (listed.status !== 200) throw new Error(`list: ${listed.status}`);
  expect(new Set(await rows.getByRole('link').allTextContents())).toEqual(new Set(listed.body.organizations.map((o) => o.name)));
  expect(cspErrors).toEqual([]);
});
