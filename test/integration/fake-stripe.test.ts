import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStripeTypes, type StripeTypes } from '../support/stripe/conformance';
import { routeTable, startFakeStripe, stripeOptionsFromUrl, type FakeStripe } from '../support/stripe/server';

/**
 * The Stripe-shaped server, driven only through the real stripe client (stripe-node 18.5, API
 * 2025-08-27.basil) and a real webhook receiver. Every account starts its clock on
 * 2025-01-31 12:00 UTC, so a monthly period ends on February 28 (Stripe's month-end rule).
 */

const DAY = 86_400;
const START = Date.UTC(2025, 0, 31, 12, 0, 0) / 1000;
const FEB_28 = Date.UTC(2025, 1, 28, 12, 0, 0) / 1000;
const MAR_31 = Date.UTC(2025, 2, 31, 12, 0, 0) / 1000;
const HOUR = 3600;

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe({ startTime: START });
});
afterAll(async () => {
  await fake?.close();
});

const client = (key: string) => new Stripe(key, { ...fake.clientOptions, maxNetworkRetries: 0 });

async function catalog() {
  const keys = fake.createAccount();
  const stripe = client(keys.secretKey);
  const basic = await stripe.products.create({ name: 'Basic' });
  const pro = await stripe.products.create({ name: 'Pro' });
  const basicMonthly = await stripe.prices.create({ product: basic.id, currency: 'usd', unit_amount: 1000, recurring: { interval: 'month' } });
  const proMonthly = await stripe.prices.create({ product: pro.id, currency: 'usd', unit_amount: 3000, recurring: { interval: 'month' } });
  const proYearly = await stripe.prices.create({ product: pro.id, currency: 'usd', unit_amount: 30000, recurring: { interval: 'year' } });
  return { keys, stripe, basic, pro, basicMonthly, proMonthly, proYearly };
}

async function customerWithCard(stripe: Stripe, card = 'pm_card_visa') {
  const customer = await stripe.customers.create({ email: 'ada@example.test', metadata: { tollgate_user: 'u_1' } });
  const pm = await stripe.paymentMethods.attach(card, { customer: customer.id });
  await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
  return { customer, pm };
}

async function rejection(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await p;
  } catch (e) {
    return e as Stripe.errors.StripeError;
  }
  throw new Error('expected the call to fail');
}

const item = (sub: Stripe.Subscription) => sub.items.data[0]!;

interface Received {
  body: string;
  signature: string;
}

