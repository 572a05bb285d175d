import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp, TestProject } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { bearerCall } from '../support/bearer-call';
import { ok } from '../support/billing';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';

/**
 * The project overview on the console's project home, in Chromium against the real server: a
 * project with sign-ups, sign-ins (one refused), subscriptions on the sandbox and webhook deliveries
 * shows its charts drawn by uPlot (canvases with something painted on them) with their figures,
 * for 30 days, then 7 and 90 after switching the range; a new project shows each chart's empty
 * state. Both pass axe's WCAG 2.1 A/AA rules and the console's CSP. Screenshots: overview.png,
 * overview-empty.png (docs/images/console-overview*.png).
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page;

beforeAll(async () => {
  ({ t, browser, page } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(() => walk?.close());

const open = consoleOpener(() => walk, 'overview@example.com');
const bearer = bearerCall(() => t.baseUrl);
const PASSWORD = 'correct horse 1';

async function proxy(p: TestProject, route: string, body: unknown) {
  const res = await fetch(`${t.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
    body: JSON.stringify(body),
  });
  return res.status;
}

/** A project with a few days of activity: sign-ups and sign-ins, subscriptions, deliveries. */
async function busyProject(): Promise<TestProject> {
  const p = await t.createProject({ name: 'Busy shop' });
  await t.inContext(async () => ok(await t.tollgate.billing.connectBilling(p.id, { processor: 'sandbox' })));
  const plan = await t.inContext(async () => ok(await t.tollgate.billing.createPlan(p.id, { name: 'Pro' })));
  const price = await t.inContext(async () =>
    ok(await t.tollgate.billing.createPrice(p.id, plan.id, { name: 'Monthly', amount: 2500, currency: 'usd', interval: 'month' })),
  );
  for (let day = 0; day < 3; day++) {
    for (let i = 0; i <= day; i++) {
      const email = `u${day}-${i}@busy.example`;
      expect(await proxy(p, '/api/proxy/email/signup', { email, password: PASSWORD, callback_url: p.callbackUrl })).toBe(200);
      expect(await proxy(p, '/api/proxy/email/signin', { email, password: day === 1 ? 'wrong password 9' : PASSWORD, callback_url: p.callbackUrl })).toBe(
        day === 1 ? 401 : 200,
      );
    }
    const user = await t.seedUser(p.id, { email: `payer-${day}@busy.example` });
    const token = (await t.issueSession(p.id, user)).token;
    expect((await bearer('POST', '/api/proxy/billing/subscribe', token, { priceId: price.id, paymentMethodId: 'pm_card_visa' })).status).toBe(201);
    t.clock.advance(86_400_000);
  }
  const endpoint = crypto.randomUUID();
  const now = t.clock.now();
  await t.inContext(async () => {
    await t.tollgate.core.db.query(
      `insert into webhook_endpoints (id, project_id, url, secret_enc, secret_prefix, created_at, updated_at)
       values (?, ?, 'https://hooks.example.com/in', 'x', 'whsec_x', ?, ?)`,
      [endpoint, p.id, now, now],
    );
    for (const [status, lag] of [
      ['succeeded', 800],
      ['succeeded', 1500],
      ['failed', 60_000],
    ] as const) {
      await t.tollgate.core.db.query(
        `insert into webhook_deliveries (id, project_id, endpoint_id, event_type, payload, status, created_at, completed_at)
         values (?, ?, ?, 'user.created', '{}', ?, ?, ?)`,
        [crypto.randomUUID(), p.id, endpoint, status, now, new Date(now.getTime() + lag)],
      );
    }
  });
  await t.tollgate.core.audit.flush();
  return p;
}

const chart = (name: string) => page.locator(`figure[data-chart="${name}"]`);

/** Whether uPlot painted anything on the chart's canvas (a pixel that is not transparent). */
const painted = (name: string) =>
  chart(name)
    .locator('canvas')
    .first()
    .evaluate((node) => {
      type Canvas = {
        width: number;
        height: number;
        getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } };
      };
      const canvas = node as unknown as Canvas;
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let seen = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) seen++;
      return seen;
    });

