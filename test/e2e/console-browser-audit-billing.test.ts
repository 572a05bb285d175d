import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditEntry, userActor, userTarget } from '../../application/audit/audit-log';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * The console's Audit log and Billing pages in Chromium against the real server, on a laptop's
 * screen (1366x768): the audit log names end users by email (the id on hover) and fits the width
 * with its Details column in view; the Billing page's Sandbox clock card shows the sandbox's time
 * and how far ahead of real time it is, and shows the new time once the clock is advanced.
 */
// What the functions run in the page use of the browser's globals (the tests compile without the DOM library).
declare const window: { innerWidth: number };
declare const document: { documentElement: { scrollWidth: number }; querySelector(selector: string): { scrollWidth: number; clientWidth: number } | null };

let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page;

beforeAll(async () => {
  ({ t, browser, page } = walk = await openConsoleWalk({ runWorker: false }));
  if (browser) await page.setViewportSize({ width: 1366, height: 768 });
}, 120_000);
afterAll(async () => {
  await walk?.close();
});

/** Opens a console page as the operator (signed in with a one-time link the first time). */
const open = consoleOpener(() => walk, 'laptop@example.com');

it('the audit log at 1366x768: an end user named by email with the id on hover; no horizontal overflow; Details in view', async (ctx) => {
  if (!browser) return ctx.skip();
  const projectId = (await t.createProject({ name: 'Audited' })).id;
  const ada = await t.seedUser(projectId, { email: 'ada.lovelace-analytical-engine@example-mathematics.org', name: 'Ada' });
  const origin = { ip: '2001:db8:85a3::8a2e:370:7334', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130', requestId: 'req-audit-1' };
  const at = t.clock.now();
  // What the use cases record: a user's sign-in with its details, and settings changed about them.
  t.tollgate.core.audit.record(
    auditEntry(at, projectId, 'user.sign_in', {
      actor: userActor(ada.id),
      target: userTarget(ada.id),
      origin,
      details: { provider: 'email', method: 'password', mfa: 'totp', new_device: true },
    }),
  );
  t.tollgate.core.audit.record(
    auditEntry(at, projectId, 'project.settings.changed', {
      actor: { kind: 'admin', id: null },
      target: { kind: 'project', id: projectId },
      origin,
      details: {
        changed: [
          'mfaPolicy',
          'emailVerificationRequired',
          'sessionLifetimeSeconds',
          'callbackUrls',
          'allowedOrigins',
          'passwordMinLength',
          'notifications.new_device',
        ],
      },
    }),
  );
  await t.tollgate.core.audit.flush();

  await open(`/projects/${projectId}/audit`, 'Audit log');
  const table = page.getByRole('table');
  const signIn = table.getByRole('row').filter({ hasText: 'user.sign_in' });
  await see(signIn).toHaveCount(1);
  const cells = signIn.getByRole('cell');
  // Actor and target: the email, the raw id in the title (on hover).
  for (const column of [3, 4]) {
    await see(cells.nth(column)).toHaveText(ada.email!);
    expect(await cells.nth(column).locator('[title]').getAttribute('title')).toBe(ada.id);
    expect(await cells.nth(column).textContent()).not.toContain(ada.id);
  }
  const settings = table.getByRole('row').filter({ hasText: 'project.settings.changed' });
  await see(settings.getByRole('cell').nth(4)).toHaveText('project Audited');

  // Nothing wider than the window, and the table fits its box: no column hidden behind a scroll.
  const widths = await page.evaluate(() => {
    const wrap = document.querySelector('.table-wrap')!;
    return { page: document.documentElement.scrollWidth, inner: window.innerWidth, wrap: wrap.scrollWidth, wrapBox: wrap.clientWidth };
  });
  expect(widths.page).toBeLessThanOrEqual(widths.inner);
  expect(widths.wrap).toBeLessThanOrEqual(widths.wrapBox);
  const details = table.getByRole('columnheader', { name: 'Details' });
  const box = (await details.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(1366);
  // A long list of details stays a few lines high, the whole of it on hover.
  const long = settings.getByRole('cell').nth(6).locator('[title]');
  expect(await long.getAttribute('title')).toContain('notifications.new_device');
  const row = (await settings.boundingBox())!;
  expect(row.height).toBeLessThan(120);
  await page.screenshot({ path: path.join(SHOTS, 'audit-1366.png') });
}, 60_000);

it('the sandbox clock card shows the sandbox time and how far ahead it is, and the new time after advancing 30 days', async (ctx) => {
  if (!browser) return ctx.skip();
  const projectId = (await t.createProject({ name: 'Clocked' })).id;
  const connected = await t.inContext(() => t.tollgate.billing.connectBilling(projectId, { processor: 'sandbox' }));
  if (!connected.ok) throw new Error(connected.error);
  const utcMinute = (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
  const now = t.clock.now();

  await open(`/projects/${projectId}/billing`, 'Billing');
  const time = page.getByTestId('sandbox-time');
  await see(time).toHaveText(`Sandbox time: ${utcMinute(now)}, the same as real time.`);

  await page.getByLabel('Days', { exact: true }).fill('30');
  await page.getByRole('button', { name: 'Advance time' }).click();
  const later = new Date(now.getTime() + 30 * 86_400_000);
  await see(time).toHaveText(`Sandbox time: ${utcMinute(later)}, 30 days ahead of real time.`);
  expect(await time.locator('time').getAttribute('datetime')).toBe(later.toISOString());
  await page.screenshot({ path: path.join(SHOTS, 'billing-sandbox-clock.png') });
}, 60_000);