async function startReceiver(status = 200) {
  const received: Received[] = [];
  let answer = status;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ body, signature: String(req.headers['stripe-signature']) });
      res.writeHead(answer);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`,
    received,
    answerWith: (s: number) => (answer = s),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('authentication and accounts', () => {
  it('answers an unknown or missing key with 401 and Stripe masks the key (StripeAuthenticationError)', async () => {
    const bad = await rejection(client('sk_test_unknownkey0000abcd').balance.retrieve());
    expect(bad).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(bad.statusCode).toBe(401);
    expect(bad.message).toBe('Invalid API Key provided: sk_test_**************abcd');
    const res = await fetch(`${fake.url}/v1/balance`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^You did not provide an API key/);
  });

  it('accepts secret and restricted keys, refuses the publishable key, and keeps accounts apart', async () => {
    const a = fake.createAccount();
    const b = fake.createAccount();
    expect(a.secretKey).toMatch(/^sk_test_/);
    expect(a.restrictedKey).toMatch(/^rk_test_/);
    expect(a.webhookSecret).toMatch(/^whsec_/);
    const account = await client(a.secretKey).accounts.retrieve();
    expect(account.id).toBe(a.id);
    expect((await client(a.restrictedKey).balance.retrieve()).object).toBe('balance');
    expect(await rejection(client(a.publishableKey).balance.retrieve())).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const customer = await client(a.secretKey).customers.create({ email: 'x@example.test' });
    const other = await rejection(client(b.secretKey).customers.retrieve(customer.id));
    expect(other.statusCode).toBe(404);
    expect(other.code).toBe('resource_missing');
    expect(other.message).toBe(`No such customer: '${customer.id}'`);
  });

  it('gives every account its own clock', async () => {
    const a = fake.createAccount();
    const b = fake.createAccount({ now: START + 100 });
    fake.advance(a.id, 10 * DAY);
    expect(fake.now(a.secretKey)).toBe(START + 10 * DAY);
    expect(fake.now(b.id)).toBe(START + 100);
    expect((await client(a.secretKey).customers.create({})).created).toBe(START + 10 * DAY);
    expect((await client(b.secretKey).customers.create({})).created).toBe(START + 100);
    expect(() => fake.advanceTo(a.id, START)).toThrow(/cannot go back/);
  });

  it('answers 403 when a restricted key lacks a permission (StripePermissionError)', async () => {
    const keys = fake.createAccount({ restrictedKeyDenies: ['GET /v1/balance'] });
    expect(await rejection(client(keys.restrictedKey).balance.retrieve())).toBeInstanceOf(Stripe.errors.StripePermissionError);
    expect((await client(keys.secretKey).balance.retrieve()).object).toBe('balance');
  });

  it('maps an API base URL to stripe-node options', () => {
    expect(stripeOptionsFromUrl(fake.url)).toEqual(fake.clientOptions);
    expect(stripeOptionsFromUrl('https://api.stripe.com')).toEqual({ host: 'api.stripe.com', port: 443, protocol: 'https' });
    expect(() => stripeOptionsFromUrl('http://127.0.0.1:9/stripe')).toThrow(/path/);
  });
});

describe('requests: encoding, strictness, errors', () => {
  it('parses stripe-node form bodies (nested brackets, metadata, expand[]) and records every request', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const before = fake.requests.length;
    const customer = await stripe.customers.create({ email: 'b@example.test', metadata: { project: 'p_1', user: 'u_2' } }, { idempotencyKey: 'cus-u_2' });
    expect(customer.metadata).toEqual({ project: 'p_1', user: 'u_2' });
    const prices = await stripe.prices.list({ expand: ['data.product'], lookup_keys: [], limit: 3 });
    expect((prices.data[0]!.product as Stripe.Product).object).toBe('product');
    const recorded = fake.requests.slice(before);
    expect(recorded[0]).toMatchObject({
      method: 'POST',
      path: '/v1/customers',
      idempotencyKey: 'cus-u_2',
      account: keys.id,
      stripeVersion: '2025-08-27.basil',
      status: 200,
    });
    expect(recorded[0]!.params).toEqual({ email: 'b@example.test', metadata: { project: 'p_1', user: 'u_2' } });
    expect(recorded[1]!.params).toEqual({ expand: { 0: 'data.product' }, limit: '3' });
    void basicMonthly;
  });

  it('refuses unknown parameters (also nested) and unknown routes like Stripe, and records them', async () => {
    const { stripe, basicMonthly } = await catalog();
    const start = fake.unexpected.length;
    const unknown = await rejection(stripe.customers.create({ emial: 'typo@example.test' } as never));
    expect(unknown).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.message).toBe('Received unknown parameter: emial');
    expect(unknown.param).toBe('emial');
    expect(unknown.code).toBe('parameter_unknown');
    const { customer } = await customerWithCard(stripe);
    const nested = await rejection(stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id, plan: 'x' } as never] }));
    expect(nested.message).toBe('Received unknown parameter: items[0][plan]');
    // Amounts of a price are immutable: Stripe's update call has no unit_amount.
    const immutable = await rejection(stripe.prices.update(basicMonthly.id, { unit_amount: 5 } as never));
    expect(immutable.message).toBe('Received unknown parameter: unit_amount');
    // A real Stripe parameter the server does not implement says so.
    const unsupported = await rejection(stripe.customers.create({ tax_id_data: [{ type: 'eu_vat', value: 'x' }] }));
    expect(unsupported.message).toMatch(/^Received unknown parameter: tax_id_data \(Stripe accepts this parameter/);
    const route = await rejection(stripe.rawRequest('GET', '/v1/subscription_schedules_typo'));
    expect(route.statusCode).toBe(404);
    expect(route.message).toMatch(/^Unrecognized request URL \(GET: \/v1\/subscription_schedules_typo\)/);
    const missing = await rejection(stripe.subscriptions.create({ customer: customer.id }));
    expect(missing.message).toBe('Missing required param: items.');
    expect(missing.code).toBe('parameter_missing');
    const badEnum = await rejection(
      stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }], payment_behavior: 'sometimes' as never }),
    );
    expect(badEnum.message).toBe(
      'Invalid payment_behavior: must be one of allow_incomplete, default_incomplete, error_if_incomplete, or pending_if_incomplete',
    );
    const recorded = fake.unexpected.slice(start).map((u) => `${u.reason} ${u.message.split(' ')[0]}`);
    expect(recorded).toEqual([
      'unknown_parameter emial',
      'unknown_parameter items[0][plan]',
      'unknown_parameter unit_amount',
      'unknown_parameter tax_id_data',
      'unknown_route GET',
    ]);
    expect(() => fake.assertNoUnexpectedRequests()).toThrow(/emial/);
    fake.unexpected.length = 0;
    expect(() => fake.assertNoUnexpectedRequests()).not.toThrow();
  });

  it('paginates lists newest first with limit, starting_after and has_more', async () => {
    const { stripe } = await catalog();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await stripe.customers.create({ email: `p${i}@example.test` }));
    const page1 = await stripe.customers.list({ limit: 2 });
    expect(page1.object).toBe('list');
    expect(page1.url).toBe('/v1/customers');
    expect(page1.data.map((c) => c.email)).toEqual(['p4@example.test', 'p3@example.test']);
    expect(page1.has_more).toBe(true);
    const page3 = await stripe.customers.list({ limit: 2, starting_after: made[1]!.id });
    expect(page3.data.map((c) => c.email)).toEqual(['p0@example.test']);
    expect(page3.has_more).toBe(false);
    const all = [];
    for await (const c of stripe.customers.list({ limit: 2 })) all.push(c.id);
    expect(all).toHaveLength(5);
    const byEmail = await stripe.customers.list({ email: 'p2@example.test' });
    expect(byEmail.data.map((c) => c.id)).toEqual([made[2]!.id]);
    const tooMany = await rejection(stripe.customers.list({ limit: 101 }));
    expect(tooMany.message).toBe('This value must be less than or equal to 100.');
  });

  it('answers an injected outage like Stripe (api_error, 5xx)', async () => {
    const { stripe } = await catalog();
    fake.failNext({ method: 'POST', path: '/v1/customers', status: 503 });
    const outage = await rejection(stripe.customers.create({ email: 'down@example.test' }));
    expect(outage).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(outage.statusCode).toBe(503);
    expect((await stripe.customers.create({ email: 'up@example.test' })).email).toBe('up@example.test');
  });
});

describe('idempotency', () => {
  it('replays the saved response for the same key and parameters, with Idempotent-Replayed', async () => {
    const { stripe } = await catalog();
    const first = await stripe.customers.create({ email: 'idem@example.test' }, { idempotencyKey: 'create-customer-1' });
    const again = await stripe.customers.create({ email: 'idem@example.test' }, { idempotencyKey: 'create-customer-1' });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect((await stripe.customers.list({ email: 'idem@example.test' })).data).toHaveLength(1);
  });

  it('refuses the same key with other parameters or another endpoint (idempotency_error)', async () => {
    const { stripe } = await catalog();
    await stripe.customers.create({ email: 'one@example.test' }, { idempotencyKey: 'k-2' });
    const other = await rejection(stripe.customers.create({ email: 'two@example.test' }, { idempotencyKey: 'k-2' }));
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(other.statusCode).toBe(400);
    expect(other.message).toBe(
      "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'k-2' if you " +
        'meant to execute a different request.',
    );
    const endpoint = await rejection(stripe.products.create({ name: 'X' }, { idempotencyKey: 'k-2' }));
    expect(endpoint.message).toMatch(
      /^Keys for idempotent requests can only be used for the same endpoint they were first used for \('POST \/v1\/customers' vs 'POST \/v1\/products'\)/,
    );
  });

  it('saves errors from execution (a decline) but not parameter errors; keys are per account', async () => {
    const { stripe, keys } = await catalog();
    const customer = await stripe.customers.create({ email: 'c@example.test' });
    const bad = await rejection(stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id, bogus: 1 } as never, { idempotencyKey: 'attach-1' }));
    expect(bad.statusCode).toBe(400);
    const declined = await rejection(stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: customer.id }, { idempotencyKey: 'attach-2' }));
    expect(declined.statusCode).toBe(402);
    const replay = await rejection(stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: customer.id }, { idempotencyKey: 'attach-2' }));
    expect(replay.statusCode).toBe(402);
    expect(replay.headers?.['idempotent-replayed']).toBe('true');
    const fixed = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id }, { idempotencyKey: 'attach-1' });
    expect(fixed.customer).toBe(customer.id);
    const otherAccount = client(fake.createAccount().secretKey);
    const elsewhere = await otherAccount.customers.create({ email: 'other@example.test' }, { idempotencyKey: 'attach-1' });
    expect(elsewhere.email).toBe('other@example.test');
    void keys;
  });
});

describe('catalog and customers', () => {
  it('creates products and prices; a price only changes active/metadata; lists filter', async () => {
    const { stripe, pro, proMonthly, proYearly, basicMonthly } = await catalog();
    expect(pro).toMatchObject({ object: 'product', active: true, livemode: false, created: START, name: 'Pro' });
    expect(pro.id).toMatch(/^prod_/);
    expect(proMonthly).toMatchObject({
      object: 'price',
      unit_amount: 3000,
      currency: 'usd',
      type: 'recurring',
      product: pro.id,
      recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
    });
    const renamed = await stripe.products.update(pro.id, { name: 'Pro plan', description: 'Everything', metadata: { tier: '2' } });
    expect(renamed).toMatchObject({ name: 'Pro plan', description: 'Everything', metadata: { tier: '2' } });
    const archived = await stripe.prices.update(proMonthly.id, { active: false, lookup_key: 'pro_monthly_old' });
    expect(archived).toMatchObject({ active: false, unit_amount: 3000, lookup_key: 'pro_monthly_old' });
    const active = await stripe.prices.list({ product: pro.id, active: true });
    expect(active.data.map((p) => p.id)).toEqual([proYearly.id]);
    const byLookup = await stripe.prices.list({ lookup_keys: ['pro_monthly_old'] });
    expect(byLookup.data.map((p) => p.id)).toEqual([proMonthly.id]);
    const clash = await rejection(stripe.prices.create({ product: pro.id, currency: 'usd', unit_amount: 1, lookup_key: 'pro_monthly_old' }));
    expect(clash.message).toBe(`A price (\`${proMonthly.id}\`) already uses that lookup key.`);
    const noProduct = await rejection(stripe.prices.create({ product: 'prod_missing', currency: 'usd', unit_amount: 1 }));
    expect(noProduct.message).toBe("No such product: 'prod_missing'");
    expect(noProduct.param).toBe('product');
    const inactive = await rejection(
      stripe.subscriptions.create({ customer: (await customerWithCard(stripe)).customer.id, items: [{ price: proMonthly.id }] }),
    );
    expect(inactive.message).toBe('The price specified is inactive. This field only accepts active prices.');
    void basicMonthly;
  });

  it('creates, updates and retrieves customers; the default payment method must be attached', async () => {
    const { stripe } = await catalog();
    const customer = await stripe.customers.create({ email: 'ada@example.test', name: 'Ada', metadata: { project: 'p', user: 'u' } });
    expect(customer).toMatchObject({
      object: 'customer',
      email: 'ada@example.test',
      name: 'Ada',
      balance: 0,
      livemode: false,
      invoice_settings: { default_payment_method: null },
    });
    expect(customer.id).toMatch(/^cus_/);
    const unattached = await rejection(stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: 'pm_card_visa' } }));
    expect(unattached.message).toBe(
      'The customer does not have a payment method with the ID pm_card_visa. The payment method must be attached to the customer.',
    );
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
    const updated = await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id }, metadata: { user: '' } });
    expect(updated.invoice_settings.default_payment_method).toBe(pm.id);
    expect(updated.metadata).toEqual({ project: 'p' });
    const expanded = await stripe.customers.retrieve(customer.id, { expand: ['invoice_settings.default_payment_method'] });
    expect(((expanded as Stripe.Customer).invoice_settings.default_payment_method as Stripe.PaymentMethod).card?.last4).toBe('4242');
  });
});

