import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The console's billing, webhook and member pages through the real UI against the real server
 * (one server, one browser, the Stripe-shaped test server), with a screenshot of each page.
 */
let stripe: FakeStripe;
const receiver = new WebhookReceiver(() => Date.now());
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];
let projectId: string;

beforeAll(async () => {
  [stripe] = await Promise.all([startFakeStripe(), receiver.start()]);
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ runWorker: false, env: { STRIPE_API_URL: stripe.url, STRIPE_MAX_NETWORK_RETRIES: '0' } }));
  projectId = (await t.createProject({ name: 'Shop' })).id;
}, 120_000);
afterAll(async () => {
  await walk?.close();
  await stripe?.close();
  await receiver.stop();
});

/** Opens a console page as the operator (signed in with a one-time link the first time). */
const open = consoleOpener(() => walk, 'pages@example.com');

it('billing: a bad Stripe key shows Stripe’s refusal; the sandbox connects; plans are created and reordered; ' +
  'a price is typed in minor units and shown back before it is created; a subscription’s invoice is listed', async (ctx) => {
  if (!browser) return ctx.skip();
  await open(`/projects/${projectId}/billing`, 'Billing');
  await see(page.getByText('No plans yet')).toBeVisible();

  const account = stripe.createAccount();
  await page.getByRole('radio', { name: 'Stripe' }).check();
  await page.getByLabel('Secret key').fill('sk_test_notAKnownKey123');
  await page.getByLabel('Publishable key').fill(account.publishableKey);
  await page.getByLabel('Webhook signing secret').fill(account.webhookSecret);
  await page.getByRole('button', { name: 'Connect' }).click();
  await see(page.getByRole('alert')).toContainText('Stripe refused the secret key: ');

  await page.getByRole('radio', { name: /^Sandbox/ }).check();
  await page.getByRole('button', { name: 'Connect' }).click();
  await see(page.getByTestId('connection-state')).toContainText('Sandbox');
  await see(page.getByTestId('connection-state')).toContainText('mode sandbox');

  for (const [name, features] of [
    ['Pro', 'sso, audit-log'],
    ['Starter', 'export'],
  ] as const) {
    await page.getByLabel('Name', { exact: true }).last().fill(name);
    await page.locator('#new-plan-features').fill(features);
    await page.getByRole('button', { name: 'Create plan' }).click();
    await see(page.getByRole('status').first()).toContainText(`Plan ${name} created`);
  }
  const tiers = page.getByRole('list', { name: 'Plan hierarchy, lowest tier first' }).locator(':scope > li');
  await see(tiers).toHaveCount(2);
  await see(tiers.nth(0)).toContainText('Pro');
  // Keyboard: Starter moves up to the lowest tier.
  await page.getByRole('button', { name: 'Move up Starter (to a lower tier)' }).focus();
  await page.keyboard.press('Enter');
  await see(page.getByRole('status').first()).toContainText('Starter moved to tier 1 of 2.');
  await see(tiers.nth(0)).toContainText('Starter');
  // Drag and drop: Pro dragged onto Starter takes the lowest tier, then back with the button.
  await tiers.nth(1).dragTo(tiers.nth(0));
  await see(tiers.nth(0)).toContainText('Pro');
  await page.getByRole('button', { name: 'Move down Pro (to a higher tier)' }).click();
  await see(tiers.nth(0)).toContainText('Starter');

  // The amount is typed in minor units, as the CLI's --amount and the API take it (one rule), and
  // shown back formatted, live under the field and in a confirmation, before the price is created.
  const pro = page.getByRole('form', { name: 'New price of Pro' });
  const amount = pro.getByLabel('Amount (USD minor units)');
  await pro.getByLabel('Price name').fill('Monthly');
  await amount.fill('12.345');
  await see(pro.getByTestId('amount-echo')).toHaveText('Not an amount in USD minor units (1000 = $10.00)');
  await pro.getByRole('button', { name: 'Add price' }).click();
  await see(page.getByRole('alert')).toContainText('Enter the amount in USD minor units, e.g. 1000 = $10.00');
  await amount.fill('490');
  await see(pro.getByTestId('amount-echo')).toHaveText('490 = $4.90 / month');
  await pro.getByLabel('Interval').selectOption('year');
  await see(pro.getByTestId('amount-echo')).toHaveText('490 = $4.90 / year');
  await pro.getByRole('button', { name: 'Add price' }).click();
  const confirm = page.getByRole('group', { name: 'Create Monthly at 490 = $4.90 / year?' });
  await see(confirm).toBeVisible();
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await see(confirm).toHaveCount(0);
  await pro.getByLabel('Interval').selectOption('month');
  await amount.fill('1250');
  await pro.getByRole('button', { name: 'Add price' }).click();
  await page.getByRole('group', { name: 'Create Monthly at 1250 = $12.50 / month?' }).getByRole('button', { name: 'Yes, create' }).click();
  await see(page.getByRole('list', { name: 'Prices of Pro' })).toContainText('$12.50 / month');
  await page.getByRole('button', { name: 'Advance time' }).click();
  await see(page.getByRole('status').first()).toContainText('Sandbox clock now');
  await see(page.getByText('No subscriptions yet.')).toBeVisible();
  await see(page.getByText('No invoices yet.')).toBeVisible();

  const plans = await t.inContext(() => t.tollgate.billing.listPlans(projectId));
  if (!plans.ok) throw new Error(plans.error);
  expect(plans.value.map((p) => [p.name, p.position, p.features])).toEqual([
    ['Starter', 0, ['export']],
    ['Pro', 1, ['sso', 'audit-log']],
  ]);
  expect(plans.value[1]!.prices.map((p) => [p.amount, p.currency, p.interval])).toEqual([[1250, 'usd', 'month']]);

  // An end user subscribes to Pro with the sandbox's test card: the subscription and its first invoice show.
  const user = await t.seedUser(projectId, { email: 'payer@example.com' });
  const subscribed = await t.inContext(async () => {
    const project = await t.tollgate.admin.getProject(projectId);
    if (!project) throw new Error('no project');
    return t.tollgate.billing.subscribe(
      { project, user },
      { priceId: plans.value[1]!.prices[0]!.id, paymentMethodId: 'pm_card_visa', requestKey: 'console-walk' },
    );
  });
  if (!subscribed.ok) throw new Error(subscribed.error);
  await page.reload();
  const invoices = page.getByRole('table', { name: 'Invoices' });
  await see(invoices.locator('tbody tr')).toHaveCount(1);
  const row = invoices.locator('tbody tr').first();
  await see(row.getByRole('cell').nth(1)).toHaveText('payer@example.com');
  await see(row.getByRole('cell').nth(2)).toHaveText('paid');
  await see(row.getByRole('cell').nth(3)).toHaveText('New subscription');
  await see(row.getByRole('cell').nth(4)).toHaveText('$12.50');
  await see(row.getByRole('cell').nth(5)).toContainText(' – ');
  await see(page.getByRole('table', { name: 'Subscriptions' })).toContainText('$12.50 / month');
  await page.screenshot({ path: path.join(SHOTS, 'billing.png'), fullPage: true });
  // Each row names its user by email, linking to the user's page.
  await page.getByRole('table', { name: 'Subscriptions' }).getByRole('link', { name: 'payer@example.com' }).click();
  await see(page.getByRole('heading', { name: 'payer@example.com' })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe(`/dashboard/projects/${projectId}/users/${user.id}`);

  // Fifty more subscribers: the lists show 50, and "Load more" the rest (here the test clock gives
  // them all one time, so which 50 come first is the tie-break's: every user shows once in all).
  await t.inContext(async () => {
    const project = (await t.tollgate.admin.getProject(projectId))!;
    for (let i = 0; i < 50; i++) {
      const payer = await t.seedUser(projectId, { email: `payer-${i}@example.com` });
      const done = await t.tollgate.billing.subscribe(
        { project, user: payer },
        { priceId: plans.value[1]!.prices[0]!.id, paymentMethodId: 'pm_card_visa', requestKey: `page-${i}` },
      );
      if (!done.ok) throw new Error(done.error);
    }
  });
  await open(`/projects/${projectId}/billing`, 'Billing');
  for (const what of ['Subscriptions', 'Invoices'] as const) {
    const rows = page.getByRole('table', { name: what }).locator('tbody tr');
    await see(rows).toHaveCount(50);
    await page.getByRole('button', { name: `Load more ${what.toLowerCase()}` }).click();
    await see(rows).toHaveCount(51);
    const users = await rows.getByRole('link').allTextContents();
    expect(new Set(users)).toEqual(new Set(['payer@example.com', ...Array.from({ length: 50 }, (_, i) => `payer-${i}@example.com`)]));
    await see(page.getByRole('button', { name: `Load more ${what.toLowerCase()}` })).toHaveCount(0);
  }
  expect(cspErrors).toEqual([]);
}, 120_000);

it('webhooks: an endpoint is created with its secret shown once, and its Test says how the receiver answered, both ways', async (ctx) => {
  if (!browser) return ctx.skip();
  await open(`/projects/${projectId}/webhooks`, 'Webhooks');
  await see(page.getByText('No endpoints yet')).toBeVisible();
  await page.getByLabel('URL').fill(receiver.url('/console'));
  await page.getByLabel('invoice.paid').check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.getByTestId('secret').textContent())!;
  expect(secret).toMatch(/^whsec_/);
  receiver.route('/console', secret, 200);
  await page.getByRole('button', { name: 'I have kept it' }).click();

  const card = page.getByRole('listitem', { name: receiver.url('/console') });
  await card.getByRole('button', { name: `Test ${receiver.url('/console')}` }).click();
  await see(card.getByTestId('test-outcome')).toContainText('answered 200 in ');
  expect(await card.getByTestId('test-outcome').textContent()).toMatch(/^answered 200 in \d+ ms$/);
  receiver.answerWith('/console', 503);
  await card.getByRole('button', { name: `Test ${receiver.url('/console')}` }).click();
  await see(card.getByTestId('test-outcome')).toContainText('failed: answered 503 in ');
  expect(await card.getByTestId('test-outcome').textContent()).toMatch(/^failed: answered 503 in \d+ ms \(200 expected\)$/);
  await card.getByRole('button', { name: 'Delivery log' }).click();
  await see(card.getByRole('list', { name: 'Delivery log' }).locator(':scope > li')).toHaveCount(2);
  await see(card.getByRole('list', { name: 'Delivery log' })).toContainText('status 503');
  await page.screenshot({ path: path.join(SHOTS, 'webhooks.png'), fullPage: true });
  expect(receiver.at('/console').map((r) => r.validFor)).toEqual([[secret], [secret]]);
  expect(cspErrors).toEqual([]);
});
