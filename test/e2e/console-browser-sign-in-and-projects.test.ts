import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk());
}, 120_000);
afterAll(() => walk?.close());

it('an operator signs in with a one-time link, creates a project, configures it, manages API keys and signs out', async (ctx) => {
  if (!browser) return ctx.skip();
  const notFound: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404) notFound.push(r.url());
  });
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'walk@example.com', role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();

  await page.getByLabel('Name').fill('Browser app');
  await page.getByRole('button', { name: 'Create project' }).click();
  await see(page.getByTestId('secret')).toContainText('tg_');
  await page.screenshot({ path: path.join(SHOTS, 'projects.png'), fullPage: true });
  await page.getByRole('button', { name: 'I have kept it' }).click();
  await page.getByRole('link', { name: 'Browser app' }).click();
  await see(page.getByRole('heading', { name: 'Browser app: authentication' })).toBeVisible();

  const google = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Google' }) });
  await google.getByRole('switch').click();
  await see(page.getByRole('status').first()).toContainText('Google enabled.');
  // Incomplete credentials are refused at once, the console showing which field is missing.
  await google.getByLabel('Client ID').fill('google-client');
  await google.getByRole('button', { name: 'Save Google credentials' }).click();
  await see(google.getByRole('alert')).toContainText('Invalid OAuth provider credentials for google: clientSecret is missing');
  await see(google).toContainText('No credentials yet.');
  await google.getByLabel('Client secret').fill('google-secret');
  await google.getByRole('button', { name: 'Save Google credentials' }).click();
  await see(google).toContainText('Credentials are set');
  await see(page.getByTestId('redirect-google')).toHaveText(`${t.baseUrl}/api/proxy/callback/google`);

  await page.getByLabel('Add a callback URL').fill('not a url');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await see(page.getByRole('alert').first()).toContainText('absolute http(s) URL');
  await page.getByLabel('Add a callback URL').fill('https://browser.example/cb');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await see(page.getByRole('list', { name: 'Registered callback URLs' })).toContainText('https://browser.example/cb');

  await page.getByRole('radio', { name: 'required' }).check();
  await see(page.getByTestId('mfa-effect')).toContainText('Existing users are prompted to enroll at next sign-in.');
  await page.getByRole('button', { name: 'Save MFA settings' }).click();
  await see(page.getByRole('status').first()).toContainText('MFA settings saved.');
  await page.screenshot({ path: path.join(SHOTS, 'authentication.png'), fullPage: true });

  await page.getByRole('link', { name: 'API keys' }).first().click();
  await see(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await page.getByLabel('Label (optional)').fill('browser');
  await page.getByRole('button', { name: 'Create API key' }).click();
  await see(page.getByTestId('secret')).toContainText('tg_');
  await page.getByRole('button', { name: 'I have kept it' }).click();
  // Status says active or revoked; the Revoke button has its own column.
  const row = page.getByRole('row').filter({ hasText: 'browser' });
  const statusColumn = (await page.getByRole('table', { name: 'API keys' }).getByRole('columnheader').allTextContents()).indexOf('Status');
  await see(row.getByRole('cell').nth(statusColumn)).toHaveText('active');
  await row.getByRole('button', { name: /^Revoke/ }).click();
  await row.getByRole('button', { name: 'Yes, revoke' }).click();
  await see(row.getByRole('cell').nth(statusColumn)).toContainText('revoked');
  await see(row.getByRole('button')).toHaveCount(0);
  await page.screenshot({ path: path.join(SHOTS, 'api-keys.png'), fullPage: true });

  // CSRF: a state-changing call from the page without the header is refused.
  const refused = await page.evaluate(
    async () => (await fetch('/api/admin/projects', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })).status,
  );
  expect(refused).toBe(403);

  await page.setViewportSize({ width: 390, height: 800 });
  await page.screenshot({ path: path.join(SHOTS, 'api-keys-phone.png'), fullPage: true });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await see(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, 'sign-in.png'), fullPage: true });
  expect(cspErrors).toEqual([]);
  // The console has its own icon: no page asked the server for a favicon it does not have.
  expect(await page.locator('link[rel="icon"]').count()).toBe(1);
  expect(notFound.filter((u) => /favicon/.test(u))).toEqual([]);
  const project = (await t.inContext(() => t.tollgate.admin.listProjects())).find((p) => p.name === 'Browser app')!;
  expect(project.settings).toMatchObject({ enabledProviders: ['email', 'google'], mfaPolicy: 'required', callbackUrls: ['https://browser.example/cb'] });
});

it('keeps the sign-in of a one-time link when the answer to "who is signed in?" asked before it arrives after it', async (ctx) => {
  if (!browser) return ctx.skip();
  const created = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'late@example.com', role: 'operator' }));
  if (!created.ok) throw new Error(created.error);
  const context = await browser.newContext();
  const late = await context.newPage();
  // The page asks for the session (401: no cookie yet) as it redeems the link; hold that answer
  // until the redemption has been answered, as a loaded server may.
  let redeemed!: () => void;
  const redemption = new Promise<void>((resolve) => (redeemed = resolve));
  await late.route('**/api/admin/session', async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const answer = await route.fetch();
    await redemption;
    await route.fulfill({ response: answer });
  });
  late.on('response', (r) => {
    if (r.url().endsWith('/api/admin/session/link')) setTimeout(redeemed, 300);
  });
  await late.goto(t.tollgate.admin.console.signInLinkUrl(created.value.link!.token));
  await see(late.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await new Promise((r) => setTimeout(r, 800));
  expect(await late.getByRole('heading', { name: 'Projects' }).isVisible()).toBe(true);
  expect(await late.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
  await context.close();
});