describe("Stripe's test cards", () => {
  it('attaches pm_card_visa and pm_card_mastercard as new PaymentMethods', async () => {
    const { stripe } = await catalog();
    const customer = await stripe.customers.create({ email: 'cards@example.test' });
    const visa = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
    expect(visa.id).toMatch(/^pm_/);
    expect(visa.id).not.toBe('pm_card_visa');
    expect(visa).toMatchObject({ type: 'card', customer: customer.id, card: { brand: 'visa', last4: '4242', funding: 'credit' } });
    const mc = await stripe.paymentMethods.attach('pm_card_mastercard', { customer: customer.id });
    expect(mc.card).toMatchObject({ brand: 'mastercard', last4: '4444' });
    const listed = await stripe.paymentMethods.list({ customer: customer.id, type: 'card' });
    expect(listed.data.map((p) => p.id).sort()).toEqual([visa.id, mc.id].sort());
    const detached = await stripe.paymentMethods.detach(mc.id);
    expect(detached.customer).toBeNull();
    expect((await stripe.customers.listPaymentMethods(customer.id)).data.map((p) => p.id)).toEqual([visa.id]);
  });

  it('declines pm_card_chargeDeclined and the insufficient-funds card when attached (402 card_error)', async () => {
    const { stripe, keys } = await catalog();
    const customer = await stripe.customers.create({ email: 'decline@example.test' });
    const declined = await rejection(stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: customer.id }));
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined.statusCode).toBe(402);
    expect(declined).toMatchObject({ code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' });
    const funds = await rejection(stripe.paymentMethods.attach('pm_card_visa_chargeDeclinedInsufficientFunds', { customer: customer.id }));
    expect(funds).toMatchObject({ code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' });
    expect((await stripe.paymentMethods.list({ customer: customer.id })).data).toHaveLength(0);
    expect(fake.events(keys.id, 'payment_method.attached')).toHaveLength(0);
  });

  it('attaches pm_card_chargeCustomerFail; its charges fail later', async () => {
    const { stripe } = await catalog();
    const customer = await stripe.customers.create({ email: 'later@example.test' });
    const pm = await stripe.paymentMethods.attach('pm_card_chargeCustomerFail', { customer: customer.id });
    expect(pm.card?.last4).toBe('0341');
    expect(pm.customer).toBe(customer.id);
  });

  it('emits payment_method.updated for an API update and payment_method.automatically_updated for a network update', async () => {
    const { stripe, keys } = await catalog();
    const { pm } = await customerWithCard(stripe);
    const updated = await stripe.paymentMethods.update(pm.id, { card: { exp_month: 12, exp_year: 2030 }, billing_details: { name: 'Ada L' } });
    expect(updated.card).toMatchObject({ exp_month: 12, exp_year: 2030 });
    const apiEvent = fake.events(keys.id, 'payment_method.updated')[0]!;
    expect(apiEvent.data.previous_attributes).toMatchObject({
      card: { exp_month: pm.card!.exp_month, exp_year: pm.card!.exp_year },
      billing_details: { name: null },
    });
    fake.updateCard(keys.id, pm.id, { exp_year: 2031, last4: '1881' });
    const auto = fake.events(keys.id, 'payment_method.automatically_updated')[0]!;
    expect((auto.data.object as Stripe.PaymentMethod).card).toMatchObject({ exp_year: 2031, last4: '1881' });
    expect((await stripe.paymentMethods.retrieve(pm.id)).card?.last4).toBe('1881');
  });

  it('collects a card with a SetupIntent (client_secret; confirm attaches it, a decline fails it)', async () => {
    const { stripe, keys } = await catalog();
    const customer = await stripe.customers.create({ email: 'si@example.test' });
    const si = await stripe.setupIntents.create({ customer: customer.id, usage: 'off_session' });
    expect(si.client_secret).toMatch(new RegExp(`^${si.id}_secret_`));
    expect(si.status).toBe('requires_payment_method');
    const confirmed = await stripe.setupIntents.confirm(si.id, { payment_method: 'pm_card_visa' });
    expect(confirmed.status).toBe('succeeded');
    const pm = await stripe.paymentMethods.retrieve(confirmed.payment_method as string);
    expect(pm.customer).toBe(customer.id);
    const si2 = await stripe.setupIntents.create({ customer: customer.id });
    const failed = await rejection(stripe.setupIntents.confirm(si2.id, { payment_method: 'pm_card_chargeDeclined' }));
    expect(failed).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((await stripe.setupIntents.retrieve(si2.id)).last_setup_error?.decline_code).toBe('generic_decline');
    expect(fake.events(keys.id).map((e) => e.type)).toEqual(
      expect.arrayContaining(['setup_intent.created', 'setup_intent.succeeded', 'payment_method.attached', 'setup_intent.setup_failed']),
    );
  });
});

describe('subscriptions', () => {
  it('subscribes and charges at once: active, periods on the item (basil), invoice paid through a PaymentIntent', async () => {
    const { stripe, basicMonthly } = await catalog();
    const { customer, pm } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: basicMonthly.id }],
      default_payment_method: pm.id,
      metadata: { tollgate_subscription: 's_1' },
      expand: ['latest_invoice.payments'],
    });
    expect(sub.status).toBe('active');
    expect(sub.id).toMatch(/^sub_/);
    expect(sub).not.toHaveProperty('current_period_end');
    expect(item(sub)).toMatchObject({ current_period_start: START, current_period_end: FEB_28, quantity: 1 });
    expect(item(sub).price.id).toBe(basicMonthly.id);
    expect(sub.metadata).toEqual({ tollgate_subscription: 's_1' });
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({
      status: 'paid',
      amount_due: 1000,
      amount_paid: 1000,
      amount_remaining: 0,
      currency: 'usd',
      billing_reason: 'subscription_create',
    });
    expect(invoice.parent?.subscription_details?.subscription).toBe(sub.id);
    expect(invoice.lines.data[0]).toMatchObject({ amount: 1000, description: '1 × Basic (at $10.00 / month)', period: { start: START, end: FEB_28 } });
    expect(invoice).not.toHaveProperty('payment_intent');
    const payment = invoice.payments!.data[0]!;
    expect(payment).toMatchObject({ object: 'invoice_payment', status: 'paid', amount_paid: 1000, is_default: true });
    const pi = await stripe.paymentIntents.retrieve(payment.payment.payment_intent as string);
    expect(pi).toMatchObject({ status: 'succeeded', amount: 1000, amount_received: 1000, customer: customer.id, payment_method: pm.id });
    const noDeep = await rejection(stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice.payment_intent'] }));
    expect(noDeep.message).toBe('This property cannot be expanded (latest_invoice.payment_intent).');
  });

  it('leaves a declined first charge incomplete with the invoice open (allow_incomplete), or creates nothing (error_if_incomplete)', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe, 'pm_card_chargeCustomerFail');
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }], expand: ['latest_invoice.payments'] });
    expect(sub.status).toBe('incomplete');
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ status: 'open', amount_due: 1000, amount_paid: 0, attempted: true, attempt_count: 1 });
    const pi = await stripe.paymentIntents.retrieve(invoice.payments!.data[0]!.payment.payment_intent as string);
    expect(pi.status).toBe('requires_payment_method');
    expect(pi.last_payment_error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
    expect(fake.events(keys.id).map((e) => e.type)).toEqual(expect.arrayContaining(['payment_intent.payment_failed', 'invoice.payment_failed']));

    const error = await rejection(
      stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }], payment_behavior: 'error_if_incomplete' }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error.statusCode).toBe(402);
    const subs = await stripe.subscriptions.list({ customer: customer.id, status: 'all' });
    expect(subs.data.map((s) => s.id)).toEqual([sub.id]);

    // After 23 hours without payment the incomplete subscription expires and its invoice is voided.
    fake.advance(keys.id, 23 * HOUR);
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('incomplete_expired');
    expect((await stripe.invoices.retrieve(invoice.id!)).status).toBe('void');
  });

  it('default_incomplete waits for the PaymentIntent to be confirmed (confirmation_secret), then activates', async () => {
    const { stripe, basicMonthly } = await catalog();
    const customer = await stripe.customers.create({ email: 'elements@example.test' });
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: basicMonthly.id }],
      payment_behavior: 'default_incomplete',
      payment_settings: { save_default_payment_method: 'on_subscription' },
      expand: ['latest_invoice.confirmation_secret', 'latest_invoice.payments'],
    });
    expect(sub.status).toBe('incomplete');
    const invoice = sub.latest_invoice as Stripe.Invoice;
    const piId = invoice.payments!.data[0]!.payment.payment_intent as string;
    expect(invoice.confirmation_secret).toEqual({ client_secret: expect.stringMatching(new RegExp(`^${piId}_secret_`)), type: 'payment_intent' });
    await stripe.paymentIntents.confirm(piId, { payment_method: 'pm_card_visa' });
    const active = await stripe.subscriptions.retrieve(sub.id);
    expect(active.status).toBe('active');
    expect(active.default_payment_method).toMatch(/^pm_/);
    expect((await stripe.invoices.retrieve(invoice.id!)).status).toBe('paid');
  });

  it('starts a trial with a paid $0 invoice, warns 3 days before its end and charges at trial end', async () => {
    const { stripe, keys, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: proMonthly.id }],
      trial_period_days: 14,
      expand: ['latest_invoice'],
    });
    const trialEnd = START + 14 * DAY;
    expect(sub).toMatchObject({ status: 'trialing', trial_start: START, trial_end: trialEnd, billing_cycle_anchor: trialEnd });
    expect(item(sub).current_period_end).toBe(trialEnd);
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 0, total: 0 });
    expect(invoice.lines.data[0]!.description).toBe('Trial period for Pro');
    fake.advance(keys.id, 11 * DAY);
    expect(fake.events(keys.id, 'customer.subscription.trial_will_end')).toHaveLength(1);
    fake.advance(keys.id, 3 * DAY);
    const ended = await stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] });
    expect(ended.status).toBe('active');
    expect(item(ended)).toMatchObject({ current_period_start: trialEnd, current_period_end: trialEnd + 28 * DAY });
    expect((ended.latest_invoice as Stripe.Invoice).status).toBe('draft');
    fake.advance(keys.id, HOUR);
    const charged = await stripe.invoices.retrieve(
      ended.latest_invoice!.toString() === '[object Object]' ? (ended.latest_invoice as Stripe.Invoice).id! : (ended.latest_invoice as string),
    );
    expect(charged).toMatchObject({ status: 'paid', amount_paid: 3000, billing_reason: 'subscription_cycle' });
  });

  it('a trial on pm_card_chargeCustomerFail ends in a failed charge: past_due and invoice.payment_failed', async () => {
    const { stripe, keys, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe, 'pm_card_chargeCustomerFail');
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: proMonthly.id }], trial_period_days: 7 });
    expect(sub.status).toBe('trialing');
    fake.advance(keys.id, 7 * DAY + HOUR);
    const after = await stripe.subscriptions.retrieve(sub.id, { expand: ['latest_invoice'] });
    expect(after.status).toBe('past_due');
    expect(after.latest_invoice as Stripe.Invoice).toMatchObject({ status: 'open', amount_due: 3000, attempt_count: 1 });
    const failed = fake.events(keys.id, 'invoice.payment_failed');
    expect(failed).toHaveLength(1);
    expect((failed[0]!.data.object as Stripe.Invoice).id).toBe((after.latest_invoice as Stripe.Invoice).id);
  });

  it('a trial that ends without a payment method pauses (trial_settings) and resumes through /resume', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const customer = await stripe.customers.create({ email: 'nocard@example.test' });
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: basicMonthly.id }],
      trial_period_days: 3,
      trial_settings: { end_behavior: { missing_payment_method: 'pause' } },
    });
    expect(sub.status).toBe('trialing');
    fake.advance(keys.id, 3 * DAY + HOUR);
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('paused');
    expect(fake.events(keys.id, 'customer.subscription.paused')).toHaveLength(1);
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
    await stripe.subscriptions.update(sub.id, { default_payment_method: pm.id });
    const resumed = await stripe.subscriptions.resume(sub.id, { billing_cycle_anchor: 'now' });
    expect(resumed.status).toBe('active');
    expect(item(resumed).current_period_start).toBe(START + 3 * DAY + HOUR);
    expect(fake.events(keys.id, 'customer.subscription.resumed')).toHaveLength(1);
    const cancelling = await stripe.subscriptions.create({
      customer: (await stripe.customers.create({})).id,
      items: [{ price: basicMonthly.id }],
      trial_period_days: 1,
      trial_settings: { end_behavior: { missing_payment_method: 'cancel' } },
    });
    fake.advance(keys.id, DAY);
    expect((await stripe.subscriptions.retrieve(cancelling.id)).status).toBe('canceled');
  });

  it('renews at period end (month-end rule) and charges an hour later; a failed renewal is past_due until paid', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const { customer, pm } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    fake.advanceTo(keys.id, FEB_28 + HOUR);
    const renewed = await stripe.subscriptions.retrieve(sub.id);
    expect(item(renewed)).toMatchObject({ current_period_start: FEB_28, current_period_end: MAR_31 });
    const invoices = await stripe.invoices.list({ subscription: sub.id });
    expect(invoices.data.map((i) => [i.billing_reason, i.status, i.amount_paid])).toEqual([
      ['subscription_cycle', 'paid', 1000],
      ['subscription_create', 'paid', 1000],
    ]);
    expect(invoices.data[0]!.lines.data[0]!.period).toEqual({ start: FEB_28, end: MAR_31 });

    fake.setChargeOutcome(keys.id, pm.id, { decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' });
    fake.advanceTo(keys.id, MAR_31 + HOUR);
    const pastDue = await stripe.subscriptions.retrieve(sub.id);
    expect(pastDue.status).toBe('past_due');
    const open = (await stripe.invoices.list({ subscription: sub.id, status: 'open' })).data[0]!;
    expect(open.amount_remaining).toBe(1000);
    const retry = await rejection(stripe.invoices.pay(open.id!));
    expect(retry).toMatchObject({ statusCode: 402, decline_code: 'insufficient_funds' });
    expect((await stripe.invoices.retrieve(open.id!)).attempt_count).toBe(2);
    const paid = await stripe.invoices.pay(open.id!, { payment_method: 'pm_card_mastercard' });
    expect(paid.status).toBe('paid');
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
  });

  it('cancels at period end: cancel_at set, then canceled with customer.subscription.deleted and no renewal', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    fake.advance(keys.id, 5 * DAY);
    const pending = await stripe.subscriptions.update(sub.id, { cancel_at_period_end: true });
    expect(pending).toMatchObject({ status: 'active', cancel_at_period_end: true, cancel_at: FEB_28, canceled_at: START + 5 * DAY });
    expect(pending.cancellation_details?.reason).toBe('cancellation_requested');
    fake.advanceTo(keys.id, FEB_28 + 2 * HOUR);
    const canceled = await stripe.subscriptions.retrieve(sub.id);
    expect(canceled).toMatchObject({ status: 'canceled', ended_at: FEB_28 });
    expect(fake.events(keys.id, 'customer.subscription.deleted')).toHaveLength(1);
    expect((await stripe.invoices.list({ subscription: sub.id })).data).toHaveLength(1);
    expect((await stripe.subscriptions.list({ customer: customer.id })).data).toHaveLength(0);
    expect((await stripe.subscriptions.list({ customer: customer.id, status: 'canceled' })).data).toHaveLength(1);
  });

  it('cancels now, optionally crediting unused time to the customer balance (prorate + invoice_now)', async () => {
    const { stripe, keys, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: proMonthly.id }] });
    fake.advance(keys.id, 7 * DAY);
    const canceled = await stripe.subscriptions.cancel(sub.id, { prorate: true, invoice_now: true });
    expect(canceled).toMatchObject({ status: 'canceled', canceled_at: START + 7 * DAY, ended_at: START + 7 * DAY });
    // 21 of 28 days unused on 30.00: a credit of 22.50 left on the customer's balance.
    expect((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).toMatchObject({ balance: -2250 });
    const again = await rejection(stripe.subscriptions.cancel(sub.id));
    expect(again.statusCode).toBe(404);
  });

  it('pauses collection (renewal invoices voided or kept as drafts) and resumes with pause_collection=""', async () => {
    const { stripe, keys, basicMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    const paused = await stripe.subscriptions.update(sub.id, { pause_collection: { behavior: 'void' } });
    expect(paused).toMatchObject({ status: 'active', pause_collection: { behavior: 'void', resumes_at: null } });
    fake.advanceTo(keys.id, FEB_28 + 2 * HOUR);
    const voided = (await stripe.invoices.list({ subscription: sub.id })).data[0]!;
    expect(voided).toMatchObject({ billing_reason: 'subscription_cycle', status: 'void', amount_paid: 0 });
    // No invoice webhooks for invoices made while collection is paused.
    expect(fake.events(keys.id).filter((e) => e.type.startsWith('invoice.') && (e.data.object as Stripe.Invoice).id === voided.id)).toEqual([]);
    await stripe.subscriptions.update(sub.id, { pause_collection: { behavior: 'keep_as_draft' } });
    fake.advanceTo(keys.id, MAR_31 + 2 * HOUR);
    expect((await stripe.invoices.list({ subscription: sub.id })).data[0]).toMatchObject({ status: 'draft', auto_advance: false });
    const resumed = await stripe.subscriptions.update(sub.id, { pause_collection: '' });
    expect(resumed.pause_collection).toBeNull();
    fake.advanceTo(keys.id, Date.UTC(2025, 3, 30, 14) / 1000);
    expect((await stripe.invoices.list({ subscription: sub.id })).data[0]).toMatchObject({ status: 'paid', amount_paid: 1000 });
    const updates = fake.events(keys.id, 'customer.subscription.updated').filter((e) => 'pause_collection' in (e.data.previous_attributes ?? {}));
    expect(updates).toHaveLength(3);
  });
});

