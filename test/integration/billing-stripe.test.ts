import { ok as allowed } from '../support/billing';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BillingEvent } from '../../application/billing/billing.store';
import type { BillingUseCases } from '../../application/billing/use-cases';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import { startTestApp, type TestApp } from '../support/app';
import { TestClock } from '../support/clock';
import { startFakeStripe, type AccountKeys, type FakeStripe } from '../support/stripe/server';

/**
 * Billing's use cases end to end against the Stripe-shaped server (test/support/stripe) through the
 * real stripe client, on real PostgreSQL: connecting a Stripe account, the catalog pushed as
 * Products and Prices, subscribe, decline, change with proration, pause/resume/cancel, renewals and
 * cancellations that happen at Stripe and reach Tollgate by webhooks, Checkout, duplicate and
 * reordered webhooks, signatures, an outage, and the events recorded. The same flows as
 * billing-use-cases.test.ts on the sandbox. Stripe delivers its webhooks over HTTP to the app's
 * route, POST /api/webhooks/stripe/:projectId, registered as a webhook endpoint of each account.
 *
 * Tollgate's clock is real time: Stripe signs webhooks with the real time and Tollgate checks the
 * signature's age with its own clock. Each test has its own project and Stripe account, whose clock
 * (`fake.advance`) runs renewals and period ends.
 */

const DAY = 86_400;
const HOUR = 3600;

