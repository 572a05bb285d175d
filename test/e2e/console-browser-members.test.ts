import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';
import { linkOf, startTestSmtp, type TestSmtp } from '../support/smtp';

/**
 * The Members and Accounts pages in a real browser against the real server (one server, one
 * browser, the in-process SMTP server): an operator invites a member to one project; the member
 * opens the link from the mail, sees only that project, and sets a password.
 */
let smtp: TestSmtp;
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  smtp = await startTestSmtp();
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ env: { SMTP_URL: smtp.url } }));
}, 120_000);
afterAll(async () => {
  await walk?.close();
  await smtp?.close();
});

it('an operator invites a member to one project; the member opens the mailed link, sees only that project and sets a password', async (ctx) => {
  if (!browser) return ctx.skip();
  const shared = await t.createProject({ name: 'Shared app' });
  const hidden = await t.createProject({ name: 'Hidden app' });
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'inviter@example.com', role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();

  await page.goto(`${t.baseUrl}/dashboard/projects/${shared.id}/members`);
  await see(page.getByRole('heading', { name: 'Members' })).toBeVisible();
  await page.getByLabel('Email').fill('not an address');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await see(page.getByRole('alert').first()).toContainText('Invalid email address');
  await page.getByLabel('Email').fill('teammate@example.com');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await see(page.getByRole('status').first()).toContainText('Invitation sent to teammate@example.com');
  const pending = page.getByRole('table', { name: 'Pending invitations' });
  await see(pending).toContainText('teammate@example.com');
  await see(pending).toContainText('inviter@example.com');

  const mail = await smtp.waitFor('teammate@example.com');
  expect(mail.subject).toBe('You are invited to Shared app on Tollgate');

  // The invitee, in a browser of their own.
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const invitee = await context.newPage();
  await invitee.goto(linkOf(mail));
  await see(invitee.getByRole('heading', { name: 'Account' })).toBeVisible();
  await see(invitee.getByText('teammate@example.com · member')).toBeVisible();
  expect(invitee.url()).not.toContain('token');
  await invitee.getByLabel('New password').fill('teammate pass 1');
  await invitee.getByRole('button', { name: 'Set password' }).click();
  await see(invitee.getByRole('status')).toContainText('Password saved.');

  await invitee.getByRole('link', { name: 'Projects' }).click();
  await see(invitee.getByRole('link', { name: 'Shared app' })).toBeVisible();
  await see(invitee.getByRole('link', { name: 'Hidden app' })).toHaveCount(0);
  await invitee.goto(`${t.baseUrl}/dashboard/projects/${hidden.id}`);
  await see(invitee.getByRole('alert').first()).toContainText('Project not found');
  await see(invitee.getByRole('link', { name: 'Accounts' })).toHaveCount(0);
  await context.close();

  // The operator's page now shows the member, and the invitation is no longer pending.
  await page.reload();
  const members = page.getByRole('table', { name: 'Members' });
  await see(members).toContainText('teammate@example.com');
  await see(page.getByText('No pending invitations.')).toBeVisible();
  await page.getByLabel('Email').fill('second@example.com');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await see(page.getByRole('table', { name: 'Pending invitations' })).toContainText('second@example.com');
  await page.screenshot({ path: path.join(SHOTS, 'members.png'), fullPage: true });

  // Revoke, then remove, each after a confirmation.
  const invitationRow = page.getByRole('row').filter({ hasText: 'second@example.com' });
  await invitationRow.getByRole('button', { name: 'Revoke the invitation of second@example.com' }).click();
  await invitationRow.getByRole('button', { name: 'Yes, revoke' }).click();
  await see(page.getByText('No pending invitations.')).toBeVisible();
  const memberRow = page.getByRole('row').filter({ hasText: 'teammate@example.com' });
  await memberRow.getByRole('button', { name: 'Remove teammate@example.com' }).click();
  await memberRow.getByRole('button', { name: 'Yes, remove' }).click();
  await see(page.getByText('No members yet: only operators see this project.')).toBeVisible();

  // The Accounts page: every account, and a sign-in link shown once.
  await page.getByRole('link', { name: 'Accounts' }).click();
  await see(page.getByRole('heading', { name: 'Accounts' })).toBeVisible();
  const teammate = page.getByRole('row').filter({ hasText: 'teammate@example.com' });
  await see(teammate).toContainText('member');
  await teammate.getByRole('button', { name: 'Make a sign-in link for teammate@example.com' }).click();
  await see(page.getByTestId('secret')).toContainText(`${t.baseUrl}/dashboard/link#token=tgl_`);
  await page.screenshot({ path: path.join(SHOTS, 'accounts.png'), fullPage: true });
  expect(cspErrors).toEqual([]);
});
