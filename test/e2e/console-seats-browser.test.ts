import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp, TestProject } from '../support/app';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, SHOTS, type ConsoleWalk } from '../support/console-browser';
import { bearerCall } from '../support/bearer-call';

/**
 * Seats in the console, in Chromium against the real server: a team plan gets its seat policy in
 * the plan form, a per-seat price is typed in the price form (its refusals shown in the form) and
 * listed with its terms; an organization subscribed through the user API (?for=organization) shows
 * on its page its subscription with the seats billed, the seats used, the next invoice and the
 * invoice with its seat line; the Billing page's subscriptions show the seats; an organization with
 * no subscription says so.
 */
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page;

beforeAll(async () => {
  ({ t, browser, page } = walk = await openConsoleWalk({ runWorker: false }));
}, 120_000);
afterAll(() => walk?.close());

const open = consoleOpener(() => walk, 'seats@example.com');
const status = () => page.getByRole('status').first();

const call = bearerCall(() => t.baseUrl);

/** An organization owned by a new user, with `members` more members, and the owner's token for it. */
async function team(project: TestProject, name: string, members: number) {
  const owner = await t.seedUser(project.id, { email: `owner@${name.toLowerCase()}.example` });
  const token = (await t.issueSession(project.id, owner)).token;
  const org = await call<{ id: string }>('POST', '/api/proxy/organizations', token, { name });
  expect(org.status).toBe(201);
  for (let i = 1; i <= members; i++) {
    const m = await t.seedUser(project.id, { email: `member${i}@${name.toLowerCase()}.example` });
    expect((await call('POST', `/api/v1/organizations/${org.body.id}/members`, project.apiKey, { user_id: m.id, role: 'member' })).status).toBe(201);
  }
  const active = await call<{ token: string }>('POST', '/api/proxy/organizations/active', token, { organization_id: org.body.id });
  return { id: org.body.id, token: active.body.token };
}

