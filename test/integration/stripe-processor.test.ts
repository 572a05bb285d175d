import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MeteredPriceInput, ProcessorFailure, ProcessorResult } from '../../application/billing/payment-processor';
import type { Plan, Price } from '../../domain/billing/catalog';
import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
import { parseStripeApiUrl } from '../../infrastructure/billing/stripe/api-url';
import { StripeProcessor, stepKey } from '../../infrastructure/billing/stripe/stripe-processor';
import { invoiceOf, subscriptionOf } from '../../infrastructure/billing/stripe/stripe-mapping';
import { StripeWebhooks, subjectOf } from '../../infrastructure/billing/stripe/stripe-webhooks';
import { loadStripeTypes } from '../support/stripe/conformance';
import { startFakeStripe, type AccountKeys, type FakeStripe } from '../support/stripe/server';

/**
 * The Stripe adapter against the Stripe-shaped server (test/support/stripe), through the real
 * stripe client. Every account's clock starts on 2025-01-31 12:00 UTC, so a monthly period ends on
 * February 28; the adapter's clock is the account's. After each test the server confirms that every
 * parameter Tollgate sent exists for the pinned API version, and every write carried an
 * Idempotency-Key (the adapter runs with maxNetworkRetries 0, so stripe-node adds none itself).
 */

const DAY = 86_400;
const HOUR = 3600;
const START = Date.UTC(2025, 0, 31, 12, 0, 0) / 1000;
const FEB_28 = Date.UTC(2025, 1, 28, 12, 0, 0) / 1000;
const at = (unix: number) => new Date(unix * 1000);
const toUnixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

let fake: FakeStripe;
let requestsBefore = 0;
beforeAll(async () => {
  fake = await startFakeStripe({ startTime: START });
});
afterAll(async () => {
  await fake?.close();
});
afterEach(() => {
  try {
    fake.assertNoUnexpectedRequests();
  } finally {
    fake.unexpected.length = 0;
  }
  const writes = fake.requests.slice(requestsBefore).filter((r) => r.method !== 'GET' && r.path !== '/v1/invoices/create_preview');
  requestsBefore = fake.requests.length;
  expect(writes.filter((r) => !r.idempotencyKey).map((r) => `${r.method} ${r.path}`)).toEqual([]);
});

const processorFor = (keys: AccountKeys, options: { secretKey?: string; maxNetworkRetries?: number } = {}) =>
  new StripeProcessor({
    secretKey: options.secretKey ?? keys.secretKey,
    apiUrl: fake.url,
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    now: () => at(fake.now(keys.id)),
  });

/** A plain client for arranging what Tollgate does not do itself (coupons); its writes get stripe-node's keys. */
const rawClient = (keys: AccountKeys) => new Stripe(keys.secretKey, { ...fake.clientOptions, maxNetworkRetries: 1 });

