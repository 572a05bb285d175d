import { DEFAULT_SEAT_POLICY } from '../../domain/billing/seat-terms';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProcessorFailure, ProcessorResult, ProcessorSnapshot } from '../../application/billing/payment-processor';
import type { Plan, Price } from '../../domain/billing/catalog';
import { SandboxControlService } from '../../infrastructure/billing/sandbox/sandbox-control';
import { SandboxProcessor } from '../../infrastructure/billing/sandbox/sandbox-processor';
import { NodeTokenCrypto } from '../../infrastructure/crypto/node-token-crypto';
import { Database } from '../../infrastructure/persistence/database';
import { TestClock } from '../support/clock';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { inRequestContext, insertTestProject } from '../support/sandbox';

/**
 * What only the sandbox has: Stripe's test cards and card numbers, its clock, its due work over
 * several periods and under two workers, its checkout page, promotion codes, idempotent replays.
 * The port's shared behaviour is in payment-processor.suite.ts.
 */

const HOUR = 3600;
const DAY = 86_400;
const START = Date.UTC(2024, 0, 31, 12, 0, 0);
const PUBLIC_URL = 'http://tollgate.test';

let database: TestDatabase;
let db: Database;
let otherDb: Database;
const crypto = new NodeTokenCrypto();
let clock: TestClock;
let projectId: string;
let processor: SandboxProcessor;
let control: SandboxControlService;

function must<T>(result: ProcessorResult<T, ProcessorFailure>): T {
  if (!result.ok) throw new Error(`processor failed: ${result.failure.kind}: ${result.failure.message}`);
  return result.value;
}