it('draws the charts of a busy project for 30, 7 and 90 days, with their figures, and passes axe', async (ctx) => {
  if (!browser) return ctx.skip();
  const p = await busyProject();
  await open(`/projects/${p.id}`, 'Busy shop: authentication');
  const overview = page.getByRole('region', { name: 'Overview' });
  await see(overview.getByRole('radio', { name: '30 days' })).toBeChecked();
  await see(overview.locator('.overview-grid[data-range="30"]')).toBeVisible();

  for (const name of ['sign-ups', 'active-users', 'sign-ins', 'mfa', 'subscriptions', 'mrr-usd', 'webhook-success', 'webhook-lag']) {
    await see(chart(name).locator('canvas').first()).toBeVisible();
    expect(await painted(name), `${name} is drawn`).toBeGreaterThan(100);
  }
  // Nothing churned: that chart says so instead. Sign-ups: those who signed up and the seeded subscribers, 2, 3 and 4 a day.
  await see(chart('churn').getByTestId('overview-empty')).toHaveText('No churned subscriptions in the last 30 days');
  await see(chart('sign-ups')).toContainText('9 in the last 30 days');
  await see(chart('sign-ins')).toContainText('10 signed in, 2 refused');
  await see(chart('subscriptions')).toContainText('3 today: Pro 3');
  await see(chart('mrr-usd')).toContainText('$75.00 today, +$75.00 since');
  await see(chart('webhook-success')).toContainText('66.7% delivered (2 of 3), 0 pending');
  // The numbers behind each canvas, for screen readers.
  expect(await chart('sign-ups').getByRole('img').getAttribute('aria-label')).toMatch(
    /^Sign-ups, users per day, per day from .+ \(UTC\): 9 in the last 30 days$/,
  );
  await expect(chart('sign-ups').locator('.visually-hidden').textContent()).resolves.toMatch(/Sign-ups per day .*: .+: 2; .+: 3; .+: 4\./);
  expect(await accessibilityViolations(page)).toEqual([]);
  await overview.screenshot({ path: path.join(SHOTS, 'overview.png') });

  await overview.getByRole('radio', { name: '7 days' }).check();
  await see(overview.locator('.overview-grid[data-range="7"]')).toBeVisible();
  await see(chart('sign-ups')).toContainText('9 in the last 7 days');
  expect(await painted('active-users')).toBeGreaterThan(100);

  await overview.getByRole('radio', { name: '90 days' }).check();
  await see(overview.locator('.overview-grid[data-range="90"]')).toBeVisible();
  await see(chart('churn').getByTestId('overview-empty')).toHaveText('No churned subscriptions in the last 90 days');
  expect(await painted('mrr-usd')).toBeGreaterThan(100);
  expect(walk.cspErrors).toEqual([]);
});

it('shows each chart’s empty state on a new project, and passes axe', async (ctx) => {
  if (!browser) return ctx.skip();
  const p = await t.createProject({ name: 'New shop' });
  await open(`/projects/${p.id}`, 'New shop: authentication');
  const overview = page.getByRole('region', { name: 'Overview' });
  await see(overview.locator('.overview-grid[data-range="30"]')).toBeVisible();
  await see(overview.getByTestId('overview-empty')).toHaveText([
    'No sign-ups in the last 30 days',
    'No active users in the last 30 days',
    'No sign-ins in the last 30 days',
    'No users yet',
    'No active subscriptions in the last 30 days',
    'No recurring revenue in the last 30 days',
    'No churned subscriptions in the last 30 days',
    'No webhook deliveries in the last 30 days',
    'No webhook deliveries in the last 30 days',
  ]);
  await see(overview.locator('canvas')).toHaveCount(0);
  await overview.getByRole('radio', { name: '7 days' }).check();
  await see(overview.getByTestId('overview-empty').first()).toHaveText('No sign-ups in the last 7 days');
  await overview.getByRole('radio', { name: '30 days' }).check();
  await see(overview.locator('.overview-grid[data-range="30"]')).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await overview.screenshot({ path: path.join(SHOTS, 'overview-empty.png') });
  expect(walk.cspErrors).toEqual([]);
});
