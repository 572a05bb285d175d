import { ok as allowed } from '../support/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BillingUseCases } from '../../application/billing/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { wireBilling } from '../../apps/server/features/billing';
import { startTestApp, type TestApp } from '../support/app';
import { TestClock } from '../support/clock';

/**
 * Billing's use cases end to end on the sandbox processor and real PostgreSQL, below HTTP: the
 * catalog, subscribe, change with proration, pause/resume/cancel, renewals by the sandbox clock,
 * the events recorded, and the one-live-subscription rule under concurrency.
 */
describe('billing use cases on the sandbox', () => {
  let app: TestApp;
  let billing: BillingUseCases;
  let project: Project;
  let basic: { planId: string; priceId: string };
  let pro: { planId: string; priceId: string };
  const clock = new TestClock(Date.UTC(2026, 0, 10, 12));

  const run = <T>(fn: () => Promise<T>) => app.inContext(fn);
  const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string; detail?: string }): T => {
    if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
    return outcome.value;
  };
  const actor = (user: EndUser) => ({ project, user });
  const key = () => app.tollgate.core.crypto.uuid();

  beforeAll(async () => {
    app = await startTestApp({ clock, runWorker: false });
    billing = wireBilling({ core: app.tollgate.core, config: app.config, console: app.tollgate.admin.console }).useCases;
    const created = await app.createProject();
    project = (await run(() => app.tollgate.admin.getProject(created.id)))!;
    await run(async () => {
      ok(await billing.connectBilling(project.id, { processor: 'sandbox' }));
      const b = ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports, export' }));
      const bp = ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
      const p = ok(await billing.createPlan(project.id, { name: 'Pro', features: ['reports', 'export', 'sso'], trialsEnabled: true }));
      const pp = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
      basic = { planId: b.id, priceId: bp.id };
      pro = { planId: p.id, priceId: pp.id };
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('lists the catalog in hierarchy order, pushed to the sandbox', async () => {
    const plans = await run(() => billing.listVisiblePlans(project));
    expect(plans.map((p) => p.name)).toEqual(['Basic', 'Pro']);
    expect(plans[0]!.prices.map((p) => p.amount)).toEqual([1000]);
    const operator = ok(await run(() => billing.listPlans(project.id)));
    expect(operator.every((p) => p.processorProductId?.startsWith('prod_sbx_'))).toBe(true);
    expect(operator.flatMap((p) => p.prices).every((p) => p.processorPriceId?.startsWith('price_sbx_'))).toBe(true);
  });

  it('subscribes, bills, entitles, changes with proration, pauses, resumes and cancels, recording each event', async () => {
    const user = await app.seedUser(project.id);
    const sub = ok(await run(() => billing.subscribe(actor(user), { priceId: basic.priceId, paymentMethodId: 'pm_card_visa', requestKey: key() })));
    expect(sub.status).toBe('active');
    expect(sub.plan.name).toBe('Basic');
    expect(sub.paymentMethod).toMatchObject({ brand: 'visa', last4: '4242' });
    expect(sub.nextInvoice).toMatchObject({ amount: 1000, currency: 'usd' });

    const invoices = ok(await run(() => billing.listInvoices(actor(user), 10)));
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: 'paid', amountPaid: 1000, subscriptionId: sub.id });
    expect(await run(() => billing.entitlements(actor(user)).then(allowed))).toEqual({ plan: 'Basic', status: 'active', features: ['reports', 'export'] });

    // Half way through the month: the upgrade charges the difference for the remaining half.
    clock.advanceSeconds(15 * 86_400);
    const preview = ok(await run(() => billing.previewChange(actor(user), pro.priceId)));
    expect(preview.amountDue).toBeGreaterThan(0);
    expect(preview.amountDue).toBeLessThan(2000);
    const changed = ok(await run(() => billing.changeSubscription(actor(user), { newPriceId: pro.priceId, requestKey: key() })));
    expect(changed.id).toBe(sub.id);
    expect(changed.plan.name).toBe('Pro');
    const afterChange = ok(await run(() => billing.listInvoices(actor(user), 10)));
    expect(afterChange).toHaveLength(2);
    expect(afterChange[0]!.amountPaid).toBe(preview.amountDue);
    expect(afterChange[0]!.lines.some((l) => l.proration)).toBe(true);
    expect((await run(() => billing.entitlements(actor(user)).then(allowed)))?.plan).toBe('Pro');

    const paused = ok(await run(() => billing.pauseSubscription(actor(user), { requestKey: key() })));
    expect(paused.status).toBe('paused');
    expect(await run(() => billing.entitlements(actor(user)).then(allowed))).toBeNull();
    const resumed = ok(await run(() => billing.resumeSubscription(actor(user), { requestKey: key() })));
    expect(resumed.status).toBe('active');

    const pending = ok(await run(() => billing.cancelSubscription(actor(user), { atPeriodEnd: true, requestKey: key() })));
    expect(pending.status).toBe('pending_cancellation');
    expect((await run(() => billing.entitlements(actor(user)).then(allowed)))?.status).toBe('pending_cancellation');
    ok(await run(() => billing.resumeSubscription(actor(user), { requestKey: key() })));
    const canceled = ok(await run(() => billing.cancelSubscription(actor(user), { atPeriodEnd: false, requestKey: key() })));
    expect(canceled.status).toBe('canceled');
    expect(ok(await run(() => billing.currentSubscription(actor(user))))).toBeNull();

    const events = ok(await run(() => billing.listEvents(project.id, { limit: 100 })))
      .filter((e) => e.userId === user.id)
      .reverse()
      .map((e) => e.type);
    expect(events).toEqual([
      'subscription.created',
      'invoice.paid',
      'subscription.updated', // change
      'invoice.paid', // proration
      'subscription.updated', // pause
      'subscription.updated', // resume
      'subscription.updated', // cancel at period end
      'subscription.updated', // resume
      'subscription.canceled',
    ]);
  });

  it('refuses a declined card with 402 semantics, records payment.failed and leaves nothing live', async () => {
    const user = await app.seedUser(project.id);
    const declined = await run(() => billing.subscribe(actor(user), { priceId: basic.priceId, paymentMethodId: 'pm_card_chargeDeclined', requestKey: key() }));
    expect(declined).toMatchObject({ ok: false, error: 'card_declined' });
    expect(ok(await run(() => billing.currentSubscription(actor(user))))).toBeNull();
    const events = ok(await run(() => billing.listEvents(project.id, { type: 'payment.failed', limit: 50 })));
    expect(events.some((e) => e.userId === user.id)).toBe(true);
  });

  it('makes one subscription and one charge out of 20 concurrent subscribes', async () => {
    const user = await app.seedUser(project.id);
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        run(() => billing.subscribe(actor(user), { priceId: basic.priceId, paymentMethodId: 'pm_card_visa', requestKey: key() })),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(
      outcomes
        .filter((o) => !o.ok)
        .map((o) => (o.ok ? '' : o.error))
        .every((e) => e === 'subscription_exists' || e === 'subscription_busy'),
    ).toBe(true);
    const invoices = ok(await run(() => billing.listInvoices(actor(user), 100)));
    expect(invoices).toHaveLength(1);
  });

  it('renews on the sandbox clock, and a failing card turns a trial into a failed renewal', async () => {
    const payer = await app.seedUser(project.id);
    ok(await run(() => billing.subscribe(actor(payer), { priceId: basic.priceId, paymentMethodId: 'pm_card_visa', requestKey: key() })));
    const failing = await app.seedUser(project.id);
    ok(await run(() => billing.updatePlan(project.id, 'Pro', { defaultTrialDays: 7 })));
    const trial = ok(
      await run(() => billing.subscribe(actor(failing), { priceId: pro.priceId, paymentMethodId: 'pm_card_chargeCustomerFail', requestKey: key() })),
    );
    expect(trial.status).toBe('trialing');

    // Day 10: the trial ended on day 7 and its first charge failed.
    ok(await run(() => billing.advanceSandbox(project.id, 10)));
    const pastDue = ok(await run(() => billing.currentSubscription(actor(failing))));
    expect(pastDue?.status).toBe('past_due');
    expect((await run(() => billing.entitlements(actor(failing)).then(allowed)))?.status).toBe('past_due');
    const failed = ok(await run(() => billing.listEvents(project.id, { type: 'payment.failed', limit: 50 })));
    expect(failed.some((e) => e.userId === failing.id && e.subscriptionId === trial.id)).toBe(true);

    // Day 32: the paying user renewed; the failing one was canceled when its 14-day grace ran out.
    ok(await run(() => billing.advanceSandbox(project.id, 22)));
    const renewed = ok(await run(() => billing.listInvoices(actor(payer), 10)));
    expect(renewed.filter((i) => i.status === 'paid')).toHaveLength(2);
    expect(ok(await run(() => billing.currentSubscription(actor(failing))))).toBeNull();
    const canceled = ok(await run(() => billing.listEvents(project.id, { type: 'subscription.canceled', limit: 50 })));
    expect(canceled.some((e) => e.subscriptionId === trial.id)).toBe(true);
  });
});
