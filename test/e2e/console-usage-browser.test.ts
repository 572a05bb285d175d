import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { bearerCall } from '../support/bearer-call';
import { ok } from '../support/billing';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * Usage-based billing in the console, in Chromium against the real server: meters made on the
 * Meters page (the API's refusals shown in the form) and renamed; credit packs created there (the
 * price typed in minor units and echoed, the refusals shown) and one archived after a confirmation;
 * a plan's usage limit typed in the plan form (its overage price typed in minor units and echoed)
 * and listed in words, then edited;
 * a subscriber's usage tracked by the project server with its API key, seen on the user's page as a
 * chart with its limit line and figures; credits granted from the page; a subscriber with no usage
 * reads "No usage yet"; the top consumers of a meter this month, linking to the user. The pages pass
 * axe's WCAG 2.1 A/AA rules and the console's CSP.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page;

beforeAll(async () => {
  ({ t, browser, page } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(() => walk?.close());

const open = consoleOpener(() => walk, 'usage@example.com');
const status = () => page.getByRole('status').first();
const call = bearerCall(() => t.baseUrl);

it('meters, a usage limit on a plan, a user’s usage chart after tracked usage, credits granted, and the top consumers', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Metered shop' });
  await t.inContext(async () => ok(await t.tollgate.billing.connectBilling(project.id, { processor: 'sandbox' })));

  // The Meters page, under Billing: an empty list, the API's refusals in the form, then two meters.
  await open(`/projects/${project.id}/billing`, 'Billing');
  await page.getByRole('navigation', { name: 'Billing' }).getByRole('link', { name: 'Meters & usage' }).click();
  await see(page.getByRole('heading', { level: 1, name: 'Meters', exact: true })).toBeVisible();
  await see(page.getByText('No meters yet: create the first one below.')).toBeVisible();
  const form = page.getByRole('form', { name: 'New meter' });
  await form.getByLabel('Key').fill('API calls');
  await form.getByRole('button', { name: 'Create meter' }).click();
  await see(form.getByRole('alert')).toContainText('Invalid meter key: a lower-case letter');
  await form.getByLabel('Key').fill('api_calls');
  await form.getByLabel('Name').fill('API calls');
  await form.getByLabel('Unit').fill('call');
  await form.getByRole('button', { name: 'Create meter' }).click();
  await see(status()).toHaveText('Meter api_calls created.');
  await form.getByLabel('Key').fill('api_calls');
  await form.getByRole('button', { name: 'Create meter' }).click();
  await see(form.getByRole('alert')).toHaveText('A meter of the project already has this key');
  await form.getByLabel('Key').fill('exports');
  await form.getByLabel('Name').fill('Exports');
  await form.getByLabel('Aggregation').selectOption('count');
  await form.getByRole('button', { name: 'Create meter' }).click();
  await see(status()).toHaveText('Meter exports created.');
  await see(form.getByRole('alert')).toHaveCount(0);
  const meters = page.getByRole('table', { name: 'Meters, by key' });
  await see(meters.locator('tbody tr')).toHaveCount(2);
  await see(meters.locator('tr[data-meter="api_calls"]')).toHaveText('api_callsAPI callscallsumEdit');
  await see(meters.locator('tr[data-meter="exports"]')).toHaveText('exportsExports—countEdit');

  // Its unit changed in place; a name the API refuses shows its message.
  await meters.getByRole('button', { name: 'Edit meter api_calls' }).click();
  const edit = page.getByRole('form', { name: 'Edit meter api_calls' });
  await edit.getByLabel('Name').fill('');
  await edit.getByRole('button', { name: 'Save meter' }).click();
  await see(edit.getByRole('alert')).toContainText('Invalid meter name');
  await edit.getByLabel('Name').fill('API calls');
  await edit.getByLabel('Unit').fill('calls');
  await edit.getByRole('button', { name: 'Save meter' }).click();
  await see(status()).toHaveText('Meter api_calls saved.');
  await see(meters.locator('tr[data-meter="api_calls"]')).toHaveText('api_callsAPI callscallssumEdit');

  // Credit packs: the price typed in minor units and echoed, the form's and the API's refusals, two packs, one archived.
  const packs = page.getByRole('region', { name: 'Credit packs', exact: true });
  await see(packs.getByText('No credit packs yet.')).toBeVisible();
  const newPack = packs.getByRole('form', { name: 'New credit pack' });
  await newPack.getByLabel('Meter').selectOption('api_calls');
  await newPack.getByLabel('Name').fill('500 calls');
  await newPack.getByLabel('Units', { exact: true }).fill('500');
  await newPack.getByLabel('Price (USD minor units)').fill('9.0');
  await see(newPack.getByTestId('pack-price-echo')).toHaveText('Not an amount in USD minor units (900 = $9.00)');
  await newPack.getByRole('button', { name: 'Create credit pack' }).click();
  await see(newPack.getByRole('alert')).toHaveText('Enter the price in USD minor units, e.g. 900 = $9.00.');
  await newPack.getByLabel('Price (USD minor units)').fill('900');
  await see(newPack.getByTestId('pack-price-echo')).toHaveText('900 = $9.00');
  await newPack.getByLabel('Expiry in days (optional)').fill('0');
  await newPack.getByRole('button', { name: 'Create credit pack' }).click();
  await see(newPack.getByRole('alert')).toContainText('Invalid credit pack: a meter key, a name of 1 to 100 characters');
  await newPack.getByLabel('Expiry in days (optional)').fill('30');
  await newPack.getByRole('button', { name: 'Create credit pack' }).click();
  await see(status()).toHaveText('Credit pack 500 calls created: 500 calls for $9.00.');
  await see(newPack.getByRole('alert')).toHaveCount(0);
  expect(await newPack.getByLabel('Price (USD minor units)').inputValue()).toBe('');
  t.clock.advance(60_000); // a minute later: listed first (newest first)
  await newPack.getByLabel('Meter').selectOption('exports');
  await newPack.getByLabel('Name').fill('10 exports');
  await newPack.getByLabel('Units', { exact: true }).fill('10');
  await newPack.getByLabel('Price (USD minor units)').fill('2.50');
  await see(newPack.getByTestId('pack-price-echo')).toHaveText('250 = $2.50');
  await newPack.getByRole('button', { name: 'Create credit pack' }).click();
  await see(status()).toHaveText('Credit pack 10 exports created: 10 for $2.50.');
  const packTable = packs.getByRole('table', { name: 'Credit packs, newest first' });
  await see(packTable.locator('tbody tr')).toHaveCount(2);
  await see(packTable.locator('tbody tr td:first-child')).toHaveText(['10 exports', '500 calls']);
  const packCells = async (name: string) => packTable.locator(`tr[data-pack="${name}"]`).getByRole('cell').allInnerTexts();
  expect(await packCells('500 calls')).toEqual(['500 calls', 'API calls', '500 calls', '$9.00', '30 days after purchase', 'active', 'Archive']);
  expect(await packCells('10 exports')).toEqual(['10 exports', 'Exports', '10', '$2.50', 'never', 'active', 'Archive']);

  // Archived after the confirmation (Cancel first keeps it); it stays listed, no longer for sale.
  await packTable.getByRole('button', { name: 'Archive credit pack 500 calls' }).click();
  const askArchive = packTable.getByRole('group', { name: 'Archive credit pack 500 calls?' });
  await see(askArchive).toContainText('It is no longer sold');
  await askArchive.getByRole('button', { name: 'Cancel' }).click();
  await see(askArchive).toHaveCount(0);
  await packTable.getByRole('button', { name: 'Archive credit pack 500 calls' }).click();
  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await askArchive.getByRole('button', { name: 'Yes, archive' }).click();
  await see(status()).toHaveText('Credit pack 500 calls archived: it is no longer sold.');
  await see(packTable.locator('tr[data-pack="500 calls"]').getByRole('cell').nth(5)).toHaveText('archived');
  await see(packTable.getByRole('button', { name: 'Archive credit pack 500 calls' })).toHaveCount(0);
  expect(await packCells('10 exports')).toEqual(['10 exports', 'Exports', '10', '$2.50', 'never', 'active', 'Archive']);
  const kept = await t.inContext(() => t.tollgate.billing.listCreditPacks(project.id, { activeOnly: false }));
  expect(kept.map((p) => [p.name, p.meterKey, p.units, p.amount, p.currency, p.expiresInDays, p.active])).toEqual([
    ['10 exports', 'exports', 10, 250, 'usd', null, true],
    ['500 calls', 'api_calls', 500, 900, 'usd', 30, false],
  ]);
  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);

  // A plan with a billed usage limit, typed in the plan form.
  await page.getByRole('navigation', { name: 'Billing' }).getByRole('link', { name: 'Plans & subscriptions' }).click();
  await see(page.getByRole('heading', { level: 1, name: 'Billing', exact: true })).toBeVisible();
  const newPlan = page.getByRole('form', { name: 'New plan' });
  await newPlan.getByLabel('Name', { exact: true }).fill('Pro');
  await newPlan.getByRole('button', { name: 'Add usage limit' }).click();
  const limit = newPlan.getByRole('group', { name: 'Usage limit 1', exact: true });
  await see(limit.getByLabel('Meter')).toBeVisible();
  await limit.getByLabel('Meter').selectOption('api_calls');
  await limit.getByLabel('Included').fill('5000');
  await limit.getByLabel('Past the limit').selectOption('bill');
  await newPlan.getByRole('button', { name: 'Create plan' }).click();
  await see(newPlan.getByRole('alert')).toHaveText('Usage limit 1: enter the price per package in USD minor units, e.g. 200.');
  await limit.getByLabel('Price per package (USD minor units)').fill('2.5');
  await see(limit.getByTestId('overage-price-echo')).toHaveText('Not an amount in USD minor units (200 = $2.00)');
  await limit.getByLabel('Price per package (USD minor units)').fill('200');
  await limit.getByLabel('Package size (units)').fill('1000');
  await see(limit.getByTestId('overage-price-echo')).toHaveText('200 = $2.00 per 1,000 calls');
  await newPlan.getByRole('button', { name: 'Create plan' }).click();
  await see(status()).toContainText('Plan Pro created');
  const pro = page.locator('li[data-plan="Pro"]');
  await see(pro.getByRole('list', { name: 'Usage limits of Pro' })).toHaveText('5,000 API calls / period, then $2.00 per 1,000');
  await see(newPlan.getByRole('group', { name: 'Usage limit 1', exact: true })).toHaveCount(0);

  // Edited: the form opens with the limit held; 1,000 included each calendar month.
  await page.getByRole('button', { name: 'Edit plan Pro' }).click();
  const editPlan = page.getByRole('form', { name: 'Edit Pro' });
  const held = editPlan.getByRole('group', { name: 'Usage limit 1', exact: true });
  expect(await held.getByLabel('Included').inputValue()).toBe('5000');
  expect(await held.getByLabel('Price per package (USD minor units)').inputValue()).toBe('200');
  await held.getByLabel('Included').fill('1000');
  await held.getByLabel('Resets').selectOption('month');
  await editPlan.screenshot({ path: path.join(SHOTS, 'plan-usage-limits.png') });
  await editPlan.getByRole('button', { name: 'Save plan' }).click();
  await see(status()).toContainText('Plan Pro saved.');
  await see(pro.getByRole('list', { name: 'Usage limits of Pro' })).toHaveText('1,000 API calls / month, then $2.00 per 1,000');
  const plans = await t.inContext(() => t.tollgate.billing.listPlans(project.id));
  if (!plans.ok) throw new Error(plans.error);
  expect(plans.value.map((p) => [p.name, p.usageLimits])).toEqual([
    ['Pro', [{ meter: 'api_calls', included: 1000, reset: 'month', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } }]],
  ]);

  // Two subscribers; the project server reports 1,250 calls of one of them with its API key.
  const price = await t.inContext(async () =>
    ok(await t.tollgate.billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 2000, currency: 'usd', interval: 'month' })),
  );
  const subscriber = async (email: string) => {
    const user = await t.seedUser(project.id, { email });
    const token = (await t.issueSession(project.id, user)).token;
    expect((await call('POST', '/api/proxy/billing/subscribe', token, { priceId: price.id, paymentMethodId: 'pm_card_visa' })).status).toBe(201);
    return user;
  };
  const ada = await subscriber('ada@metered.example');
  const bob = await subscriber('bob@metered.example');
  const now = t.clock.now();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const earlier = new Date(Math.max(now.getTime() - 20 * 3600_000, monthStart));
  const tracked = await call<{ accepted: number }>('POST', '/api/v1/usage/events', project.apiKey, {
    events: [
      { id: 'ada-1', subject: { type: 'user', id: ada.id }, meter: 'api_calls', value: 700, timestamp: earlier.toISOString() },
      { id: 'ada-2', subject: { type: 'user', id: ada.id }, meter: 'api_calls', value: 550 },
    ],
  });
  expect(tracked).toMatchObject({ status: 200, body: { accepted: 2 } });
  const days = new Set([earlier.toISOString().slice(0, 10), now.toISOString().slice(0, 10)]).size;

  // Her page: the chart of the month with the included amount as a limit line, and the figures.
  await open(`/projects/${project.id}/users/${ada.id}`, 'ada@metered.example');
  const usage = page.getByRole('region', { name: 'Usage' });
  await see(usage.getByTestId('usage-plan')).toContainText('Limits of the plan Pro.');
  const feature = usage.locator('article[data-feature="api_calls"]');
  await see(feature.getByRole('heading', { name: 'API calls api_calls' })).toBeVisible();
  const chart = feature.getByRole('img', { name: /^API calls: 1,250 calls used of 1,000 calls included, per day from / });
  await see(chart).toBeVisible();
  await see(chart.locator('rect.bar')).toHaveCount(days);
  await see(chart.getByTestId('usage-limit-line')).toHaveText('Included 1,000');
  await see(feature.getByTestId('usage-used')).toHaveText('1,250 calls of 1,000 calls included');
  await see(feature.getByTestId('usage-credits')).toHaveText('0 calls');
  await see(feature.getByTestId('usage-remaining')).toHaveText('0 calls');
  await see(feature.getByTestId('usage-overage')).toHaveText('250 calls');
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
  await see(feature.getByTestId('usage-resets')).toContainText(`${next.slice(0, 10)} 00:00 UTC`);
  await see(usage.getByText('No credit grants.')).toBeVisible();

  // Credits granted from the page: a refusal of the form, one of the API, then 500 calls.
  const grant = usage.getByRole('form', { name: 'Grant credits' });
  await grant.getByLabel('Feature').selectOption('api_calls');
  await grant.getByLabel('Amount (units)').fill('lots');
  await grant.getByRole('button', { name: 'Grant credits' }).click();
  await see(grant.getByRole('alert')).toHaveText('Enter the credits as a whole number of units, e.g. 500.');
  await grant.getByLabel('Amount (units)').fill('500');
  await grant.getByLabel('Expires (optional, your time)').fill('2020-01-01T00:00');
  await grant.getByRole('button', { name: 'Grant credits' }).click();
  await see(grant.getByRole('alert')).toContainText('Invalid credit expiry');
  await grant.getByLabel('Expires (optional, your time)').fill('');
  await grant.getByLabel('Reason (optional)').fill('Goodwill after the outage');
  await grant.getByRole('button', { name: 'Grant credits' }).click();
  await see(usage.getByRole('status').first()).toHaveText('Granted 500 calls of API calls.');
  await see(grant.getByRole('alert')).toHaveCount(0);
  await see(feature.getByTestId('usage-credits')).toHaveText('500 calls');
  await see(feature.getByTestId('usage-remaining')).toHaveText('500 calls');
  const grants = usage.getByRole('table', { name: 'Credit grants, newest first' });
  await see(grants.locator('tbody tr')).toHaveCount(1);
  const cells = grants.locator('tbody tr').first().getByRole('cell');
  await see(cells.nth(0)).toHaveText('API calls');
  await see(cells.nth(1)).toHaveText('500 calls');
  await see(cells.nth(2)).toHaveText('500');
  await see(cells.nth(3)).toHaveText('never');
  await see(cells.nth(4)).toHaveText('Goodwill after the outage');
  await see(cells.nth(5)).toHaveText('operator');
  const grantsKept = await call<{ grants: Array<{ amount: number; source: string; reason: string }> }>(
    'GET',
    `/api/v1/usage/credits?subjectType=user&subjectId=${ada.id}`,
    project.apiKey,
  );
  expect(grantsKept.body.grants.map((g) => [g.amount, g.source, g.reason])).toEqual([[500, 'operator', 'Goodwill after the outage']]);
  expect(await accessibilityViolations(page), 'WCAG 2.1 A/AA failures (axe-core)').toEqual([]);
  await usage.screenshot({ path: path.join(SHOTS, 'usage.png') });

  // A subscriber who has used nothing: the chart's empty state.
  await open(`/projects/${project.id}/users/${bob.id}`, 'bob@metered.example');
  const bobs = page.getByRole('region', { name: 'Usage' }).locator('article[data-feature="api_calls"]');
  await see(bobs.getByTestId('usage-empty')).toHaveText('No usage yet');
  await see(bobs.getByRole('img')).toHaveCount(0);
  await see(bobs.getByTestId('usage-used')).toHaveText('0 calls of 1,000 calls included');

  // The top consumers of this month on the Meters page, linking to the user.
  await open(`/projects/${project.id}/meters`, 'Meters');
  const top = page.getByRole('region', { name: 'Top consumers' });
  const consumers = top.getByRole('table', { name: 'Top consumers of API calls this month' });
  await see(consumers.locator('tbody tr')).toHaveCount(1);
  await see(consumers.locator('tbody tr').first()).toHaveText('ada@metered.exampleUser1,250 calls250 calls');
  await top.getByLabel('Meter').selectOption('exports');
  await see(top.getByText('No usage of Exports this month.')).toBeVisible();
  await top.getByLabel('Meter').selectOption('api_calls');
  await see(consumers.locator('tbody tr').first()).toContainText('1,250 calls');
  await page.screenshot({ path: path.join(SHOTS, 'meters.png'), fullPage: true });
  await top.getByRole('link', { name: 'ada@metered.example' }).click();
  await see(page.getByRole('heading', { level: 1, name: 'ada@metered.example', exact: true })).toBeVisible();
  expect(walk.cspErrors).toEqual([]);
});