/** A TestClock that follows real time. */
class RealTimeClock extends TestClock {
  override now(): Date {
    return new Date();
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; detail?: string };

describe('billing use cases against the Stripe-shaped server', () => {
  let fake: FakeStripe;
  let app: TestApp;
  let billing: BillingUseCases;
  /** Delivery attempts already checked by an earlier test. */
  let attemptsSeen = 0;

  const run = <T>(fn: () => Promise<T>) => app.inContext(fn);
  const ok = <T>(outcome: Outcome<T>): T => {
    if (!outcome.ok) throw new Error(`refused: ${outcome.error} ${outcome.detail ?? ''}`);
    return outcome.value;
  };
  const key = () => app.tollgate.core.crypto.uuid();
  /** The URL Tollgate shows for the Stripe dashboard (billingStatus().webhookUrl). */
  const webhookUrl = (projectId: string) => `${app.baseUrl}/api/webhooks/stripe/${projectId}`;

  beforeAll(async () => {
    fake = await startFakeStripe();
    app = await startTestApp({ clock: new RealTimeClock(), runWorker: false, env: { STRIPE_API_URL: fake.url } });
    // The use cases the HTTP routes (the webhook route among them) call.
    billing = app.tollgate.billing;
  });

  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  afterEach(async () => {
    await fake.webhooks.settled();
    // Every parameter Tollgate sent exists for the pinned API version.
    try {
      fake.assertNoUnexpectedRequests();
    } finally {
      fake.unexpected.length = 0;
    }
    // Every delivery was answered as the contract says: 200, 400 (a signature refused on purpose)
    // or 502 (Stripe unavailable on purpose), never a fault.
    const attempts = fake.webhooks.attempts.slice(attemptsSeen);
    attemptsSeen = fake.webhooks.attempts.length;
    expect(attempts.filter((a) => ![200, 400, 502].includes(a.status)).map((a) => `${a.type} ${a.status} ${a.error ?? ''}`)).toEqual([]);
  });

  /** A project selling Basic (10/month) and Pro (30/month, trials) through its own Stripe account. */
  async function stripeProject(options: { connect?: boolean } = {}) {
    const created = await app.createProject({ callbackUrls: ['https://app.example.com/callback'] });
    const project = (await run(() => app.tollgate.admin.getProject(created.id)))!;
    const keys = fake.createAccount();
    fake.addWebhookEndpoint(keys.id, webhookUrl(project.id));
    const ids = await run(async () => {
      const b = ok(await billing.createPlan(project.id, { name: 'Basic', features: 'reports, export' }));
      const bp = ok(await billing.createPrice(project.id, 'Basic', { name: 'Monthly', amount: 1000, currency: 'usd', interval: 'month' }));
      const p = ok(await billing.createPlan(project.id, { name: 'Pro', features: ['reports', 'export', 'sso'], trialsEnabled: true }));
      const pp = ok(await billing.createPrice(project.id, 'Pro', { name: 'Monthly', amount: 3000, currency: 'usd', interval: 'month' }));
      return { basic: { planId: b.id, priceId: bp.id }, pro: { planId: p.id, priceId: pp.id } };
    });
    if (options.connect !== false) {
      ok(
        await run(() =>
          billing.connectBilling(project.id, {
            processor: 'stripe',
            secretKey: keys.secretKey,
            publishableKey: keys.publishableKey,
            webhookSecret: keys.webhookSecret,
          }),
        ),
      );
    }
    await fake.webhooks.settled();
    const actor = (user: EndUser) => ({ project, user });
    return { project, keys, ...ids, actor };
  }
  type StripeProject = Awaited<ReturnType<typeof stripeProject>>;

  const subscribe = (p: StripeProject, user: EndUser, priceId: string, card = 'pm_card_visa', requestKey = key()) =>
    run(() => billing.subscribe(p.actor(user), { priceId, paymentMethodId: card, requestKey }));

  /** The user's events, oldest first. */
  async function eventsOf(project: Project, userId: string): Promise<BillingEvent[]> {
    const all = ok(await run(() => billing.listEvents(project.id, { limit: 500 })));
    return all.filter((e) => e.userId === userId).reverse();
  }
  const typesOf = async (project: Project, userId: string) => (await eventsOf(project, userId)).map((e) => e.type);

  const stripeSubscriptions = (keys: AccountKeys) => fake.list<Stripe.Subscription>(keys.id, 'subscription');
  const stripeInvoices = (keys: AccountKeys, subscriptionId: string) =>
    fake.list<Stripe.Invoice>(keys.id, 'invoice').filter((i) => i.parent?.subscription_details?.subscription === subscriptionId && i.status !== 'draft');
  /** Stripe's id of a Tollgate subscription (its metadata names Tollgate's id). */
  const stripeIdOf = (p: StripeProject, subscriptionId: string): string => {
    const found = stripeSubscriptions(p.keys).find((s) => s.metadata.tollgate_subscription_id === subscriptionId);
    if (!found) throw new Error(`no Stripe subscription for ${subscriptionId}`);
    return found.id;
  };

  describe('connecting a Stripe account', () => {
    it('refuses a key Stripe does not know with its reason, and stores nothing', async () => {
      const p = await stripeProject({ connect: false });
      const refused = await run(() =>
        billing.connectBilling(p.project.id, {
          processor: 'stripe',
          secretKey: 'sk_test_unknownkey0000abcd',
          publishableKey: p.keys.publishableKey,
          webhookSecret: p.keys.webhookSecret,
        }),
      );
      expect(refused).toMatchObject({ ok: false, error: 'processor_rejected_key' });
      expect(refused.ok ? '' : refused.detail).toMatch(/Invalid API Key provided: sk_test_\*+abcd/);
      expect(ok(await run(() => billing.billingStatus(p.project.id)))).toBeNull();
      expect(fake.list(p.keys.id, 'product')).toEqual([]);
      // Not connected: nothing can be sold.
      const user = await app.seedUser(p.project.id);
      expect(await subscribe(p, user, p.basic.priceId)).toMatchObject({ ok: false, error: 'billing_not_connected' });
    });

    it('connects, shows the key once masked, and pushes the catalog as Products and Prices', async () => {
      const p = await stripeProject();
      const status = ok(await run(() => billing.billingStatus(p.project.id)))!;
      expect(status).toMatchObject({
        processor: 'stripe',
        connected: true,
        keyLast4: p.keys.secretKey.slice(-4),
        mode: 'test',
        accountId: p.keys.id,
        currency: 'usd',
        webhookUrl: `${app.baseUrl}/api/webhooks/stripe/${p.project.id}`,
      });
      expect(JSON.stringify(status)).not.toContain(p.keys.secretKey);
      expect(JSON.stringify(status)).not.toContain(p.keys.webhookSecret);

      const plans = ok(await run(() => billing.listPlans(p.project.id)));
      const products = fake.list<Stripe.Product>(p.keys.id, 'product');
      expect(products.map((x) => x.name).sort()).toEqual(['Basic', 'Pro']);
      for (const plan of plans) {
        const product = products.find((x) => x.id === plan.processorProductId);
        expect(product).toMatchObject({ name: plan.name, metadata: { tollgate_project_id: p.project.id, tollgate_plan_id: plan.id } });
      }
      const prices = fake.list<Stripe.Price>(p.keys.id, 'price');
      expect(prices).toHaveLength(2);
      for (const price of plans.flatMap((x) => x.prices)) {
        const stripePrice = prices.find((x) => x.id === price.processorPriceId)!;
        expect(stripePrice).toMatchObject({
          unit_amount: price.amount,
          currency: 'usd',
          recurring: expect.objectContaining({ interval: 'month' }),
          active: true,
          metadata: expect.objectContaining({ tollgate_price_id: price.id }),
        });
        expect(stripePrice.product).toBe(plans.find((x) => x.id === price.planId)!.processorProductId);
      }

      // Made after connecting: pushed at once; archived there too.
      const team = ok(await run(() => billing.createPlan(p.project.id, { name: 'Team', hidden: true })));
      const yearly = ok(await run(() => billing.createPrice(p.project.id, 'Team', { name: 'Yearly', amount: 90000, currency: 'usd', interval: 'year' })));
      const teamProduct = fake.list<Stripe.Product>(p.keys.id, 'product').find((x) => x.name === 'Team')!;
      expect(teamProduct.metadata.tollgate_plan_id).toBe(team.id);
      const teamPrice = fake.list<Stripe.Price>(p.keys.id, 'price').find((x) => x.metadata.tollgate_price_id === yearly.id)!;
      expect(teamPrice).toMatchObject({ unit_amount: 90000, recurring: expect.objectContaining({ interval: 'year' }), product: teamProduct.id });
      ok(await run(() => billing.archivePrice(p.project.id, yearly.id)));
      expect(fake.get<Stripe.Price>(p.keys.id, teamPrice.id)!.active).toBe(false);
      expect((await run(() => billing.listVisiblePlans(p.project))).map((x) => x.name)).toEqual(['Basic', 'Pro']);
    });

    it('starts afresh on another Stripe account (test keys, then live ones): catalog pushed again, customers made again, one trial still', async () => {
      const p = await stripeProject();
      ok(await run(() => billing.updatePlan(p.project.id, 'Pro', { defaultTrialDays: 7 })));
      const user = await app.seedUser(p.project.id);
      expect(ok(await subscribe(p, user, p.pro.priceId)).status).toBe('trialing');
      ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() })));
      const testProducts = fake.list<Stripe.Product>(p.keys.id, 'product').map((x) => x.id);

      // The same account again (a rotated webhook secret): nothing is pushed again.
      ok(
        await run(() =>
          billing.connectBilling(p.project.id, {
            processor: 'stripe',
            secretKey: p.keys.restrictedKey,
            publishableKey: p.keys.publishableKey,
            webhookSecret: p.keys.webhookSecret,
          }),
        ),
      );
      expect(fake.list(p.keys.id, 'product').map((x) => (x as Stripe.Product).id)).toEqual(testProducts);

      const live = fake.createAccount({ secretKey: `sk_live_${'L'.repeat(24)}`, publishableKey: `pk_live_${'L'.repeat(24)}` });
      fake.addWebhookEndpoint(live.id, webhookUrl(p.project.id));
      const connected = ok(
        await run(() =>
          billing.connectBilling(p.project.id, {
            processor: 'stripe',
            secretKey: live.secretKey,
            publishableKey: live.publishableKey,
            webhookSecret: live.webhookSecret,
          }),
        ),
      );
      expect(connected).toMatchObject({ mode: 'live', accountId: live.id });
      expect(
        fake
          .list<Stripe.Product>(live.id, 'product')
          .map((x) => x.name)
          .sort(),
      ).toEqual(['Basic', 'Pro']);
      const plans = ok(await run(() => billing.listPlans(p.project.id)));
      const livePrices = fake.list<Stripe.Price>(live.id, 'price').map((x) => x.id);
      expect(plans.flatMap((x) => x.prices).every((x) => livePrices.includes(x.processorPriceId!))).toBe(true);

      // A returning user: a customer of the live account, and no second trial.
      const again = ok(await subscribe(p, user, p.pro.priceId));
      expect(again).toMatchObject({ status: 'active', trialStart: null });
      const [liveSub] = fake.list<Stripe.Subscription>(live.id, 'subscription');
      expect(fake.get<Stripe.Customer>(live.id, liveSub!.customer as string)).toMatchObject({ email: user.email });
      const newcomer = await app.seedUser(p.project.id);
      expect(ok(await subscribe(p, newcomer, p.basic.priceId)).status).toBe('active');
      await fake.webhooks.settled();
      expect(await typesOf(p.project, newcomer.id)).toEqual(['subscription.created', 'invoice.paid']);
    });
  });

  describe('subscribing', () => {
    it('subscribes with pm_card_visa: active, a paid invoice as Stripe has it, entitlements', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      await fake.webhooks.settled();
      expect(sub).toMatchObject({ status: 'active', plan: { name: 'Basic' }, processor: 'stripe', nextInvoice: { amount: 1000, currency: 'usd' } });
      expect(sub.paymentMethod).toMatchObject({ brand: 'visa', last4: '4242' });

      const [stripeSub, ...others] = stripeSubscriptions(p.keys);
      expect(others).toEqual([]);
      expect(stripeSub).toMatchObject({
        status: 'active',
        metadata: { tollgate_project_id: p.project.id, tollgate_user_id: user.id, tollgate_subscription_id: sub.id },
      });
      expect(sub.currentPeriodEnd.getTime()).toBe(stripeSub!.items.data[0]!.current_period_end * 1000);
      const customer = fake.get<Stripe.Customer>(p.keys.id, stripeSub!.customer as string)!;
      expect(customer).toMatchObject({ email: user.email, metadata: { tollgate_project_id: p.project.id, tollgate_user_id: user.id } });

      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      const [stripeInvoice] = stripeInvoices(p.keys, stripeSub!.id);
      expect(invoices).toHaveLength(1);
      expect(invoices[0]).toMatchObject({ status: 'paid', amountPaid: 1000, amountDue: 1000, subscriptionId: sub.id, reason: 'subscription_create' });
      expect(invoices[0]!.amountPaid).toBe(stripeInvoice!.amount_paid);
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toEqual({ plan: 'Basic', status: 'active', features: ['reports', 'export'] });
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid']);
      const paid = (await eventsOf(p.project, user.id))[1]!;
      expect(paid.payload).toMatchObject({ type: 'invoice.paid', subscriptionId: sub.id, amount: 1000, currency: 'usd', userId: user.id });

      // A second subscribe is refused before Stripe is asked.
      expect(await subscribe(p, user, p.pro.priceId)).toMatchObject({ ok: false, error: 'subscription_exists' });
      expect(stripeSubscriptions(p.keys)).toHaveLength(1);
    });

    it('refuses pm_card_chargeDeclined: card_declined, payment.failed recorded, nothing live here or at Stripe', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const declined = await subscribe(p, user, p.basic.priceId, 'pm_card_chargeDeclined');
      expect(declined).toMatchObject({ ok: false, error: 'card_declined' });
      expect(declined.ok ? '' : declined.detail).toMatch(/declined/i);
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toBeNull();
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10)))).toEqual([]);
      expect(stripeSubscriptions(p.keys)).toEqual([]);
      const events = await eventsOf(p.project, user.id);
      expect(events.map((e) => e.type)).toEqual(['payment.failed']);
      expect(events[0]!.payload).toMatchObject({ amount: 1000, currency: 'usd' });

      // The same user can then subscribe with a good card.
      expect(ok(await subscribe(p, user, p.basic.priceId)).status).toBe('active');
    });

    it('collects a card with a SetupIntent (Stripe Elements), then subscribes with it', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const setup = ok(await run(() => billing.createSetupIntent(p.actor(user), key())));
      expect(setup.publishableKey).toBe(p.keys.publishableKey);
      const intentId = setup.clientSecret.split('_secret_')[0]!;
      const intent = fake.get<Stripe.SetupIntent>(p.keys.id, intentId)!;
      expect(intent).toMatchObject({ usage: 'off_session', status: 'requires_payment_method' });
      expect(fake.get<Stripe.Customer>(p.keys.id, intent.customer as string)).toMatchObject({ email: user.email });

      // The browser confirms it with the card the user typed (Elements does this with the publishable key).
      const stripe = new Stripe(p.keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
      const confirmed = await stripe.setupIntents.confirm(intentId, { payment_method: 'pm_card_mastercard' });
      expect(confirmed.status).toBe('succeeded');
      const card = confirmed.payment_method as string;

      const sub = ok(await subscribe(p, user, p.basic.priceId, card));
      expect(sub).toMatchObject({ status: 'active', paymentMethod: { brand: 'mastercard' } });
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeIdOf(p, sub.id))!.default_payment_method).toBe(card);

      // The card network updates the card: payment_method.automatically_updated reaches Tollgate.
      fake.updateCard(p.keys.id, card, { last4: '1111', exp_year: 2040 });
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.paymentMethod).toMatchObject({ last4: '1111', expYear: 2040 });
    });

    it('makes one subscription and one charge out of 20 concurrent subscribes', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => subscribe(p, user, p.basic.priceId)));
      await fake.webhooks.settled();
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok).every((o) => !o.ok && (o.error === 'subscription_exists' || o.error === 'subscription_busy'))).toBe(true);
      expect(stripeSubscriptions(p.keys)).toHaveLength(1);
      expect(fake.list<Stripe.PaymentIntent>(p.keys.id, 'payment_intent').filter((pi) => pi.status === 'succeeded')).toHaveLength(1);
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 100)))).toHaveLength(1);
    });

    it('answers an outage during subscribe with processor_unavailable and writes nothing; the retry subscribes once', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const requestKey = key();
      // stripe-node retries twice: three failures are an outage.
      fake.failNext({ method: 'POST', path: '/v1/subscriptions', count: 3 });
      const failed = await subscribe(p, user, p.basic.priceId, 'pm_card_visa', requestKey);
      expect(failed).toMatchObject({ ok: false, error: 'processor_unavailable' });
      await fake.webhooks.settled();
      expect(stripeSubscriptions(p.keys)).toEqual([]);
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
      expect(ok(await run(() => billing.listSubscriptions(p.project.id, { userId: user.id })))).toEqual({ items: [], nextCursor: null });
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10)))).toEqual([]);
      expect(await eventsOf(p.project, user.id)).toEqual([]);

      // The same request again once Stripe is back: each step replays or runs once.
      const sub = ok(await subscribe(p, user, p.basic.priceId, 'pm_card_visa', requestKey));
      await fake.webhooks.settled();
      expect(sub.status).toBe('active');
      expect(stripeSubscriptions(p.keys)).toHaveLength(1);
      expect(fake.list(p.keys.id, 'customer')).toHaveLength(1);
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid']);
    });

    it('answers an outage after Stripe made the subscription with processor_unavailable; the retry records it once', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const requestKey = key();
      fake.webhooks.pause();
      try {
        // Stripe creates and charges the subscription, then cannot be read.
        fake.failNext({ method: 'GET', path: '/v1/invoices', count: 3 });
        const failed = await subscribe(p, user, p.basic.priceId, 'pm_card_visa', requestKey);
        expect(failed).toMatchObject({ ok: false, error: 'processor_unavailable' });
        expect(stripeSubscriptions(p.keys)).toHaveLength(1);
        expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
        expect(await eventsOf(p.project, user.id)).toEqual([]);

        const sub = ok(await subscribe(p, user, p.basic.priceId, 'pm_card_visa', requestKey));
        expect(sub.status).toBe('active');
        expect(stripeSubscriptions(p.keys)).toHaveLength(1);
        expect(fake.list<Stripe.PaymentIntent>(p.keys.id, 'payment_intent').filter((pi) => pi.status === 'succeeded')).toHaveLength(1);
      } finally {
        fake.webhooks.resume();
      }
      await fake.webhooks.settled();
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid']);
    });
  });

  describe('changing, pausing, resuming and cancelling', () => {
    it('changes plan half way through the period: the preview, the prorated invoice and Stripe agree', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      fake.advance(p.keys.id, 15 * DAY);
      await fake.webhooks.settled();

      const preview = ok(await run(() => billing.previewChange(p.actor(user), p.pro.priceId)));
      const changed = ok(await run(() => billing.changeSubscription(p.actor(user), { newPriceId: p.pro.priceId, requestKey: key() })));
      await fake.webhooks.settled();
      expect(changed).toMatchObject({ id: sub.id, plan: { name: 'Pro' }, status: 'active' });
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.items.data[0]!.price.id).toBe(
        ok(await run(() => billing.listPlans(p.project.id))).find((x) => x.name === 'Pro')!.prices[0]!.processorPriceId,
      );

      const [stripeProration] = stripeInvoices(p.keys, stripeId).filter((i) => i.billing_reason === 'subscription_update');
      expect(stripeProration).toBeDefined();
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoices).toHaveLength(2);
      const proration = invoices[0]!;
      expect(proration).toMatchObject({ status: 'paid', reason: 'subscription_update' });
      expect(proration.amountPaid).toBe(stripeProration!.amount_paid);
      expect(proration.lines.some((l) => l.proration)).toBe(true);
      // Half of a 28-31 day month of the difference (2000): about 1000.
      expect(proration.amountPaid).toBeGreaterThan(800);
      expect(proration.amountPaid).toBeLessThan(1200);
      expect(preview.amountDue).toBe(proration.amountPaid);
      expect(preview.lines.map((l) => l.amount)).toEqual(proration.lines.map((l) => l.amount));

      expect((await run(() => billing.entitlements(p.actor(user)).then(allowed)))?.plan).toBe('Pro');
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'invoice.paid']);
      const events = await eventsOf(p.project, user.id);
      expect(events[3]!.payload).toMatchObject({ amount: proration.amountPaid, currency: 'usd', subscriptionId: sub.id });
    });

    it('changes plan right after a renewal, while Tollgate has not reached the new period on its clock', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      fake.advance(p.keys.id, 31 * DAY + 2 * HOUR);
      await fake.webhooks.settled();
      const renewed = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(renewed.currentPeriodStart.getTime()).toBeGreaterThan(Date.now());

      const preview = ok(await run(() => billing.previewChange(p.actor(user), p.pro.priceId)));
      const changed = ok(await run(() => billing.changeSubscription(p.actor(user), { newPriceId: p.pro.priceId, requestKey: key() })));
      await fake.webhooks.settled();
      expect(changed.plan.name).toBe('Pro');
      const [stripeProration] = stripeInvoices(p.keys, stripeId).filter((i) => i.billing_reason === 'subscription_update');
      expect(preview.amountDue).toBe(stripeProration!.amount_paid);
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 1)))[0]).toMatchObject({ reason: 'subscription_update', amountPaid: preview.amountDue });
    });

    it('pauses (no access, collection paused at Stripe) and resumes', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);

      const paused = ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
      await fake.webhooks.settled();
      expect(paused.status).toBe('paused');
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.pause_collection).toMatchObject({ behavior: 'void' });
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toBeNull();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('paused');
      expect(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() }))).toMatchObject({ ok: false, error: 'subscription_paused' });

      const resumed = ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
      await fake.webhooks.settled();
      expect(resumed.status).toBe('active');
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.pause_collection).toBeNull();
      expect((await run(() => billing.entitlements(p.actor(user)).then(allowed)))?.status).toBe('active');
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'subscription.updated']);
    });

    it('cancels at period end: entitled until Stripe ends it, then the webhook makes it canceled', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);

      const pending = ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: true, requestKey: key() })));
      await fake.webhooks.settled();
      expect(pending).toMatchObject({ status: 'pending_cancellation', cancelAtPeriodEnd: true });
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)).toMatchObject({ status: 'active', cancel_at_period_end: true });
      expect((await run(() => billing.entitlements(p.actor(user)).then(allowed)))?.status).toBe('pending_cancellation');

      // The period ends on Stripe's clock: customer.subscription.deleted reaches Tollgate.
      fake.advance(p.keys.id, 32 * DAY);
      await fake.webhooks.settled();
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.status).toBe('canceled');
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toBeNull();
      const [record] = ok(await run(() => billing.listSubscriptions(p.project.id, { userId: user.id }))).items;
      expect(record).toMatchObject({ id: sub.id, status: 'canceled', cancelAtPeriodEnd: false });
      expect(record!.endedAt?.getTime()).toBe(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.ended_at! * 1000);
      // No renewal was charged.
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10)))).toHaveLength(1);
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'subscription.canceled']);
    });

    it('refuses a change whose proration charge is declined: nothing changes, one payment.failed', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      const card = fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.default_payment_method as string;
      fake.setChargeOutcome(p.keys.id, card, { decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' });
      fake.advance(p.keys.id, 10 * DAY);
      const refused = await run(() => billing.changeSubscription(p.actor(user), { newPriceId: p.pro.priceId, requestKey: key() }));
      expect(refused).toMatchObject({ ok: false, error: 'card_declined' });
      await fake.webhooks.settled();
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)).toMatchObject({ status: 'active' });
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toMatchObject({ status: 'active', plan: { name: 'Basic' } });
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'payment.failed']);
    });

    it('pauses through a renewal (voided, nothing charged while paused); the resume starts a new period and charges it', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      // Paused half a day before the renewal, resumed a day later: the next period is not free.
      fake.advance(p.keys.id, (sub.currentPeriodEnd.getTime() - sub.currentPeriodStart.getTime()) / 1000 - 12 * HOUR);
      ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
      fake.advance(p.keys.id, DAY);
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('paused');
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toBeNull();
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10))).reduce((sum, i) => sum + i.amountPaid, 0)).toBe(1000);

      const resumed = ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
      await fake.webhooks.settled();
      const item = fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.items.data[0]!;
      expect(resumed.status).toBe('active');
      expect(resumed.currentPeriodStart.getTime()).toBe(fake.now(p.keys.id) * 1000);
      expect(resumed.currentPeriodEnd.getTime()).toBe(item.current_period_end * 1000);
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoices.filter((i) => i.status === 'paid').map((i) => i.amountPaid)).toEqual([1000, 1000]);
      expect(await typesOf(p.project, user.id)).toEqual([
        'subscription.created',
        'invoice.paid',
        'subscription.updated',
        'invoice.paid',
        'subscription.updated',
      ]);

      // Paused and resumed within the period just paid: same cycle, nothing more charged.
      ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
      const again = ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
      expect(again.currentPeriodEnd.getTime()).toBe(resumed.currentPeriodEnd.getTime());
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10))).reduce((sum, i) => sum + i.amountPaid, 0)).toBe(2000);
    });

    it('refuses a resume across a renewal whose charge is declined: card_declined, and it stays paused', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
      const card = fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.default_payment_method as string;
      fake.setChargeOutcome(p.keys.id, card, { decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' });
      fake.advance(p.keys.id, 32 * DAY);
      await fake.webhooks.settled();

      const refused = await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() }));
      expect(refused).toMatchObject({ ok: false, error: 'card_declined', detail: 'Your card has insufficient funds.' });
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('paused');
    });

    it('cancels now', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      const canceled = ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() })));
      await fake.webhooks.settled();
      expect(canceled.status).toBe('canceled');
      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.status).toBe('canceled');
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toBeNull();
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.canceled']);
      expect(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() }))).toMatchObject({
        ok: false,
        error: 'subscription_not_found',
      });
    });
  });

  describe('renewals reported by webhooks', () => {
    it('records a paid renewal and the new period', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      fake.advance(p.keys.id, 31 * DAY + 2 * HOUR);
      await fake.webhooks.settled();

      const stripeSub = fake.get<Stripe.Subscription>(p.keys.id, stripeId)!;
      const current = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(current.status).toBe('active');
      expect(current.currentPeriodStart.getTime()).toBe(stripeSub.items.data[0]!.current_period_start * 1000);
      expect(current.currentPeriodEnd.getTime()).toBe(stripeSub.items.data[0]!.current_period_end * 1000);
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoices.map((i) => [i.reason, i.status, i.amountPaid])).toEqual([
        ['subscription_cycle', 'paid', 1000],
        ['subscription_create', 'paid', 1000],
      ]);
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'invoice.paid']);
    });

    it('records a failed renewal: past due, payment.failed, still entitled in the grace period', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const sub = ok(await subscribe(p, user, p.basic.priceId));
      const stripeId = stripeIdOf(p, sub.id);
      const card = fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.default_payment_method as string;
      fake.setChargeOutcome(p.keys.id, card, { decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' });
      fake.advance(p.keys.id, 31 * DAY + 2 * HOUR);
      await fake.webhooks.settled();

      expect(fake.get<Stripe.Subscription>(p.keys.id, stripeId)!.status).toBe('past_due');
      const current = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(current.status).toBe('past_due');
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoices[0]).toMatchObject({ reason: 'subscription_cycle', status: 'open', amountDue: 1000, amountPaid: 0 });
      expect((await run(() => billing.entitlements(p.actor(user)).then(allowed)))?.status).toBe('past_due');
      const events = await eventsOf(p.project, user.id);
      expect(events.map((e) => e.type)).toEqual(['subscription.created', 'invoice.paid', 'payment.failed', 'subscription.updated']);
      expect(events[2]!.payload).toMatchObject({ subscriptionId: sub.id, amount: 1000, currency: 'usd' });
    });
  });

  it('turns a trial on pm_card_chargeCustomerFail into a failed first charge', async () => {
    const p = await stripeProject();
    ok(await run(() => billing.updatePlan(p.project.id, 'Pro', { defaultTrialDays: 7 })));
    const user = await app.seedUser(p.project.id);
    const trial = ok(await subscribe(p, user, p.pro.priceId, 'pm_card_chargeCustomerFail'));
    expect(trial).toMatchObject({ status: 'trialing' });
    expect(trial.trialEnd!.getTime() - trial.trialStart!.getTime()).toBe(7 * DAY * 1000);
    expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toMatchObject({ plan: 'Pro', status: 'trialing' });
    fake.advance(p.keys.id, 8 * DAY);
    await fake.webhooks.settled();
    expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('past_due');
    const events = await eventsOf(p.project, user.id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'payment.failed', 'subscription.updated']);
    expect(events[1]!.payload).toMatchObject({ subscriptionId: trial.id, amount: 3000 });
  });

  describe('Checkout', () => {
    it('records the subscription when Stripe reports the session completed', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const session = ok(
        await run(() =>
          billing.startCheckout(p.actor(user), {
            priceId: p.pro.priceId,
            successUrl: 'https://app.example.com/billing/done?session={CHECKOUT_SESSION_ID}',
            cancelUrl: 'https://app.example.com/callback',
            trialDays: 14,
            requestKey: key(),
          }),
        ),
      );
      expect(session.url).toBe(`${fake.url}/checkout/${session.id}`);
      const stripeSession = fake.get<Stripe.Checkout.Session>(p.keys.id, session.id)!;
      expect(stripeSession).toMatchObject({ mode: 'subscription', status: 'open', metadata: { tollgate_user_id: user.id } });
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();

      fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
      await fake.webhooks.settled();
      const sub = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(sub).toMatchObject({ status: 'trialing', plan: { name: 'Pro' }, processor: 'stripe' });
      expect(sub.trialEnd!.getTime() - sub.trialStart!.getTime()).toBe(14 * DAY * 1000);
      expect(sub.paymentMethod).toMatchObject({ brand: 'visa', last4: '4242' });
      expect(await run(() => billing.entitlements(p.actor(user)).then(allowed))).toEqual({
        plan: 'Pro',
        status: 'trialing',
        features: ['reports', 'export', 'sso'],
      });
      // A $0 trial invoice is no payment.
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created']);
      const [stripeSub] = stripeSubscriptions(p.keys);
      expect(stripeSub!.metadata.tollgate_subscription_id).toBe(sub.id);

      // A user with a live subscription changes it instead.
      const again = await run(() =>
        billing.startCheckout(p.actor(user), {
          priceId: p.basic.priceId,
          successUrl: 'https://app.example.com/x',
          cancelUrl: 'https://app.example.com/y',
          requestKey: key(),
        }),
      );
      expect(again).toMatchObject({ ok: false, error: 'subscription_exists' });

      // One trial per user: after this one ends, no second trial by Checkout or by subscribe.
      ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() })));
      const secondTrial = await run(() =>
        billing.startCheckout(p.actor(user), {
          priceId: p.pro.priceId,
          successUrl: 'https://app.example.com/done',
          cancelUrl: 'https://app.example.com/cancel',
          trialDays: 14,
          requestKey: key(),
        }),
      );
      expect(secondTrial).toMatchObject({ ok: false, error: 'trial_not_eligible' });
      ok(await run(() => billing.updatePlan(p.project.id, 'Pro', { defaultTrialDays: 7 })));
      const paying = ok(await subscribe(p, user, p.pro.priceId));
      expect(paying).toMatchObject({ status: 'active', trialStart: null });
    });

    it(
      'cancels at Stripe a second subscription from two checkouts both paid, keeping one live; ' +
        'refunds its charge, records it on the invoice, sends invoice.refunded and audits it',
      async () => {
        const p = await stripeProject();
        const user = await app.seedUser(p.project.id);
        const start = () =>
          run(() =>
            billing.startCheckout(p.actor(user), {
              priceId: p.basic.priceId,
              successUrl: 'https://app.example.com/done',
              cancelUrl: 'https://app.example.com/cancel',
              requestKey: key(),
            }),
          );
        const first = ok(await start());
        const second = ok(await start());
        fake.completeCheckout(first.id, { paymentMethod: 'pm_card_visa' });
        await fake.webhooks.settled();
        fake.completeCheckout(second.id, { paymentMethod: 'pm_card_visa' });
        await fake.webhooks.settled();

        const live = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
        const statuses = stripeSubscriptions(p.keys).map((sub) => [sub.metadata.tollgate_subscription_id === live.id, sub.status]);
        expect(statuses.sort()).toEqual([
          [false, 'canceled'],
          [true, 'active'],
        ]);
        const duplicate = stripeSubscriptions(p.keys).find((sub) => sub.metadata.tollgate_subscription_id !== live.id)!;
        // One refund at Stripe, of the duplicate's whole first charge, on its PaymentIntent.
        const refunds = fake.list<Stripe.Refund>(p.keys.id, 'refund');
        expect(refunds).toHaveLength(1);
        expect(refunds[0]).toMatchObject({ amount: 1000, currency: 'usd', reason: 'duplicate', status: 'succeeded' });
        const [charged] = stripeInvoices(p.keys, duplicate.id).filter((i) => i.amount_paid > 0);
        const [payment] = fake.list<Stripe.InvoicePayment>(p.keys.id, 'invoice_payment').filter((x) => x.invoice === charged!.id);
        expect(refunds[0]!.payment_intent).toBe(payment!.payment.payment_intent);
        // The user paid once, net.
        const stripe = new Stripe(p.keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
        expect((await stripe.balance.retrieve()).available).toEqual([expect.objectContaining({ amount: 1000, currency: 'usd' })]);

        const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
        expect(invoices.map((i) => [i.subscriptionId === live.id, i.amountPaid, i.amountRefunded]).sort()).toEqual([
          [false, 1000, 1000],
          [true, 1000, 0],
        ]);
        const refundedInvoice = invoices.find((i) => i.amountRefunded > 0)!;
        const events = await eventsOf(p.project, user.id);
        const refunded = events.filter((e) => e.type === 'invoice.refunded');
        expect(refunded).toHaveLength(1);
        expect(refunded[0]!.payload).toMatchObject({ amount: 1000, currency: 'usd', data: { id: refundedInvoice.id, amountRefunded: 1000 } });
        // The duplicate never was the user's subscription: no created or canceled event for it.
        expect(events.filter((e) => e.subscriptionId === refundedInvoice.subscriptionId).map((e) => e.type)).toEqual(['invoice.paid', 'invoice.refunded']);
        await app.tollgate.core.audit.flush();
        const audit = await run(() => app.tollgate.core.audit.list({ projectId: p.project.id, action: 'billing.refund', limit: 10 }));
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({
          userId: user.id,
          actor: { kind: 'system' },
          details: { invoice_id: refundedInvoice.id, amount: 1000, currency: 'usd', reason: 'duplicate', processor_refund_id: refunds[0]!.id },
        });

        // The webhooks again (Stripe retries): nothing is refunded twice.
        for (const event of fake.events(p.keys.id)) await fake.webhooks.redeliver(p.keys.id, event.id);
        await fake.webhooks.settled();
        expect(fake.list(p.keys.id, 'refund')).toHaveLength(1);
        expect((await eventsOf(p.project, user.id)).filter((e) => e.type === 'invoice.refunded')).toHaveLength(1);
      },
    );

    it('gives one trial per user even with two checkouts opened up front: the second starts active and is charged at once', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const start = () =>
        run(() =>
          billing.startCheckout(p.actor(user), {
            priceId: p.pro.priceId,
            successUrl: 'https://app.example.com/done',
            cancelUrl: 'https://app.example.com/cancel',
            trialDays: 14,
            requestKey: key(),
          }),
        );
      const first = ok(await start());
      const second = ok(await start());
      fake.completeCheckout(first.id, { paymentMethod: 'pm_card_visa' });
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toMatchObject({ status: 'trialing' });
      ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() })));

      fake.completeCheckout(second.id, { paymentMethod: 'pm_card_visa' });
      await fake.webhooks.settled();
      const sub = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(sub.status).toBe('active');
      expect(sub.currentPeriodEnd.getTime() - sub.currentPeriodStart.getTime()).toBeGreaterThan(27 * DAY * 1000);
      const stripeSub = fake.get<Stripe.Subscription>(p.keys.id, stripeIdOf(p, sub.id))!;
      expect(stripeSub.status).toBe('active');
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoices.filter((i) => i.subscriptionId === sub.id && i.amountPaid > 0).map((i) => i.amountPaid)).toEqual([3000]);
      // Recorded once it was active: created and paid, never a second trialing.
      expect((await eventsOf(p.project, user.id)).filter((e) => e.subscriptionId === sub.id).map((e) => e.type)).toEqual([
        'subscription.created',
        'invoice.paid',
      ]);
    });

    it('applies a promotion code Stripe knows', async () => {
      const p = await stripeProject();
      const stripe = new Stripe(p.keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
      const coupon = await stripe.coupons.create({ percent_off: 50, duration: 'once' });
      await stripe.promotionCodes.create({ coupon: coupon.id, code: 'HALF' });
      const user = await app.seedUser(p.project.id);
      const session = ok(
        await run(() =>
          billing.startCheckout(p.actor(user), {
            priceId: p.basic.priceId,
            successUrl: 'https://app.example.com/done',
            cancelUrl: 'https://app.example.com/cancel',
            promotionCode: 'half',
            requestKey: key(),
          }),
        ),
      );
      fake.completeCheckout(session.id);
      await fake.webhooks.settled();
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('active');
      const [invoice] = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(invoice).toMatchObject({ status: 'paid', amountPaid: 500 });
      const events = await eventsOf(p.project, user.id);
      expect(events.map((e) => e.type)).toEqual(['subscription.created', 'invoice.paid']);
      expect(events[1]!.payload).toMatchObject({ amount: 500 });
    });

    it('refuses bad URLs, a trial on a plan without trials and an unknown promotion code before Stripe is asked', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      const before = fake.list(p.keys.id, 'checkout.session').length;
      const start = (input: Partial<Parameters<BillingUseCases['startCheckout']>[1]>) =>
        run(() =>
          billing.startCheckout(p.actor(user), {
            priceId: p.basic.priceId,
            successUrl: 'https://app.example.com/done',
            cancelUrl: 'https://app.example.com/cancel',
            requestKey: key(),
            ...input,
          }),
        );
      expect(await start({ successUrl: 'https://evil.example.net/done' })).toMatchObject({ ok: false, error: 'redirect_url_not_allowed' });
      expect(await start({ cancelUrl: 'https://app.example.com.evil.test/' })).toMatchObject({ ok: false, error: 'redirect_url_not_allowed' });
      expect(await start({ successUrl: 'javascript:alert(1)' })).toMatchObject({ ok: false, error: 'invalid_redirect_url' });
      expect(await start({ trialDays: 7 })).toMatchObject({ ok: false, error: 'trials_not_enabled' });
      expect(await start({ priceId: p.pro.priceId, trialDays: 0 })).toMatchObject({ ok: false, error: 'invalid_trial_days' });
      expect(await start({ promotionCode: 'NOPE' })).toMatchObject({ ok: false, error: 'promotion_code_not_found' });
      expect(fake.list(p.keys.id, 'checkout.session')).toHaveLength(before);
    });
  });

  describe('webhooks', () => {
    it('applies each event once: redelivered duplicates record nothing', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      ok(await subscribe(p, user, p.basic.priceId));
      fake.advance(p.keys.id, 31 * DAY + 2 * HOUR);
      await fake.webhooks.settled();
      const eventsBefore = await eventsOf(p.project, user.id);
      const invoicesBefore = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      expect(eventsBefore.map((e) => e.type)).toEqual(['subscription.created', 'invoice.paid', 'invoice.paid']);

      for (const event of fake.events(p.keys.id)) {
        const [attempt] = await fake.webhooks.redeliver(p.keys.id, event.id);
        expect(attempt).toMatchObject({ ok: true, status: 200 });
      }
      // Also to the URL without a project, which finds it from the signed payload.
      const generic = fake.addWebhookEndpoint(p.keys.id, `${app.baseUrl}/api/webhooks/stripe`);
      for (const event of fake.events(p.keys.id, 'invoice.paid')) {
        const [attempt] = await fake.webhooks.redeliver(p.keys.id, event.id, { endpoint: generic.id });
        expect(attempt).toMatchObject({ ok: true, status: 200 });
      }
      expect(await eventsOf(p.project, user.id)).toEqual(eventsBefore);
      expect(ok(await run(() => billing.listInvoices(p.actor(user), 10)))).toEqual(invoicesBefore);

      // Concurrent duplicates of one event: one applies it.
      const [renewalPaid] = fake.events(p.keys.id, 'invoice.paid').slice(-1);
      const { payload, header } = fake.webhooks.signedRequest(p.keys.id, renewalPaid!.id);
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () =>
          run(() =>
            billing.receiveProcessorWebhook({
              processor: 'stripe',
              rawBody: Buffer.from(payload),
              headers: { 'stripe-signature': header },
              projectId: p.project.id,
            }),
          ),
        ),
      );
      expect(outcomes.every((o) => o.ok && o.value.duplicate)).toBe(true);
    });

    it('ends in Stripe state whatever the delivery order, recording each event once', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      fake.webhooks.pause();
      try {
        // Everything happens at Stripe while Tollgate hears nothing: a checkout, a renewal, a plan
        // change made in the Stripe dashboard, then a cancellation at period end.
        const session = ok(
          await run(() =>
            billing.startCheckout(p.actor(user), {
              priceId: p.basic.priceId,
              successUrl: 'https://app.example.com/done',
              cancelUrl: 'https://app.example.com/cancel',
              requestKey: key(),
            }),
          ),
        );
        fake.completeCheckout(session.id);
        fake.advance(p.keys.id, 31 * DAY + 2 * HOUR);
        const [stripeSub] = stripeSubscriptions(p.keys);
        const stripe = new Stripe(p.keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
        const proPrice = ok(await run(() => billing.listPlans(p.project.id))).find((x) => x.name === 'Pro')!.prices[0]!.processorPriceId!;
        await stripe.subscriptions.update(stripeSub!.id, {
          items: [{ id: stripeSub!.items.data[0]!.id, price: proPrice }],
          proration_behavior: 'always_invoice',
        });
        await stripe.subscriptions.update(stripeSub!.id, { cancel_at_period_end: true });
        expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
        expect(fake.webhooks.held().length).toBeGreaterThan(10);

        await fake.webhooks.release('reverse');
      } finally {
        fake.webhooks.resume();
      }
      await fake.webhooks.settled();

      const [stripeSub] = stripeSubscriptions(p.keys);
      const item = stripeSub!.items.data[0]!;
      const record = ok(await run(() => billing.currentSubscription(p.actor(user))))!;
      expect(record).toMatchObject({ status: 'pending_cancellation', cancelAtPeriodEnd: true, plan: { name: 'Pro' } });
      expect(record.currentPeriodStart.getTime()).toBe(item.current_period_start * 1000);
      expect(record.currentPeriodEnd.getTime()).toBe(item.current_period_end * 1000);
      const invoices = ok(await run(() => billing.listInvoices(p.actor(user), 10)));
      const atStripe = stripeInvoices(p.keys, stripeSub!.id);
      expect(invoices.map((i) => [i.status, i.amountPaid]).sort()).toEqual(atStripe.map((i) => [i.status, i.amount_paid]).sort());
      // Tollgate first hears of the subscription in its final state: created, with every paid
      // invoice (checkout, renewal, proration) once; the steps between are not replayed as updates.
      const events = await eventsOf(p.project, user.id);
      const types = events.map((e) => e.type);
      expect(types).toEqual(['subscription.created', 'invoice.paid', 'invoice.paid', 'invoice.paid']);
      expect(events.filter((e) => e.type === 'invoice.paid').map((e) => e.payload.amount)).toEqual(
        [...atStripe].sort((a, b) => a.created - b.created).map((i) => i.amount_paid),
      );

      // Delivered again in emission order: nothing new.
      const count = types.length;
      for (const event of fake.events(p.keys.id)) await fake.webhooks.redeliver(p.keys.id, event.id);
      expect(await typesOf(p.project, user.id)).toHaveLength(count);
    });

    it('answers 5xx when Stripe cannot be re-read, so Stripe retries, and applies the retry', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      fake.webhooks.pause();
      let session: { id: string };
      try {
        session = ok(
          await run(() =>
            billing.startCheckout(p.actor(user), {
              priceId: p.basic.priceId,
              successUrl: 'https://app.example.com/done',
              cancelUrl: 'https://app.example.com/cancel',
              requestKey: key(),
            }),
          ),
        );
        fake.completeCheckout(session.id);
        fake.webhooks.discardHeld();
      } finally {
        fake.webhooks.resume();
      }
      const [completed] = fake.events(p.keys.id, 'checkout.session.completed');
      fake.failNext({ method: 'GET', path: /^\/v1\/subscriptions\//, count: 3 });
      const [failed] = await fake.webhooks.redeliver(p.keys.id, completed!.id);
      expect(failed).toMatchObject({ ok: false, status: 502 });
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))).toBeNull();
      const [retried] = await fake.webhooks.redeliver(p.keys.id, completed!.id);
      expect(retried).toMatchObject({ ok: true, status: 200 });
      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('active');
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid']);
    });

    it('never writes back an older state: a webhook whose re-read races the next change is recorded before it', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      ok(await subscribe(p, user, p.basic.priceId));
      await fake.webhooks.settled();
      fake.webhooks.pause();
      ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
      expect(fake.webhooks.held().map((e) => e.type)).toContain('customer.subscription.updated');

      // The pause's webhook re-reads the subscription from Stripe (paused), and that answer comes
      // back late; meanwhile the user resumes.
      fake.delayNext({ method: 'GET', path: /^\/v1\/subscriptions\/sub_/, ms: 1_000 });
      const reads = () => fake.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/subscriptions/sub_')).length;
      const readsBefore = reads();
      const delivering = fake.webhooks.release();
      await vi.waitFor(() => expect(reads()).toBeGreaterThan(readsBefore), { timeout: 5_000, interval: 10 });
      ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
      await delivering;
      fake.webhooks.resume();
      await fake.webhooks.settled();

      expect(ok(await run(() => billing.currentSubscription(p.actor(user))))?.status).toBe('active');
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid', 'subscription.updated', 'subscription.updated']);
    });

    it('refuses a bad signature, a stale timestamp and an unknown project', async () => {
      const p = await stripeProject();
      const user = await app.seedUser(p.project.id);
      ok(await subscribe(p, user, p.basic.priceId));
      await fake.webhooks.settled();
      const [event] = fake.events(p.keys.id, 'customer.subscription.created');
      const receive = (payload: string, header: string | undefined, projectId: string | null) =>
        run(() => billing.receiveProcessorWebhook({ processor: 'stripe', rawBody: Buffer.from(payload), headers: { 'stripe-signature': header }, projectId }));

      const wrongSecret = fake.webhooks.signedRequest(p.keys.id, event!.id, undefined, { secret: 'whsec_notthesecret0000' });
      expect(await receive(wrongSecret.payload, wrongSecret.header, p.project.id)).toMatchObject({ ok: false, error: 'invalid_webhook_signature' });
      const stale = fake.webhooks.signedRequest(p.keys.id, event!.id, undefined, { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 });
      expect(await receive(stale.payload, stale.header, p.project.id)).toMatchObject({ ok: false, error: 'invalid_webhook_signature' });
      const good = fake.webhooks.signedRequest(p.keys.id, event!.id);
      expect(await receive(good.payload, undefined, p.project.id)).toMatchObject({ ok: false, error: 'invalid_webhook_signature' });
      expect(await receive(good.payload.replace('"livemode": false', '"livemode": true'), good.header, p.project.id)).toMatchObject({
        ok: false,
        error: 'invalid_webhook_signature',
      });
      // Another project's id, a project without Stripe, and a project found from the payload.
      expect(await receive(good.payload, good.header, app.tollgate.core.crypto.uuid())).toMatchObject({ ok: false, error: 'webhook_project_unknown' });
      const other = await app.createProject();
      expect(await receive(good.payload, good.header, other.id)).toMatchObject({ ok: false, error: 'webhook_project_unknown' });
      expect(await receive(good.payload, good.header, null)).toMatchObject({ ok: true, value: { duplicate: true } });

      // Over HTTP as Stripe sends them.
      const [badAttempt] = await fake.webhooks.redeliver(p.keys.id, event!.id, { secret: 'whsec_notthesecret0000' });
      expect(badAttempt).toMatchObject({ ok: false, status: 400 });
      const [staleAttempt] = await fake.webhooks.redeliver(p.keys.id, event!.id, { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 });
      expect(staleAttempt).toMatchObject({ ok: false, status: 400 });
      expect(await typesOf(p.project, user.id)).toEqual(['subscription.created', 'invoice.paid']);
    });
  });

  it('records each event in order through a whole life at Stripe', async () => {
    const p = await stripeProject();
    const user = await app.seedUser(p.project.id);
    const sub = ok(await subscribe(p, user, p.basic.priceId));
    fake.advance(p.keys.id, 10 * DAY);
    ok(await run(() => billing.changeSubscription(p.actor(user), { newPriceId: p.pro.priceId, requestKey: key() })));
    ok(await run(() => billing.pauseSubscription(p.actor(user), { requestKey: key() })));
    ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
    fake.advance(p.keys.id, 25 * DAY);
    await fake.webhooks.settled();
    ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: true, requestKey: key() })));
    ok(await run(() => billing.resumeSubscription(p.actor(user), { requestKey: key() })));
    ok(await run(() => billing.cancelSubscription(p.actor(user), { atPeriodEnd: false, requestKey: key() })));
    await fake.webhooks.settled();

    const events = await eventsOf(p.project, user.id);
    expect(events.map((e) => e.type)).toEqual([
      'subscription.created',
      'invoice.paid',
      'subscription.updated', // change
      'invoice.paid', // proration
      'subscription.updated', // pause
      'subscription.updated', // resume
      'invoice.paid', // renewal on Pro
      'subscription.updated', // cancel at period end
      'subscription.updated', // resume
      'subscription.canceled',
    ]);
    expect(events.every((e) => e.subscriptionId === sub.id)).toBe(true);
    const paid = events.filter((e) => e.type === 'invoice.paid').map((e) => e.payload.amount);
    expect(paid[0]).toBe(1000);
    expect(paid[2]).toBe(3000);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });
});