describe('price changes and prorations', () => {
  // Basic (10.00/month) from Jan 31 12:00; the period ends Feb 28 12:00 (28 days = 2,419,200 s).
  // The change happens 7 days and 5 hours in: 1,796,400 s remain, a fraction of 0.7425595...
  // Unused time on Basic: -round(1000 * 0.7425595) = -743; remaining time on Pro: round(3000 * 0.7425595) = 2228.
  const changeAt = START + 7 * DAY + 5 * HOUR;

  it('previews and then applies create_prorations: pending proration items billed at renewal', async () => {
    const { stripe, keys, basicMonthly, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    fake.advanceTo(keys.id, changeAt);
    const preview = await stripe.invoices.createPreview({
      customer: customer.id,
      subscription: sub.id,
      subscription_details: { items: [{ id: item(sub).id, price: proMonthly.id }], proration_date: changeAt },
    });
    expect(preview.id).toMatch(/^upcoming_in_/);
    expect(preview.parent?.subscription_details?.subscription_proration_date).toBe(changeAt);
    const prorationLines = preview.lines.data.filter((l) => l.parent?.subscription_item_details?.proration);
    expect(prorationLines.map((l) => [l.amount, l.description])).toEqual([
      [-743, 'Unused time on Basic after 07 Feb 2025'],
      [2228, 'Remaining time on Pro after 07 Feb 2025'],
    ]);
    expect(prorationLines[0]!.period).toEqual({ start: changeAt, end: FEB_28 });
    expect(preview.amount_due).toBe(-743 + 2228 + 3000);
    await expect(stripe.invoices.retrieve(preview.id!)).rejects.toThrow(/No such invoice/);
    expect((await stripe.subscriptions.retrieve(sub.id)).items.data[0]!.price.id).toBe(basicMonthly.id);

    const changed = await stripe.subscriptions.update(sub.id, {
      items: [{ id: item(sub).id, price: proMonthly.id }],
      proration_behavior: 'create_prorations',
      proration_date: changeAt,
    });
    expect(item(changed).price.id).toBe(proMonthly.id);
    expect(item(changed).current_period_end).toBe(FEB_28);
    expect(changed.latest_invoice).toBe(sub.latest_invoice);
    const pending = await stripe.invoiceItems.list({ customer: customer.id, pending: true });
    expect(pending.data.map((i) => i.amount).sort((a, b) => a - b)).toEqual([-743, 2228]);
    expect(pending.data.every((i) => i.proration)).toBe(true);
    fake.advanceTo(keys.id, FEB_28 + HOUR);
    const renewal = (await stripe.invoices.list({ subscription: sub.id })).data[0]!;
    expect(renewal).toMatchObject({ status: 'paid', amount_paid: 4485, subtotal: 4485 });
    expect((await stripe.invoiceItems.list({ customer: customer.id, pending: true })).data).toHaveLength(0);
  });

  it('always_invoice bills the proration at once; a downgrade credits the customer balance', async () => {
    const { stripe, keys, basicMonthly, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    fake.advanceTo(keys.id, changeAt);
    const upgraded = await stripe.subscriptions.update(sub.id, {
      items: [{ id: item(sub).id, price: proMonthly.id }],
      proration_behavior: 'always_invoice',
      proration_date: changeAt,
      expand: ['latest_invoice'],
    });
    const invoice = upgraded.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', amount_paid: 1485, total: 1485 });
    expect(upgraded.status).toBe('active');
    // Back down to Basic three days later: 17 days 19 hours remain (1,537,200 s of 2,419,200, 0.6354167):
    // unused time on Pro -round(1906.25) = -1906, remaining time on Basic round(635.42) = 635.
    const downAt = changeAt + 3 * DAY;
    fake.advanceTo(keys.id, downAt);
    const fraction = (FEB_28 - downAt) / (FEB_28 - START);
    const credit = -Math.round(3000 * fraction) + Math.round(1000 * fraction);
    expect(credit).toBe(-1906 + 635);
    const downgraded = await stripe.subscriptions.update(sub.id, {
      items: [{ id: item(sub).id, price: basicMonthly.id }],
      proration_behavior: 'always_invoice',
      expand: ['latest_invoice'],
    });
    expect(downgraded.latest_invoice).toMatchObject({ total: credit, amount_due: 0, status: 'paid', ending_balance: credit });
    expect(((await stripe.customers.retrieve(customer.id)) as Stripe.Customer).balance).toBe(credit);
    fake.advanceTo(keys.id, FEB_28 + HOUR);
    const renewal = (await stripe.invoices.list({ subscription: sub.id })).data[0]!;
    expect(renewal).toMatchObject({
      billing_reason: 'subscription_cycle',
      total: 1000,
      starting_balance: credit,
      amount_due: 0,
      ending_balance: 1000 + credit,
      status: 'paid',
    });
  });

  it('proration_behavior none changes the price without prorations', async () => {
    const { stripe, keys, basicMonthly, proMonthly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
    fake.advanceTo(keys.id, changeAt);
    await stripe.subscriptions.update(sub.id, { items: [{ id: item(sub).id, price: proMonthly.id }], proration_behavior: 'none' });
    expect((await stripe.invoiceItems.list({ customer: customer.id })).data).toHaveLength(0);
    const preview = await stripe.invoices.createPreview({ subscription: sub.id });
    expect(preview.amount_due).toBe(3000);
    expect(preview.lines.data.map((l) => l.period)).toEqual([{ start: FEB_28, end: MAR_31 }]);
  });

  it('a change of interval resets the billing cycle and invoices at once', async () => {
    const { stripe, keys, proMonthly, proYearly } = await catalog();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: proMonthly.id }] });
    fake.advanceTo(keys.id, changeAt);
    const yearly = await stripe.subscriptions.update(sub.id, {
      items: [{ id: item(sub).id, price: proYearly.id }],
      proration_date: changeAt,
      expand: ['latest_invoice'],
    });
    expect(item(yearly)).toMatchObject({ current_period_start: changeAt, current_period_end: Date.UTC(2026, 1, 7, 17) / 1000 });
    expect(yearly.billing_cycle_anchor).toBe(changeAt);
    const invoice = yearly.latest_invoice as Stripe.Invoice;
    expect(invoice.lines.data.map((l) => l.amount)).toEqual([-2228, 30000]);
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: 27772 });
  });
});

