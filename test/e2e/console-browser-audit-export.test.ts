import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditEntry, userActor } from '../../application/audit/audit-log';
import { AUDIT_EXPORT_CSV_COLUMNS } from '../../contract/admin';
import type { TestApp } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * The Audit log page's Download in Chromium against the real server: the operator picks a range
 * and a format, the browser downloads the export through the console's session (a link, not a
 * fetch into the page), and the file holds the range's entries and nothing else.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page;

beforeAll(async () => {
  ({ t, browser, page } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(async () => {
  await walk?.close();
});

const open = consoleOpener(() => walk, 'downloads@example.com');

it('downloads the chosen range as CSV and as NDJSON, with the entries of those days only', async (ctx) => {
  if (!browser) return ctx.skip();
  const projectId = (await t.createProject({ name: 'Downloads' })).id;
  const ada = await t.seedUser(projectId, { email: 'ada@example.com' });
  // Three days ago: the project's own creation (today) is outside the range.
  const day = new Date(t.clock.now().getTime() - 3 * 86_400_000).toISOString().slice(0, 10);
  const origin = { ip: '203.0.113.9', userAgent: 'Agent, with "quotes"', requestId: 'req-download' };
  const at = (ms: number) => new Date(Date.parse(`${day}T00:00:00Z`) + ms);
  t.tollgate.core.audit.record(auditEntry(at(1000), projectId, 'user.sign_in', { actor: userActor(ada.id), origin, details: { provider: 'email' } }));
  t.tollgate.core.audit.record(auditEntry(at(2000), projectId, 'token.refresh', { actor: userActor(ada.id), origin }));
  // The day before the range: not in the file.
  t.tollgate.core.audit.record(auditEntry(at(-1000), projectId, 'user.sign_up', { actor: userActor(ada.id), origin }));
  await t.tollgate.core.audit.flush();

  await open(`/projects/${projectId}/audit`, 'Audit log');
  const panel = page.getByRole('form', { name: 'Download' });
  await panel.getByLabel('From (UTC date)').fill(day);
  await panel.getByLabel('To (UTC date, included)').fill(day);
  await see(panel.getByRole('link', { name: 'Download CSV' })).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, 'audit-download.png'), fullPage: true });

  const csvDownload = page.waitForEvent('download');
  await panel.getByRole('link', { name: 'Download CSV' }).click();
  const csv = await csvDownload;
  expect(csv.suggestedFilename()).toMatch(new RegExp(`^audit-${projectId}-${day.replace(/-/g, '')}T000000Z-\\d{8}T000000Z\\.csv$`));
  const text = await readFile((await csv.path())!, 'utf8');
  const lines = text.split('\r\n');
  expect(lines[0]).toBe(AUDIT_EXPORT_CSV_COLUMNS.join(','));
  expect(lines.slice(1, -1).map((l) => l.split(',')[2])).toEqual(['user.sign_in', 'token.refresh']);
  expect(lines[1]).toContain(`user,${ada.id},ada@example.com,,,,${ada.id},203.0.113.9,"Agent, with ""quotes""",req-download,"{""provider"":""email""}"`);
  expect(lines.at(-1)).toBe('');

  await panel.getByLabel('Format').selectOption('ndjson');
  const ndjsonDownload = page.waitForEvent('download');
  await panel.getByRole('link', { name: 'Download NDJSON' }).click();
  const ndjson = await ndjsonDownload;
  expect(ndjson.suggestedFilename()).toMatch(/\.ndjson$/);
  const entries = (await readFile((await ndjson.path())!, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { action: string; user_agent: string; actor_name: string });
  expect(entries.map((e) => [e.action, e.user_agent, e.actor_name])).toEqual([
    ['user.sign_in', 'Agent, with "quotes"', 'ada@example.com'],
    ['token.refresh', 'Agent, with "quotes"', 'ada@example.com'],
  ]);

  // Both downloads are in the audit log, by this console account.
  await t.tollgate.core.audit.flush();
  const exported = await t.inContext(() => t.tollgate.audit.listAuditEntries({ projectId, action: 'audit.exported' }));
  if (!exported.ok) throw new Error(exported.error);
  expect(exported.value.entries.map((e) => [e.actorName, e.details.format])).toEqual([
    ['downloads@example.com', 'ndjson'],
    ['downloads@example.com', 'csv'],
  ]);
});