it('a per-seat price made in the forms; the organization page shows its subscription, seats and invoices', async (ctx) => {
  if (!browser) return ctx.skip();
  const project = await t.createProject({ name: 'Seat shop' });
  await t.inContext(() => t.tollgate.billing.connectBilling(project.id, { processor: 'sandbox' }));
  await open(`/projects/${project.id}/billing`, 'Billing');

  // A personal plan: no seat policy. A team plan: its seat policy, shown in the plan list.
  const newPlan = page.getByRole('form', { name: 'New plan' });
  await newPlan.getByLabel('Name', { exact: true }).fill('Solo');
  await see(newPlan.getByRole('group', { name: 'Seats (per-seat prices)' })).toHaveCount(0);
  await newPlan.getByRole('button', { name: 'Create plan' }).click();
  await see(status()).toContainText('Plan Solo created');
  await newPlan.getByLabel('Name', { exact: true }).fill('Team');
  await newPlan.getByLabel('Sold to').selectOption('organizations');
  const policy = newPlan.getByRole('group', { name: 'Seats (per-seat prices)' });
  await see(policy).toBeVisible();
  await see(policy.getByRole('radio', { name: /^Automatic/ })).toBeChecked();
  await policy.getByRole('radio', { name: /^Bought/ }).check();
  await see(policy.getByLabel('Pending invitations hold a seat')).toHaveCount(0);
  await policy.getByRole('radio', { name: /^Automatic/ }).check();
  await policy.getByLabel('Pending invitations hold a seat').check();
  await policy.getByLabel('A freed seat').selectOption('immediately');
  await newPlan.getByRole('button', { name: 'Create plan' }).click();
  await see(status()).toContainText('Plan Team created');
  const teamCard = page.locator('li[data-plan="Team"]');
  await see(teamCard.getByTestId('seat-policy')).toHaveText('· Seats: automatic (the members and pending invitations); a freed seat credited at once');
  await see(page.locator('li[data-plan="Solo"]').getByTestId('seat-policy')).toHaveCount(0);

  // Edited back to the defaults: the form opens with the policy held.
  await page.getByRole('button', { name: 'Edit plan Team' }).click();
  const edit = page.getByRole('form', { name: 'Edit Team' });
  await see(edit.getByLabel('Pending invitations hold a seat')).toBeChecked();
  await edit.getByLabel('Pending invitations hold a seat').uncheck();
  await edit.getByLabel('A freed seat').selectOption('period_end');
  await edit.getByRole('button', { name: 'Save plan' }).click();
  await see(status()).toContainText('Plan Team saved.');
  await see(teamCard.getByTestId('seat-policy')).toHaveText('· Seats: automatic (the members); a freed seat billed until the period ends');

  // A per-seat price on the personal plan: the API's refusal, in the form.
  const solo = page.getByRole('form', { name: 'New price of Solo' });
  await solo.getByLabel('Price name').fill('Monthly');
  await solo.getByLabel('Amount (USD minor units)').fill('500');
  await solo.getByLabel('Per seat', { exact: true }).check();
  await solo.getByLabel('Amount per seat (USD minor units)').fill('100');
  await solo.getByRole('button', { name: 'Add price' }).click();
  await page
    .getByRole('group', { name: /^Create Monthly at/ })
    .getByRole('button', { name: 'Yes, create' })
    .click();
  await see(page.locator('li[data-plan="Solo"]').getByRole('alert')).toContainText('A per-seat price is sold to organizations');

  // The team's per-seat price: amounts typed in minor units and echoed; terms the API refuses, then good ones.
  const form = page.getByRole('form', { name: 'New price of Team' });
  await form.getByLabel('Price name').fill('Monthly');
  await form.getByLabel('Amount (USD minor units)').fill('2000');
  await form.getByLabel('Per seat', { exact: true }).check();
  const unit = form.getByLabel('Amount per seat (USD minor units)');
  await unit.fill('8.5');
  await see(form.getByTestId('unit-amount-echo')).toHaveText('Not an amount in USD minor units (1000 = $10.00)');
  await unit.fill('800');
  await see(form.getByTestId('unit-amount-echo')).toHaveText('800 = $8.00 per seat');
  await form.getByLabel('Included seats').fill('3');
  await form.getByLabel('Minimum seats').fill('5');
  await form.getByLabel('Maximum seats (optional)').fill('2');
  await form.getByRole('button', { name: 'Add price' }).click();
  await page
    .getByRole('group', { name: /^Create Monthly at/ })
    .getByRole('button', { name: 'Yes, create' })
    .click();
  await see(teamCard.getByRole('alert')).toContainText('maximum');
  await form.getByLabel('Minimum seats').fill('1');
  await form.getByLabel('Maximum seats (optional)').fill('50');
  await form.getByRole('button', { name: 'Add price' }).click();
  const confirm = page.getByRole('group', { name: 'Create Monthly at $20.00 + $8.00/seat over 3 seats / month, 1 to 50 seats?' });
  await confirm.getByRole('button', { name: 'Yes, create' }).click();
  await see(status()).toContainText('Price $20.00 + $8.00/seat over 3 seats / month added to Team.');
  await see(teamCard.getByRole('alert')).toHaveCount(0);
  await see(page.getByRole('list', { name: 'Prices of Team' })).toContainText('$20.00 + $8.00/seat over 3 seats / month · Monthly (1 to 50 seats)');
  const plans = await t.inContext(() => t.tollgate.billing.listPlans(project.id));
  if (!plans.ok) throw new Error(plans.error);
  const teamPlan = plans.value.find((p) => p.name === 'Team')!;
  expect(teamPlan.seatPolicy).toEqual({ mode: 'automatic', countInvitations: false, removal: 'period_end' });
  expect(teamPlan.prices.map((p) => [p.amount, p.seats])).toEqual([[2000, { unitAmount: 800, included: 3, minimum: 1, maximum: 50 }]]);
  expect(plans.value.find((p) => p.name === 'Solo')!.prices).toEqual([]);

  // An organization of 4 subscribes through the user API: 4 seats, 2000 + 800 for the fourth.
  const acme = await team(project, 'Acme', 3);
  const subscribed = await call<{ quantity: number }>('POST', '/api/proxy/billing/subscribe?for=organization', acme.token, {
    priceId: teamPlan.prices[0]!.id,
    paymentMethodId: 'pm_card_visa',
  });
  expect(subscribed).toMatchObject({ status: 201, body: { quantity: 4 } });
  const globex = await team(project, 'Globex', 0);

  await page.reload();
  await see(page.getByRole('table', { name: 'Subscriptions' }).locator('tbody tr')).toHaveCount(1);
  await see(page.getByRole('table', { name: 'Subscriptions' }).locator('tbody tr').first()).toContainText('$28.00 / month · 4 seats');

  await open(`/projects/${project.id}/organizations/${acme.id}`, 'Acme');
  const billing = page.getByRole('region', { name: 'Billing' });
  const sub = billing.getByTestId('org-subscription');
  await see(sub).toContainText('Team');
  await see(sub).toContainText('$28.00 / month for 4 seats ($20.00 + $8.00/seat over 3 seats) · Monthly');
  await see(sub).toContainText('active');
  await see(billing.getByTestId('org-quantity')).toHaveText('4 seats');
  await see(billing.getByTestId('org-seats')).toHaveText('4 of 4');
  await see(billing.getByTestId('org-next-invoice')).toContainText('$28.00 on ');
  const invoices = billing.getByRole('table', { name: 'Invoices of the organization, newest first' });
  await see(invoices.locator('tbody tr')).toHaveCount(1);
  const row = invoices.locator('tbody tr').first().getByRole('cell');
  await see(row.nth(1)).toHaveText('paid');
  await see(row.nth(2)).toHaveText('New subscription');
  await see(row.nth(3)).toHaveText('$28.00');
  await see(row.nth(4)).toHaveText('4 seats: $28.00');
  await see(billing.getByRole('link', { name: 'Members (4)' })).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, 'organization-billing.png'), fullPage: true });
  await billing.getByRole('link', { name: 'Members (4)' }).click();
  expect(new URL(page.url()).hash).toBe('#members');
  await see(page.getByRole('table', { name: 'Members, oldest first' }).locator('tbody tr')).toHaveCount(4);

  await open(`/projects/${project.id}/organizations/${globex.id}`, 'Globex');
  await see(page.getByRole('region', { name: 'Billing' }).getByText('No subscription.')).toBeVisible();
  await see(page.getByRole('region', { name: 'Billing' }).getByText('No invoices.')).toBeVisible();
});