describe('tiered prices and quantities', () => {
  // Team: a graduated price, 20.00 for the first 2 seats (flat, 0.00 each), 10.00 for each further seat.
  async function team() {
    const c = await catalog();
    const product = await c.stripe.products.create({ name: 'Team' });
    const seats = await c.stripe.prices.create({
      product: product.id,
      currency: 'usd',
      recurring: { interval: 'month' },
      billing_scheme: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 2, flat_amount: 2000, unit_amount: 0 },
        { up_to: 'inf', unit_amount: 1000 },
      ],
    });
    return { ...c, product, seats };
  }
  // 7 days and 5 hours into the 28-day period: 0.7425595 of it left (as for price changes).
  const changeAt = START + 7 * DAY + 5 * HOUR;

  it('creates tiered prices, shows their tiers only when expanded, and refuses malformed tiers', async () => {
    const { stripe, product, seats } = await team();
    expect(seats).toMatchObject({ billing_scheme: 'tiered', tiers_mode: 'graduated', unit_amount: null, unit_amount_decimal: null });
    expect(seats).not.toHaveProperty('tiers');
    expect((await stripe.prices.retrieve(seats.id, { expand: ['tiers'] })).tiers).toEqual([
      { flat_amount: 2000, flat_amount_decimal: '2000', unit_amount: 0, unit_amount_decimal: '0', up_to: 2 },
      { flat_amount: null, flat_amount_decimal: null, unit_amount: 1000, unit_amount_decimal: '1000', up_to: null },
    ]);
    const base = { product: product.id, currency: 'usd', recurring: { interval: 'month' as const } };
    const refused = async (params: Omit<Stripe.PriceCreateParams, 'currency'>) => (await rejection(stripe.prices.create({ ...base, ...params }))).message;
    expect(await refused({ billing_scheme: 'tiered', tiers: [{ up_to: 'inf', unit_amount: 100 }] })).toBe('Missing required param: tiers_mode.');
    expect(await refused({ billing_scheme: 'tiered', tiers_mode: 'graduated', tiers: [{ up_to: 5, unit_amount: 100 }] })).toMatch(
      /last tier must have `up_to=inf`/,
    );
    expect(
      await refused({
        billing_scheme: 'tiered',
        tiers_mode: 'graduated',
        tiers: [
          { up_to: 5, unit_amount: 100 },
          { up_to: 3, unit_amount: 50 },
          { up_to: 'inf', unit_amount: 10 },
        ],
      }),
    ).toMatch(/greater than the tier before it/);
    expect(await refused({ billing_scheme: 'tiered', tiers_mode: 'volume', tiers: [{ up_to: 'inf' }] })).toMatch(/`unit_amount` or a `flat_amount`/);
    expect(await refused({ billing_scheme: 'tiered', tiers_mode: 'volume', unit_amount: 100, tiers: [{ up_to: 'inf', unit_amount: 1 }] })).toMatch(
      /may not specify `unit_amount`/,
    );
    expect(await refused({ unit_amount: 100, tiers_mode: 'volume' })).toMatch(/only specify `tiers` and `tiers_mode` when `billing_scheme` is `tiered`/);
  });

  it('bills a graduated price tier by tier (units and flat fee), and a volume price at the tier of the whole quantity', async () => {
    const { stripe, seats, product } = await team();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: seats.id, quantity: 3 }], expand: ['latest_invoice'] });
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice.lines.data.map((l) => [l.description, l.quantity, l.amount, l.pricing?.unit_amount_decimal])).toEqual([
      ['2 × Team (Tier 1 at $0.00 / month)', 2, 0, '0'],
      ['Team (Tier 1 at $20.00 / month)', 0, 2000, null],
      ['1 × Team (Tier 2 at $10.00 / month)', 1, 1000, '1000'],
    ]);
    expect(invoice).toMatchObject({ subtotal: 3000, total: 3000, amount_paid: 3000, status: 'paid' });

    // Stripe's own example (tiered pricing guide): 1-5 at 7.00, 6-10 at 6.50, 11+ at 6.00; 6 fonts
    // cost 41.50 graduated (5 × 7.00 + 1 × 6.50) and 39.00 volume (6 × 6.50).
    const fonts = (mode: 'graduated' | 'volume') =>
      stripe.prices.create({
        product: product.id,
        currency: 'usd',
        recurring: { interval: 'month' },
        billing_scheme: 'tiered',
        tiers_mode: mode,
        tiers: [
          { up_to: 5, unit_amount: 700 },
          { up_to: 10, unit_amount: 650 },
          { up_to: 'inf', unit_amount: 600 },
        ],
      });
    const quote = async (price: Stripe.Price, quantity: number) =>
      (await stripe.invoices.createPreview({ customer: customer.id, subscription_details: { items: [{ price: price.id, quantity }] } })).total;
    const graduated = await fonts('graduated');
    const volume = await fonts('volume');
    expect(await quote(graduated, 6)).toBe(4150);
    expect(await quote(volume, 6)).toBe(3900);
    expect(await quote(volume, 20)).toBe(12000);
    expect(await quote(graduated, 20)).toBe(3500 + 3250 + 6000);
  });

  it('prorates a quantity change on the whole amount of each quantity: always_invoice charges now, none leaves it to the renewal', async () => {
    const { stripe, keys, seats } = await team();
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: seats.id, quantity: 3 }] });
    fake.advanceTo(keys.id, changeAt);
    // 3 seats cost 30.00, 5 seats 50.00: -round(3000 × 0.7425595) = -2228, round(5000 × 0.7425595) = 3713.
    const preview = await stripe.invoices.createPreview({
      subscription: sub.id,
      subscription_details: { items: [{ id: item(sub).id, quantity: 5 }], proration_behavior: 'always_invoice' },
    });
    const expected = [
      ['Unused time on 3 × Team after 07 Feb 2025', 3, -2228],
      ['Remaining time on 5 × Team after 07 Feb 2025', 5, 3713],
    ];
    expect(preview).toMatchObject({ billing_reason: 'subscription_update', amount_due: 1485 });
    expect(preview.lines.data.map((l) => [l.description, l.quantity, l.amount])).toEqual(expected);

    const grown = await stripe.subscriptions.update(sub.id, {
      items: [{ id: item(sub).id, quantity: 5 }],
      proration_behavior: 'always_invoice',
      expand: ['latest_invoice'],
    });
    expect(item(grown).quantity).toBe(5);
    const invoice = grown.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', amount_paid: 1485 });
    expect(invoice.lines.data.map((l) => [l.description, l.quantity, l.amount])).toEqual(expected);

    const invoices = (await stripe.invoices.list({ subscription: sub.id })).data.length;
    const shrunk = await stripe.subscriptions.update(sub.id, { items: [{ id: item(sub).id, quantity: 4 }], proration_behavior: 'none' });
    expect(item(shrunk).quantity).toBe(4);
    expect((await stripe.invoices.list({ subscription: sub.id })).data).toHaveLength(invoices);
    expect((await stripe.invoiceItems.list({ customer: customer.id, pending: true })).data).toHaveLength(0);

    fake.advanceTo(keys.id, FEB_28 + HOUR);
    const renewal = (await stripe.invoices.list({ subscription: sub.id })).data[0]!;
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', amount_paid: 4000 });
    expect(renewal.lines.data.map((l) => [l.quantity, l.amount])).toEqual([
      [2, 0],
      [0, 2000],
      [2, 2000],
    ]);
  });

  it('prices a Checkout line item of a tiered price for its quantity', async () => {
    const { stripe, seats } = await team();
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: seats.id, quantity: 4 }],
      success_url: 'https://app.example.test/ok',
    });
    expect(session.amount_total).toBe(4000);
    fake.completeCheckout(session.id);
    const completed = await stripe.checkout.sessions.retrieve(session.id, { expand: ['subscription.latest_invoice'] });
    const sub = completed.subscription as Stripe.Subscription;
    expect(item(sub).quantity).toBe(4);
    expect((sub.latest_invoice as Stripe.Invoice).amount_paid).toBe(4000);
  });
});

