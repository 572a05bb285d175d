import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';
import { authenticatorApp } from './mfa-helpers';

/**
 * Two-step sign-in through the console's pages in Chromium: an operator sets a password and an
 * authenticator app on the Account page (scanning is replaced by the key the page shows), signs
 * out, signs in with email, password and a code (a wrong code first), and turns the app off.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk());
}, 120_000);
afterAll(() => walk?.close());

const codeNow = (secret: string) => authenticatorApp(secret).generate({ timestamp: t.clock.now().getTime() });

it('an operator turns on an authenticator app, then signs in with a code; a wrong code is refused; it turns the app off', async (ctx) => {
  if (!browser) return ctx.skip();
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'twostep@example.com', role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();

  await page.getByRole('link', { name: 'Account', exact: true }).click();
  await see(page.getByRole('heading', { name: 'Account', exact: true })).toBeVisible();
  await page.getByLabel('New password').fill('console pass 1');
  await page.getByRole('button', { name: 'Set password' }).click();
  await see(page.getByText('Password saved.')).toBeVisible();

  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await see(page.getByRole('img', { name: 'QR code of the authenticator app secret' })).toBeVisible();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  await page.screenshot({ path: path.join(SHOTS, 'account-totp.png'), fullPage: true });
  await page.getByLabel('Code from the app').fill('000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await see(page.getByRole('alert')).toContainText('Wrong code, or a code already used');
  await page.getByLabel('Code from the app').fill(codeNow(secret));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await see(page.getByRole('status').filter({ hasText: 'Two-step sign-in is on' })).toBeVisible();
  await see(page.getByText('Signing in asks for a code from your authenticator app.')).toBeVisible();
  t.clock.advanceSeconds(30);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await see(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await page.getByLabel('Email').fill('twostep@example.com');
  await page.getByLabel('Password').fill('console pass 1');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await see(page.getByRole('heading', { name: 'Two-step sign-in' })).toBeVisible();
  // The code field has the focus, for the keyboard and screen readers.
  await see(page.getByLabel('Code from your authenticator app')).toBeFocused();
  await page.keyboard.type('123456');
  await page.keyboard.press('Enter');
  await see(page.getByRole('alert')).toContainText('Wrong code, or a code already used');
  await page.screenshot({ path: path.join(SHOTS, 'sign-in-totp.png'), fullPage: true });
  await page.getByLabel('Code from your authenticator app').fill(codeNow(secret));
  await page.getByRole('button', { name: 'Verify' }).click();
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
  t.clock.advanceSeconds(30);

  await page.getByRole('link', { name: 'Account', exact: true }).click();
  await page.getByLabel('Current code, to turn it off').fill(codeNow(secret));
  await page.getByRole('button', { name: 'Turn off' }).click();
  await see(page.getByRole('status').filter({ hasText: 'Two-step sign-in is off' })).toBeVisible();
  await see(page.getByRole('button', { name: 'Set up an authenticator app' })).toBeVisible();
  expect(cspErrors).toEqual([]);
});

it('a one-time link of an account with an app asks for the code before it signs in', async (ctx) => {
  if (!browser) return ctx.skip();
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'linked@example.com', role: 'operator', password: 'linked pass 1' }));
  if (!created.ok) throw new Error(created.error);
  const id = created.value.account.id;
  const setup = await t.inContext(() => t.tollgate.admin.console.totp.start({ id, email: 'linked@example.com' }));
  if (!setup.ok) throw new Error(setup.error);
  const confirmed = await t.inContext(() => t.tollgate.admin.console.totp.confirm({ id, email: 'linked@example.com' }, codeNow(setup.value.secret)));
  expect(confirmed.ok).toBe(true);
  t.clock.advanceSeconds(30);

  const link = await t.inContext(() => t.tollgate.admin.console.issueSignInLinkByEmail('linked@example.com'));
  if (!link.ok) throw new Error(link.error);
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const fresh = await context.newPage();
  await fresh.goto(t.tollgate.admin.console.signInLinkUrl(link.value.token));
  await see(fresh.getByLabel('Code from your authenticator app')).toBeVisible();
  await fresh.getByLabel('Code from your authenticator app').fill(codeNow(setup.value.secret));
  await fresh.getByRole('button', { name: 'Verify' }).click();
  await see(fresh.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await see(fresh.getByText('linked@example.com')).toBeVisible();
  await context.close();
});
