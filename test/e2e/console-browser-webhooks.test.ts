import { userSubject } from '../../domain/billing/subject';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildEvent } from '../../application/billing/record-snapshot';
import { webhookEventPublisher } from '../../apps/server/features/webhooks';
import { PostgresEventPublisher } from '../../infrastructure/persistence/postgres-billing-event.store';
import { auditEntry, userActor } from '../../application/audit/audit-log';
import { WEBHOOK_EVENT_NAMES } from '../../contract/admin';
import type { AdminBody } from '../support/api-body';
import type { TestApp } from '../support/app';
import { accessibilityViolations } from '../support/axe';
import { see } from '../support/browser';
import { consoleOpener, openConsoleWalk, type ConsoleWalk } from '../support/console-browser';
import { waitFor } from '../support/tollgate-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The console's Webhooks page in Chromium against the real server, its job worker delivering to a
 * receiver on 127.0.0.1: an endpoint card takes no room for a status it does not have, a failed
 * Test is shown as a failure (the danger colour, not the success one), and "Retry now" runs at
 * once the next attempt of a delivery waiting for a retry. The new-endpoint form offers the audit
 * log (`audit.*`) as an option of its own, saved with the endpoint's events.
 */
const receiver = new WebhookReceiver(() => Date.now());
let walk: ConsoleWalk;
let t: TestApp, browser: Browser | null, page: Page, cspErrors: string[];

beforeAll(async () => {
  await receiver.start();
  ({ t, browser, page, cspErrors } = walk = await openConsoleWalk({ runWorker: true }));
}, 120_000);
afterAll(async () => {
  await walk?.close();
  await receiver.stop();
});

it('a card has no blank status band; a failed Test is shown as a failure; Retry now sends a waiting delivery at once', async (ctx) => {
  if (!browser) return ctx.skip();
  const { core } = t.tollgate;
  const projectId = (await t.createProject({ name: 'Hooks' })).id;
  const url = receiver.url('/console-hooks');
  const created = await t.inContext(() => t.tollgate.webhooks.createEndpoint(projectId, { url }));
  if (!created.ok) throw new Error(created.error);
  receiver.route('/console-hooks', created.value.secret, 503);

  const account = await t.inContext(() => t.tollgate.admin.console.createAccount({ email: 'hooks@example.com', role: 'operator' }));
  if (!account.ok) throw new Error(account.error);
  await page.goto(t.tollgate.admin.console.signInLinkUrl(account.value.link!.token));
  await see(page.getByRole('heading', { name: 'Projects' })).toBeVisible();
  await page.goto(`${t.baseUrl}/dashboard/projects/${projectId}/webhooks`);
  const card = page.getByRole('listitem', { name: url });
  await see(card).toBeVisible();

  // Nothing to say yet: the live region is there and takes no room.
  expect((await card.getByRole('status').boundingBox())?.height).toBe(0);

  // A Test the receiver refuses is a failure, in the danger colour of errors.
  await card.getByRole('button', { name: `Test ${url}` }).click();
  const outcome = card.getByTestId('test-outcome');
  await see(outcome).toContainText('failed: answered 503 in ');
  // Computed in the page (the test's TypeScript has no DOM types): the outcome's colour, and the theme's --danger.
  const colourOf = (l: typeof outcome) =>
    l.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);
  const danger = await page.evaluate<string>(
    `(() => { const p = document.createElement('span'); p.style.color = 'var(--danger)'; document.body.append(p); ` +
      'const c = getComputedStyle(p).color; p.remove(); return c; })()',
  );
  const shown = await colourOf(outcome);
  expect(shown).toBe(danger);
  receiver.answerWith('/console-hooks', 200);
  await card.getByRole('button', { name: `Test ${url}` }).click();
  await see(outcome).toContainText('answered 200 in ');
  expect(await colourOf(outcome)).not.toBe(shown);

  // An event whose first attempt and its retry 5 s later are refused waits 5 minutes for the next.
  receiver.script('/console-hooks', 503, 503);
  const event = buildEvent(core, {
    projectId,
    type: 'invoice.paid',
    subject: userSubject(core.crypto.uuid()),
    subscriptionId: core.crypto.uuid(),
    dedupeKey: null,
    amount: 1000,
    currency: 'usd',
    data: {},
  });
  await t.inContext(() => webhookEventPublisher({ core, config: t.config }, new PostgresEventPublisher(core.db)).publish(event));
  const attemptsOf = () => receiver.at('/console-hooks').filter((r) => r.event.id === event.id);
  await waitFor(() => attemptsOf().length === 2, 'two refused attempts', 20_000);
  await card.getByRole('button', { name: 'Delivery log' }).click();
  const log = card.getByRole('list', { name: 'Delivery log' });
  const waiting = log.locator(':scope > li', { hasText: 'invoice.paid' });
  await see(waiting).toContainText('pending');
  await see(waiting).toContainText('next attempt');
  await waiting.getByRole('button', { name: 'Retry now' }).click();
  await see(outcome).toContainText('Retrying now (the next attempt was due ');
  await waitFor(() => attemptsOf().length === 3, 'the retry, now', 10_000);
  expect(attemptsOf().map((r) => r.answered)).toEqual([503, 503, 200]);
  await see(waiting).toContainText('succeeded');
  await see(waiting.getByRole('button', { name: 'Resend' })).toBeVisible();
  expect(cspErrors).toEqual([]);
}, 120_000);