describe('coupons and promotion codes', () => {
  it('finds a promotion code by code and applies its coupon to the first invoice only (duration once)', async () => {
    const { stripe, proMonthly, keys } = await catalog();
    const coupon = await stripe.coupons.create({ percent_off: 25, duration: 'once', name: 'Launch' });
    const promo = await stripe.promotionCodes.create({ coupon: coupon.id, code: 'LAUNCH25' });
    expect(promo).toMatchObject({ object: 'promotion_code', active: true, code: 'LAUNCH25', coupon: { id: coupon.id, percent_off: 25 } });
    const found = await stripe.promotionCodes.list({ code: 'launch25', active: true });
    expect(found.data.map((p) => p.id)).toEqual([promo.id]);
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: proMonthly.id }],
      discounts: [{ promotion_code: promo.id }],
      expand: ['latest_invoice', 'discounts'],
    });
    const invoice = sub.latest_invoice as Stripe.Invoice;
    expect(invoice).toMatchObject({ subtotal: 3000, total: 2250, amount_paid: 2250 });
    expect(invoice.total_discount_amounts).toEqual([{ amount: 750, discount: (sub.discounts[0] as Stripe.Discount).id }]);
    expect(sub.discounts[0]).toMatchObject({ object: 'discount', promotion_code: promo.id, coupon: { id: coupon.id } });
    expect((await stripe.coupons.retrieve(coupon.id)).times_redeemed).toBe(1);
    fake.advanceTo(keys.id, FEB_28 + HOUR);
    expect((await stripe.invoices.list({ subscription: sub.id })).data[0]).toMatchObject({ total: 3000, amount_paid: 3000 });
  });

  it('applies amount_off and refuses an inactive or exhausted code', async () => {
    const { stripe, proMonthly } = await catalog();
    const coupon = await stripe.coupons.create({ amount_off: 500, currency: 'usd', duration: 'forever' });
    const promo = await stripe.promotionCodes.create({ coupon: coupon.id, code: 'FIVE', max_redemptions: 1 });
    const { customer } = await customerWithCard(stripe);
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: proMonthly.id }],
      discounts: [{ promotion_code: promo.id }],
      expand: ['latest_invoice'],
    });
    expect((sub.latest_invoice as Stripe.Invoice).total).toBe(2500);
    const exhausted = await rejection(
      stripe.subscriptions.create({ customer: customer.id, items: [{ price: proMonthly.id }], discounts: [{ promotion_code: promo.id }] }),
    );
    expect(exhausted.message).toBe('This promotion code has reached its maximum number of redemptions.');
    const off = await stripe.promotionCodes.create({ coupon: coupon.id, code: 'OFF', active: false });
    const inactive = await rejection(
      stripe.subscriptions.create({ customer: customer.id, items: [{ price: proMonthly.id }], discounts: [{ promotion_code: off.id }] }),
    );
    expect(inactive.message).toBe('This promotion code is inactive.');
    const bad = await rejection(stripe.coupons.create({ percent_off: 10, amount_off: 5, currency: 'usd' }));
    expect(bad.message).toBe('You must pass either `amount_off` or `percent_off` (but not both).');
  });
});

