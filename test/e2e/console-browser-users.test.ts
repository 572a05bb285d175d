import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EndUser } from '../../domain/user';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * The Users and Audit log pages in a real browser against the real server (one server, one
 * browser): an operator finds a user, sees their session and MFA factor, removes the factor, signs
 * them out everywhere (their access token then fails verification) and disables them; the audit
 * log shows those actions with the operator's console account as actor. The new-device
 * notification is switched on from the Authentication page.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk());
}, 120_000);
afterAll(() => walk?.close());

/** A confirmed TOTP factor (its seed is opaque here: the page never shows one). */
async function enrollTotp(projectId: string, user: EndUser) {
  await t.inContext(() =>
    t.tollgate.core.db.query(`insert into mfa_totp_factors (user_id, project_id, secret_enc, created_at, confirmed_at) values (?, ?, 'enc:opaque', ?, ?)`, [
      user.id,
      projectId,
      t.clock.now(),
      t.clock.now(),
    ]),
  );
}

it('finds a user, removes their MFA factor, signs them out everywhere, disables them; the audit log names the console account', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Storefront' });
  const policy = await t.inContext(() => t.tollgate.admin.updateProject(project.id, { mfaPolicy: 'optional' }));
  expect(policy.ok).toBe(true);
  for (const email of ['bea@shop.example', 'carl@shop.example']) await t.seedUser(project.id, { email, provider: 'github' });
  t.clock.advanceSeconds(1);
  const ada = await t.seedUser(project.id, { email: 'Ada.Lovelace@shop.example', name: 'Ada Lovelace' });
  await enrollTotp(project.id, ada);
  await t.issueSession(project.id, ada, 'email', { ip: '203.0.113.7', userAgent: 'Firefox/140 (laptop)' });
  const verify = async (token: string) => ((await project.client.token.verify({ body: { token } })).body as { valid: boolean }).valid;

  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'operator@example.com', role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();

  // Search, then open the user.
  await page.goto(`${t.baseUrl}/dashboard/projects/${project.id}/users`);
  await see(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  await see(page.getByRole('table', { name: 'Users, newest first' }).getByRole('row')).toHaveCount(4);
  await page.screenshot({ path: path.join(SHOTS, 'users.png'), fullPage: true });
  await page.getByLabel('Search by email').fill('ada.LOVE');
  await page.getByRole('button', { name: 'Search' }).click();
  await see(page.getByRole('table', { name: 'Users, newest first' }).getByRole('row')).toHaveCount(2);
  await page.getByRole('link', { name: 'Ada.Lovelace@shop.example' }).click();
  await see(page.getByRole('heading', { name: 'Ada.Lovelace@shop.example' })).toBeVisible();

  // Their session and MFA factor; remove the factor after the confirmation says what it does.
  const sessions = page.getByRole('table', { name: 'Live sessions, most recently used first' });
  await see(sessions).toContainText('203.0.113.7');
  await see(sessions).toContainText('Firefox/140 (laptop)');
  const factors = page.getByRole('table', { name: 'MFA factors' });
  await see(factors).toContainText('Authenticator app (TOTP)');
  await page.getByRole('button', { name: 'Remove Authenticator app (TOTP)' }).click();
  await see(page.getByRole('group', { name: 'Remove Authenticator app (TOTP)?' })).toContainText('every session of the user ends');
  await page.getByRole('button', { name: 'Yes, remove' }).click();
  await see(page.getByRole('status').first()).toContainText('Authenticator app (TOTP) removed. 1 session ended.');
  await see(page.getByText('No MFA factor enrolled.')).toBeVisible();
  await see(page.getByText('No live session.')).toBeVisible();

  // A new sign-in; sign out everywhere ends it, and its access token stops verifying.
  const session = await t.issueSession(project.id, ada, 'email', { ip: '198.51.100.20', userAgent: 'Safari/18 (phone)' });
  expect(await verify(session.token)).toBe(true);
  await page.reload();
  await see(sessions).toContainText('198.51.100.20');
  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.getByRole('button', { name: 'Yes, sign out everywhere' }).click();
  await see(page.getByRole('status').first()).toContainText('Signed out everywhere. 1 session ended.');
  expect(await verify(session.token)).toBe(false);

  // Disable, after the confirmation.
  await page.getByRole('button', { name: 'Disable user' }).click();
  await page.getByRole('button', { name: 'Yes, disable' }).click();
  await see(page.getByRole('status').first()).toContainText('User disabled');
  await see(page.getByRole('button', { name: 'Enable user' })).toBeVisible();

  // The audit log: those actions, newest first, by this console account.
  await t.tollgate.core.audit.flush();
  await page.getByRole('link', { name: 'Audit log' }).click();
  await see(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  await page.getByLabel('Action (or its prefix)').fill('user');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const rows = page.getByRole('table', { name: 'Audit entries, newest first' }).getByRole('row');
  await see(rows).toHaveCount(3);
  await see(rows.nth(1)).toContainText('user.disabled');
  await see(rows.nth(1)).toContainText('operator@example.com (console)');
  await see(rows.nth(2)).toContainText('user.sign_out_everywhere');
  await page.getByLabel('Action (or its prefix)').fill('');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const all = page.getByRole('table', { name: 'Audit entries, newest first' });
  await see(all).toContainText('mfa.factor.removed');
  await see(all.getByRole('row').filter({ hasText: 'mfa.factor.removed' })).toContainText('operator@example.com (console)');
  await page.screenshot({ path: path.join(SHOTS, 'audit.png'), fullPage: true });

  // Security notifications: new_device is off by default and explained; switch it on.
  await page.getByRole('link', { name: 'Authentication' }).click();
  const newDevice = page.getByRole('switch', { name: /Sign-in from a new device/ });
  await see(page.getByText('Off by default')).toBeVisible();
  expect(await newDevice.isChecked()).toBe(false);
  expect(await page.getByRole('switch', { name: /Password changed/ }).isChecked()).toBe(true);
  await newDevice.click();
  await see(page.getByRole('status').first()).toContainText('Sign-in from a new device notification on.');
  const saved = await t.inContext(() => t.tollgate.admin.getProject(project.id));
  expect(saved?.settings.securityNotifications.new_device).toBe(true);
  expect(cspErrors).toEqual([]);
});

it('pages a search over more than a page: 25 users, then "Load more" the rest; searching again starts over', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Crowd' });
  for (let i = 0; i < 30; i++) await t.seedUser(project.id, { email: `member-${i}@crowd.example` });
  await t.seedUser(project.id, { email: 'other@elsewhere.example' });
  await page.goto(`${t.baseUrl}/dashboard/projects/${project.id}/users`);
  await see(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  await page.getByLabel('Search by email').fill('@crowd.');
  await page.getByRole('button', { name: 'Search' }).click();
  const rows = page.getByRole('table', { name: 'Users, newest first' }).locator('tbody tr');
  await see(rows).toHaveCount(25);
  await page.getByRole('button', { name: 'Load more users' }).click();
  await see(rows).toHaveCount(30);
  await see(page.getByRole('button', { name: 'Load more users' })).toHaveCount(0);
  const emails = await rows.getByRole('link').allTextContents();
  expect(new Set(emails)).toEqual(new Set(Array.from({ length: 30 }, (_, i) => `member-${i}@crowd.example`)));
  // The same search again starts from the newest page.
  await page.getByRole('button', { name: 'Search' }).click();
  await see(rows).toHaveCount(25);
  expect(cspErrors).toEqual([]);
});
