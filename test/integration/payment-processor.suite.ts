import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  PaymentProcessor,
  ProcessorFailure,
  ProcessorInvoice,
  ProcessorMetadata,
  ProcessorResult,
  ProcessorSnapshot,
} from '../../application/billing/payment-processor';
import { type Plan, type Price, type PriceSnapshot, seatSnapshotOf } from '../../domain/billing/catalog';
import { type BillingInterval, SECONDS_PER_DAY, addDays, cycleBoundary } from '../../domain/billing/periods';
import { previewPriceChange } from '../../domain/billing/proration';
import { DEFAULT_SEAT_POLICY, seatAmount } from '../../domain/billing/seat-terms';
import { LIVE_STATUSES } from '../../domain/billing/subscription';
import type { CreditPack } from '../../domain/usage/credit-pack';
import type { CreditPackStore, MeteredUsage, PurchasedCredits } from '../../application/billing/billing.store';
import { makeFulfilPackCheckout } from '../../application/billing/credit-packs';
import type { Logger } from '../../application/ports/logger';

/**
 * The `PaymentProcessor` port's contract, run against every adapter: the sandbox
 * (sandbox-processor-contract.test.ts) and the Stripe adapter against test/support/stripe's
 * Stripe-shaped server. It speaks only the port, and expects Stripe's semantics:
 *
 * - a test payment method (`pm_card_visa`) becomes the customer's card and the subscription's;
 *   `pm_card_chargeDeclined` is declined when attached; `pm_card_chargeCustomerFail` attaches and
 *   every charge on it fails;
 * - a declined first charge leaves nothing live (Stripe `payment_behavior=error_if_incomplete`);
 * - proration as Stripe's classic mode (domain/billing/proration.ts computes the same numbers,
 *   within one minor unit since Stripe prorates from the second it handles the request);
 * - Stripe finalizes and charges a renewal invoice about an hour after the period ends, so every
 *   wait for a period end advances by the interval plus two hours.
 */
export interface ProcessorHarness {
  processor: PaymentProcessor;
  /** Moves the processor's clock forward and lets its due work (renewals, trial ends, ...) run. */
  advance(seconds: number): Promise<void>;
  /**
   * The customer pays a checkout on the processor's hosted page with a test payment method
   * (`pm_card_visa`): null when paid, the failure the page shows otherwise (a decline).
   */
  payCheckout(checkoutId: string, paymentMethod: string): Promise<ProcessorFailure | null>;
  close(): Promise<void>;
}

const HOUR = 3600;
const DAY = SECONDS_PER_DAY;
/** Longer than any month, shorter than any two: one monthly renewal, charged. */
const ONE_MONTH_AND_A_BIT = 31 * DAY + 2 * HOUR;

/** The value of a successful result; a failure fails the test with the processor's words. */
function must<T>(result: ProcessorResult<T, ProcessorFailure>): T {
  if (!result.ok) throw new Error(`processor failed: ${result.failure.kind}: ${result.failure.message}`);
  return result.value;
}