const open = consoleOpener(() => walk, 'audit-hooks@example.com');

it('the audit log is an option of its own: saved as audit.* with the events, listed, and its entries delivered', async (ctx) => {
  if (!browser) return ctx.skip();
  const projectId = (await t.createProject({ name: 'Streamed' })).id;
  const ada = await t.seedUser(projectId, { email: 'ada@example.com' });
  // The project's creation and the user's are written before the endpoint exists: they are not streamed.
  await t.tollgate.core.audit.flush();
  await open(`/projects/${projectId}/webhooks`, 'Webhooks');
  const url = receiver.url('/console-siem');
  const form = page.getByRole('form', { name: 'New endpoint' });
  await form.getByLabel('URL').fill(url);
  // Every selectable type is offered, by family (billing, organizations, usage and credits).
  const events = form.getByRole('group', { name: /^Events/ });
  for (const [family, type] of [
    ['Billing', 'invoice.paid'],
    ['Organizations', 'organization.member.added'],
    ['Usage and credits', 'credits.low'],
  ] as const) {
    await see(events.getByRole('group', { name: family }).getByRole('checkbox', { name: type })).toBeVisible();
  }
  expect(await events.getByRole('checkbox').count()).toBe(WEBHOOK_EVENT_NAMES.length);
  await form.getByLabel('invoice.paid').check();
  await form.getByLabel('organization.member.added').check();
  const audit = form.getByRole('checkbox', { name: 'Audit log (audit.*)' });
  // Outside the events' fieldset, with its hint as the checkbox's description.
  expect(
    await form
      .getByRole('group', { name: /^Events/ })
      .getByRole('checkbox', { name: /audit/ })
      .count(),
  ).toBe(0);
  const hintId = await audit.getAttribute('aria-describedby');
  await see(page.locator(`[id="${hintId}"]`)).toContainText('Not part of every event');
  await audit.check();
  expect(await accessibilityViolations(page)).toEqual([]);
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.getByTestId('secret').textContent())!;
  receiver.route('/console-siem', secret, 200);
  await page.getByRole('button', { name: 'I have kept it' }).click();

  const card = page.getByRole('listitem', { name: url });
  await see(card).toContainText('Events: invoice.paid, organization.member.added, audit.*');
  // Read back through the admin API, in the console's session.
  const listed = await page.request.get(`${t.baseUrl}/api/admin/projects/${projectId}/webhooks`);
  expect(listed.status()).toBe(200);
  const { endpoints } = (await listed.json()) as AdminBody<'webhooks', 'list', 200>;
  expect(endpoints.map((e) => [e.url, e.event_types])).toEqual([[url, ['invoice.paid', 'organization.member.added', 'audit.*']]]);
  expect(await accessibilityViolations(page)).toEqual([]);

  // An entry of the project's log arrives as audit.<action>.
  const origin = { ip: '203.0.113.9', userAgent: 'test', requestId: 'req-siem' };
  t.tollgate.core.audit.record(auditEntry(t.clock.now(), projectId, 'user.sign_in', { actor: userActor(ada.id), origin }));
  await t.tollgate.core.audit.flush();
  // (The endpoint's own creation, an entry of the log too, may arrive beside it.)
  // (The receiver's event type names the billing and test events; an audit event's is audit.<action>.)
  const types = () => receiver.at('/console-siem').map((r) => ({ type: String(r.event.type), validFor: r.validFor }));
  const signIns = () => types().filter((r) => r.type === 'audit.user.sign_in');
  await waitFor(() => signIns().length === 1, 'the audit entry', 20_000);
  expect(signIns()[0]!.validFor).toEqual([secret]);
  expect(types().filter((r) => !r.type.startsWith('audit.'))).toEqual([]);
  expect(cspErrors).toEqual([]);
}, 120_000);