function failureOf<T>(result: ProcessorResult<T, ProcessorFailure>): ProcessorFailure {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

const key = (label: string) => `${label}-${randomUUID()}`;

function sandboxFor(project: string, database: Database = db) {
  const deps = { db: database, clock, crypto, publicUrl: PUBLIC_URL };
  return {
    processor: inRequestContext(database, new SandboxProcessor({ ...deps, projectId: project })),
    control: inRequestContext(database, new SandboxControlService(deps)),
  };
}

const sql = <R = Record<string, unknown>>(text: string, params: unknown[] = []) => db.withContext(() => db.query<R>(text, params));

beforeAll(async () => {
  database = await createTestDatabase();
  db = await Database.open({ url: database.url, poolMax: 6 });
  await db.migrate();
  otherDb = await Database.open({ url: database.url, poolMax: 6 });
});

afterAll(async () => {
  await otherDb?.close();
  await db?.close();
  await database?.drop();
});

beforeEach(async () => {
  clock = new TestClock(START);
  projectId = await insertTestProject(db);
  ({ processor, control } = sandboxFor(projectId));
});

async function product(name: string, amounts: number[], options: { interval?: 'month' | 'year'; on?: SandboxProcessor } = {}) {
  const on = options.on ?? processor;
  const plan: Plan = {
    id: randomUUID(),
    name,
    description: '',
    features: [],
    hidden: false,
    recommended: false,
    trialsEnabled: true,
    defaultTrialDays: null,
    audience: 'users',
    seatPolicy: DEFAULT_SEAT_POLICY,
    usageLimits: [],
    position: 0,
  };
  const productId = must(await on.upsertProduct(plan, null, { projectId }));
  const prices: string[] = [];
  for (const amount of amounts) {
    const price: Price = {
      id: randomUUID(),
      planId: plan.id,
      name: `${name} monthly`,
      amount,
      currency: 'usd',
      interval: options.interval ?? 'month',
      active: true,
      seats: null,
    };
    prices.push(must(await on.createPrice(price, productId, { projectId, priceId: price.id })));
  }
  return { productId, prices };
}

async function customer(on: SandboxProcessor = processor, email: string | null = 'ada@example.test'): Promise<string> {
  return must(await on.createCustomer({ email, name: 'Ada', metadata: { projectId, userId: randomUUID() }, idempotencyKey: key('customer') }));
}

function subscribe(customerId: string, priceId: string, paymentMethodId: string, trialDays: number | null = null, on: SandboxProcessor = processor) {
  return on.createSubscription({ customerId, priceId, paymentMethodId, trialDays, metadata: { projectId }, idempotencyKey: key('subscribe') });
}

async function snapshot(subscriptionId: string, on: SandboxProcessor = processor): Promise<ProcessorSnapshot> {
  return must(await on.getSubscription(subscriptionId))!;
}

async function advance(seconds: number, project = projectId) {
  await control.advanceClock(project, seconds);
  return control.runDue(project);
}

describe('test payment methods', () => {
  it('clones a succeeding test card into a pm_sbx_ card with its brand, last 4 and expiry', async () => {
    const { prices } = await product('Cards', [1000]);
    const cards = {
      pm_card_visa: ['visa', '4242'],
      pm_card_mastercard: ['mastercard', '4444'],
      pm_card_amex: ['amex', '0005'],
      pm_card_discover: ['discover', '1117'],
    };
    for (const [pm, [brand, last4]] of Object.entries(cards)) {
      const s = must(await subscribe(await customer(), prices[0]!, pm)).subscription;
      expect(s.paymentMethod).toEqual({ id: expect.stringMatching(/^pm_sbx_[0-9a-f]{32}$/), brand, last4, expMonth: 12, expYear: 2025 });
      expect(s.status).toBe('active');
    }
  });

  it('declines the declining test cards when attached, with Stripe decline codes and messages', async () => {
    const { prices } = await product('Declines', [1000]);
    const customerId = await customer();
    const expected: Record<string, [string, string]> = {
      pm_card_chargeDeclined: ['generic_decline', 'Your card was declined.'],
      pm_card_visa_chargeDeclined: ['generic_decline', 'Your card was declined.'],
      pm_card_chargeDeclinedInsufficientFunds: ['insufficient_funds', 'Your card has insufficient funds.'],
      pm_card_visa_chargeDeclinedInsufficientFunds: ['insufficient_funds', 'Your card has insufficient funds.'],
      pm_card_chargeDeclinedLostCard: ['lost_card', 'Your card was declined.'],
      pm_card_chargeDeclinedStolenCard: ['stolen_card', 'Your card was declined.'],
      pm_card_chargeDeclinedExpiredCard: ['expired_card', 'Your card has expired.'],
      pm_card_chargeDeclinedIncorrectCvc: ['incorrect_cvc', "Your card's security code is incorrect."],
      pm_card_chargeDeclinedProcessingError: ['processing_error', 'An error occurred while processing your card. Try again in a little bit.'],
    };
    for (const [pm, [declineCode, message]] of Object.entries(expected)) {
      expect(failureOf(await subscribe(customerId, prices[0]!, pm))).toEqual({ kind: 'card_declined', declineCode, message });
    }
    expect(must(await processor.listSubscriptionIds(customerId))).toEqual([]);
    const stored = await sql<{ n: string }>(
      `select count(*) as n from sandbox_objects where project_id = ? and kind in ('payment_method', 'subscription', 'invoice')`,
      [projectId],
    );
    expect(Number(stored[0]!.n)).toBe(0);
  });

  it('attaches pm_card_chargeCustomerFail as the default card, then declines the charge and keeps no subscription', async () => {
    const { prices } = await product('Fails', [1000]);
    const customerId = await customer();
    expect(failureOf(await subscribe(customerId, prices[0]!, 'pm_card_chargeCustomerFail'))).toMatchObject({
      kind: 'card_declined',
      declineCode: 'generic_decline',
    });
    const rows = await sql<{ kind: string; parent_id: string; data: { defaultPaymentMethodId: string | null } }>(
      `select kind, parent_id, data from sandbox_objects where project_id = ? and kind in ('payment_method', 'customer', 'subscription')`,
      [projectId],
    );
    const card = rows.find((r) => r.kind === 'payment_method')!;
    expect(card.parent_id).toBe(customerId);
    expect(rows.find((r) => r.kind === 'customer')!.data.defaultPaymentMethodId).toMatch(/^pm_sbx_/);
    expect(rows.some((r) => r.kind === 'subscription')).toBe(false);
  });

  it('refuses unknown payment methods and another customer’s card', async () => {
    const { prices } = await product('Unknown', [1000]);
    const ada = await customer();
    expect(failureOf(await subscribe(ada, prices[0]!, 'pm_nope'))).toEqual({ kind: 'invalid_payment_method', message: "No such PaymentMethod: 'pm_nope'" });
    const s = must(await subscribe(ada, prices[0]!, 'pm_card_visa')).subscription;
    const bob = await customer();
    expect(failureOf(await subscribe(bob, prices[0]!, s.paymentMethod!.id))).toMatchObject({ kind: 'invalid_payment_method' });
    // The customer's own card can be used again.
    const again = must(await subscribe(ada, prices[0]!, s.paymentMethod!.id)).subscription;
    expect(again.paymentMethod!.id).toBe(s.paymentMethod!.id);
    const third = must(await subscribe(ada, prices[0]!, 'pm_card_mastercard')).subscription;
    // Newest first, even within one second of sandbox time.
    expect(must(await processor.listSubscriptionIds(ada))).toEqual([third.id, again.id, s.id]);
  });

  it('refuses unknown customers, prices and ids of another project as Stripe words it', async () => {
    const { prices } = await product('Scoped', [1000]);
    const ada = await customer();
    expect(failureOf(await subscribe('cus_sbx_missing', prices[0]!, 'pm_card_visa'))).toEqual({
      kind: 'invalid_request',
      message: "No such customer: 'cus_sbx_missing'",
    });
    expect(failureOf(await subscribe(ada, 'price_sbx_missing', 'pm_card_visa'))).toEqual({
      kind: 'invalid_request',
      message: "No such price: 'price_sbx_missing'",
    });

    const other = sandboxFor(await insertTestProject(db));
    expect(failureOf(await subscribe(ada, prices[0]!, 'pm_card_visa', null, other.processor)).message).toBe(`No such customer: '${ada}'`);
    const s = must(await subscribe(ada, prices[0]!, 'pm_card_visa')).subscription;
    expect(must(await other.processor.getSubscription(s.id))).toBeNull();
    expect(failureOf(await other.processor.cancelSubscription(s.id, { atPeriodEnd: false, idempotencyKey: key('x') })).kind).toBe('invalid_request');
  });
});

describe('bad input', () => {
  it('answers failures, never throws', async () => {
    const { productId, prices } = await product('Bad input', [1000, 2000]);
    const ada = await customer();
    for (const trialDays of [Number.NaN, 0, 731, 2.5]) {
      expect(failureOf(await subscribe(ada, prices[0]!, 'pm_card_visa', trialDays)).kind).toBe('invalid_request');
    }
    const price: Price = { id: randomUUID(), planId: randomUUID(), name: 'x', amount: -1, currency: 'usd', interval: 'month', active: true, seats: null };
    expect(failureOf(await processor.createPrice(price, productId, { projectId })).kind).toBe('invalid_request');
    expect(failureOf(await processor.createPrice({ ...price, amount: 100, currency: 'xxx' }, productId, { projectId })).kind).toBe('invalid_request');
    expect(failureOf(await processor.createPrice({ ...price, amount: 100 }, 'prod_sbx_missing', { projectId })).kind).toBe('invalid_request');
    expect(failureOf(await processor.archivePrice('price_sbx_missing')).kind).toBe('invalid_request');
    expect(failureOf(await processor.previewChange('sub_sbx_missing', prices[1]!)).kind).toBe('invalid_request');
    expect(failureOf(await processor.listSubscriptionIds('cus_sbx_missing')).kind).toBe('invalid_request');
    expect(failureOf(await processor.checkoutSubscriptionId('cs_sbx_missing')).kind).toBe('invalid_request');

    const s = must(await subscribe(ada, prices[0]!, 'pm_card_visa')).subscription;
    expect(failureOf(await processor.changeSubscription(s.id, prices[0]!, key('same'))).message).toBe('The subscription is already on this price.');
    // Asking again for the state it is already in changes nothing, as on Stripe.
    must(await processor.pauseSubscription(s.id, key('pause')));
    expect(must(await processor.pauseSubscription(s.id, key('pause'))).subscription.status).toBe('paused');
    must(await processor.resumeSubscription(s.id, key('resume')));
    expect(must(await processor.resumeSubscription(s.id, key('resume'))).subscription.status).toBe('active');
    must(await processor.cancelSubscription(s.id, { atPeriodEnd: true, idempotencyKey: key('c') }));
    expect(must(await processor.cancelSubscription(s.id, { atPeriodEnd: true, idempotencyKey: key('c') })).subscription.cancelAtPeriodEnd).toBe(true);
    must(await processor.cancelSubscription(s.id, { atPeriodEnd: false, idempotencyKey: key('c') }));
    expect(failureOf(await processor.cancelSubscription(s.id, { atPeriodEnd: false, idempotencyKey: key('c') }))).toEqual({
      kind: 'invalid_request',
      message: 'This subscription is already canceled.',
    });
    expect(failureOf(await processor.resumeSubscription(s.id, key('r'))).kind).toBe('invalid_request');
  });
});

describe('clock and due work', () => {
  it('keeps each project’s sandbox time; advancing moves the clock and leaves the due work to runDue', async () => {
    const { prices } = await product('Clock', [1000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription;
    expect((await control.now(projectId)).getTime()).toBe(START);

    const moved = await control.advanceClock(projectId, 40 * DAY);
    expect(moved.getTime()).toBe(START + 40 * DAY * 1000);
    expect((await control.now(projectId)).getTime()).toBe(moved.getTime());
    expect((await snapshot(s.id)).subscription.currentPeriodEnd.getTime()).toBe(s.currentPeriodEnd.getTime());

    const otherProject = await insertTestProject(db);
    expect((await control.now(otherProject)).getTime()).toBe(START);

    clock.advanceSeconds(60);
    expect((await control.now(projectId)).getTime()).toBe(START + (40 * DAY + 60) * 1000);
    await expect(control.advanceClock(projectId, -1)).rejects.toThrow(RangeError);
  });

  it('renews once per period when the clock jumps several periods, on the month-end rule', async () => {
    const { prices } = await product('Months', [1000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription;
    expect(s.currentPeriodEnd.toISOString()).toBe('2024-02-29T12:00:00.000Z');
    const due = await sql<{ due_at: Date | string }>(`select due_at from sandbox_objects where id = ?`, [s.id]);
    expect(new Date(due[0]!.due_at).toISOString()).toBe('2024-02-29T12:00:00.000Z');

    const changed = await advance(100 * DAY);
    expect(changed).toEqual([{ projectId, subscriptionId: s.id }]);
    expect(await control.runDue(projectId)).toEqual([]);

    const after = await snapshot(s.id);
    expect(after.subscription.status).toBe('active');
    expect(after.invoices.map((i) => [i.reason, i.status, i.amountPaid, i.createdAt.toISOString()])).toEqual([
      ['subscription_create', 'paid', 1000, '2024-01-31T12:00:00.000Z'],
      ['subscription_cycle', 'paid', 1000, '2024-02-29T12:00:00.000Z'],
      ['subscription_cycle', 'paid', 1000, '2024-03-31T12:00:00.000Z'],
      ['subscription_cycle', 'paid', 1000, '2024-04-30T12:00:00.000Z'],
    ]);
    expect(after.subscription.currentPeriodStart.toISOString()).toBe('2024-04-30T12:00:00.000Z');
    expect(after.subscription.currentPeriodEnd.toISOString()).toBe('2024-05-31T12:00:00.000Z');
    expect(after.invoices[3]!.lines).toEqual([
      {
        kind: 'subscription',
        description: '1 × Months (at $10.00 / month)',
        priceId: prices[0],
        quantity: null,
        amount: 1000,
        periodStart: new Date('2024-04-30T12:00:00.000Z'),
        periodEnd: new Date('2024-05-31T12:00:00.000Z'),
      },
    ]);
  });

  it('ends a trial with a failing card as past_due, then cancels it when the grace period is over', async () => {
    const { prices } = await product('Grace', [1000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_chargeCustomerFail', 7)).subscription;
    expect(s.status).toBe('trialing');
    expect(await advance(7 * DAY)).toEqual([{ projectId, subscriptionId: s.id }]);
    const pastDue = await snapshot(s.id);
    expect(pastDue.subscription.status).toBe('past_due');
    expect(pastDue.subscription.pastDueAt!.getTime()).toBe(s.trialEnd!.getTime());
    expect(pastDue.invoices.map((i) => [i.status, i.attemptCount, i.amountDue])).toEqual([['open', 1, 1000]]);

    await advance(13 * DAY);
    expect((await snapshot(s.id)).subscription.status).toBe('past_due');
    await advance(DAY);
    const ended = await snapshot(s.id);
    expect(ended.subscription.status).toBe('canceled');
    expect(ended.subscription.endedAt!.getTime()).toBe(s.trialEnd!.getTime() + 14 * DAY * 1000);
    const due = await sql<{ due_at: Date | null }>(`select due_at from sandbox_objects where id = ?`, [s.id]);
    expect(due[0]!.due_at).toBeNull();
  });

  it('skips periods that end while paused and charges nothing for them; the resume starts a new charged period', async () => {
    const { prices } = await product('Paused', [1000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription;
    must(await processor.pauseSubscription(s.id, key('pause')));
    await advance(70 * DAY);
    const paused = await snapshot(s.id);
    expect(paused.subscription.status).toBe('paused');
    expect(paused.invoices).toHaveLength(1);
    expect(paused.subscription.currentPeriodStart.toISOString()).toBe('2024-03-31T12:00:00.000Z');
    const resumed = must(await processor.resumeSubscription(s.id, key('resume')));
    expect(resumed.subscription.status).toBe('active');
    // Resumed on Apr 10 (70 days after Jan 31): a month from then, charged now.
    expect(resumed.subscription.currentPeriodStart.toISOString()).toBe('2024-04-10T12:00:00.000Z');
    expect(resumed.subscription.currentPeriodEnd.toISOString()).toBe('2024-05-10T12:00:00.000Z');
    expect(resumed.invoices.map((i) => [i.reason, i.amountPaid])).toEqual([
      ['subscription_create', 1000],
      ['subscription_update', 1000],
    ]);
  });

  it('applies what fell due before a change that arrives before runDue', async () => {
    const { prices } = await product('Catch up', [1000, 2000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription;
    await control.advanceClock(projectId, 35 * DAY);
    const changed = must(await processor.changeSubscription(s.id, prices[1]!, key('change')));
    expect(changed.invoices.map((i) => i.reason)).toEqual(['subscription_create', 'subscription_cycle', 'subscription_update']);
    expect(changed.subscription.priceId).toBe(prices[1]);
    expect(await control.runDue(projectId)).toEqual([]);
  });

  it('reports on the next runDue what a refused request caught up on', async () => {
    const { prices } = await product('Caught up', [1000]);
    const s = must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription;
    await control.advanceClock(projectId, 35 * DAY);
    expect(failureOf(await processor.changeSubscription(s.id, prices[0]!, key('same'))).kind).toBe('invalid_request');
    expect((await snapshot(s.id)).invoices).toHaveLength(2);
    expect(await control.runDue(projectId)).toEqual([{ projectId, subscriptionId: s.id }]);
    expect(await control.runDue(projectId)).toEqual([]);
    expect((await snapshot(s.id)).invoices).toHaveLength(2);
    const due = await sql<{ due_at: Date | string }>(`select due_at from sandbox_objects where id = ?`, [s.id]);
    expect(new Date(due[0]!.due_at).toISOString()).toBe('2024-03-31T12:00:00.000Z');
  });

  it('two workers running due work at once charge each renewal once', async () => {
    const { prices } = await product('Race', [1000]);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(must(await subscribe(await customer(), prices[0]!, 'pm_card_visa')).subscription.id);
    await control.advanceClock(projectId, 31 * DAY);

    const second = sandboxFor(projectId, otherDb).control;
    // One worker runs every project's due work (other tests' projects have some), one only this project's.
    const [a, b] = await Promise.all([control.runDue(), second.runDue(projectId)]);
    const handled = [...a, ...b]
      .filter((c) => c.projectId === projectId)
      .map((c) => c.subscriptionId)
      .sort();
    expect(handled).toEqual([...ids].sort());

    const counts = await sql<{ parent_id: string; n: string }>(
      `select parent_id, count(*) as n from sandbox_objects where project_id = ? and kind = 'invoice' group by parent_id`,
      [projectId],
    );
    expect(counts).toHaveLength(12);
    for (const row of counts) expect(Number(row.n)).toBe(2);
  });
});

describe('checkout page', () => {
  async function openCheckout(options: { promotionCodeId?: string | null; trialDays?: number | null; priceId?: string } = {}) {
    const { prices } = await product('Pro', [1000]);
    const customerId = await customer();
    const session = must(
      await processor.createCheckout({
        customerId,
        priceId: options.priceId ?? prices[0]!,
        successUrl: 'https://app.example.test/billing/done?session={CHECKOUT_SESSION_ID}',
        cancelUrl: 'https://app.example.test/billing',
        promotionCodeId: options.promotionCodeId ?? null,
        trialDays: options.trialDays ?? null,
        metadata: { projectId, userId: randomUUID() },
        email: 'ada@example.test',
        idempotencyKey: key('checkout'),
      }),
    );
    return { session, customerId, priceId: options.priceId ?? prices[0]! };
  }

  it('shows an open session, keeps it open after a decline, completes with 4242, refuses a second payment', async () => {
    await control.createPromotionCode(projectId, 'SAVE20', 20);
    const promo = must(await processor.findPromotionCode('save20'));
    expect(promo).toMatch(/^promo_sbx_/);
    const { session, customerId } = await openCheckout({ promotionCodeId: promo });
    expect(session.id).toMatch(/^cs_sbx_/);
    expect(session.url).toBe(`${PUBLIC_URL}/sandbox/checkout/${session.id}`);

    expect(await control.getCheckout(session.id)).toEqual({
      id: session.id,
      projectId,
      status: 'open',
      planName: 'Pro',
      priceName: 'Pro monthly',
      amount: 1000,
      quantity: null,
      currency: 'usd',
      interval: 'month',
      trialDays: null,
      percentOff: 20,
      email: 'ada@example.test',
      successUrl: 'https://app.example.test/billing/done?session={CHECKOUT_SESSION_ID}',
      cancelUrl: 'https://app.example.test/billing',
    });
    expect(must(await processor.checkoutSubscriptionId(session.id))).toBeNull();

    expect(failureOf(await control.completeCheckout(session.id, '4000 0000 0000 0002'))).toMatchObject({
      kind: 'card_declined',
      declineCode: 'generic_decline',
    });
    expect(failureOf(await control.completeCheckout(session.id, '4000000000009995'))).toMatchObject({
      kind: 'card_declined',
      declineCode: 'insufficient_funds',
    });
    expect(failureOf(await control.completeCheckout(session.id, '4000000000000341'))).toMatchObject({ kind: 'card_declined' });
    expect(failureOf(await control.completeCheckout(session.id, '1234 5678'))).toMatchObject({ kind: 'invalid_payment_method' });
    expect((await control.getCheckout(session.id))!.status).toBe('open');
    expect(must(await processor.listSubscriptionIds(customerId))).toEqual([]);

    const done = must(await control.completeCheckout(session.id, '4242 4242 4242 4242'));
    expect(done).toEqual({
      projectId,
      subscriptionId: expect.stringMatching(/^sub_sbx_/),
      successUrl: `https://app.example.test/billing/done?session=${session.id}`,
    });
    expect(must(await processor.checkoutSubscriptionId(session.id))).toBe(done.subscriptionId!);
    expect((await control.getCheckout(session.id))!.status).toBe('complete');

    const s = await snapshot(done.subscriptionId!);
    expect(s.subscription).toMatchObject({ status: 'active', customerId, paymentMethod: { brand: 'visa', last4: '4242' } });
    expect(s.invoices.map((i) => [i.subtotal, i.amountDue, i.amountPaid])).toEqual([[1000, 800, 800]]);

    expect(failureOf(await control.completeCheckout(session.id, '4242424242424242')).kind).toBe('invalid_request');

    // The code is used once: the renewal is the full price.
    await advance(31 * DAY);
    expect((await snapshot(done.subscriptionId!)).invoices.map((i) => i.amountDue)).toEqual([800, 1000]);
  });

  it('a checkout with a trial starts trialing and discounts the first charge at the trial end', async () => {
    await control.createPromotionCode(projectId, 'half', 50);
    const promo = must(await processor.findPromotionCode('HALF'))!;
    const { session } = await openCheckout({ promotionCodeId: promo, trialDays: 14 });
    expect((await control.getCheckout(session.id))!.trialDays).toBe(14);
    const done = must(await control.completeCheckout(session.id, 'pm_card_visa'));
    const trialing = await snapshot(done.subscriptionId!);
    expect(trialing.subscription.status).toBe('trialing');
    expect(trialing.invoices).toEqual([]);
    await advance(14 * DAY);
    const active = await snapshot(done.subscriptionId!);
    expect(active.subscription.status).toBe('active');
    expect(active.invoices.map((i) => [i.reason, i.amountDue])).toEqual([['subscription_cycle', 500]]);
  });

  it('pays a session once when two payments arrive at the same time', async () => {
    const { session, customerId } = await openCheckout();
    const other = sandboxFor(projectId, otherDb).control;
    const results = await Promise.all([control.completeCheckout(session.id, '4242424242424242'), other.completeCheckout(session.id, 'pm_card_visa')]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => failureOf(r).message)).toEqual(['This Checkout Session is already complete.']);
    expect(must(await processor.listSubscriptionIds(customerId))).toHaveLength(1);
  });

  it('expires an unpaid session after 24 hours', async () => {
    const { session } = await openCheckout();
    await control.advanceClock(projectId, 24 * HOUR);
    expect((await control.getCheckout(session.id))!.status).toBe('expired');
    expect(failureOf(await control.completeCheckout(session.id, '4242424242424242'))).toEqual({
      kind: 'invalid_request',
      message: 'This Checkout Session has expired.',
    });
    expect(await control.getCheckout('cs_sbx_unknown')).toBeNull();
    expect(failureOf(await control.completeCheckout('cs_sbx_unknown', '4242424242424242')).kind).toBe('invalid_request');
  });

  it('refuses an unknown promotion code, bad URLs and archived prices', async () => {
    const { prices } = await product('Refusals', [1000, 2000]);
    const customerId = await customer();
    const base = {
      customerId,
      priceId: prices[0]!,
      successUrl: 'https://app.example.test/ok',
      cancelUrl: 'https://app.example.test/cancel',
      promotionCodeId: null,
      trialDays: null,
      metadata: { projectId },
      email: null,
    };
    expect(failureOf(await processor.createCheckout({ ...base, promotionCodeId: 'promo_sbx_nope', idempotencyKey: key('c') })).kind).toBe('invalid_request');
    expect(failureOf(await processor.createCheckout({ ...base, successUrl: 'not a url', idempotencyKey: key('c') })).kind).toBe('invalid_request');
    expect(failureOf(await processor.createCheckout({ ...base, trialDays: 0, idempotencyKey: key('c') })).kind).toBe('invalid_request');
    must(await processor.archivePrice(prices[1]!));
    expect(failureOf(await processor.createCheckout({ ...base, priceId: prices[1]!, idempotencyKey: key('c') })).message).toBe(
      'The price specified is inactive. This field only accepts active prices.',
    );
    expect(must(await processor.findPromotionCode('NOPE'))).toBeNull();
  });
});

describe('promotion codes', () => {
  it('are per project and case-insensitive; creating one again changes its percentage', async () => {
    await control.createPromotionCode(projectId, 'Spring-25', 25);
    const id = must(await processor.findPromotionCode(' spring-25 '));
    expect(id).not.toBeNull();
    await control.createPromotionCode(projectId, 'SPRING-25', 30);
    expect(must(await processor.findPromotionCode('SPRING-25'))).toBe(id);
    const rows = await sql<{ data: { percentOff: number } }>(`select data from sandbox_objects where id = ?`, [id]);
    expect(rows[0]!.data.percentOff).toBe(30);

    const other = sandboxFor(await insertTestProject(db));
    expect(must(await other.processor.findPromotionCode('spring-25'))).toBeNull();
    await expect(control.createPromotionCode(projectId, 'bad code!', 10)).rejects.toThrow(RangeError);
    await expect(control.createPromotionCode(projectId, 'TOOMUCH', 101)).rejects.toThrow(RangeError);
  });

  it('a 100% code lets a failing card start a subscription; a change it cannot pay then changes nothing', async () => {
    await control.createPromotionCode(projectId, 'FREE', 100);
    const { prices } = await product('Free first', [1000, 3000]);
    const customerId = await customer();
    const session = must(
      await processor.createCheckout({
        customerId,
        priceId: prices[0]!,
        successUrl: 'https://app.example.test/ok',
        cancelUrl: 'https://app.example.test/cancel',
        promotionCodeId: must(await processor.findPromotionCode('free')),
        trialDays: null,
        metadata: { projectId },
        email: null,
        idempotencyKey: key('checkout'),
      }),
    );
    const subscriptionId = must(await control.completeCheckout(session.id, '4000000000000341')).subscriptionId!;
    const started = await snapshot(subscriptionId);
    expect(started.subscription.status).toBe('active');
    expect(started.invoices.map((i) => [i.status, i.amountDue, i.attemptCount])).toEqual([['paid', 0, 0]]);

    await control.advanceClock(projectId, 10 * DAY);
    const preview = must(await processor.previewChange(subscriptionId, prices[1]!));
    expect(preview.amountDue).toBeGreaterThan(0);
    expect(preview.lines.map((l) => l.description)).toEqual(['Unused time on Free first after 10 Feb 2024', 'Remaining time on Free first after 10 Feb 2024']);
    expect(failureOf(await processor.changeSubscription(subscriptionId, prices[1]!, key('change')))).toMatchObject({ kind: 'card_declined' });
    const unchanged = await snapshot(subscriptionId);
    expect(unchanged.subscription.priceId).toBe(prices[0]);
    expect(unchanged.invoices).toHaveLength(1);
  });
});

describe('idempotency', () => {
  it('replays answers (a decline too), refuses other parameters, and forgets keys after 24 hours', async () => {
    const { prices } = await product('Keys', [1000]);
    const customerInput = { email: 'k@example.test', name: null, metadata: { projectId }, idempotencyKey: 'customer-key-1' };
    const customerId = must(await processor.createCustomer(customerInput));
    expect(must(await processor.createCustomer(customerInput))).toBe(customerId);
    expect(failureOf(await processor.createCustomer({ ...customerInput, email: 'other@example.test' }))).toEqual({
      kind: 'invalid_request',
      message:
        'Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than ' +
        "'customer-key-1' if you meant to execute a different request.",
    });

    const declined = {
      customerId,
      priceId: prices[0]!,
      paymentMethodId: 'pm_card_chargeDeclined',
      trialDays: null,
      metadata: { projectId },
      idempotencyKey: 'sub-key-1',
    };
    const first = failureOf(await processor.createSubscription(declined));
    expect(failureOf(await processor.createSubscription(declined))).toEqual(first);

    const visa = { ...declined, paymentMethodId: 'pm_card_visa', idempotencyKey: 'sub-key-2' };
    const created = must(await processor.createSubscription(visa));
    const replay = must(await processor.createSubscription(visa));
    expect(replay).toEqual(created);
    expect(replay.subscription.createdAt).toBeInstanceOf(Date);

    // Another project may use the same key for its own request.
    const other = sandboxFor(await insertTestProject(db));
    expect(must(await other.processor.createCustomer(customerInput))).not.toBe(customerId);

    // A refusal of the request itself is not stored: the key works once the request is right.
    const unknown = { ...visa, customerId: 'cus_sbx_missing', idempotencyKey: 'sub-key-3' };
    expect(failureOf(await processor.createSubscription(unknown)).kind).toBe('invalid_request');
    expect(must(await processor.createSubscription({ ...unknown, customerId: await customer() })).subscription.status).toBe('active');

    await control.advanceClock(projectId, 24 * HOUR);
    const fresh = must(await processor.createCustomer(customerInput));
    expect(fresh).not.toBe(customerId);

    // runDue forgets the expired answers.
    const keys = () => sql<{ n: string }>(`select count(*) as n from sandbox_objects where project_id = ? and kind = 'idempotency'`, [projectId]);
    const before = Number((await keys())[0]!.n);
    await control.runDue(projectId);
    expect(Number((await keys())[0]!.n)).toBe(1);
    expect(before).toBeGreaterThan(1);
  });

  it('concurrent calls with one key create one subscription and charge once', async () => {
    const { prices } = await product('Concurrent', [1000]);
    const customerId = await customer();
    const input = { customerId, priceId: prices[0]!, paymentMethodId: 'pm_card_visa', trialDays: null, metadata: { projectId }, idempotencyKey: key('same') };
    const second = sandboxFor(projectId, otherDb).processor;
    const results = await Promise.all([processor.createSubscription(input), second.createSubscription(input), processor.createSubscription(input)]);
    const ids = new Set(results.map((r) => must(r).subscription.id));
    expect(ids.size).toBe(1);
    expect(must(await processor.listSubscriptionIds(customerId))).toHaveLength(1);
  });
});

describe('setup intents and credentials', () => {
  it('answers a Stripe-shaped setup intent and a test-mode account', async () => {
    const customerId = await customer();
    const intent = must(await processor.createSetupIntent(customerId, key('seti')));
    expect(intent.id).toMatch(/^seti_sbx_[0-9a-f]{32}$/);
    expect(intent.clientSecret).toMatch(new RegExp(`^${intent.id}_secret_[0-9a-f]{32}$`));
    expect(failureOf(await processor.createSetupIntent('cus_sbx_missing', key('seti'))).kind).toBe('invalid_request');
    expect(must(await processor.verifyCredentials())).toEqual({ accountId: null, livemode: false });
  });
});