function failureOf<T>(result: ProcessorResult<T, ProcessorFailure>): ProcessorFailure {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

const key = (label: string) => `${label}-${randomUUID()}`;

interface CatalogPrice {
  /** The processor's price id. */
  id: string;
  amount: number;
  interval: BillingInterval;
  /** For the domain's proration, with the processor's id. */
  snapshot: PriceSnapshot;
}

export function describePaymentProcessorContract(name: string, setup: () => Promise<ProcessorHarness>): void {
  describe(`PaymentProcessor contract: ${name}`, () => {
    let harness: ProcessorHarness;
    let processor: PaymentProcessor;
    const projectId = randomUUID();

    beforeEach(async () => {
      harness = await setup();
      processor = harness.processor;
    });

    afterEach(async () => {
      await harness.close();
    });

    const metadata = (extra: Partial<ProcessorMetadata> = {}): ProcessorMetadata => ({ projectId, ...extra });

    function plan(planName: string, trialsEnabled = true): Plan {
      return {
        id: randomUUID(),
        name: planName,
        description: `${planName} plan`,
        features: ['reports'],
        hidden: false,
        recommended: false,
        trialsEnabled,
        defaultTrialDays: null,
        audience: 'users',
        seatPolicy: DEFAULT_SEAT_POLICY,
        usageLimits: [],
        position: 0,
      };
    }

    /** A product with one monthly price per amount. */
    async function catalog(planName: string, amounts: number[], interval: BillingInterval = 'month'): Promise<CatalogPrice[]> {
      const p = plan(planName);
      const productId = must(await processor.upsertProduct(p, null, metadata()));
      const prices: CatalogPrice[] = [];
      for (const amount of amounts) {
        const price: Price = { id: randomUUID(), planId: p.id, name: `${planName} ${amount}`, amount, currency: 'usd', interval, active: true, seats: null };
        const id = must(await processor.createPrice(price, productId, metadata({ priceId: price.id })));
        prices.push({ id, amount, interval, snapshot: { id, planId: p.id, amount, currency: 'usd', interval } });
      }
      return prices;
    }

    /**
     * A team plan's per-seat price, monthly: 20.00 for the first 2 seats, 10.00 for each further one,
     * 1 to 50 seats. `price` is the domain's price under the processor's id.
     */
    async function seatCatalog(planName: string): Promise<{ id: string; price: Price }> {
      const p: Plan = { ...plan(planName), audience: 'organizations' };
      const productId = must(await processor.upsertProduct(p, null, metadata()));
      const price: Price = {
        id: randomUUID(),
        planId: p.id,
        name: `${planName} monthly`,
        amount: 2000,
        currency: 'usd',
        interval: 'month',
        active: true,
        seats: { unitAmount: 1000, included: 2, minimum: 1, maximum: 50 },
      };
      const id = must(await processor.createPrice(price, productId, metadata({ priceId: price.id })));
      return { id, price: { ...price, id } };
    }

    function subscribeSeats(customerId: string, priceId: string, quantity: number) {
      return processor.createSubscription({
        customerId,
        priceId,
        quantity,
        paymentMethodId: 'pm_card_visa',
        trialDays: null,
        metadata: metadata({ organizationId: randomUUID(), subscriptionId: randomUUID() }),
        idempotencyKey: key('subscribe'),
      });
    }

    async function customer(): Promise<string> {
      const userId = randomUUID();
      return must(
        await processor.createCustomer({
          email: `user-${userId.slice(0, 8)}@example.test`,
          name: null,
          metadata: metadata({ userId }),
          idempotencyKey: key('customer'),
        }),
      );
    }

    function subscribe(customerId: string, priceId: string, paymentMethodId: string, trialDays: number | null = null) {
      return processor.createSubscription({
        customerId,
        priceId,
        paymentMethodId,
        trialDays,
        metadata: metadata({ userId: randomUUID(), subscriptionId: randomUUID() }),
        idempotencyKey: key('subscribe'),
      });
    }

    async function current(subscriptionId: string): Promise<ProcessorSnapshot> {
      const snapshot = must(await processor.getSubscription(subscriptionId));
      if (snapshot === null) throw new Error(`subscription ${subscriptionId} unknown`);
      return snapshot;
    }

    const paid = (invoices: ProcessorInvoice[]) => invoices.filter((i) => i.status === 'paid' && i.amountPaid > 0);
    const lastOf = (invoices: ProcessorInvoice[], reason: ProcessorInvoice['reason']) => invoices.filter((i) => i.reason === reason).at(-1);

    async function liveSubscriptions(customerId: string): Promise<ProcessorSnapshot[]> {
      const ids = must(await processor.listSubscriptionIds(customerId));
      const snapshots = await Promise.all(ids.map((id) => current(id)));
      return snapshots.filter((s) => (LIVE_STATUSES as readonly string[]).includes(s.subscription.status));
    }

    it('verifies its credentials', async () => {
      const account = must(await processor.verifyCredentials());
      expect(account.livemode).toBe(false);
    });

    it('pushes a product and its prices; an archived price starts no subscription', async () => {
      const p = plan('Catalog');
      const productId = must(await processor.upsertProduct(p, null, metadata()));
      expect(productId).toEqual(expect.any(String));
      expect(must(await processor.upsertProduct({ ...p, name: 'Catalog renamed', description: 'New words' }, productId, metadata()))).toBe(productId);

      const monthly: Price = { id: randomUUID(), planId: p.id, name: 'Monthly', amount: 1500, currency: 'usd', interval: 'month', active: true, seats: null };
      const yearly: Price = { ...monthly, id: randomUUID(), name: 'Yearly', amount: 15000, interval: 'year' };
      const monthlyId = must(await processor.createPrice(monthly, productId, metadata({ priceId: monthly.id })));
      const yearlyId = must(await processor.createPrice(yearly, productId, metadata({ priceId: yearly.id })));
      expect(monthlyId).not.toBe(yearlyId);

      must(await processor.archivePrice(yearlyId));
      const customerId = await customer();
      const refused = failureOf(await subscribe(customerId, yearlyId, 'pm_card_visa'));
      expect(refused.kind).toBe('invalid_request');
      expect(await liveSubscriptions(customerId)).toEqual([]);

      const snapshot = must(await subscribe(customerId, monthlyId, 'pm_card_visa'));
      expect(snapshot.subscription.priceId).toBe(monthlyId);
    });

    it('creates customers, each with no subscriptions yet', async () => {
      const a = await customer();
      const b = await customer();
      expect(a).not.toBe(b);
      expect(must(await processor.listSubscriptionIds(a))).toEqual([]);
    });

    it('subscribes with pm_card_visa: active, one paid invoice of the price, a period of one interval, the card', async () => {
      const [price] = await catalog('Basic', [1000]);
      const customerId = await customer();
      const snapshot = must(await subscribe(customerId, price!.id, 'pm_card_visa'));
      const s = snapshot.subscription;

      expect(s.status).toBe('active');
      expect(s.customerId).toBe(customerId);
      expect(s.priceId).toBe(price!.id);
      expect(s.cancelAtPeriodEnd).toBe(false);
      expect(s.trialEnd).toBeNull();
      expect(s.currentPeriodEnd.getTime()).toBe(cycleBoundary(s.currentPeriodStart, 'month', 1).getTime());
      expect(s.paymentMethod).toMatchObject({ brand: 'visa', last4: '4242' });
      expect(s.metadata.projectId).toBe(projectId);

      const charged = paid(snapshot.invoices);
      expect(charged).toHaveLength(1);
      expect(charged[0]).toMatchObject({ reason: 'subscription_create', currency: 'usd', amountDue: 1000, amountPaid: 1000, subscriptionId: s.id, customerId });
      expect(charged[0]!.lines.reduce((sum, l) => sum + l.amount, 0)).toBe(1000);
      expect(charged[0]!.paidAt).not.toBeNull();

      const again = await current(s.id);
      expect(again.subscription).toMatchObject({ id: s.id, status: 'active', priceId: price!.id });
      expect(must(await processor.listSubscriptionIds(customerId))).toEqual([s.id]);
    });

    it('answers null for a subscription it does not know', async () => {
      expect(must(await processor.getSubscription('sub_0000000000000000000000'))).toBeNull();
    });

    it('declines pm_card_chargeDeclined when attached: card_declined, no subscription', async () => {
      const [price] = await catalog('Declined', [1000]);
      const customerId = await customer();
      const failure = failureOf(await subscribe(customerId, price!.id, 'pm_card_chargeDeclined'));
      expect(failure).toMatchObject({ kind: 'card_declined', declineCode: 'generic_decline' });
      expect(failure.message).toMatch(/declined/i);

      const insufficient = failureOf(await subscribe(customerId, price!.id, 'pm_card_chargeDeclinedInsufficientFunds'));
      expect(insufficient).toMatchObject({ kind: 'card_declined', declineCode: 'insufficient_funds' });
      expect(await liveSubscriptions(customerId)).toEqual([]);
    });

    it('pm_card_chargeCustomerFail without a trial: card_declined and nothing live', async () => {
      const [price] = await catalog('Fails', [1000]);
      const customerId = await customer();
      const failure = failureOf(await subscribe(customerId, price!.id, 'pm_card_chargeCustomerFail'));
      expect(failure.kind).toBe('card_declined');
      expect(await liveSubscriptions(customerId)).toEqual([]);
    });

    it('pm_card_chargeCustomerFail with a trial: trialing without a charge, then past_due with an open invoice', async () => {
      const [price] = await catalog('Trial fails', [1000]);
      const customerId = await customer();
      const snapshot = must(await subscribe(customerId, price!.id, 'pm_card_chargeCustomerFail', 7));
      const s = snapshot.subscription;
      expect(s.status).toBe('trialing');
      expect(s.trialStart).not.toBeNull();
      expect(s.trialEnd!.getTime()).toBe(addDays(s.trialStart!, 7).getTime());
      expect(paid(snapshot.invoices)).toEqual([]);

      await harness.advance(7 * DAY + 2 * HOUR);
      const after = await current(s.id);
      expect(after.subscription.status).toBe('past_due');
      const open = after.invoices.filter((i) => i.status === 'open');
      expect(open).toHaveLength(1);
      expect(open[0]!.attemptCount).toBeGreaterThanOrEqual(1);
      expect(open[0]!.amountDue).toBe(1000);
      expect(open[0]!.amountPaid).toBe(0);
    });

    it('a trial with pm_card_visa is charged when it ends', async () => {
      const [price] = await catalog('Trial pays', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa', 3)).subscription;
      expect(s.status).toBe('trialing');

      await harness.advance(3 * DAY + 2 * HOUR);
      const after = await current(s.id);
      expect(after.subscription.status).toBe('active');
      expect(after.subscription.currentPeriodStart.getTime()).toBe(s.trialEnd!.getTime());
      expect(after.subscription.currentPeriodEnd.getTime()).toBe(cycleBoundary(s.trialEnd!, 'month', 1).getTime());
      expect(paid(after.invoices).map((i) => i.amountPaid)).toEqual([1000]);
    });

    it('upgrades mid-period: the prorated invoice is the domain proration, and the preview is the invoice', async () => {
      const [basic, pro] = await catalog('Tiered', [1000, 3000]);
      const customerId = await customer();
      const before = must(await subscribe(customerId, basic!.id, 'pm_card_visa')).subscription;

      await harness.advance(10 * DAY + 5 * HOUR);
      const preview = must(await processor.previewChange(before.id, pro!.id));
      const changed = must(await processor.changeSubscription(before.id, pro!.id, key('change')));

      const s = changed.subscription;
      expect(s).toMatchObject({ id: before.id, status: 'active', priceId: pro!.id });
      expect(s.currentPeriodStart.getTime()).toBe(before.currentPeriodStart.getTime());
      expect(s.currentPeriodEnd.getTime()).toBe(before.currentPeriodEnd.getTime());

      const invoice = lastOf(changed.invoices, 'subscription_update');
      expect(invoice).toBeDefined();
      expect(invoice!.status).toBe('paid');
      const unused = invoice!.lines.find((l) => l.kind === 'unused_time');
      const remaining = invoice!.lines.find((l) => l.kind === 'remaining_time');
      expect(unused).toBeDefined();
      expect(remaining).toBeDefined();

      const expected = previewPriceChange({
        period: { start: before.currentPeriodStart, end: before.currentPeriodEnd },
        anchor: before.billingCycleAnchor,
        from: basic!.snapshot,
        to: pro!.snapshot,
        at: unused!.periodStart,
        creditBalance: 0,
      })!;
      const expectedLine = (kind: string) => expected.invoice.lines.find((l) => l.kind === kind)!.amount;
      expect(Math.abs(unused!.amount - expectedLine('unused_time'))).toBeLessThanOrEqual(1);
      expect(Math.abs(remaining!.amount - expectedLine('remaining_time'))).toBeLessThanOrEqual(1);
      expect(unused!.amount).toBeLessThan(0);
      expect(Math.abs(invoice!.amountDue - expected.invoice.amountDue)).toBeLessThanOrEqual(1);
      expect(invoice!.amountPaid).toBe(invoice!.amountDue);

      expect(preview.currency).toBe('usd');
      expect(Math.abs(preview.amountDue - invoice!.amountDue)).toBeLessThanOrEqual(1);
      expect(Math.abs(preview.subtotal - invoice!.subtotal)).toBeLessThanOrEqual(1);
      expect(preview.periodEnd.getTime()).toBe(before.currentPeriodEnd.getTime());
    });

    it('downgrades mid-period: nothing due, a credit that the next renewal uses', async () => {
      const [basic, pro] = await catalog('Downgrade', [1000, 3000]);
      const customerId = await customer();
      const before = must(await subscribe(customerId, pro!.id, 'pm_card_visa')).subscription;

      await harness.advance(10 * DAY);
      const preview = must(await processor.previewChange(before.id, basic!.id));
      expect(preview.amountDue).toBe(0);
      expect(preview.subtotal).toBeLessThan(0);

      const changed = must(await processor.changeSubscription(before.id, basic!.id, key('downgrade')));
      expect(changed.subscription).toMatchObject({ status: 'active', priceId: basic!.id });
      const invoice = lastOf(changed.invoices, 'subscription_update');
      if (invoice) {
        expect(invoice.amountDue).toBe(0);
        expect(invoice.amountPaid).toBe(0);
        expect(Math.abs(invoice.subtotal - preview.subtotal)).toBeLessThanOrEqual(1);
      }
      const credit = -preview.subtotal;

      await harness.advance(ONE_MONTH_AND_A_BIT);
      const renewed = await current(before.id);
      const renewal = lastOf(renewed.invoices, 'subscription_cycle');
      expect(renewal).toBeDefined();
      expect(Math.abs(renewal!.amountDue - Math.max(0, 1000 - credit))).toBeLessThanOrEqual(1);
      expect(renewed.subscription.status).toBe('active');
    });

    it('cancels at period end: pending until the period ends, then canceled without a renewal', async () => {
      const [price] = await catalog('Cancel later', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;

      const pending = must(await processor.cancelSubscription(s.id, { atPeriodEnd: true, idempotencyKey: key('cancel') })).subscription;
      expect(pending).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, endedAt: null });
      expect(pending.canceledAt).not.toBeNull();

      await harness.advance(ONE_MONTH_AND_A_BIT);
      const ended = await current(s.id);
      expect(ended.subscription.status).toBe('canceled');
      // Nothing left to cancel (Stripe itself keeps cancel_at_period_end=true).
      expect(ended.subscription.cancelAtPeriodEnd).toBe(false);
      expect(ended.subscription.endedAt!.getTime()).toBe(s.currentPeriodEnd.getTime());
      expect(paid(ended.invoices)).toHaveLength(1);
    });

    it('cancels now', async () => {
      const [price] = await catalog('Cancel now', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;
      const canceled = must(await processor.cancelSubscription(s.id, { atPeriodEnd: false, idempotencyKey: key('cancel-now') })).subscription;
      expect(canceled).toMatchObject({ status: 'canceled', cancelAtPeriodEnd: false });
      expect(canceled.endedAt).not.toBeNull();
      expect(canceled.canceledAt).not.toBeNull();
      expect(await liveSubscriptions(customerId)).toEqual([]);
    });

    it('pauses, then resumes on the same billing cycle', async () => {
      const [price] = await catalog('Pause', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;

      const paused = must(await processor.pauseSubscription(s.id, key('pause'))).subscription;
      expect(paused.status).toBe('paused');
      expect(paused.pausedAt).not.toBeNull();
      expect((await current(s.id)).subscription.status).toBe('paused');

      const resumed = must(await processor.resumeSubscription(s.id, key('resume'))).subscription;
      expect(resumed.status).toBe('active');
      expect(resumed.pausedAt).toBeNull();
      expect(resumed.currentPeriodEnd.getTime()).toBe(s.currentPeriodEnd.getTime());
    });

    it('resumes after a renewal passed while paused: a new period starts at the resume and is charged', async () => {
      const [price] = await catalog('Pause across', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;

      // Paused a day before the period ends, resumed after the renewal (Stripe voids its invoice).
      await harness.advance(s.currentPeriodEnd.getTime() / 1000 - s.currentPeriodStart.getTime() / 1000 - DAY);
      must(await processor.pauseSubscription(s.id, key('pause')));
      await harness.advance(DAY + 2 * HOUR);
      expect(paid((await current(s.id)).invoices)).toHaveLength(1);

      const resumed = must(await processor.resumeSubscription(s.id, key('resume')));
      expect(resumed.subscription.status).toBe('active');
      expect(resumed.subscription.pausedAt).toBeNull();
      // A whole new period from the resume, anchored there: no free period.
      expect(resumed.subscription.currentPeriodStart.getTime()).toBeGreaterThan(s.currentPeriodEnd.getTime());
      expect(resumed.subscription.currentPeriodEnd.getTime()).toBe(cycleBoundary(resumed.subscription.currentPeriodStart, 'month', 1).getTime());
      const charges = paid(resumed.invoices);
      expect(charges.map((i) => i.amountPaid)).toEqual([1000, 1000]);
      const line = charges[1]!.lines.find((l) => l.kind === 'subscription')!;
      expect(line.periodStart.getTime()).toBe(resumed.subscription.currentPeriodStart.getTime());

      // Paused and resumed within the new (paid) period: the same cycle, nothing charged.
      must(await processor.pauseSubscription(s.id, key('pause')));
      const again = must(await processor.resumeSubscription(s.id, key('resume'))).subscription;
      expect(again.currentPeriodEnd.getTime()).toBe(resumed.subscription.currentPeriodEnd.getTime());
      expect(paid((await current(s.id)).invoices)).toHaveLength(2);
    });

    it('ends a trial now: active, a new period from now, charged at once', async () => {
      const [price] = await catalog('Trial cut', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa', 14)).subscription;
      expect(s.status).toBe('trialing');
      await harness.advance(2 * DAY);

      const ended = must(await processor.endTrial(s.id, key('end-trial')));
      expect(ended.subscription.status).toBe('active');
      expect(ended.subscription.trialEnd!.getTime()).toBeLessThan(s.trialEnd!.getTime());
      expect(ended.subscription.currentPeriodStart.getTime()).toBe(ended.subscription.trialEnd!.getTime());
      expect(ended.subscription.currentPeriodEnd.getTime()).toBe(cycleBoundary(ended.subscription.currentPeriodStart, 'month', 1).getTime());
      expect(paid(ended.invoices).map((i) => i.amountPaid)).toEqual([1000]);
      // Asked again: nothing more happens.
      const again = must(await processor.endTrial(s.id, key('end-trial')));
      expect(paid(again.invoices)).toHaveLength(1);
    });

    it('refunds a paid invoice once: the same key answers the same refund, another finds nothing left', async () => {
      const [price] = await catalog('Refund', [1000]);
      const customerId = await customer();
      const snapshot = must(await subscribe(customerId, price!.id, 'pm_card_visa'));
      const invoice = paid(snapshot.invoices)[0]!;
      const refundKey = key('refund');

      const refund = must(await processor.refundInvoice(invoice.id, { amount: 1000, reason: 'duplicate', idempotencyKey: refundKey }));
      expect(refund).toMatchObject({ invoiceId: invoice.id, amount: 1000, currency: 'usd' });
      expect(refund.id).toEqual(expect.any(String));
      const replayed = must(await processor.refundInvoice(invoice.id, { amount: 1000, reason: 'duplicate', idempotencyKey: refundKey }));
      expect(replayed.id).toBe(refund.id);
      expect(failureOf(await processor.refundInvoice(invoice.id, { amount: 1, reason: 'duplicate', idempotencyKey: key('refund') })).kind).toBe(
        'invalid_request',
      );

      // An invoice with nothing paid (a trial's) has nothing to refund.
      const trial = must(await subscribe(await customer(), price!.id, 'pm_card_visa', 7));
      const free = trial.invoices[0];
      if (free)
        expect(failureOf(await processor.refundInvoice(free.id, { amount: 1, reason: 'duplicate', idempotencyKey: key('refund') })).kind).toBe(
          'invalid_request',
        );
    });

    it('resumes a pending cancellation', async () => {
      const [price] = await catalog('Undo cancel', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;
      must(await processor.cancelSubscription(s.id, { atPeriodEnd: true, idempotencyKey: key('cancel') }));
      const resumed = must(await processor.resumeSubscription(s.id, key('resume'))).subscription;
      expect(resumed).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
    });

    it('renews after one interval with a new paid invoice for the next period', async () => {
      const [price] = await catalog('Renew', [1000]);
      const customerId = await customer();
      const s = must(await subscribe(customerId, price!.id, 'pm_card_visa')).subscription;

      await harness.advance(ONE_MONTH_AND_A_BIT);
      const renewed = await current(s.id);
      expect(renewed.subscription.status).toBe('active');
      expect(renewed.subscription.currentPeriodStart.getTime()).toBe(s.currentPeriodEnd.getTime());
      expect(renewed.subscription.currentPeriodEnd.getTime()).toBe(cycleBoundary(s.billingCycleAnchor, 'month', 2).getTime());

      const charged = paid(renewed.invoices);
      expect(charged).toHaveLength(2);
      expect(charged[1]).toMatchObject({ reason: 'subscription_cycle', amountPaid: 1000, status: 'paid' });
      const line = charged[1]!.lines.find((l) => l.kind === 'subscription')!;
      expect(line.periodStart.getTime()).toBe(s.currentPeriodEnd.getTime());
      expect(line.periodEnd.getTime()).toBe(renewed.subscription.currentPeriodEnd.getTime());
    });

    it('answers the same subscription (and customer) for the same idempotency key', async () => {
      const [price] = await catalog('Idempotent', [1000]);
      const userId = randomUUID();
      const customerKey = key('customer');
      const customerInput = { email: 'same@example.test', name: null, metadata: metadata({ userId }), idempotencyKey: customerKey };
      const customerId = must(await processor.createCustomer(customerInput));
      expect(must(await processor.createCustomer(customerInput))).toBe(customerId);

      const input = {
        customerId,
        priceId: price!.id,
        paymentMethodId: 'pm_card_visa',
        trialDays: null,
        metadata: metadata({ userId, subscriptionId: randomUUID() }),
        idempotencyKey: key('subscribe'),
      };
      const first = must(await processor.createSubscription(input));
      const second = must(await processor.createSubscription(input));
      expect(second.subscription.id).toBe(first.subscription.id);
      expect(must(await processor.listSubscriptionIds(customerId))).toEqual([first.subscription.id]);
      expect(paid((await current(first.subscription.id)).invoices)).toHaveLength(1);
    });

    describe('per-seat prices', () => {
      const periodLines = (invoice: ProcessorInvoice) => invoice.lines.filter((l) => l.kind === 'subscription');

      it('subscribes 3 seats: active with quantity 3, a first invoice of 30.00 on one line for the 3 seats', async () => {
        const team = await seatCatalog('Team');
        const snapshot = must(await subscribeSeats(await customer(), team.id, 3));
        expect(snapshot.subscription).toMatchObject({ status: 'active', priceId: team.id, quantity: 3 });

        const charged = paid(snapshot.invoices);
        expect(charged).toHaveLength(1);
        expect(charged[0]).toMatchObject({ reason: 'subscription_create', amountDue: 3000, amountPaid: 3000, subtotal: 3000 });
        expect(periodLines(charged[0]!)).toEqual([expect.objectContaining({ kind: 'subscription', priceId: team.id, quantity: 3, amount: 3000 })]);
        expect((await current(snapshot.subscription.id)).subscription.quantity).toBe(3);
      });

      it('adds seats mid-period: the preview is the domain proration of the amounts, the change charges it, a repeated key nothing more', async () => {
        const team = await seatCatalog('Team grows');
        const before = must(await subscribeSeats(await customer(), team.id, 3)).subscription;

        await harness.advance(14 * DAY + 12 * HOUR);
        const preview = must(await processor.previewQuantity(before.id, 5));
        const changeKey = key('seats');
        const changed = must(await processor.updateQuantity(before.id, 5, { prorate: true, idempotencyKey: changeKey }));
        expect(changed.subscription).toMatchObject({ id: before.id, status: 'active', priceId: team.id, quantity: 5 });
        expect(changed.subscription.currentPeriodEnd.getTime()).toBe(before.currentPeriodEnd.getTime());

        const invoice = lastOf(changed.invoices, 'subscription_update');
        expect(invoice).toBeDefined();
        expect(invoice!.status).toBe('paid');
        const unused = invoice!.lines.find((l) => l.kind === 'unused_time')!;
        const remaining = invoice!.lines.find((l) => l.kind === 'remaining_time')!;
        expect(unused).toMatchObject({ priceId: team.id, quantity: 3 });
        expect(remaining).toMatchObject({ priceId: team.id, quantity: 5 });

        const expected = previewPriceChange({
          period: { start: before.currentPeriodStart, end: before.currentPeriodEnd },
          anchor: before.billingCycleAnchor,
          from: seatSnapshotOf(team.price, 3),
          to: seatSnapshotOf(team.price, 5),
          at: unused.periodStart,
          creditBalance: 0,
        })!;
        const expectedLine = (kind: string) => expected.invoice.lines.find((l) => l.kind === kind)!.amount;
        expect(Math.abs(unused.amount - expectedLine('unused_time'))).toBeLessThanOrEqual(1);
        expect(Math.abs(remaining.amount - expectedLine('remaining_time'))).toBeLessThanOrEqual(1);
        expect(Math.abs(invoice!.amountDue - expected.invoice.amountDue)).toBeLessThanOrEqual(1);
        expect(invoice!.amountPaid).toBe(invoice!.amountDue);
        expect(Math.abs(preview.amountDue - invoice!.amountDue)).toBeLessThanOrEqual(1);
        expect(Math.abs(preview.subtotal - invoice!.subtotal)).toBeLessThanOrEqual(1);
        expect(preview.lines.map((l) => [l.kind, l.quantity])).toEqual([
          ['unused_time', 3],
          ['remaining_time', 5],
        ]);

        const invoicesAfter = (await current(before.id)).invoices.length;
        const again = must(await processor.updateQuantity(before.id, 5, { prorate: true, idempotencyKey: changeKey }));
        expect(again.subscription.quantity).toBe(5);
        expect(again.invoices).toHaveLength(invoicesAfter);
        expect(paid(again.invoices)).toHaveLength(2);
      });

      it('sets seats for the next renewal without prorating: no invoice now, the renewal bills the new quantity', async () => {
        const team = await seatCatalog('Team later');
        const before = must(await subscribeSeats(await customer(), team.id, 3));

        await harness.advance(5 * DAY);
        const changed = must(await processor.updateQuantity(before.subscription.id, 4, { prorate: false, idempotencyKey: key('seats') }));
        expect(changed.subscription.quantity).toBe(4);
        expect(changed.invoices).toHaveLength(before.invoices.length);

        await harness.advance(ONE_MONTH_AND_A_BIT);
        const renewed = await current(before.subscription.id);
        const renewal = lastOf(renewed.invoices, 'subscription_cycle');
        expect(renewal).toMatchObject({ status: 'paid', amountPaid: seatAmount(team.price, 4) });
        expect(seatAmount(team.price, 4)).toBe(4000);
        expect(periodLines(renewal!)).toEqual([expect.objectContaining({ quantity: 4, amount: 4000 })]);
      });

      it('removes seats with proration: nothing due, a credit that the next renewal uses', async () => {
        const team = await seatCatalog('Team shrinks');
        const before = must(await subscribeSeats(await customer(), team.id, 5)).subscription;

        await harness.advance(10 * DAY);
        const preview = must(await processor.previewQuantity(before.id, 3));
        expect(preview.amountDue).toBe(0);
        expect(preview.subtotal).toBeLessThan(0);

        const changed = must(await processor.updateQuantity(before.id, 3, { prorate: true, idempotencyKey: key('seats') }));
        expect(changed.subscription.quantity).toBe(3);
        const invoice = lastOf(changed.invoices, 'subscription_update');
        if (invoice) {
          expect(invoice.amountDue).toBe(0);
          expect(invoice.amountPaid).toBe(0);
          expect(Math.abs(invoice.subtotal - preview.subtotal)).toBeLessThanOrEqual(1);
        }
        const credit = -preview.subtotal;

        await harness.advance(ONE_MONTH_AND_A_BIT);
        const renewal = lastOf((await current(before.id)).invoices, 'subscription_cycle');
        expect(renewal).toBeDefined();
        expect(Math.abs(renewal!.amountDue - Math.max(0, seatAmount(team.price, 3) - credit))).toBeLessThanOrEqual(1);
      });

      it('a flat price bills quantity 1 and its lines carry no seats', async () => {
        const [price] = await catalog('Flat', [1000]);
        const snapshot = must(await subscribe(await customer(), price!.id, 'pm_card_visa'));
        expect(snapshot.subscription.quantity).toBe(1);
        const lines = paid(snapshot.invoices)[0]!.lines;
        expect(lines).not.toHaveLength(0);
        expect(lines.map((l) => l.quantity ?? null)).toEqual(lines.map(() => null));
      });
    });

    describe('credit packs (one-off checkouts)', () => {
      const pack = (customerId: string, idempotencyKey = key('pack')) => ({
        customerId,
        name: '500 calls',
        amount: 900,
        currency: 'usd',
        successUrl: 'https://app.example.test/credits?paid=1',
        cancelUrl: 'https://app.example.test/credits',
        metadata: metadata({ userId: randomUUID(), packId: randomUUID() }),
        email: 'buyer@example.test',
        idempotencyKey,
      });
      /** The port's fulfilment of a paid pack (application/billing/credit-packs.ts) over this processor, grants counted by checkout. */
      function fulfilment() {
        const granted = new Map<string, number>();
        const packs = new Map<string, CreditPack>();
        const deps = {
          creditPacks: { get: async (_p: string, id: string) => packs.get(id) ?? null } as unknown as CreditPackStore,
          meteredUsage: {
            grantPurchase: async (g: PurchasedCredits) => {
              if (granted.has(g.externalId)) return false;
              granted.set(g.externalId, g.units);
              return true;
            },
          } as unknown as MeteredUsage,
          clock: { now: () => new Date() },
          crypto: { uuid: () => randomUUID(), hash: (s: string) => s },
          logger: { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger,
          audit: { record() {} },
        };
        const fulfil = makeFulfilPackCheckout(deps);
        return {
          sell(input: ReturnType<typeof pack>) {
            const id = input.metadata.packId!;
            packs.set(id, {
              id,
              projectId,
              meterKey: 'api_calls',
              name: input.name,
              units: 500,
              amount: 900,
              currency: 'usd',
              expiresInDays: null,
              active: true,
              createdAt: new Date(),
            });
          },
          fulfil: (checkoutId: string) => fulfil(projectId, processor, checkoutId),
          granted,
        };
      }

      it('sells a pack: open and unpaid until paid once with a card; a paid checkout grants once', async () => {
        const customerId = await customer();
        const input = pack(customerId);
        const shop = fulfilment();
        shop.sell(input);
        const session = must(await processor.createPackCheckout(input));
        expect(session.url).toMatch(/^https?:\/\//);
        // The same key answers the same session.
        expect(must(await processor.createPackCheckout(input)).id).toBe(session.id);

        expect(must(await processor.getPackCheckout(session.id))).toEqual({
          id: session.id,
          status: 'open',
          paid: false,
          customerId,
          metadata: input.metadata,
        });
        expect(must(await shop.fulfil(session.id))).toBe(false);

        // A declined card leaves it open and unpaid; another card pays it.
        expect(await harness.payCheckout(session.id, 'pm_card_chargeDeclinedInsufficientFunds')).toMatchObject({
          kind: 'card_declined',
          declineCode: 'insufficient_funds',
        });
        expect(must(await processor.getPackCheckout(session.id))).toMatchObject({ status: 'open', paid: false });
        expect(await harness.payCheckout(session.id, 'pm_card_visa')).toBeNull();

        expect(must(await processor.getPackCheckout(session.id))).toEqual({
          id: session.id,
          status: 'complete',
          paid: true,
          customerId,
          metadata: input.metadata,
        });
        // Paid once: a second payment is refused, and no subscription came of it.
        expect(await harness.payCheckout(session.id, 'pm_card_visa')).not.toBeNull();
        expect(must(await processor.listSubscriptionIds(customerId))).toEqual([]);

        expect(must(await shop.fulfil(session.id))).toBe(true);
        // Reported again (the webhook after the page, a redelivery): nothing more.
        expect(must(await shop.fulfil(session.id))).toBe(false);
        expect([...shop.granted.values()]).toEqual([500]);
      });

      it('an unpaid checkout expires after 24 hours and grants nothing; unknown ones and subscription checkouts are not packs', async () => {
        const customerId = await customer();
        const input = pack(customerId);
        const shop = fulfilment();
        shop.sell(input);
        const session = must(await processor.createPackCheckout(input));

        await harness.advance(DAY + HOUR);
        expect(must(await processor.getPackCheckout(session.id))).toMatchObject({ id: session.id, status: 'expired', paid: false });
        expect(await harness.payCheckout(session.id, 'pm_card_visa')).not.toBeNull();
        expect(must(await shop.fulfil(session.id))).toBe(false);
        expect(shop.granted.size).toBe(0);

        expect(must(await processor.getPackCheckout('cs_test_0000000000000000000000'))).toBeNull();
        const [price] = await catalog('Not a pack', [1000]);
        const subscriptionCheckout = must(
          await processor.createCheckout({
            customerId,
            priceId: price!.id,
            successUrl: 'https://app.example.test/ok',
            cancelUrl: 'https://app.example.test/no',
            promotionCodeId: null,
            trialDays: null,
            metadata: metadata({ userId: randomUUID() }),
            email: null,
            idempotencyKey: key('checkout'),
          }),
        );
        expect(must(await processor.getPackCheckout(subscriptionCheckout.id))).toBeNull();
      });

      it('refuses an amount of 0 or a bad URL', async () => {
        const customerId = await customer();
        expect(failureOf(await processor.createPackCheckout({ ...pack(customerId), amount: 0 })).kind).toBe('invalid_request');
        expect(failureOf(await processor.createPackCheckout({ ...pack(customerId), successUrl: 'not a url' })).kind).toBe('invalid_request');
      });
    });

    describe('usage overage (metered prices)', () => {
      const terms = { meterKey: 'ai_tokens', meterName: 'AI tokens', unitAmount: 200, packageSize: 1000, currency: 'usd', interval: 'month' } as const;

      it('answers the same metered price for the same terms, and another for other terms', async () => {
        const id = must(await processor.ensureMeteredPrice({ ...terms, metadata: metadata() }));
        expect(id).toEqual(expect.any(String));
        expect(must(await processor.ensureMeteredPrice({ ...terms, metadata: metadata() }))).toBe(id);

        const cheaper = must(await processor.ensureMeteredPrice({ ...terms, unitAmount: 150, metadata: metadata() }));
        const smaller = must(await processor.ensureMeteredPrice({ ...terms, packageSize: 500, metadata: metadata() }));
        const yearly = must(await processor.ensureMeteredPrice({ ...terms, interval: 'year', metadata: metadata() }));
        expect(new Set([id, cheaper, smaller, yearly]).size).toBe(4);
        expect(must(await processor.ensureMeteredPrice({ ...terms, packageSize: 500, metadata: metadata() }))).toBe(smaller);
      });

      it('bills the usage reported (each identifier once) on the renewal, in started packages, and nothing when none is reported', async () => {
        const [flat] = await catalog('Metered', [1000]);
        const customerId = await customer();
        const s = must(await subscribe(customerId, flat!.id, 'pm_card_visa')).subscription;
        const meteredPriceId = must(await processor.ensureMeteredPrice({ ...terms, metadata: metadata() }));

        await harness.advance(DAY);
        const report = (quantity: number, identifier: string) =>
          processor.reportUsage({
            subscriptionId: s.id,
            customerId,
            meteredPriceId,
            meterKey: terms.meterKey,
            quantity,
            identifier,
            timestamp: new Date(s.currentPeriodStart.getTime() + DAY * 1000),
          });
        const first = `${s.id}:ai_tokens:${randomUUID()}:1500`;
        must(await report(1500, first));
        must(await report(1, `${s.id}:ai_tokens:${randomUUID()}:1501`));
        // The first report again (a retry after a crash): recorded once.
        must(await report(1500, first));

        // The plan's price and quantity are still the subscription's; no invoice before the renewal.
        const during = await current(s.id);
        expect(during.subscription).toMatchObject({ priceId: flat!.id, quantity: 1, status: 'active' });
        expect(paid(during.invoices)).toHaveLength(1);

        await harness.advance(ONE_MONTH_AND_A_BIT);
        const renewed = await current(s.id);
        expect(renewed.subscription).toMatchObject({ priceId: flat!.id, quantity: 1, status: 'active' });
        const renewal = lastOf(renewed.invoices, 'subscription_cycle')!;
        expect(renewal).toMatchObject({ status: 'paid', amountDue: 1400, amountPaid: 1400 });
        const usage = renewal.lines.filter((l) => l.priceId === meteredPriceId);
        expect(usage).toEqual([expect.objectContaining({ kind: 'subscription', quantity: 2, amount: 2 * terms.unitAmount })]);
        // In arrears: the period that ended; the plan's line is the period that began.
        expect(usage[0]!.periodStart.getTime()).toBe(s.currentPeriodStart.getTime());
        expect(usage[0]!.periodEnd.getTime()).toBe(s.currentPeriodEnd.getTime());
        expect(renewal.lines.filter((l) => l.priceId === flat!.id)).toEqual([
          expect.objectContaining({ kind: 'subscription', amount: 1000, periodStart: s.currentPeriodEnd }),
        ]);
        expect(renewal.lines.reduce((sum, l) => sum + l.amount, 0)).toBe(1400);
        // The invoice's period is the one its plan's line bills (the period that began), not the span of its lines.
        expect(renewal.periodStart.getTime()).toBe(s.currentPeriodEnd.getTime());
        expect(renewal.periodEnd.getTime()).toBe(renewed.subscription.currentPeriodEnd.getTime());

        await harness.advance(ONE_MONTH_AND_A_BIT);
        const next = await current(s.id);
        const quiet = lastOf(next.invoices, 'subscription_cycle')!;
        expect(quiet.id).not.toBe(renewal.id);
        expect(quiet).toMatchObject({ status: 'paid', amountPaid: 1000 });
        expect(quiet.lines.filter((l) => l.priceId === meteredPriceId)).toEqual([]);
        expect(next.subscription).toMatchObject({ priceId: flat!.id, quantity: 1 });
      });

      /** A subscription to a flat 10.00 monthly price with 1,501 units of usage reported a day into its period: 2 packages, 4.00. */
      async function withUsage(planName: string) {
        const [flat] = await catalog(planName, [1000]);
        const customerId = await customer();
        const s = must(await subscribe(customerId, flat!.id, 'pm_card_visa')).subscription;
        const meteredPriceId = must(await processor.ensureMeteredPrice({ ...terms, metadata: metadata() }));
        await harness.advance(DAY);
        for (const [quantity, n] of [
          [1500, 1],
          [1, 2],
        ] as const) {
          must(
            await processor.reportUsage({
              subscriptionId: s.id,
              customerId,
              meteredPriceId,
              meterKey: terms.meterKey,
              quantity,
              identifier: `${s.id}:ai_tokens:${n}`,
              timestamp: new Date(s.currentPeriodStart.getTime() + DAY * 1000),
            }),
          );
        }
        return { s, flat: flat!, meteredPriceId };
      }
      const usageLinesOf = (invoices: ProcessorInvoice[], meteredPriceId: string) =>
        invoices.flatMap((i) => i.lines.filter((l) => l.priceId === meteredPriceId).map((l) => ({ invoice: i, line: l })));

      it('usage reported after its period was invoiced is billed on the next invoice', async () => {
        const [flat] = await catalog('Metered, late', [1000]);
        const customerId = await customer();
        const s = must(await subscribe(customerId, flat!.id, 'pm_card_visa')).subscription;
        const meteredPriceId = must(await processor.ensureMeteredPrice({ ...terms, metadata: metadata() }));
        await harness.advance(ONE_MONTH_AND_A_BIT);
        const renewed = await current(s.id);
        expect(usageLinesOf(renewed.invoices, meteredPriceId)).toEqual([]);
        must(
          await processor.reportUsage({
            subscriptionId: s.id,
            customerId,
            meteredPriceId,
            meterKey: terms.meterKey,
            quantity: 1500,
            identifier: `${s.id}:ai_tokens:late`,
            timestamp: new Date(s.currentPeriodEnd.getTime() - 1000),
          }),
        );
        await harness.advance(ONE_MONTH_AND_A_BIT);
        const billed = usageLinesOf((await current(s.id)).invoices, meteredPriceId);
        expect(billed.map(({ line }) => [line.quantity, line.amount, line.periodStart.getTime()])).toEqual([
          [2, 2 * terms.unitAmount, renewed.subscription.currentPeriodStart.getTime()],
        ]);
        expect(billed[0]!.invoice).toMatchObject({ reason: 'subscription_cycle', status: 'paid', amountPaid: 1400 });
      });

      it('canceled now: the usage reported so far is billed at once on a final invoice, for the period up to the cancellation', async () => {
        const { s, meteredPriceId } = await withUsage('Metered, canceled now');
        const canceled = must(await processor.cancelSubscription(s.id, { atPeriodEnd: false, idempotencyKey: key('cancel') }));
        expect(canceled.subscription.status).toBe('canceled');
        const endedAt = canceled.subscription.endedAt!;
        const billed = usageLinesOf((await current(s.id)).invoices, meteredPriceId);
        expect(billed).toHaveLength(1);
        const { invoice, line } = billed[0]!;
        expect(line).toMatchObject({ kind: 'subscription', quantity: 2, amount: 2 * terms.unitAmount });
        expect(line.periodStart.getTime()).toBe(s.currentPeriodStart.getTime());
        expect(line.periodEnd.getTime()).toBe(endedAt.getTime());
        expect(invoice).toMatchObject({ reason: 'subscription_update', status: 'paid', amountDue: 400, amountPaid: 400 });
        expect(invoice.lines).toEqual([line]);
        expect([invoice.periodStart.getTime(), invoice.periodEnd.getTime()]).toEqual([s.currentPeriodStart.getTime(), endedAt.getTime()]);

        // Nothing more later: no renewal, no second bill of the usage.
        await harness.advance(ONE_MONTH_AND_A_BIT);
        const after = await current(s.id);
        expect(usageLinesOf(after.invoices, meteredPriceId)).toHaveLength(1);
        expect(after.invoices.filter((i) => i.reason === 'subscription_cycle')).toEqual([]);
      });

      it('canceled at period end: the last period is billed on a final invoice when the cancellation takes effect, without a renewal', async () => {
        const { s, flat, meteredPriceId } = await withUsage('Metered, canceled at period end');
        must(await processor.cancelSubscription(s.id, { atPeriodEnd: true, idempotencyKey: key('cancel') }));
        expect(usageLinesOf((await current(s.id)).invoices, meteredPriceId)).toEqual([]);

        await harness.advance(ONE_MONTH_AND_A_BIT);
        const ended = await current(s.id);
        expect(ended.subscription.status).toBe('canceled');
        const billed = usageLinesOf(ended.invoices, meteredPriceId);
        expect(billed).toHaveLength(1);
        const { invoice, line } = billed[0]!;
        expect(line).toMatchObject({ kind: 'subscription', quantity: 2, amount: 2 * terms.unitAmount });
        expect([line.periodStart.getTime(), line.periodEnd.getTime()]).toEqual([s.currentPeriodStart.getTime(), s.currentPeriodEnd.getTime()]);
        expect(invoice).toMatchObject({ reason: 'subscription_cycle', status: 'paid', amountDue: 400, amountPaid: 400 });
        expect([invoice.periodStart.getTime(), invoice.periodEnd.getTime()]).toEqual([s.currentPeriodStart.getTime(), s.currentPeriodEnd.getTime()]);
        // The plan is not renewed.
        expect(ended.invoices.flatMap((i) => i.lines).filter((l) => l.priceId === flat.id && l.periodStart.getTime() >= s.currentPeriodEnd.getTime())).toEqual(
          [],
        );
      });
    });
  });
}