describe('Checkout', () => {
  it('creates a subscription-mode session with a URL on this server and completes it', async () => {
    const { stripe, keys, proMonthly } = await catalog();
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: proMonthly.id, quantity: 1 }],
      success_url: 'https://app.example.test/billing/success?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://app.example.test/billing',
      customer_email: 'buyer@example.test',
      client_reference_id: 'u_42',
      metadata: { tollgate_project: 'p_1' },
      subscription_data: { trial_period_days: 7, metadata: { tollgate_user: 'u_42' } },
      allow_promotion_codes: true,
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session).toMatchObject({
      object: 'checkout.session',
      mode: 'subscription',
      status: 'open',
      payment_status: 'unpaid',
      url: `${fake.url}/checkout/${session.id}`,
      customer: null,
      subscription: null,
    });
    const items = await stripe.checkout.sessions.listLineItems(session.id);
    expect(items.data[0]).toMatchObject({ object: 'item', quantity: 1, description: 'Pro' });

    const done = fake.completeCheckout(session.id, { paymentMethod: 'pm_card_visa' });
    expect(done).toMatchObject({
      status: 'complete',
      payment_status: 'no_payment_required',
      client_reference_id: 'u_42',
      metadata: { tollgate_project: 'p_1' },
    });
    const retrieved = await stripe.checkout.sessions.retrieve(session.id, { expand: ['subscription', 'customer'] });
    const sub = retrieved.subscription as Stripe.Subscription;
    expect(sub).toMatchObject({ status: 'trialing', metadata: { tollgate_user: 'u_42' }, trial_end: START + 7 * DAY });
    expect(sub.default_payment_method).toMatch(/^pm_/);
    expect((retrieved.customer as Stripe.Customer).email).toBe('buyer@example.test');
    const types = fake.events(keys.id).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['customer.created', 'payment_method.attached', 'customer.subscription.created', 'invoice.paid', 'checkout.session.completed']),
    );
    expect(types.indexOf('checkout.session.completed')).toBe(types.length - 1);
    expect(() => fake.completeCheckout(session.id)).toThrow(/complete/);
  });

  it('the hosted page completes with a promotion code and redirects to success_url; a declined card stays open', async () => {
    const { stripe, proMonthly } = await catalog();
    const coupon = await stripe.coupons.create({ percent_off: 50, duration: 'forever' });
    await stripe.promotionCodes.create({ coupon: coupon.id, code: 'HALF' });
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: proMonthly.id, quantity: 1 }],
      success_url: 'https://app.example.test/ok?s={CHECKOUT_SESSION_ID}',
      allow_promotion_codes: true,
    });
    const page = await fetch(session.url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Promotion code');
    const declined = await fetch(session.url!, {
      method: 'POST',
      body: new URLSearchParams({ payment_method: 'pm_card_chargeCustomerFail', email: 'h@example.test' }),
      redirect: 'manual',
    });
    expect(declined.status).toBe(402);
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe('open');
    const paid = await fetch(session.url!, {
      method: 'POST',
      body: new URLSearchParams({ payment_method: 'pm_card_visa', email: 'h@example.test', promotion_code: 'half' }),
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`https://app.example.test/ok?s=${session.id}`);
    const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['invoice'] });
    expect(done).toMatchObject({ status: 'complete', payment_status: 'paid', amount_total: 1500, total_details: { amount_discount: 1500 } });
    expect((done.invoice as Stripe.Invoice).amount_paid).toBe(1500);
  });

  it('refuses what Stripe refuses on create and expires sessions', async () => {
    const { stripe, keys, proMonthly, basicMonthly } = await catalog();
    const coupon = await stripe.coupons.create({ percent_off: 10 });
    const customer = await stripe.customers.create({ email: 'c@example.test' });
    const base = { mode: 'subscription' as const, line_items: [{ price: proMonthly.id, quantity: 1 }], success_url: 'https://app.example.test/ok' };
    expect((await rejection(stripe.checkout.sessions.create({ ...base, discounts: [{ coupon: coupon.id }], allow_promotion_codes: true }))).message).toBe(
      'You may only specify one of these parameters: allow_promotion_codes, discounts.',
    );
    expect((await rejection(stripe.checkout.sessions.create({ ...base, customer: customer.id, customer_email: 'c@example.test' }))).message).toBe(
      'You may only specify one of these parameters: customer, customer_email.',
    );
    expect((await rejection(stripe.checkout.sessions.create({ ...base, success_url: 'not a url' }))).code).toBe('url_invalid');
    const oneTime = await stripe.prices.create({ product: basicMonthly.product as string, currency: 'usd', unit_amount: 500 });
    expect((await rejection(stripe.checkout.sessions.create({ ...base, line_items: [{ price: oneTime.id, quantity: 1 }] }))).message).toBe(
      'You must provide at least one recurring price in `subscription` mode when using prices.',
    );
    const expiring = await stripe.checkout.sessions.create({ ...base, customer: customer.id });
    expect((await stripe.checkout.sessions.expire(expiring.id)).status).toBe('expired');
    const later = await stripe.checkout.sessions.create(base);
    fake.advance(keys.id, DAY + 1);
    expect((await stripe.checkout.sessions.retrieve(later.id)).status).toBe('expired');
    expect(fake.events(keys.id, 'checkout.session.expired')).toHaveLength(2);
  });
});