function unwrap<T>(result: ProcessorResult<T, ProcessorFailure>): T {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.failure)}`);
  return result.value;
}
function failure<T>(result: ProcessorResult<T, ProcessorFailure>) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

const plan = (id: string, name: string, description = ''): Plan => ({
  id,
  name,
  description,
  features: [],
  hidden: false,
  recommended: false,
  trialsEnabled: true,
  defaultTrialDays: null,
  audience: 'users',
  seatPolicy: DEFAULT_SEAT_POLICY,
  usageLimits: [],
  position: 0,
});
const price = (id: string, planId: string, amount: number, interval: 'month' | 'year' = 'month'): Price => ({
  id,
  planId,
  name: `${planId} ${interval}ly`,
  amount,
  currency: 'usd',
  interval,
  active: true,
  seats: null,
});

const PROJECT = 'prj_1';
const meta = (userId = 'usr_1', extra: { subscriptionId?: string; priceId?: string; packId?: string } = {}) => ({ projectId: PROJECT, userId, ...extra });

async function setup() {
  const keys = fake.createAccount();
  const processor = processorFor(keys);
  const basic = unwrap(await processor.upsertProduct(plan('pln_basic', 'Basic'), null, { projectId: PROJECT }));
  const pro = unwrap(await processor.upsertProduct(plan('pln_pro', 'Pro'), null, { projectId: PROJECT }));
  const basicMonthly = unwrap(await processor.createPrice(price('prc_basic_m', 'pln_basic', 1000), basic, { projectId: PROJECT }));
  const proMonthly = unwrap(await processor.createPrice(price('prc_pro_m', 'pln_pro', 3000), pro, { projectId: PROJECT }));
  const proYearly = unwrap(await processor.createPrice(price('prc_pro_y', 'pln_pro', 30000, 'year'), pro, { projectId: PROJECT }));
  const customer = unwrap(await processor.createCustomer({ email: 'ada@example.test', name: 'Ada', metadata: meta(), idempotencyKey: 'customer:usr_1' }));
  return { keys, processor, basic, pro, basicMonthly, proMonthly, proYearly, customer };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function subscribe(s: Setup, options: { card?: string; price?: string; trialDays?: number | null; key?: string } = {}) {
  return s.processor.createSubscription({
    customerId: s.customer,
    priceId: options.price ?? s.basicMonthly,
    paymentMethodId: options.card ?? 'pm_card_visa',
    trialDays: options.trialDays ?? null,
    metadata: meta('usr_1', { subscriptionId: 'sub_tollgate_1', priceId: 'prc_basic_m' }),
    idempotencyKey: options.key ?? `subscribe:${Math.random().toString(36).slice(2)}`,
  });
}

describe('the API base URL', () => {
  it('maps STRIPE_API_URL to stripe-node host, port and protocol, and refuses what cannot be one', () => {
    expect(parseStripeApiUrl('https://api.stripe.com')).toEqual({ ok: true, value: { host: 'api.stripe.com', port: 443, protocol: 'https' } });
    expect(parseStripeApiUrl('http://127.0.0.1:12111/')).toEqual({ ok: true, value: { host: '127.0.0.1', port: 12111, protocol: 'http' } });
    expect(parseStripeApiUrl('http://stripe-proxy.internal')).toEqual({ ok: true, value: { host: 'stripe-proxy.internal', port: 80, protocol: 'http' } });
    expect(parseStripeApiUrl('http://[::1]:8080')).toEqual({ ok: true, value: { host: '::1', port: 8080, protocol: 'http' } });
    expect(parseStripeApiUrl('http://127.0.0.1:9/stripe').ok).toBe(false);
    expect(parseStripeApiUrl('ftp://example.test').ok).toBe(false);
    expect(parseStripeApiUrl('not a url').ok).toBe(false);
    expect(() => new StripeProcessor({ secretKey: 'sk_test_x', apiUrl: 'http://h/v1' })).toThrow(/STRIPE_API_URL/);
  });
});

describe('credentials and errors', () => {
  it('verifies a key by retrieving the account; live mode follows the key prefix', async () => {
    const keys = fake.createAccount();
    expect(await processorFor(keys).verifyCredentials()).toEqual({ ok: true, value: { accountId: keys.id, livemode: false } });
    expect(unwrap(await processorFor(keys, { secretKey: keys.restrictedKey }).verifyCredentials()).accountId).toBe(keys.id);
    const live = fake.createAccount({ secretKey: `sk_live_${'a'.repeat(24)}` });
    expect(unwrap(await processorFor(live).verifyCredentials())).toEqual({ accountId: live.id, livemode: true });
  });

  it('answers a wrong key and a restricted key without permission as authentication', async () => {
    const keys = fake.createAccount({ restrictedKeyDenies: ['POST /v1/customers'] });
    const wrong = failure(await processorFor(keys, { secretKey: 'sk_test_unknownkey0000abcd' }).verifyCredentials());
    expect(wrong).toEqual({ kind: 'authentication', message: 'Invalid API Key provided: sk_test_**************abcd' });
    const restricted = processorFor(keys, { secretKey: keys.restrictedKey });
    const denied = failure(await restricted.createCustomer({ email: null, name: null, metadata: meta(), idempotencyKey: 'c1' }));
    expect(denied.kind).toBe('authentication');
  });

  it('answers an outage (5xx, 429, a dropped connection, nothing listening) as unavailable, and retries with the same key', async () => {
    const s = await setup();
    fake.failNext({ method: 'POST', path: '/v1/customers', status: 500 });
    const outage = failure(await s.processor.createCustomer({ email: null, name: null, metadata: meta('usr_2'), idempotencyKey: 'cus:usr_2' }));
    expect(outage).toEqual({ kind: 'unavailable', message: 'An unknown error occurred' });
    fake.failNext({ method: 'GET', path: /^\/v1\/subscriptions\//, status: 503 });
    expect(failure(await s.processor.getSubscription('sub_anything')).kind).toBe('unavailable');
    fake.failNext({ method: 'GET', path: '/v1/promotion_codes', status: 429 });
    expect(failure(await s.processor.findPromotionCode('SAVE')).kind).toBe('unavailable');
    // stripe-node retries a connection closed under it once, whatever maxNetworkRetries says.
    fake.failNext({ method: 'GET', path: '/v1/account', status: 0, count: 2 });
    expect(failure(await s.processor.verifyCredentials()).kind).toBe('unavailable');
    const nowhere = new StripeProcessor({ secretKey: s.keys.secretKey, apiUrl: 'http://127.0.0.1:1', maxNetworkRetries: 0, timeoutMs: 2000 });
    expect(failure(await nowhere.verifyCredentials()).kind).toBe('unavailable');

    // stripe-node retries a 500 with the same Idempotency-Key; one customer results.
    const retrying = processorFor(s.keys, { maxNetworkRetries: 2 });
    fake.failNext({ method: 'POST', path: '/v1/customers', status: 500 });
    const before = fake.requests.length;
    const id = unwrap(await retrying.createCustomer({ email: 'r@example.test', name: null, metadata: meta('usr_3'), idempotencyKey: 'cus:usr_3' }));
    const attempts = fake.requests.slice(before).filter((r) => r.path === '/v1/customers');
    expect(attempts.map((r) => [r.status, r.idempotencyKey])).toEqual([
      [500, 'cus:usr_3:create-customer'],
      [200, 'cus:usr_3:create-customer'],
    ]);
    expect(
      fake
        .list<Stripe.Customer>(s.keys.id, 'customer')
        .filter((c) => c.email === 'r@example.test')
        .map((c) => c.id),
    ).toEqual([id]);
  });

  it('answers an invalid request with Stripe’s message, never throwing', async () => {
    const s = await setup();
    const noProduct = failure(await s.processor.createPrice(price('prc_x', 'pln_x', 500), 'prod_missing', { projectId: PROJECT }));
    expect(noProduct).toEqual({ kind: 'invalid_request', message: "No such product: 'prod_missing'" });
    const noCustomer = failure(await s.processor.createSetupIntent('cus_missing', 'si:1'));
    expect(noCustomer).toEqual({ kind: 'invalid_request', message: "No such customer: 'cus_missing'" });
    expect(failure(await s.processor.archivePrice('')).kind).toBe('invalid_request');
    expect(failure(await s.processor.checkoutSubscriptionId('cs_test_missing')).kind).toBe('invalid_request');
    expect(failure(await s.processor.previewChange('sub_missing', s.proMonthly)).kind).toBe('invalid_request');
  });
});

describe('catalog, customers and setup intents', () => {
  it('creates and updates products, creates and archives prices, with Tollgate ids in metadata', async () => {
    const s = await setup();
    const product = fake.get<Stripe.Product>(s.keys.id, s.pro)!;
    expect(product).toMatchObject({ name: 'Pro', description: null, metadata: { tollgate_project_id: PROJECT, tollgate_plan_id: 'pln_pro' } });
    const same = unwrap(await s.processor.upsertProduct(plan('pln_pro', 'Pro plus', 'Everything'), s.pro, { projectId: PROJECT }));
    expect(same).toBe(s.pro);
    expect(fake.get<Stripe.Product>(s.keys.id, s.pro)).toMatchObject({ name: 'Pro plus', description: 'Everything' });
    unwrap(await s.processor.upsertProduct(plan('pln_pro', 'Pro plus', ''), s.pro, { projectId: PROJECT }));
    expect(fake.get<Stripe.Product>(s.keys.id, s.pro)!.description).toBeNull();

    expect(fake.get<Stripe.Price>(s.keys.id, s.proYearly)).toMatchObject({
      product: s.pro,
      unit_amount: 30000,
      currency: 'usd',
      nickname: 'pln_pro yearly',
      active: true,
      recurring: { interval: 'year', interval_count: 1 },
      metadata: { tollgate_project_id: PROJECT, tollgate_price_id: 'prc_pro_y' },
    });
    expect(unwrap(await s.processor.archivePrice(s.proYearly))).toBeUndefined();
    expect(fake.get<Stripe.Price>(s.keys.id, s.proYearly)!.active).toBe(false);
  });

  it('pushes the same product or price once; a price set back to an archived amount sells again', async () => {
    const s = await setup();
    expect(unwrap(await s.processor.upsertProduct(plan('pln_basic', 'Basic'), null, { projectId: PROJECT }))).toBe(s.basic);
    expect(unwrap(await s.processor.createPrice(price('prc_basic_m', 'pln_basic', 1000), s.basic, { projectId: PROJECT }))).toBe(s.basicMonthly);
    expect(fake.list(s.keys.id, 'price')).toHaveLength(3);
    const dearer = unwrap(await s.processor.createPrice(price('prc_basic_m', 'pln_basic', 1200), s.basic, { projectId: PROJECT }));
    expect(dearer).not.toBe(s.basicMonthly);
    unwrap(await s.processor.archivePrice(s.basicMonthly));
    expect(unwrap(await s.processor.createPrice(price('prc_basic_m', 'pln_basic', 1000), s.basic, { projectId: PROJECT }))).toBe(s.basicMonthly);
    expect(fake.get<Stripe.Price>(s.keys.id, s.basicMonthly)!.active).toBe(true);
  });

  it('creates a customer once per key, and a setup intent for cards used off session', async () => {
    const s = await setup();
    expect(fake.get<Stripe.Customer>(s.keys.id, s.customer)).toMatchObject({
      email: 'ada@example.test',
      name: 'Ada',
      metadata: { tollgate_project_id: PROJECT, tollgate_user_id: 'usr_1' },
    });
    const again = unwrap(await s.processor.createCustomer({ email: 'ada@example.test', name: 'Ada', metadata: meta(), idempotencyKey: 'customer:usr_1' }));
    expect(again).toBe(s.customer);
    const bare = unwrap(await s.processor.createCustomer({ email: null, name: null, metadata: meta('usr_9'), idempotencyKey: 'customer:usr_9' }));
    expect(fake.get<Stripe.Customer>(s.keys.id, bare)).toMatchObject({ email: null, name: null });

    const intent = unwrap(await s.processor.createSetupIntent(s.customer, 'setup:usr_1:1'));
    expect(intent.id).toMatch(/^seti_/);
    expect(intent.clientSecret).toMatch(new RegExp(`^${intent.id}_secret_`));
    expect(fake.get<Stripe.SetupIntent>(s.keys.id, intent.id)).toMatchObject({ customer: s.customer, usage: 'off_session', payment_method_types: ['card'] });
    expect(unwrap(await s.processor.createSetupIntent(s.customer, 'setup:usr_1:1')).id).toBe(intent.id);
  });

  it('finds an active promotion code by its code', async () => {
    const s = await setup();
    const stripe = rawClient(s.keys);
    const coupon = await stripe.coupons.create({ percent_off: 20, duration: 'once' });
    const promo = await stripe.promotionCodes.create({ coupon: coupon.id, code: 'LAUNCH20' });
    await stripe.promotionCodes.create({ coupon: coupon.id, code: 'OLD', active: false });
    expect(unwrap(await s.processor.findPromotionCode('launch20'))).toBe(promo.id);
    expect(unwrap(await s.processor.findPromotionCode('OLD'))).toBeNull();
    expect(unwrap(await s.processor.findPromotionCode('NOPE'))).toBeNull();
    expect(unwrap(await s.processor.findPromotionCode('  '))).toBeNull();
  });
});

describe('checkout', () => {
  it('creates a subscription-mode session (promotion code, trial, metadata) and finds its subscription once completed', async () => {
    const s = await setup();
    const stripe = rawClient(s.keys);
    const coupon = await stripe.coupons.create({ percent_off: 50, duration: 'once' });
    const promo = await stripe.promotionCodes.create({ coupon: coupon.id, code: 'HALF' });
    const before = fake.requests.length;
    const session = unwrap(
      await s.processor.createCheckout({
        customerId: s.customer,
        priceId: s.proMonthly,
        successUrl: 'https://app.example.test/billing/done',
        cancelUrl: 'https://app.example.test/billing',
        promotionCodeId: promo.id,
        trialDays: 7,
        metadata: meta('usr_1', { subscriptionId: 'sub_tollgate_7', priceId: 'prc_pro_m' }),
        email: 'ada@example.test',
        idempotencyKey: 'checkout:1',
      }),
    );
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`${fake.url}/checkout/${session.id}`);
    const sent = fake.requests.slice(before).find((r) => r.path === '/v1/checkout/sessions')!;
    const metadata = { tollgate_project_id: PROJECT, tollgate_user_id: 'usr_1', tollgate_subscription_id: 'sub_tollgate_7', tollgate_price_id: 'prc_pro_m' };
    expect(sent.params).toEqual({
      mode: 'subscription',
      customer: s.customer,
      line_items: { 0: { price: s.proMonthly, quantity: '1' } },
      success_url: 'https://app.example.test/billing/done',
      cancel_url: 'https://app.example.test/billing',
      discounts: { 0: { promotion_code: promo.id } },
      subscription_data: { trial_period_days: '7', metadata },
      metadata,
    });
    expect(sent.idempotencyKey).toBe('checkout:1:create-checkout');
    expect(unwrap(await s.processor.checkoutSubscriptionId(session.id))).toBeNull();

    fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
    const subscriptionId = unwrap(await s.processor.checkoutSubscriptionId(session.id))!;
    expect(subscriptionId).toMatch(/^sub_/);
    const snapshot = unwrap(await s.processor.getSubscription(subscriptionId))!;
    expect(snapshot.subscription).toMatchObject({
      status: 'trialing',
      customerId: s.customer,
      priceId: s.proMonthly,
      trialStart: at(START),
      trialEnd: at(START + 7 * DAY),
      metadata: { projectId: PROJECT, userId: 'usr_1', subscriptionId: 'sub_tollgate_7', priceId: 'prc_pro_m' },
      paymentMethod: { brand: 'visa', last4: '4242' },
    });
  });

  it('starts a session without promotion code or trial', async () => {
    const s = await setup();
    const before = fake.requests.length;
    unwrap(
      await s.processor.createCheckout({
        customerId: s.customer,
        priceId: s.basicMonthly,
        successUrl: 'https://app.example.test/ok',
        cancelUrl: 'https://app.example.test/no',
        promotionCodeId: null,
        trialDays: null,
        metadata: { projectId: PROJECT },
        email: null,
        idempotencyKey: 'checkout:2',
      }),
    );
    const sent = fake.requests.slice(before).find((r) => r.path === '/v1/checkout/sessions')!;
    expect(sent.params).not.toHaveProperty('discounts');
    expect(sent.params.subscription_data).toEqual({ metadata: { tollgate_project_id: PROJECT } });
  });

  it("sells a credit pack with a payment-mode session of inline price_data; the session and its PaymentIntent are Stripe's shapes", async () => {
    const s = await setup();
    const before = fake.requests.length;
    const input = {
      customerId: s.customer,
      name: '500 calls',
      amount: 900,
      currency: 'usd',
      successUrl: 'https://app.example.test/credits?paid=1',
      cancelUrl: 'https://app.example.test/credits',
      metadata: meta('usr_1', { packId: 'pack_1' }),
      email: 'ada@example.test',
      idempotencyKey: 'pack:1',
    };
    const session = unwrap(await s.processor.createPackCheckout(input));
    const sent = fake.requests.slice(before).filter((r) => r.path === '/v1/checkout/sessions');
    const metadata = { tollgate_project_id: PROJECT, tollgate_user_id: 'usr_1', tollgate_pack_id: 'pack_1' };
    expect(sent.map((r) => [r.params, r.idempotencyKey])).toEqual([
      [
        {
          mode: 'payment',
          customer: s.customer,
          line_items: { 0: { price_data: { currency: 'usd', unit_amount: '900', product_data: { name: '500 calls' } }, quantity: '1' } },
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
          payment_intent_data: { metadata },
          metadata,
        },
        'pack:1:create-pack-checkout',
      ],
    ]);
    // The inline price is made for the session only: not sold again, nothing added to the catalog.
    const stripe = rawClient(s.keys);
    const [item] = (await stripe.checkout.sessions.listLineItems(session.id)).data;
    expect(item).toMatchObject({ quantity: 1, amount_total: 900, currency: 'usd', price: { active: false, type: 'one_time', unit_amount: 900 } });

    fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
    const paid = await stripe.checkout.sessions.retrieve(session.id);
    expect(paid).toMatchObject({ mode: 'payment', status: 'complete', payment_status: 'paid', subscription: null, metadata });
    const intent = await stripe.paymentIntents.retrieve(paid.payment_intent as string);
    expect(intent).toMatchObject({ status: 'succeeded', amount: 900, amount_received: 900, customer: s.customer, metadata });
    expect(unwrap(await s.processor.getPackCheckout(session.id))).toEqual({
      id: session.id,
      status: 'complete',
      paid: true,
      customerId: s.customer,
      metadata: { projectId: PROJECT, userId: 'usr_1', packId: 'pack_1' },
    });

    const types = loadStripeTypes(['Checkout.Session', 'PaymentIntent', 'LineItem']);
    const checks: [string, unknown][] = [
      ['Checkout.Session', paid],
      ['PaymentIntent', intent],
      ['LineItem', item],
    ];
    expect(checks.flatMap(([name, value]) => types.checkObject(name, JSON.parse(JSON.stringify(value))))).toEqual([]);
  }, 60_000);
});

describe('subscribing', () => {
  it('attaches the card, makes it the default, creates and charges the subscription, and answers the snapshot', async () => {
    const s = await setup();
    const before = fake.requests.length;
    const { subscription, invoices } = unwrap(await subscribe(s, { key: 'subscribe:usr_1:1' }));
    expect(subscription).toEqual({
      id: expect.stringMatching(/^sub_/),
      customerId: s.customer,
      priceId: s.basicMonthly,
      quantity: 1,
      status: 'active',
      cancelAtPeriodEnd: false,
      currentPeriodStart: at(START),
      currentPeriodEnd: at(FEB_28),
      billingCycleAnchor: at(START),
      canceledAt: null,
      endedAt: null,
      trialStart: null,
      trialEnd: null,
      pausedAt: null,
      pastDueAt: null,
      paymentMethod: { id: expect.stringMatching(/^pm_/), brand: 'visa', last4: '4242', expMonth: expect.any(Number), expYear: expect.any(Number) },
      metadata: { projectId: PROJECT, userId: 'usr_1', subscriptionId: 'sub_tollgate_1', priceId: 'prc_basic_m' },
      createdAt: at(START),
    });
    expect(invoices).toEqual([
      {
        id: expect.stringMatching(/^in_/),
        subscriptionId: subscription.id,
        customerId: s.customer,
        status: 'paid',
        reason: 'subscription_create',
        currency: 'usd',
        subtotal: 1000,
        amountDue: 1000,
        amountPaid: 1000,
        attemptCount: expect.any(Number),
        lines: [
          {
            kind: 'subscription',
            description: '1 × Basic (at $10.00 / month)',
            priceId: s.basicMonthly,
            quantity: null,
            amount: 1000,
            periodStart: at(START),
            periodEnd: at(FEB_28),
          },
        ],
        periodStart: at(START),
        periodEnd: at(FEB_28),
        hostedUrl: expect.stringContaining(invoices[0]!.id),
        createdAt: at(START),
        paidAt: at(START),
      },
    ]);
    const customer = fake.get<Stripe.Customer>(s.keys.id, s.customer)!;
    expect(customer.invoice_settings.default_payment_method).toBe(subscription.paymentMethod!.id);
    const writes = fake.requests.slice(before).filter((r) => r.method === 'POST');
    expect(writes.map((r) => [r.path.replace(/pm_\w+/, 'pm'), r.idempotencyKey])).toEqual([
      ['/v1/payment_methods/pm/attach', 'subscribe:usr_1:1:attach-payment-method'],
      [`/v1/customers/${s.customer}`, 'subscribe:usr_1:1:default-payment-method'],
      ['/v1/subscriptions', 'subscribe:usr_1:1:create-subscription'],
    ]);
    expect(writes[2]!.params).toMatchObject({
      payment_behavior: 'error_if_incomplete',
      default_payment_method: subscription.paymentMethod!.id,
      items: { 0: { price: s.basicMonthly } },
    });
    expect(JSON.stringify(fake.requests.slice(before).map((r) => r.params))).not.toContain('payment_intent');
  });

  it('starts a trial without charging', async () => {
    const s = await setup();
    const { subscription, invoices } = unwrap(await subscribe(s, { price: s.proMonthly, trialDays: 14 }));
    expect(subscription).toMatchObject({
      status: 'trialing',
      trialStart: at(START),
      trialEnd: at(START + 14 * DAY),
      billingCycleAnchor: at(START + 14 * DAY),
      currentPeriodEnd: at(START + 14 * DAY),
    });
    expect(invoices.map((i) => [i.status, i.subtotal, i.amountPaid, i.lines[0]!.kind])).toEqual([['paid', 0, 0, 'subscription']]);
  });

  it('answers a card declined when attached or when charged with card_declined and leaves no subscription', async () => {
    const s = await setup();
    expect(failure(await subscribe(s, { card: 'pm_card_chargeDeclined' }))).toEqual({
      kind: 'card_declined',
      declineCode: 'generic_decline',
      message: 'Your card was declined.',
    });
    expect(failure(await subscribe(s, { card: 'pm_card_visa_chargeDeclinedInsufficientFunds' }))).toEqual({
      kind: 'card_declined',
      declineCode: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    const charged = failure(await subscribe(s, { card: 'pm_card_chargeCustomerFail' }));
    expect(charged).toMatchObject({ kind: 'card_declined', declineCode: expect.any(String) });
    expect(unwrap(await s.processor.listSubscriptionIds(s.customer))).toEqual([]);
    expect(fake.list(s.keys.id, 'subscription')).toEqual([]);
  });

  it('answers an unknown or foreign payment method as invalid_payment_method, an unknown price as invalid_request', async () => {
    const s = await setup();
    expect(failure(await subscribe(s, { card: 'pm_missing' }))).toEqual({ kind: 'invalid_payment_method', message: "No such PaymentMethod: 'pm_missing'" });
    const other = unwrap(await s.processor.createCustomer({ email: null, name: null, metadata: meta('usr_2'), idempotencyKey: 'customer:usr_2' }));
    const theirs = await rawClient(s.keys).paymentMethods.attach('pm_card_visa', { customer: other });
    expect(failure(await subscribe(s, { card: theirs.id })).kind).toBe('invalid_payment_method');
    const unknownPrice = failure(await subscribe(s, { price: 'price_missing' }));
    expect(unknownPrice).toEqual({ kind: 'invalid_request', message: "No such price: 'price_missing'" });
  });

  it('makes one Stripe subscription for a repeated key, also after an outage half-way', async () => {
    const s = await setup();
    const first = unwrap(await subscribe(s, { key: 'subscribe:usr_1:once' }));
    const before = fake.requests.length;
    const again = unwrap(await subscribe(s, { key: 'subscribe:usr_1:once' }));
    const repeated = fake.requests.slice(before);
    expect(repeated.filter((r) => r.method === 'POST').map((r) => r.replayed)).toEqual([true, true, true]);
    // The replayed answer is as old as the first call: the subscription is read again.
    expect(repeated.filter((r) => r.method === 'GET' && r.path === `/v1/subscriptions/${first.subscription.id}`)).toHaveLength(1);
    expect(again.subscription.id).toBe(first.subscription.id);
    expect(again).toEqual(first);
    expect(fake.list(s.keys.id, 'subscription')).toHaveLength(1);
    expect(fake.list(s.keys.id, 'payment_intent')).toHaveLength(1);

    const t = await setup();
    fake.failNext({ method: 'POST', path: '/v1/subscriptions', status: 500 });
    expect(failure(await subscribe(t, { key: 'subscribe:usr_1:outage' })).kind).toBe('unavailable');
    expect(fake.list(t.keys.id, 'subscription')).toHaveLength(0);
    const retried = unwrap(await subscribe(t, { key: 'subscribe:usr_1:outage' }));
    expect(retried.subscription.status).toBe('active');
    expect(fake.list(t.keys.id, 'subscription')).toHaveLength(1);
    expect(fake.list(t.keys.id, 'payment_method')).toHaveLength(1);
  });

  it('reads a subscription back (unknown: null) and lists a customer’s subscriptions newest first', async () => {
    const s = await setup();
    expect(unwrap(await s.processor.getSubscription('sub_missing'))).toBeNull();
    const first = unwrap(await subscribe(s)).subscription;
    unwrap(await s.processor.cancelSubscription(first.id, { atPeriodEnd: false, idempotencyKey: 'cancel:1' }));
    fake.advance(s.keys.id, HOUR);
    const second = unwrap(await subscribe(s, { price: s.proMonthly })).subscription;
    expect(unwrap(await s.processor.listSubscriptionIds(s.customer))).toEqual([second.id, first.id]);
    const read = unwrap(await s.processor.getSubscription(second.id))!;
    expect(read.subscription).toEqual(second);
  });
});

describe('changing price', () => {
  // Basic 10.00/month from Jan 31 12:00 to Feb 28 12:00 (28 days); the change comes 7 days and 5
  // hours in, with 0.7425595 of the period left: -743 unused on Basic, +2228 remaining on Pro.
  const changeAt = START + 7 * DAY + 5 * HOUR;

  it('previews the prorated invoice of a change, then changes and charges it', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.advanceTo(s.keys.id, changeAt);
    const preview = unwrap(await s.processor.previewChange(subscription.id, s.proMonthly));
    expect(preview).toEqual({
      amountDue: 1485,
      currency: 'usd',
      subtotal: 1485,
      lines: [
        {
          kind: 'unused_time',
          description: 'Unused time on Basic after 07 Feb 2025',
          priceId: s.basicMonthly,
          quantity: null,
          amount: -743,
          periodStart: at(changeAt),
          periodEnd: at(FEB_28),
        },
        {
          kind: 'remaining_time',
          description: 'Remaining time on Pro after 07 Feb 2025',
          priceId: s.proMonthly,
          quantity: null,
          amount: 2228,
          periodStart: at(changeAt),
          periodEnd: at(FEB_28),
        },
      ],
      periodStart: at(START),
      periodEnd: at(FEB_28),
    });
    const sent = fake.requests.filter((r) => r.path === '/v1/invoices/create_preview').pop()!;
    expect(sent.params).toMatchObject({ subscription: subscription.id, subscription_details: { proration_behavior: 'always_invoice' } });
    // Prorated at Stripe's time, as the change will be: Tollgate's clock may differ from it.
    expect(sent.params).not.toHaveProperty('subscription_details.proration_date');

    const changed = unwrap(await s.processor.changeSubscription(subscription.id, s.proMonthly, 'change:1'));
    expect(changed.subscription).toMatchObject({ id: subscription.id, priceId: s.proMonthly, status: 'active', currentPeriodEnd: at(FEB_28) });
    const invoice = changed.invoices.at(-1)!;
    expect(invoice).toMatchObject({ reason: 'subscription_update', status: 'paid', subtotal: 1485, amountDue: 1485, amountPaid: 1485 });
    expect(invoice.lines).toEqual(preview.lines);
    const update = fake.requests.filter((r) => r.path === `/v1/subscriptions/${subscription.id}` && r.method === 'POST').pop()!;
    expect(update.params).toMatchObject({
      proration_behavior: 'always_invoice',
      payment_behavior: 'error_if_incomplete',
      items: { 0: { price: s.proMonthly } },
    });
    expect(update.idempotencyKey).toBe('change:1:change-price');
    // Already on the price: nothing more is sent or charged.
    expect(unwrap(await s.processor.changeSubscription(subscription.id, s.proMonthly, 'change:2')).invoices).toHaveLength(2);
  });

  it('previews a change of interval: a new cycle from now, charged in full less the credit', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.advanceTo(s.keys.id, changeAt);
    const preview = unwrap(await s.processor.previewChange(subscription.id, s.proYearly));
    expect(preview.amountDue).toBe(30000 - 743);
    expect(preview.lines.map((l) => [l.kind, l.amount])).toEqual([
      ['unused_time', -743],
      ['subscription', 30000],
    ]);
    expect([preview.periodStart, preview.periodEnd]).toEqual([at(changeAt), new Date(Date.UTC(2026, 1, 7, 17))]);
  });

  it('previews nothing due during a trial', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s, { trialDays: 14 }));
    fake.advance(s.keys.id, 2 * DAY);
    const preview = unwrap(await s.processor.previewChange(subscription.id, s.proMonthly));
    expect(preview).toMatchObject({ amountDue: 0, subtotal: 0, lines: [], periodStart: at(START), periodEnd: at(START + 14 * DAY) });
  });

  it('answers a declined proration charge with card_declined and leaves the price as it was', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.setChargeOutcome(s.keys.id, subscription.paymentMethod!.id, {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    fake.advanceTo(s.keys.id, changeAt);
    expect(failure(await s.processor.changeSubscription(subscription.id, s.proMonthly, 'change:declined'))).toEqual({
      kind: 'card_declined',
      declineCode: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    const after = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(after.subscription).toMatchObject({ priceId: s.basicMonthly, status: 'active' });
    expect(after.invoices).toHaveLength(1);
  });
});

describe('seats', () => {
  // Team: 20.00 a month for the first 2 seats, 10.00 for each further one.
  const seatPrice = (id: string, amount: number, included: number): Price => ({
    ...price(id, 'pln_team', amount),
    seats: { unitAmount: 1000, included, minimum: 1, maximum: 50 },
  });
  // As in 'changing price': 7 days and 5 hours into a 28-day period, 0.7425595 of it left.
  const changeAt = START + 7 * DAY + 5 * HOUR;

  async function teamSetup() {
    const s = await setup();
    const product = unwrap(await s.processor.upsertProduct({ ...plan('pln_team', 'Team'), audience: 'organizations' }, null, { projectId: PROJECT }));
    const team = unwrap(await s.processor.createPrice(seatPrice('prc_team_m', 2000, 2), product, { projectId: PROJECT }));
    return { ...s, product, team };
  }

  async function subscribeTeam(s: Awaited<ReturnType<typeof teamSetup>>, quantity: number, card = 'pm_card_visa') {
    return s.processor.createSubscription({
      customerId: s.customer,
      priceId: s.team,
      quantity,
      paymentMethodId: card,
      trialDays: null,
      metadata: { projectId: PROJECT, organizationId: 'org_1', subscriptionId: 'sub_tollgate_team', priceId: 'prc_team_m' },
      idempotencyKey: `subscribe:${Math.random().toString(36).slice(2)}`,
    });
  }

  it('creates a per-seat price as graduated tiers (base and included seats, then per seat), or per unit without either; marked as per seat', async () => {
    const s = await teamSetup();
    const stripe = rawClient(s.keys);
    const tiered = await stripe.prices.retrieve(s.team, { expand: ['tiers'] });
    expect(tiered).toMatchObject({
      billing_scheme: 'tiered',
      tiers_mode: 'graduated',
      unit_amount: null,
      recurring: { interval: 'month' },
      metadata: { tollgate_seats: '1', tollgate_project_id: PROJECT, tollgate_price_id: 'prc_team_m' },
    });
    expect(tiered.tiers!.map((t) => [t.up_to, t.flat_amount, t.unit_amount])).toEqual([
      [2, 2000, 0],
      [null, null, 1000],
    ]);

    const based = await stripe.prices.retrieve(unwrap(await s.processor.createPrice(seatPrice('prc_team_b', 500, 0), s.product, { projectId: PROJECT })), {
      expand: ['tiers'],
    });
    expect(based.tiers!.map((t) => [t.up_to, t.flat_amount, t.unit_amount])).toEqual([[null, 500, 1000]]);

    const perUnit = await stripe.prices.retrieve(unwrap(await s.processor.createPrice(seatPrice('prc_team_u', 0, 0), s.product, { projectId: PROJECT })));
    expect(perUnit).toMatchObject({ billing_scheme: 'per_unit', unit_amount: 1000, metadata: { tollgate_seats: '1' } });
    expect(fake.get<Stripe.Price>(s.keys.id, s.basicMonthly)!.metadata).not.toHaveProperty('tollgate_seats');
  });

  it('subscribes a quantity; the tier lines Stripe itemizes a period into read as one line for all the seats', async () => {
    const s = await teamSetup();
    const before = fake.requests.length;
    const { subscription, invoices } = unwrap(await subscribeTeam(s, 3));
    expect(subscription).toMatchObject({ priceId: s.team, quantity: 3, status: 'active' });
    const sent = fake.requests.slice(before).find((r) => r.path === '/v1/subscriptions' && r.method === 'POST')!;
    expect(sent.params).toMatchObject({ items: { 0: { price: s.team, quantity: '3' } } });

    // Stripe: 2 seats in tier 1 (0.00 each), its flat 20.00, 1 seat in tier 2 (10.00).
    const stored = fake.get<Stripe.Invoice>(s.keys.id, invoices[0]!.id)!;
    expect(stored.lines.data.map((l) => [l.description, l.quantity, l.amount])).toEqual([
      ['2 × Team (Tier 1 at $0.00 / month)', 2, 0],
      ['Team (Tier 1 at $20.00 / month)', 0, 2000],
      ['1 × Team (Tier 2 at $10.00 / month)', 1, 1000],
    ]);
    expect(invoices[0]).toMatchObject({ amountPaid: 3000, periodStart: at(START), periodEnd: at(FEB_28) });
    expect(invoices[0]!.lines).toEqual([
      { kind: 'subscription', description: '3 × Team', priceId: s.team, quantity: 3, amount: 3000, periodStart: at(START), periodEnd: at(FEB_28) },
    ]);
  });

  it('checks out a quantity', async () => {
    const s = await teamSetup();
    const before = fake.requests.length;
    const session = unwrap(
      await s.processor.createCheckout({
        customerId: s.customer,
        priceId: s.team,
        quantity: 4,
        successUrl: 'https://app.example.test/billing/done',
        cancelUrl: 'https://app.example.test/billing',
        promotionCodeId: null,
        trialDays: null,
        metadata: { projectId: PROJECT, organizationId: 'org_1' },
        email: null,
        idempotencyKey: 'checkout:seats',
      }),
    );
    const sent = fake.requests.slice(before).find((r) => r.path === '/v1/checkout/sessions')!;
    expect(sent.params).toMatchObject({ line_items: { 0: { price: s.team, quantity: '4' } } });
    expect(fake.get<Stripe.Checkout.Session>(s.keys.id, session.id)!.amount_total).toBe(4000);
    fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
    const subscription = unwrap(await s.processor.getSubscription(unwrap(await s.processor.checkoutSubscriptionId(session.id))!))!;
    expect(subscription.subscription.quantity).toBe(4);
    expect(subscription.invoices[0]).toMatchObject({ amountPaid: 4000, lines: [expect.objectContaining({ quantity: 4, amount: 4000 })] });
  });

  it('previews and sets a quantity with proration on the whole amounts; without proration for the renewal', async () => {
    const s = await teamSetup();
    const { subscription } = unwrap(await subscribeTeam(s, 3));
    fake.advanceTo(s.keys.id, changeAt);
    // Unused time on 3 seats: -round(3000 × 0.7425595) = -2228; remaining time on 5: round(5000 × 0.7425595) = 3713.
    const preview = unwrap(await s.processor.previewQuantity(subscription.id, 5));
    expect(preview).toEqual({
      amountDue: 1485,
      currency: 'usd',
      subtotal: 1485,
      lines: [
        {
          kind: 'unused_time',
          description: 'Unused time on 3 × Team after 07 Feb 2025',
          priceId: s.team,
          quantity: 3,
          amount: -2228,
          periodStart: at(changeAt),
          periodEnd: at(FEB_28),
        },
        {
          kind: 'remaining_time',
          description: 'Remaining time on 5 × Team after 07 Feb 2025',
          priceId: s.team,
          quantity: 5,
          amount: 3713,
          periodStart: at(changeAt),
          periodEnd: at(FEB_28),
        },
      ],
      periodStart: at(START),
      periodEnd: at(FEB_28),
    });
    const sentPreview = fake.requests.filter((r) => r.path === '/v1/invoices/create_preview').pop()!;
    const itemId = fake.get<Stripe.Subscription>(s.keys.id, subscription.id)!.items.data[0]!.id;
    expect(sentPreview.params).toMatchObject({
      subscription: subscription.id,
      subscription_details: { items: { 0: { id: itemId, quantity: '5' } }, proration_behavior: 'always_invoice' },
    });

    const changed = unwrap(await s.processor.updateQuantity(subscription.id, 5, { prorate: true, idempotencyKey: 'seats:1' }));
    expect(changed.subscription.quantity).toBe(5);
    expect(changed.invoices.at(-1)).toMatchObject({ reason: 'subscription_update', status: 'paid', amountPaid: 1485, lines: preview.lines });
    const update = fake.requests.filter((r) => r.path === `/v1/subscriptions/${subscription.id}` && r.method === 'POST').pop()!;
    expect(update.params).toMatchObject({
      items: { 0: { id: itemId, quantity: '5' } },
      proration_behavior: 'always_invoice',
      payment_behavior: 'error_if_incomplete',
    });
    expect(update.idempotencyKey).toBe('seats:1:update-quantity');
    // At the quantity already: nothing is sent.
    const writes = fake.requests.length;
    expect(unwrap(await s.processor.updateQuantity(subscription.id, 5, { prorate: true, idempotencyKey: 'seats:2' })).invoices).toHaveLength(2);
    expect(fake.requests.slice(writes).filter((r) => r.method !== 'GET')).toEqual([]);

    const later = unwrap(await s.processor.updateQuantity(subscription.id, 4, { prorate: false, idempotencyKey: 'seats:3' }));
    expect(later.subscription.quantity).toBe(4);
    expect(later.invoices).toHaveLength(2);
    const unprorated = fake.requests.filter((r) => r.path === `/v1/subscriptions/${subscription.id}` && r.method === 'POST').pop()!;
    expect(unprorated.params).toMatchObject({ items: { 0: { quantity: '4' } }, proration_behavior: 'none' });
    expect(unprorated.params).not.toHaveProperty('payment_behavior');

    fake.advanceTo(s.keys.id, FEB_28 + 2 * HOUR);
    const renewal = unwrap(await s.processor.getSubscription(subscription.id))!.invoices.at(-1)!;
    expect(renewal).toMatchObject({ reason: 'subscription_cycle', status: 'paid', amountPaid: 4000 });
    expect(renewal.lines).toEqual([expect.objectContaining({ kind: 'subscription', description: '4 × Team', quantity: 4, amount: 4000 })]);
  });

  it('answers a declined proration charge with card_declined and keeps the quantity', async () => {
    const s = await teamSetup();
    const { subscription } = unwrap(await subscribeTeam(s, 3));
    fake.setChargeOutcome(s.keys.id, subscription.paymentMethod!.id, {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    fake.advanceTo(s.keys.id, changeAt);
    expect(failure(await s.processor.updateQuantity(subscription.id, 5, { prorate: true, idempotencyKey: 'seats:declined' }))).toEqual({
      kind: 'card_declined',
      declineCode: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    const after = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(after.subscription).toMatchObject({ quantity: 3, status: 'active' });
    expect(after.invoices).toHaveLength(1);
  });
});

describe('cancel, pause and resume', () => {
  it('cancels at period end (pending), resumes, then cancels now; repeats are harmless', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.advance(s.keys.id, 3 * DAY);
    const pending = unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: true, idempotencyKey: 'cancel:a' }));
    expect(pending.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, canceledAt: at(START + 3 * DAY), endedAt: null });
    const writes = fake.requests.length;
    expect(
      unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: true, idempotencyKey: 'cancel:b' })).subscription.cancelAtPeriodEnd,
    ).toBe(true);
    expect(fake.requests.slice(writes).filter((r) => r.method !== 'GET')).toEqual([]);

    const resumed = unwrap(await s.processor.resumeSubscription(subscription.id, 'resume:a'));
    expect(resumed.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: false, canceledAt: null });

    fake.advance(s.keys.id, DAY);
    const canceled = unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: false, idempotencyKey: 'cancel:c' }));
    expect(canceled.subscription).toMatchObject({ status: 'canceled', canceledAt: at(START + 4 * DAY), endedAt: at(START + 4 * DAY) });
    const again = unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: false, idempotencyKey: 'cancel:d' }));
    expect(again.subscription.status).toBe('canceled');
    expect(fake.get<Stripe.Customer>(s.keys.id, s.customer)!.balance).toBe(0);
  });

  it('ends a pending cancellation at the period end', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: true, idempotencyKey: 'cancel:end' }));
    fake.advanceTo(s.keys.id, FEB_28 + 2 * HOUR);
    const ended = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(ended.subscription).toMatchObject({ status: 'canceled', endedAt: at(FEB_28), cancelAtPeriodEnd: false });
    expect(fake.get<Stripe.Subscription>(s.keys.id, subscription.id)!.cancel_at_period_end).toBe(true);
    expect(ended.invoices).toHaveLength(1);
  });

  it('pauses (collection voided + Tollgate’s mark), skips the renewal while paused, and the resume starts a new period and charges it', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.advance(s.keys.id, 2 * DAY);
    const paused = unwrap(await s.processor.pauseSubscription(subscription.id, 'pause:1'));
    expect(paused.subscription).toMatchObject({ status: 'paused', pausedAt: at(START + 2 * DAY) });
    expect(fake.get<Stripe.Subscription>(s.keys.id, subscription.id)).toMatchObject({
      status: 'active',
      pause_collection: { behavior: 'void', resumes_at: null },
      metadata: { tollgate_paused_at: String(START + 2 * DAY), tollgate_paused_period_end: String(FEB_28), tollgate_project_id: PROJECT },
    });
    fake.advance(s.keys.id, DAY);
    expect(unwrap(await s.processor.pauseSubscription(subscription.id, 'pause:2')).subscription.pausedAt).toEqual(at(START + 2 * DAY));

    fake.advanceTo(s.keys.id, FEB_28 + 2 * HOUR);
    const during = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(during.subscription).toMatchObject({ status: 'paused', currentPeriodStart: at(FEB_28) });
    expect(during.invoices.map((i) => [i.reason, i.status, i.amountPaid])).toEqual([
      ['subscription_create', 'paid', 1000],
      ['subscription_cycle', 'void', 0],
    ]);

    // The renewal passed while paused: billing_cycle_anchor=now, a whole period charged, no proration.
    const resumed = unwrap(await s.processor.resumeSubscription(subscription.id, 'resume:1'));
    expect(resumed.subscription).toMatchObject({
      status: 'active',
      pausedAt: null,
      currentPeriodStart: at(FEB_28 + 2 * HOUR),
      billingCycleAnchor: at(FEB_28 + 2 * HOUR),
    });
    expect(resumed.invoices.map((i) => [i.reason, i.status, i.amountPaid])).toEqual([
      ['subscription_create', 'paid', 1000],
      ['subscription_cycle', 'void', 0],
      ['subscription_update', 'paid', 1000],
    ]);
    const stored = fake.get<Stripe.Subscription>(s.keys.id, subscription.id)!;
    expect(stored.pause_collection).toBeNull();
    expect(stored.metadata).not.toHaveProperty('tollgate_paused_at');
    expect(stored.metadata).not.toHaveProperty('tollgate_paused_period_end');
    // Nothing to resume: no write.
    const writes = fake.requests.length;
    unwrap(await s.processor.resumeSubscription(subscription.id, 'resume:2'));
    expect(fake.requests.slice(writes).filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('Stripe states Tollgate reads but does not make', () => {
  it('a subscription Stripe paused itself (trial ended without a card) is paused, and resumes through Stripe’s resume', async () => {
    const s = await setup();
    const stripe = rawClient(s.keys);
    const created = await stripe.subscriptions.create({
      customer: s.customer,
      items: [{ price: s.basicMonthly }],
      trial_period_days: 3,
      trial_settings: { end_behavior: { missing_payment_method: 'pause' } },
      metadata: { tollgate_project_id: PROJECT },
    });
    fake.advance(s.keys.id, 3 * DAY + HOUR);
    const paused = unwrap(await s.processor.getSubscription(created.id))!;
    expect(paused.subscription).toMatchObject({ status: 'paused', pausedAt: at(START + 3 * DAY), paymentMethod: null });
    const card = await stripe.paymentMethods.attach('pm_card_visa', { customer: s.customer });
    await stripe.customers.update(s.customer, { invoice_settings: { default_payment_method: card.id } });
    // The customer's default card is the one renewals use when the subscription has none.
    expect(unwrap(await s.processor.getSubscription(created.id))!.subscription.paymentMethod).toMatchObject({ id: card.id, last4: '4242' });
    const resumed = unwrap(await s.processor.resumeSubscription(created.id, 'resume:stripe-paused'));
    expect(resumed.subscription).toMatchObject({ status: 'active', pausedAt: null, currentPeriodStart: at(START + 3 * DAY + HOUR) });
    expect(fake.requests.filter((r) => r.path === `/v1/subscriptions/${created.id}/resume`).map((r) => r.idempotencyKey)).toEqual([
      'resume:stripe-paused:resume',
    ]);
  });

  it('maps unpaid to past_due, needs both halves of Tollgate’s pause, and skips drafts', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    const stored = fake.get<Stripe.Subscription>(s.keys.id, subscription.id)!;
    expect(subscriptionOf({ ...stored, status: 'unpaid' }).status).toBe('past_due');
    expect(subscriptionOf({ ...stored, pause_collection: { behavior: 'void', resumes_at: null } }).status).toBe('active');
    expect(subscriptionOf({ ...stored, pause_collection: { behavior: 'keep_as_draft', resumes_at: null }, metadata: { tollgate_paused_at: '1' } }).status).toBe(
      'active',
    );
    expect(subscriptionOf({ ...stored, metadata: { tollgate_paused_at: String(START) } }).status).toBe('active');
    const marked = { ...stored, pause_collection: { behavior: 'void' as const, resumes_at: null }, metadata: { tollgate_paused_at: String(START) } };
    expect(subscriptionOf(marked)).toMatchObject({ status: 'paused', pausedAt: at(START) });
    expect(subscriptionOf({ ...marked, status: 'unpaid' }).status).toBe('paused');
    expect(subscriptionOf({ ...marked, status: 'canceled' })).toMatchObject({ status: 'canceled', pausedAt: null });
    expect(() => subscriptionOf({ ...stored, items: { ...stored.items, data: [] } })).toThrow(/no items/);

    const invoice = fake.list<Stripe.Invoice>(s.keys.id, 'invoice')[0]!;
    expect(invoiceOf({ ...invoice, status: 'draft' }, invoice.lines.data)).toBeNull();
    expect(invoiceOf({ ...invoice, billing_reason: 'manual' }, invoice.lines.data)!.reason).toBe('manual');
    expect(invoiceOf({ ...invoice, billing_reason: 'subscription_threshold' }, invoice.lines.data)!.reason).toBe('manual');
    const line = invoice.lines.data[0]!;
    const pending = {
      ...line,
      amount: -250,
      parent: {
        type: 'invoice_item_details' as const,
        subscription_item_details: null,
        invoice_item_details: { invoice_item: 'ii_1', proration: true, proration_details: null, subscription: subscription.id },
      },
    };
    expect(invoiceOf(invoice, [pending])!.lines[0]).toMatchObject({ kind: 'unused_time', amount: -250, priceId: s.basicMonthly });
  });
});

describe('renewals as Stripe reports them', () => {
  it('reports a failed renewal as past_due since the charge, with the open invoice', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s));
    fake.setChargeOutcome(s.keys.id, subscription.paymentMethod!.id, {
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
    fake.advanceTo(s.keys.id, FEB_28 + HOUR);
    const { subscription: after, invoices } = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(after).toMatchObject({ status: 'past_due', pastDueAt: at(FEB_28 + HOUR), currentPeriodStart: at(FEB_28) });
    expect(invoices.at(-1)).toMatchObject({ reason: 'subscription_cycle', status: 'open', amountDue: 1000, amountPaid: 0, attemptCount: 1, paidAt: null });
  });

  it('a trial on a card whose charges fail ends past due', async () => {
    const s = await setup();
    const { subscription } = unwrap(await subscribe(s, { card: 'pm_card_chargeCustomerFail', trialDays: 7 }));
    expect(subscription.status).toBe('trialing');
    fake.advance(s.keys.id, 7 * DAY + HOUR);
    const after = unwrap(await s.processor.getSubscription(subscription.id))!;
    expect(after.subscription).toMatchObject({ status: 'past_due', pastDueAt: at(START + 7 * DAY + HOUR) });
    expect(after.invoices.map((i) => [i.status, i.subtotal])).toEqual([
      ['paid', 0],
      ['open', 1000],
    ]);
  });
});

describe('webhooks', () => {
  const webhooks = new StripeWebhooks();

  /** An account whose events can be signed (its endpoint listens to nothing that happens here). */
  async function signedSetup() {
    const s = await setup();
    fake.addWebhookEndpoint(s.keys.id, 'http://127.0.0.1:9/webhooks/stripe', { enabledEvents: ['coupon.deleted'] });
    return s;
  }
  const eventOf = (keys: AccountKeys, type: string) => {
    const found = fake.events(keys.id, type).at(-1);
    if (!found) throw new Error(`no ${type} event`);
    return found;
  };
  const signed = (keys: AccountKeys, eventId: string, opts: { timestamp?: number; secret?: string } = {}) => {
    const { payload, header } = fake.webhooks.signedRequest(keys.id, eventId, undefined, opts);
    return { body: Buffer.from(payload), header };
  };

  it('verifies Stripe-Signature: good, tampered, wrong secret, missing, older than 5 minutes', async () => {
    const s = await signedSetup();
    const event = eventOf(s.keys, 'customer.created');
    const { body, header } = signed(s.keys, event.id);
    const now = new Date();
    expect(webhooks.verify(body, header, s.keys.webhookSecret, now).ok).toBe(true);
    const tampered = Buffer.from(body.toString('utf8').replace('ada@example.test', 'eve@example.test'));
    expect(webhooks.verify(tampered, header, s.keys.webhookSecret, now)).toEqual({ ok: false, error: 'invalid_signature' });
    expect(webhooks.verify(body, header, 'whsec_wrong', now)).toEqual({ ok: false, error: 'invalid_signature' });
    expect(webhooks.verify(body, signed(s.keys, event.id, { secret: 'whsec_other' }).header, s.keys.webhookSecret, now).ok).toBe(false);
    expect(webhooks.verify(body, undefined, s.keys.webhookSecret, now).ok).toBe(false);
    expect(webhooks.verify(body, 'garbage', s.keys.webhookSecret, now).ok).toBe(false);
    expect(webhooks.verify(body, header, '', now).ok).toBe(false);
    const notJson = Buffer.from('not json');
    const notJsonHeader = Stripe.webhooks.generateTestHeaderString({ payload: 'not json', secret: s.keys.webhookSecret });
    expect(webhooks.verify(notJson, notJsonHeader, s.keys.webhookSecret, now).ok).toBe(false);

    const sentAt = Math.floor(Date.now() / 1000) - 600;
    const stale = signed(s.keys, event.id, { timestamp: sentAt });
    expect(webhooks.verify(stale.body, stale.header, s.keys.webhookSecret, now).ok).toBe(false);
    // The tolerance is measured against the clock Tollgate passes in.
    expect(webhooks.verify(stale.body, stale.header, s.keys.webhookSecret, at(sentAt + 299)).ok).toBe(true);
    expect(webhooks.verify(stale.body, stale.header, s.keys.webhookSecret, at(sentAt + 301)).ok).toBe(false);
  });

  it('maps the events the server emits for a subscription, its invoices, payments and cards', async () => {
    const s = await signedSetup();
    const { subscription } = unwrap(await subscribe(s));
    const verified = (type: string) => {
      const event = eventOf(s.keys, type);
      const { body, header } = signed(s.keys, event.id);
      const result = webhooks.verify(body, header, s.keys.webhookSecret, new Date());
      if (!result.ok) throw new Error(`${type} did not verify`);
      expect(result.value).toMatchObject({ id: event.id, type, createdAt: at(event.created) });
      return result.value;
    };
    const bySubscription = { kind: 'subscription', subscriptionId: subscription.id };
    expect(verified('customer.subscription.created')).toMatchObject({ projectId: PROJECT, subject: bySubscription });
    for (const type of ['invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_succeeded']) {
      expect(verified(type)).toMatchObject({ projectId: PROJECT, subject: bySubscription });
    }
    const byCustomer = { kind: 'customer', customerId: s.customer };
    expect(verified('payment_intent.succeeded')).toMatchObject({ projectId: null, subject: byCustomer });
    expect(verified('payment_method.attached').subject).toEqual(byCustomer);
    expect(verified('customer.created')).toMatchObject({ projectId: PROJECT, subject: { kind: 'ignored' } });
    expect(verified('invoice_payment.paid').subject).toEqual({ kind: 'ignored' });
    expect(verified('product.created').subject).toEqual({ kind: 'ignored' });

    await rawClient(s.keys).paymentMethods.update(subscription.paymentMethod!.id, { card: { exp_month: 12, exp_year: 2031 } });
    expect(verified('payment_method.updated').subject).toEqual(byCustomer);
    fake.updateCard(s.keys.id, subscription.paymentMethod!.id, { exp_year: 2032 });
    expect(verified('payment_method.automatically_updated').subject).toEqual(byCustomer);

    unwrap(await s.processor.pauseSubscription(subscription.id, 'pause:w'));
    expect(verified('customer.subscription.updated').subject).toEqual(bySubscription);
    unwrap(await s.processor.cancelSubscription(subscription.id, { atPeriodEnd: false, idempotencyKey: 'cancel:w' }));
    expect(verified('customer.subscription.deleted').subject).toEqual(bySubscription);
  });

  it('maps a failed payment and a completed checkout', async () => {
    const s = await signedSetup();
    const { subscription } = unwrap(await subscribe(s));
    fake.setChargeOutcome(s.keys.id, subscription.paymentMethod!.id, {
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
    });
    fake.advanceTo(s.keys.id, FEB_28 + HOUR);
    const failed = eventOf(s.keys, 'payment_intent.payment_failed');
    const f = signed(s.keys, failed.id);
    expect(webhooks.verify(f.body, f.header, s.keys.webhookSecret, new Date())).toMatchObject({
      ok: true,
      value: { subject: { kind: 'customer', customerId: s.customer } },
    });

    const session = unwrap(
      await s.processor.createCheckout({
        customerId: s.customer,
        priceId: s.basicMonthly,
        successUrl: 'https://app.example.test/ok',
        cancelUrl: 'https://app.example.test/no',
        promotionCodeId: null,
        trialDays: null,
        metadata: meta(),
        email: null,
        idempotencyKey: 'checkout:w',
      }),
    );
    fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
    const completed = eventOf(s.keys, 'checkout.session.completed');
    const c = signed(s.keys, completed.id);
    const result = webhooks.verify(c.body, c.header, s.keys.webhookSecret, new Date());
    const subscriptionId = unwrap(await s.processor.checkoutSubscriptionId(session.id));
    expect(result).toEqual({
      ok: true,
      value: {
        id: completed.id,
        type: 'checkout.session.completed',
        createdAt: at(completed.created),
        projectId: PROJECT,
        subject: { kind: 'checkout_completed', checkoutId: session.id, subscriptionId, customerId: s.customer },
      },
    });
  });

  it('takes an untrusted look at a payload: project, customer and event id, or null when it is no event', async () => {
    const s = await signedSetup();
    const { subscription } = unwrap(await subscribe(s));
    const hint = (type: string) => webhooks.hints(Buffer.from(fake.webhooks.signedRequest(s.keys.id, eventOf(s.keys, type).id).payload));
    expect(hint('customer.subscription.created')).toEqual({
      projectId: PROJECT,
      customerId: s.customer,
      eventId: eventOf(s.keys, 'customer.subscription.created').id,
    });
    expect(hint('invoice.paid')).toMatchObject({ projectId: PROJECT, customerId: s.customer });
    expect(hint('customer.created')).toMatchObject({ projectId: PROJECT, customerId: s.customer });
    expect(hint('payment_intent.succeeded')).toMatchObject({ projectId: null, customerId: s.customer });
    expect(hint('customer.subscription.created')!.eventId).toMatch(/^evt_/);
    expect(webhooks.hints(Buffer.from('not json'))).toBeNull();
    expect(webhooks.hints(Buffer.from('[1,2]'))).toBeNull();
    expect(webhooks.hints(Buffer.from('{"type":"x"}'))).toBeNull();
    expect(webhooks.hints(Buffer.from('{"type":"x","data":{"object":{"metadata":{"tollgate_project_id":7}}}}'))).toEqual({
      projectId: null,
      customerId: null,
      eventId: null,
    });
    expect(subscription.metadata.projectId).toBe(PROJECT);
  });

  it('ignores an invoice without a subscription and events whose object is missing', () => {
    expect(subjectOf('invoice.paid', { object: 'invoice', id: 'in_1', parent: null, customer: 'cus_1' })).toEqual({ kind: 'ignored' });
    expect(subjectOf('customer.subscription.updated', null)).toEqual({ kind: 'ignored' });
    expect(subjectOf('payment_intent.succeeded', { object: 'payment_intent', id: 'pi_1', customer: null })).toEqual({ kind: 'ignored' });
    expect(subjectOf('charge.refunded', { object: 'charge', id: 'ch_1', customer: 'cus_1' })).toEqual({ kind: 'ignored' });
  });
});

describe('idempotency keys', () => {
  it('suffixes the caller’s key per step and keeps it within Stripe’s 255 characters', () => {
    expect(stepKey('subscribe:usr_1:abc', 'create-subscription')).toBe('subscribe:usr_1:abc:create-subscription');
    const long = stepKey('k'.repeat(250), 'attach-payment-method');
    expect(long.length).toBeLessThanOrEqual(255);
    expect(long).toBe(stepKey('k'.repeat(250), 'attach-payment-method'));
    expect(long).not.toBe(stepKey('k'.repeat(250), 'create-subscription'));
  });
});

describe('usage overage on Billing Meters', () => {
  const terms = { meterKey: 'ai_tokens', meterName: 'AI tokens', unitAmount: 200, packageSize: 1000, currency: 'usd', interval: 'month' } as const;
  const LOOKUP_KEY = 'tollgate_metered:ai_tokens:usd:month:200:1000';
  const ensure = (processor: StripeProcessor, extra: Partial<Omit<MeteredPriceInput, 'metadata'>> = {}) =>
    processor.ensureMeteredPrice({ ...terms, ...extra, metadata: { projectId: PROJECT } });
  const sent = (since: number) => fake.requests.slice(since).map((r) => `${r.method} ${r.path}`);

  it('creates one meter per meter key and one metered price per terms, found again by its lookup key', async () => {
    const s = await setup();
    const id = unwrap(await ensure(s.processor));
    const meters = fake.list<Stripe.Billing.Meter>(s.keys.id, 'billing.meter');
    expect(meters).toEqual([
      expect.objectContaining({
        display_name: 'AI tokens',
        event_name: 'tollgate_ai_tokens',
        status: 'active',
        default_aggregation: { formula: 'sum' },
        customer_mapping: { type: 'by_id', event_payload_key: 'stripe_customer_id' },
        value_settings: { event_payload_key: 'value' },
      }),
    ]);
    const created = fake.get<Stripe.Price>(s.keys.id, id)!;
    expect(created).toMatchObject({
      active: true,
      currency: 'usd',
      unit_amount: 200,
      billing_scheme: 'per_unit',
      lookup_key: LOOKUP_KEY,
      recurring: { interval: 'month', usage_type: 'metered', meter: meters[0]!.id },
      transform_quantity: { divide_by: 1000, round: 'up' },
      metadata: { tollgate_project_id: PROJECT, tollgate_meter: 'ai_tokens' },
    });
    expect(fake.get<Stripe.Product>(s.keys.id, created.product as string)!.name).toBe('AI tokens');

    // The same processor remembers it; another (after a restart) finds it by its lookup key and writes nothing.
    let mark = fake.requests.length;
    expect(unwrap(await ensure(s.processor))).toBe(id);
    expect(sent(mark)).toEqual([]);
    const restarted = processorFor(s.keys);
    mark = fake.requests.length;
    expect(unwrap(await restarted.ensureMeteredPrice({ ...terms, meterName: 'Renamed tokens', metadata: { projectId: PROJECT } }))).toBe(id);
    expect(sent(mark)).toEqual(['GET /v1/prices']);

    // Other terms of the meter: another price on the same meter; a package of one unit transforms nothing.
    const perUnit = unwrap(await ensure(restarted, { unitAmount: 1, packageSize: 1 }));
    expect(fake.get<Stripe.Price>(s.keys.id, perUnit)).toMatchObject({ transform_quantity: null, recurring: { meter: meters[0]!.id } });
    expect(fake.list(s.keys.id, 'billing.meter')).toHaveLength(1);
    expect(fake.list(s.keys.id, 'price').filter((p) => (p as Stripe.Price).recurring?.usage_type === 'metered')).toHaveLength(2);
  });

  it('uses a meter of the event name made elsewhere; an archived price of the terms sells again, or is replaced after a day', async () => {
    const s = await setup();
    const stripe = rawClient(s.keys);
    const made = await stripe.billing.meters.create({ display_name: 'Tokens', event_name: 'tollgate_ai_tokens', default_aggregation: { formula: 'sum' } });
    const id = unwrap(await ensure(s.processor));
    expect(fake.get<Stripe.Price>(s.keys.id, id)!.recurring!.meter).toBe(made.id);
    expect(fake.list(s.keys.id, 'billing.meter')).toHaveLength(1);

    await stripe.prices.update(id, { active: false });
    expect(unwrap(await ensure(processorFor(s.keys)))).toBe(id);
    expect(fake.get<Stripe.Price>(s.keys.id, id)!.active).toBe(true);

    await stripe.prices.update(id, { active: false });
    fake.advance(s.keys.id, 25 * HOUR);
    const replacement = unwrap(await ensure(processorFor(s.keys)));
    expect(replacement).not.toBe(id);
    expect(fake.get<Stripe.Price>(s.keys.id, replacement)!.lookup_key).toBe(LOOKUP_KEY);
    expect(fake.get<Stripe.Price>(s.keys.id, id)!.lookup_key).toBeNull();
  });

  it('reports usage: the metered item is added once without proration, a meter event per identifier, and Tollgate reads the plan’s item', async () => {
    const s = await setup();
    const sub = unwrap(await subscribe(s)).subscription;
    const meteredPriceId = unwrap(await ensure(s.processor));
    const report = (quantity: number, identifier: string, processor = s.processor) =>
      processor.reportUsage({
        subscriptionId: sub.id,
        customerId: s.customer,
        meteredPriceId,
        meterKey: 'ai_tokens',
        quantity,
        identifier,
        timestamp: at(fake.now(s.keys.id)),
      });
    fake.advance(s.keys.id, DAY);
    const first = 'usr_1:mtr_1:2025-01-31T12:00:00.000Z:1500';
    const second = 'usr_1:mtr_1:2025-01-31T12:00:00.000Z:1501';
    const long = `${'4f1c9a7e-2b8d-4e6f-9a1c-3d5e7f9b1a2c:'.repeat(3)}2025-01-31T12:00:00.000Z:1600`;
    const before = fake.requests.length;
    unwrap(await report(1500, first));
    unwrap(await report(1, second));
    unwrap(await report(99, long));
    unwrap(await report(99, long));
    // A restarted Tollgate repeats the first report: Stripe refuses the identifier it holds, which is success.
    unwrap(await report(1500, first, processorFor(s.keys)));

    const writes = fake.requests.slice(before).filter((r) => r.method === 'POST');
    expect(writes.filter((r) => r.path === '/v1/subscription_items').map((r) => r.params)).toEqual([
      { subscription: sub.id, price: meteredPriceId, proration_behavior: 'none' },
    ]);
    const hashed = String(writes.filter((r) => r.path === '/v1/billing/meter_events')[2]!.params.identifier);
    expect(hashed).toMatch(/^tollgate_[0-9a-f]{64}$/);
    const events = writes.filter((r) => r.path === '/v1/billing/meter_events');
    expect(events.map((r) => [r.status, r.params.identifier, r.params.payload, r.params.event_name])).toEqual([
      [200, first, { stripe_customer_id: s.customer, value: '1500' }, 'tollgate_ai_tokens'],
      [200, second, { stripe_customer_id: s.customer, value: '1' }, 'tollgate_ai_tokens'],
      [200, hashed, { stripe_customer_id: s.customer, value: '99' }, 'tollgate_ai_tokens'],
      [400, hashed, { stripe_customer_id: s.customer, value: '99' }, 'tollgate_ai_tokens'],
      [400, first, { stripe_customer_id: s.customer, value: '1500' }, 'tollgate_ai_tokens'],
    ]);
    expect(events.every((r) => r.params.timestamp === String(START + DAY))).toBe(true);

    // Stripe's subscription has both items, nothing invoiced or prorated for the metered one; Tollgate reads the plan's.
    const stripeSub = fake.get<Stripe.Subscription>(s.keys.id, sub.id)!;
    expect(stripeSub.items.data.map((i) => [i.price.id, i.quantity])).toEqual([
      [s.basicMonthly, 1],
      [meteredPriceId, undefined],
    ]);
    expect(subscriptionOf(stripeSub)).toMatchObject({ priceId: s.basicMonthly, quantity: 1 });
    expect(fake.list(s.keys.id, 'invoice')).toHaveLength(1);
    expect(fake.list(s.keys.id, 'invoiceitem')).toEqual([]);

    // A plan change moves the plan's item and keeps the metered one.
    const changed = unwrap(await s.processor.changeSubscription(sub.id, s.proMonthly, 'change:metered'));
    expect(changed.subscription).toMatchObject({ priceId: s.proMonthly, quantity: 1 });
    expect(fake.get<Stripe.Subscription>(s.keys.id, sub.id)!.items.data.map((i) => i.price.id)).toEqual([s.proMonthly, meteredPriceId]);

    // The renewal bills 1,600 tokens as 2 started packages of 1,000 for the period that ended.
    fake.advanceTo(s.keys.id, FEB_28 + 2 * HOUR);
    const renewal = unwrap(await s.processor.getSubscription(sub.id))!.invoices.at(-1)!;
    // The invoice's period is the plan's (the period that began), whatever the order of its lines.
    expect(renewal).toMatchObject({ reason: 'subscription_cycle', status: 'paid', amountPaid: 3400, periodStart: at(FEB_28) });
    expect(renewal.lines.filter((l) => l.priceId === meteredPriceId)).toEqual([
      {
        kind: 'subscription',
        description: '2 × AI tokens (at $2.00 per 1000 units / month)',
        priceId: meteredPriceId,
        quantity: 2,
        amount: 400,
        periodStart: at(START),
        periodEnd: at(FEB_28),
      },
    ]);

    // Nothing reported the next period: Stripe lists the metered item for 0; Tollgate's invoice shows usage only.
    const MAR_31 = Date.UTC(2025, 2, 31, 12) / 1000;
    fake.advanceTo(s.keys.id, MAR_31 + 2 * HOUR);
    const stripeInvoice = fake.list<Stripe.Invoice>(s.keys.id, 'invoice')[0]!;
    expect(stripeInvoice.lines.data.filter((l) => l.pricing?.price_details?.price === meteredPriceId)).toEqual([
      expect.objectContaining({ amount: 0, quantity: 0, description: '0 × AI tokens (at $2.00 per 1000 units / month)' }),
    ]);
    const quiet = unwrap(await s.processor.getSubscription(sub.id))!.invoices.at(-1)!;
    expect(quiet).toMatchObject({ id: stripeInvoice.id, amountPaid: 3000 });
    expect(quiet.lines.map((l) => l.priceId)).toEqual([s.proMonthly]);
  });

  it('refuses bad terms before asking Stripe, and answers Stripe’s refusals as failures', async () => {
    const s = await setup();
    const before = fake.requests.length;
    expect(failure(await ensure(s.processor, { packageSize: 0 }))).toEqual({ kind: 'invalid_request', message: 'Invalid transform_quantity[divide_by]: 0' });
    expect(failure(await ensure(s.processor, { meterKey: 'Not a key' })).kind).toBe('invalid_request');
    expect(fake.requests.length).toBe(before);

    const meteredPriceId = unwrap(await ensure(s.processor));
    const usage = { customerId: s.customer, meteredPriceId, meterKey: 'ai_tokens', identifier: 'u:1', timestamp: at(fake.now(s.keys.id)) };
    expect(failure(await s.processor.reportUsage({ ...usage, subscriptionId: 'sub_missing', quantity: 1 }))).toEqual({
      kind: 'invalid_request',
      message: "No such subscription: 'sub_missing'",
    });
    const sub = unwrap(await subscribe(s)).subscription;
    expect(failure(await s.processor.reportUsage({ ...usage, subscriptionId: sub.id, quantity: -1 })).kind).toBe('invalid_request');
    // Stripe takes events from the past 35 days only, and bills none dated in a period it invoiced:
    // usage from before the subscription's period with no draft invoice to take it is dated now.
    const stale = { ...usage, subscriptionId: sub.id, quantity: 5, identifier: 'u:stale', timestamp: at(fake.now(s.keys.id) - 40 * DAY) };
    unwrap(await s.processor.reportUsage(stale));
    const events = fake.list<{ event: Stripe.Billing.MeterEvent }>(s.keys.id, 'meter_event_record').map((r) => r.event);
    expect(events.find((e) => e.identifier === 'u:stale')!.timestamp).toBe(fake.now(s.keys.id));
  });

  it('the Stripe-shaped server answers meters, meter events, metered prices and items as stripe-node declares them', async () => {
    const s = await setup();
    const stripe = rawClient(s.keys);
    const meter = await stripe.billing.meters.create({
      display_name: 'Calls',
      event_name: 'calls',
      default_aggregation: { formula: 'count' },
      customer_mapping: { type: 'by_id', event_payload_key: 'stripe_customer_id' },
    });
    await expect(stripe.billing.meters.create({ display_name: 'Again', event_name: 'calls', default_aggregation: { formula: 'sum' } })).rejects.toThrow(
      /already uses the event_name/,
    );
    await expect(
      stripe.prices.create({ currency: 'usd', unit_amount: 5, recurring: { interval: 'month', usage_type: 'metered' }, product_data: { name: 'Calls' } }),
    ).rejects.toThrow(/Missing required param: recurring\[meter\]/);
    const price = await stripe.prices.create({
      currency: 'usd',
      unit_amount: 5,
      recurring: { interval: 'month', usage_type: 'metered', meter: meter.id },
      product_data: { name: 'Calls' },
      transform_quantity: { divide_by: 10, round: 'down' },
    });
    const sub = unwrap(await subscribe(s)).subscription;
    await expect(stripe.subscriptionItems.create({ subscription: sub.id, price: price.id, quantity: 3 })).rejects.toThrow(/Quantity should not be specified/);
    const item = await stripe.subscriptionItems.create({ subscription: sub.id, price: price.id, proration_behavior: 'none' });
    const events = [];
    for (let i = 0; i < 25; i++)
      events.push(await stripe.billing.meterEvents.create({ event_name: 'calls', payload: { stripe_customer_id: s.customer, value: '7' } }));
    // Another customer's calls are not this customer's.
    await stripe.billing.meterEvents.create({ event_name: 'calls', payload: { stripe_customer_id: 'cus_other', value: '1' } });
    // The upcoming invoice shows the usage so far: 25 calls counted, 2 packages of 10 (rounded down).
    const upcoming = await stripe.invoices.createPreview({ subscription: sub.id });
    expect(upcoming.lines.data.find((l) => l.pricing?.price_details?.price === price.id)).toMatchObject({ quantity: 2, amount: 10 });
    fake.advanceTo(s.keys.id, FEB_28 + 2 * HOUR);
    const renewal = fake.list<Stripe.Invoice>(s.keys.id, 'invoice')[0]!;
    expect(renewal.lines.data.find((l) => l.pricing?.price_details?.price === price.id)).toMatchObject({
      quantity: 2,
      amount: 10,
      period: { start: START, end: FEB_28 },
    });

    const types = loadStripeTypes(['Billing.Meter', 'Billing.MeterEvent', 'Price', 'SubscriptionItem', 'Subscription', 'Invoice']);
    const checks: [string, unknown][] = [
      ['Billing.Meter', meter],
      ['Billing.Meter', await stripe.billing.meters.retrieve(meter.id)],
      ...(await stripe.billing.meters.list({ status: 'active' })).data.map((m) => ['Billing.Meter', m] as [string, unknown]),
      ...events.map((e) => ['Billing.MeterEvent', e] as [string, unknown]),
      ['Price', await stripe.prices.retrieve(price.id)],
      ['SubscriptionItem', item],
      ['Subscription', await stripe.subscriptions.retrieve(sub.id)],
      ['Invoice', upcoming],
      ['Invoice', renewal],
    ];
    expect(checks.flatMap(([name, value]) => types.checkObject(name, JSON.parse(JSON.stringify(value))))).toEqual([]);
  }, 60_000);

  it("a late report keeps its period while that period's invoice is a draft, else goes on the next invoice, or nowhere once ended", async () => {
    const s = await setup();
    const sub = unwrap(await subscribe(s)).subscription;
    const meteredPriceId = unwrap(await ensure(s.processor));
    const inFirstPeriod = at(toUnixSeconds(sub.currentPeriodStart) + DAY);
    const report = (quantity: number, identifier: string, timestamp: Date) =>
      s.processor.reportUsage({ subscriptionId: sub.id, customerId: s.customer, meteredPriceId, meterKey: 'ai_tokens', quantity, identifier, timestamp });
    const usageOf = (invoice: Stripe.Invoice) =>
      invoice.lines.data.filter((l) => l.pricing?.price_details?.price === meteredPriceId).map((l) => [l.quantity, l.amount, l.period.start]);
    const renewals = () =>
      fake
        .list<Stripe.Invoice>(s.keys.id, 'invoice')
        .filter((i) => i.billing_reason === 'subscription_cycle')
        .sort((a, b) => a.created - b.created);
    fake.advance(s.keys.id, DAY);
    unwrap(await report(1000, 'usr_1:mtr_1:p1:1000', inFirstPeriod));

    // Ten minutes past the period's end: the renewal is a draft; usage of the ended period is billed in it.
    fake.advanceTo(s.keys.id, toUnixSeconds(sub.currentPeriodEnd) + 10 * 60);
    unwrap(await report(500, 'usr_1:mtr_1:p1:1500', at(toUnixSeconds(sub.currentPeriodEnd) - 1)));
    fake.advance(s.keys.id, 2 * HOUR);
    const [first] = renewals();
    expect(first).toMatchObject({ status: 'paid' });
    expect(usageOf(first!)).toEqual([[2, 400, toUnixSeconds(sub.currentPeriodStart)]]);

    // Once that invoice is final, usage dated in the ended period is billed on the next one (dated now).
    unwrap(await report(1, 'usr_1:mtr_1:p1:1501', at(toUnixSeconds(sub.currentPeriodEnd) - 1)));
    const events = fake.list<{ event: Stripe.Billing.MeterEvent }>(s.keys.id, 'meter_event_record').map((r) => r.event);
    expect(events.find((e) => e.identifier === 'usr_1:mtr_1:p1:1501')!.timestamp).toBe(fake.now(s.keys.id));
    fake.advance(s.keys.id, 31 * DAY);
    const second = renewals()[1]!;
    expect(usageOf(second)).toEqual([[1, 200, toUnixSeconds(sub.currentPeriodEnd)]]);

    // A subscription canceled now has its final invoice; usage dated before it is sent nowhere.
    unwrap(await s.processor.cancelSubscription(sub.id, { atPeriodEnd: false, idempotencyKey: 'cancel:usr_1' }));
    const mark = fake.requests.length;
    unwrap(await report(7, 'usr_1:mtr_1:p3:7', at(fake.now(s.keys.id) - DAY)));
    expect(fake.requests.slice(mark).map((r) => `${r.method} ${r.path}`)).not.toContain('POST /v1/billing/meter_events');
  });
});