describe('webhooks', () => {
  it('POSTs signed events that stripe.webhooks.constructEvent verifies with the endpoint secret', async () => {
    const receiver = await startReceiver();
    try {
      const { stripe, keys, basicMonthly } = await catalog();
      const endpoint = fake.addWebhookEndpoint(keys.id, receiver.url);
      expect(endpoint.secret).toBe(keys.webhookSecret);
      const { customer } = await customerWithCard(stripe);
      await stripe.subscriptions.create({ customer: customer.id, items: [{ price: basicMonthly.id }] });
      await fake.webhooks.settled();
      const events = receiver.received.map((r) => stripe.webhooks.constructEvent(r.body, r.signature, keys.webhookSecret));
      expect(events.map((e) => e.type)).toEqual([
        'customer.created',
        'payment_method.attached',
        'customer.updated',
        'customer.subscription.created',
        'invoice.created',
        'invoice.finalized',
        'payment_intent.created',
        'payment_intent.succeeded',
        'invoice_payment.paid',
        'invoice.paid',
        'invoice.payment_succeeded',
      ]);
      const created = events[3]!;
      expect(created).toMatchObject({ object: 'event', api_version: '2025-08-27.basil', livemode: false, created: START });
      expect(created.id).toMatch(/^evt_/);
      expect((created.data.object as Stripe.Subscription).status).toBe('active');
      expect((events[4]!.data.object as Stripe.Invoice).status).toBe('draft');
      expect(created.request?.id).toMatch(/^req_/);
      expect(created.request?.idempotency_key).toBeNull();
      expect(() => stripe.webhooks.constructEvent(receiver.received[0]!.body, receiver.received[0]!.signature, 'whsec_wrong')).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      expect(fake.webhooks.attempts.filter((a) => a.endpointId === endpoint.id).every((a) => a.ok && a.status === 200)).toBe(true);
      const updated = events[2]!;
      expect(updated.data.previous_attributes).toEqual({ invoice_settings: { default_payment_method: null } });
    } finally {
      await receiver.close();
    }
  });

  it('holds events while paused, releases them in another order, and redelivers duplicates', async () => {
    const receiver = await startReceiver();
    try {
      const { stripe, keys } = await catalog();
      fake.addWebhookEndpoint(keys.id, receiver.url, { enabledEvents: ['customer.created', 'customer.updated'] });
      fake.webhooks.pause();
      const customer = await stripe.customers.create({ email: 'order@example.test' });
      await stripe.customers.update(customer.id, { name: 'First' });
      await stripe.customers.update(customer.id, { name: 'Second' });
      await fake.webhooks.settled();
      expect(receiver.received).toHaveLength(0);
      const held = fake.webhooks.held();
      expect(held.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.updated']);
      await fake.webhooks.release('reverse');
      const names = receiver.received.map((r) => (JSON.parse(r.body).data.object as Stripe.Customer).name);
      expect(names).toEqual(['Second', 'First', null]);
      fake.webhooks.resume();
      const dup = held[1]!.id;
      await fake.webhooks.redeliver(keys.id, dup);
      await fake.webhooks.redeliver(keys.id, dup);
      const ids = receiver.received.map((r) => JSON.parse(r.body).id);
      expect(ids.filter((id) => id === dup)).toHaveLength(3);
      expect(fake.webhooks.attempts.filter((a) => a.eventId === dup && a.redelivery)).toHaveLength(2);
      const stale = fake.webhooks.signedRequest(keys.id, dup, undefined, { timestamp: Math.floor(Date.now() / 1000) - 600 });
      expect(() => stripe.webhooks.constructEvent(stale.payload, stale.header, keys.webhookSecret)).toThrow(/Timestamp outside the tolerance zone/);
    } finally {
      fake.webhooks.resume();
      await receiver.close();
    }
  });

  it('records failed deliveries and only sends the types an endpoint enabled; the webhook_endpoints API returns its own secret', async () => {
    const receiver = await startReceiver(500);
    try {
      const { stripe, keys } = await catalog();
      const endpoint = await stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['product.created'] });
      expect(endpoint.secret).toMatch(/^whsec_/);
      expect(endpoint.secret).not.toBe(keys.webhookSecret);
      expect((await stripe.webhookEndpoints.retrieve(endpoint.id)).secret).toBeUndefined();
      await stripe.products.create({ name: 'Listed' });
      await stripe.customers.create({ email: 'not-sent@example.test' });
      await fake.webhooks.settled();
      expect(receiver.received).toHaveLength(1);
      const event = stripe.webhooks.constructEvent(receiver.received[0]!.body, receiver.received[0]!.signature, endpoint.secret!);
      expect(event.type).toBe('product.created');
      expect(fake.webhooks.attempts.filter((a) => a.endpointId === endpoint.id).map((a) => [a.status, a.ok])).toEqual([[500, false]]);
      const bad = await rejection(stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['customer.subscription.renamed' as never] }));
      expect(bad.message).toBe('Invalid enabled_events[0]: customer.subscription.renamed is not a valid event type.');
      const listed = await stripe.events.list({ type: 'product.created' });
      expect(listed.data.map((e) => (e.data.object as Stripe.Product).name)).toEqual(['Listed', 'Pro', 'Basic']);
      expect(listed.data[0]!.id).toBe(event.id);
      expect((await stripe.events.retrieve(event.id)).type).toBe('product.created');
    } finally {
      await receiver.close();
    }
  });
});

describe('shapes match stripe-node 18.5 (API 2025-08-27.basil)', () => {
  let types: StripeTypes;
  beforeAll(() => {
    const routes = routeTable();
    const names = [...new Set(routes.map((r) => r.paramsType).filter((n): n is string => !!n))];
    types = loadStripeTypes([
      ...names,
      'Account',
      'Balance',
      'Customer',
      'Product',
      'Price',
      'PaymentMethod',
      'SetupIntent',
      'Subscription',
      'SubscriptionItem',
      'Invoice',
      'InvoiceItem',
      'InvoicePayment',
      'PaymentIntent',
      'Checkout.Session',
      'LineItem',
      'Coupon',
      'PromotionCode',
      'Discount',
      'Event',
      'WebhookEndpoint',
      'DeletedCustomer',
    ]);
  }, 60_000);

  it('accepts only parameters (and enum values) that stripe-node declares for each call', () => {
    const problems: string[] = [];
    for (const route of routeTable()) {
      expect(route.paramsType, `${route.method} ${route.path} names its stripe-node params type`).toBeTruthy();
      const fields = route.noExpand ? route.fields : { ...route.fields, expand: { t: 'array' as const, of: { t: 'string' as const } } };
      for (const p of types.checkParams(route.paramsType!, fields)) problems.push(`${route.method} ${route.path}: ${p}`);
    }
    expect(problems).toEqual([]);
  });

  it('returns objects with exactly the fields and value types stripe-node declares', async () => {
    const { stripe, keys, proMonthly, basicMonthly, pro } = await catalog();
    const { customer, pm } = await customerWithCard(stripe);
    const coupon = await stripe.coupons.create({ percent_off: 20, duration: 'repeating', duration_in_months: 2 });
    const promo = await stripe.promotionCodes.create({ coupon: coupon.id });
    const sub = await stripe.subscriptions.create({
      customer: customer.id,
      items: [{ price: basicMonthly.id }],
      discounts: [{ promotion_code: promo.id }],
      expand: ['latest_invoice.payments', 'latest_invoice.confirmation_secret', 'discounts'],
    });
    fake.advance(keys.id, 3 * DAY);
    await stripe.subscriptions.update(sub.id, { items: [{ id: item(sub).id, price: proMonthly.id }] });
    const invoice = sub.latest_invoice as Stripe.Invoice;
    const pi = await stripe.paymentIntents.retrieve(invoice.payments!.data[0]!.payment.payment_intent as string);
    const failing = await customerWithCard(stripe, 'pm_card_chargeCustomerFail');
    const incomplete = await stripe.subscriptions.create({
      customer: failing.customer.id,
      items: [{ price: basicMonthly.id }],
      expand: ['latest_invoice.payments'],
    });
    const failedPi = await stripe.paymentIntents.retrieve((incomplete.latest_invoice as Stripe.Invoice).payments!.data[0]!.payment.payment_intent as string);
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: proMonthly.id, quantity: 2 }],
      success_url: 'https://app.example.test/ok',
      discounts: [{ coupon: coupon.id }],
    });
    fake.completeCheckout(session.id);
    const preview = await stripe.invoices.createPreview({
      subscription: sub.id,
      subscription_details: { items: [{ id: item(sub).id, price: basicMonthly.id }] },
    });
    const team = await stripe.prices.create({
      product: pro.id,
      currency: 'usd',
      recurring: { interval: 'month' },
      billing_scheme: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 2, flat_amount: 2000, unit_amount: 0 },
        { up_to: 'inf', unit_amount: 1000 },
      ],
    });
    const seats = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: team.id, quantity: 3 }], expand: ['latest_invoice'] });
    const si = await stripe.setupIntents.create({ customer: customer.id });
    const endpoint = await stripe.webhookEndpoints.create({ url: 'https://app.example.test/hook', enabled_events: ['*'] });
    const checks: [string, unknown][] = [
      ['Account', await stripe.accounts.retrieve()],
      ['Balance', await stripe.balance.retrieve()],
      ['Customer', await stripe.customers.retrieve(customer.id)],
      ['Product', pro],
      ['Price', await stripe.prices.retrieve(proMonthly.id, { expand: ['product'] })],
      ['Price', await stripe.prices.retrieve(team.id, { expand: ['tiers'] })],
      ['Subscription', seats],
      ['PaymentMethod', pm],
      ['SetupIntent', si],
      ['SetupIntent', await stripe.setupIntents.confirm(si.id, { payment_method: 'pm_card_visa' })],
      ['Subscription', sub],
      ['Subscription', await stripe.subscriptions.retrieve(sub.id, { expand: ['customer', 'default_payment_method'] })],
      ['Subscription', incomplete],
      ['SubscriptionItem', await stripe.subscriptionItems.retrieve(item(sub).id)],
      ['Invoice', invoice],
      ['Invoice', preview],
      ['InvoiceItem', (await stripe.invoiceItems.list({ customer: customer.id })).data[0]],
      ['InvoicePayment', invoice.payments!.data[0]],
      ['PaymentIntent', pi],
      ['PaymentIntent', failedPi],
      ['Checkout.Session', await stripe.checkout.sessions.retrieve(session.id)],
      ['LineItem', (await stripe.checkout.sessions.listLineItems(session.id)).data[0]],
      ['Coupon', coupon],
      ['PromotionCode', promo],
      ['Discount', sub.discounts[0]],
      ['WebhookEndpoint', endpoint],
      ['DeletedCustomer', await stripe.customers.del(failing.customer.id)],
      ...fake.events(keys.id).map((e) => ['Event', e] as [string, unknown]),
    ];
    const problems = checks.flatMap(([name, value]) => types.checkObject(name, JSON.parse(JSON.stringify(value))));
    expect(problems).toEqual([]);
    expect(checks.length).toBeGreaterThan(60);
  });
});
