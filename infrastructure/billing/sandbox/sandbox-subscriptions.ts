import {
  type ProcessorFailure,
  type ProcessorMetadata,
  type ProcessorResult,
  type ProcessorSnapshot,
  processorFailed,
  processorOk,
  type UsageReport,
} from '../../../application/billing/payment-processor';
import { type InvoiceLine, type InvoiceReason, draftInvoice } from '../../../domain/billing/invoice';
import { MAX_TRIAL_DAYS } from '../../../domain/billing/periods';
import {
  type PaymentOutcome,
  type Subscription,
  dueAction,
  endAfterGracePeriod,
  endAtPeriodEnd,
  endTrial,
  expireIncomplete,
  nextActionAt,
  renew,
  skipPausedPeriod,
  startSubscription,
} from '../../../domain/billing/subscription';
import { domainPriceOf } from './sandbox-catalog';
import type { SandboxContext } from './sandbox-context';
import type { SandboxCustomers } from './sandbox-customers';
import { declined, invalidRequest, noSuch, refused } from './sandbox-errors';
import { type Outcome, type SandboxInvoices, type Settled, invoiceOf, settle } from './sandbox-invoices';
import type { CustomerData, PriceData, SandboxObject, SubscriptionData } from './sandbox-objects';
import { subscriptionFromJson, subscriptionToJson } from './sandbox-objects';
import { type CardCharge, type SandboxPaymentMethods, chargeCard } from './sandbox-payment-methods';
import { GENERIC_DECLINE } from './test-cards';

/** Invoices a snapshot carries, the latest ones. */
export const SNAPSHOT_INVOICE_LIMIT = 20;

/** Transitions applied to one subscription in one go; a clock moved further catches up on the next run. */
const MAX_STEPS_PER_RUN = 2_000;

export const isTrialDays = (days: number) => Number.isInteger(days) && days >= 1 && days <= MAX_TRIAL_DAYS;

/** Subscriptions: created with their first invoice, brought up to date with what fell due, and read back as snapshots. */
export class SandboxSubscriptions {
  constructor(
    private readonly ctx: SandboxContext,
    private readonly customers: SandboxCustomers,
    private readonly paymentMethods: SandboxPaymentMethods,
    private readonly invoices: SandboxInvoices,
  ) {}

  /**
   * Creates a subscription as Stripe does with `payment_behavior=error_if_incomplete`: the card is
   * attached and made the default (unless `keepCardOnDecline` is false and the charge fails), the
   * first invoice charged; a declined charge answers `card_declined` and leaves no subscription.
   * Runs inside the caller's transaction.
   */
  async subscribe(
    projectId: string,
    input: {
      customerId: string;
      priceId: string;
      paymentMethodId: string;
      trialDays: number | null;
      quantity?: number;
      metadata: Partial<ProcessorMetadata>;
      percentOff: number | null;
      checkoutId: string | null;
      keepCardOnDecline: boolean;
    },
    now: Date,
  ): Promise<ProcessorResult<string, ProcessorFailure>> {
    let customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', input.customerId, { lock: true });
    if (!customer) return noSuch('customer', input.customerId);
    const price = await this.ctx.objects.get<PriceData>(projectId, 'price', input.priceId);
    if (!price) return noSuch('price', input.priceId);
    if (input.trialDays !== null && !isTrialDays(input.trialDays)) return refused('invalid_trial_days');
    const card = await this.paymentMethods.resolveCard(projectId, customer.id, input.paymentMethodId, now);
    if (!card.ok) return card;

    const id = this.ctx.newId('subscription');
    const domainPrice = domainPriceOf(price);
    const plan = { id: price.data.productId, trialsEnabled: true, defaultTrialDays: null };
    const creditBalance = customer.data.creditBalance;
    const settled = settle(
      (payment) =>
        startSubscription({ id, price: domainPrice, quantity: input.quantity ?? 1, plan, at: now, trialDays: input.trialDays, creditBalance, payment }),
      chargeCard(card.value.data),
      input.percentOff,
      creditBalance,
    );
    if (!settled.ok) return refused(settled.error);
    const { transition, invoice, payment, discountUsed } = settled.value;
    if (payment === 'failed') {
      if (input.keepCardOnDecline) await this.paymentMethods.attachCard(projectId, customer, card.value, now);
      return declined(chargeCard(card.value.data).decline ?? GENERIC_DECLINE);
    }
    customer = await this.paymentMethods.attachCard(projectId, customer, card.value, now);
    const subscription = transition.subscription;
    const data: SubscriptionData = {
      // The customer is locked: no other subscription of theirs is numbered meanwhile.
      sequence: (await this.ctx.objects.countChildren(projectId, 'subscription', customer.id)) + 1,
      subscription: subscriptionToJson(subscription),
      customerId: customer.id,
      paymentMethodId: card.value.id,
      metadata: { ...input.metadata },
      pendingPercentOff: discountUsed ? null : input.percentOff,
      checkoutId: input.checkoutId,
    };
    await this.ctx.objects.insert({
      id,
      projectId,
      kind: 'subscription',
      parentId: customer.id,
      data,
      dueAt: nextActionAt(subscription),
      createdAt: now,
      updatedAt: now,
    });
    if (invoice) {
      await this.invoices.recordInvoice(projectId, id, customer.id, invoice, payment, subscription.createdAt);
      await this.customers.saveCustomerBalance(customer, invoice.creditBalanceAfter, now);
    }
    return processorOk(id);
  }

  /**
   * Applies, in time order, every transition of a (locked) subscription that fell due by `now`:
   * renewals charged to its card, trial ends, scheduled cancellations, grace-period ends, skipped
   * paused periods, expiry of an incomplete start. Each is dated when it fell due, as a Stripe test
   * clock advancing over several periods renews once per period.
   */
  async applyDue(projectId: string, row: SandboxObject<SubscriptionData>, now: Date): Promise<{ row: SandboxObject<SubscriptionData>; changed: boolean }> {
    let subscription = subscriptionFromJson(row.id, row.data.subscription);
    let pendingPercentOff = row.data.pendingPercentOff;
    let metered = row.data.metered ?? {};
    let customer: SandboxObject<CustomerData> | null = null;
    let card: CardCharge | null = null;
    let changed = false;
    for (let step = 0; step < MAX_STEPS_PER_RUN; step++) {
      const at = nextActionAt(subscription);
      if (at === null || at.getTime() > now.getTime()) break;
      const action = dueAction(subscription, at);
      let outcome: Outcome;
      let billed: Settled | null = null;
      if (action === 'renew' || action === 'end_trial') {
        customer ??= await this.ctx.objects.get<CustomerData>(projectId, 'customer', row.data.customerId, { lock: true });
        card ??= chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
        const creditBalance = customer?.data.creditBalance ?? 0;
        const current = subscription;
        // The ended period's metered usage is billed in arrears on the renewal invoice (a trial's is not billed).
        const usage = action === 'renew' ? await this.meteredLines(projectId, metered, current) : [];
        const run =
          action === 'renew'
            ? (payment: PaymentOutcome) => renew(current, at, payment, creditBalance, usage)
            : (payment: PaymentOutcome) => endTrial(current, at, payment, creditBalance);
        const settled = settle(run, card, pendingPercentOff, creditBalance);
        if (!settled.ok) throw new Error(`Sandbox ${action} of ${row.id} refused: ${settled.error}`);
        billed = settled.value;
        outcome = { ok: true, value: settled.value.transition };
      } else if (action === 'end_at_period_end') {
        outcome = endAtPeriodEnd(subscription, at);
        // The final period's usage is billed on a final invoice when the cancellation takes effect (Stripe does the same).
        if (outcome.ok) {
          customer ??= await this.ctx.objects.get<CustomerData>(projectId, 'customer', row.data.customerId, { lock: true });
          card ??= chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
          billed = await this.finalUsageInvoice(projectId, metered, subscription, subscription.currentPeriodEnd, 'subscription_cycle', card, customer);
          metered = {};
        }
      } else if (action === 'end_after_grace_period') outcome = endAfterGracePeriod(subscription, at);
      else if (action === 'skip_paused_period') outcome = skipPausedPeriod(subscription, at);
      else if (action === 'expire_incomplete') outcome = expireIncomplete(subscription, at);
      else break;
      if (!outcome.ok) throw new Error(`Sandbox ${action} of ${row.id} refused: ${outcome.error}`);
      subscription = outcome.value.subscription;
      changed = true;
      if (action === 'renew' || action === 'end_trial') metered = {};
      if (billed?.invoice) {
        await this.invoices.recordInvoice(projectId, row.id, row.data.customerId, billed.invoice, billed.payment, at);
        if (customer) customer = await this.customers.saveCustomerBalance(customer, billed.invoice.creditBalanceAfter, now);
        if (billed.discountUsed) pendingPercentOff = null;
      }
    }
    if (!changed && !row.data.unreported) return { row, changed: false };
    return { row: await this.saveSubscription(row, subscription, { pendingPercentOff, unreported: false, metered }, now), changed: true };
  }

  /**
   * Records usage past the included amount for the current period (Stripe: a meter event on the
   * subscription's metered item). An identifier already recorded this period is not counted again.
   * The sandbox invoices a period the moment it ends, so a report dated in an ended period is
   * billed on the next invoice; one for a subscription that ended is kept and never billed.
   */
  async reportUsage(projectId: string, input: UsageReport): Promise<ProcessorResult<void>> {
    return this.ctx.transaction(async () => {
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', input.meteredPriceId);
      if (!price?.data.metered) return noSuch('price', input.meteredPriceId);
      const row = await this.ctx.objects.get<SubscriptionData>(projectId, 'subscription', input.subscriptionId, { lock: true });
      if (!row) return noSuch('subscription', input.subscriptionId);
      if (!Number.isSafeInteger(input.quantity) || input.quantity < 0) return processorFailed(invalidRequest(`Invalid value: ${input.quantity}.`));
      const metered = { ...(row.data.metered ?? {}) };
      const item = metered[input.meteredPriceId] ?? { quantity: 0, identifiers: [] };
      if (item.identifiers.includes(input.identifier)) return processorOk(undefined);
      metered[input.meteredPriceId] = { quantity: item.quantity + input.quantity, identifiers: [...item.identifiers, input.identifier] };
      await this.ctx.objects.update({ ...row, data: { ...row.data, metered }, updatedAt: await this.ctx.now(projectId) });
      return processorOk(undefined);
    });
  }

  /**
   * The invoice of a subscription's usage when it ends (canceled now, or at its period end): the
   * usage reported in its last period up to `end`, billed in arrears as a renewal would have, and
   * charged to its card (a decline leaves the invoice open); null when no usage is billed.
   */
  async finalUsageInvoice(
    projectId: string,
    metered: NonNullable<SubscriptionData['metered']>,
    subscription: Subscription,
    end: Date,
    reason: InvoiceReason,
    card: CardCharge,
    customer: SandboxObject<CustomerData> | null,
  ): Promise<Settled | null> {
    const lines = await this.meteredLines(projectId, metered, { currentPeriodStart: subscription.currentPeriodStart, currentPeriodEnd: end });
    if (lines.length === 0) return null;
    const draft = draftInvoice(reason, subscription.price.currency, lines, customer?.data.creditBalance ?? 0);
    const payment: PaymentOutcome = draft.amountDue > 0 ? card.payment : 'paid';
    return {
      transition: { subscription, events: [], invoice: draft },
      invoice: { ...draft, discount: 0 },
      payment,
      discountUsed: false,
    };
  }

  /** The period's metered lines: per metered price, the started packages of the units reported, at the price's amount. */
  private async meteredLines(
    projectId: string,
    metered: NonNullable<SubscriptionData['metered']>,
    subscription: Pick<Subscription, 'currentPeriodStart' | 'currentPeriodEnd'>,
  ): Promise<InvoiceLine[]> {
    const lines: InvoiceLine[] = [];
    for (const [priceId, usage] of Object.entries(metered)) {
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', priceId);
      if (!price?.data.metered || usage.quantity <= 0) continue;
      const packages = Math.ceil(usage.quantity / price.data.metered.packageSize);
      lines.push({
        kind: 'subscription',
        priceId,
        quantity: packages,
        amount: packages * price.data.amount,
        period: { start: subscription.currentPeriodStart, end: subscription.currentPeriodEnd },
      });
    }
    return lines;
  }

  async saveSubscription(
    row: SandboxObject<SubscriptionData>,
    subscription: Subscription,
    patch: Partial<SubscriptionData>,
    now: Date,
  ): Promise<SandboxObject<SubscriptionData>> {
    const updated: SandboxObject<SubscriptionData> = {
      ...row,
      data: { ...row.data, ...patch, subscription: subscriptionToJson(subscription) },
      dueAt: nextActionAt(subscription),
      updatedAt: now,
    };
    await this.ctx.objects.update(updated);
    return updated;
  }

  /** The subscription with its latest invoices (oldest first) and its card, or null. */
  async snapshot(projectId: string, subscriptionId: string): Promise<ProcessorSnapshot | null> {
    const row = await this.ctx.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId);
    if (!row) return null;
    const s = subscriptionFromJson(row.id, row.data.subscription);
    const card = await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId);
    const invoices = await this.ctx.objects.invoicesOf(projectId, row.id, SNAPSHOT_INVOICE_LIMIT);
    return {
      subscription: {
        id: row.id,
        customerId: row.data.customerId,
        priceId: s.price.id,
        quantity: s.price.quantity ?? 1,
        status: s.status,
        cancelAtPeriodEnd: s.cancelAtPeriodEnd,
        currentPeriodStart: s.currentPeriodStart,
        currentPeriodEnd: s.currentPeriodEnd,
        billingCycleAnchor: s.billingCycleAnchor,
        canceledAt: s.canceledAt,
        endedAt: s.endedAt,
        trialStart: s.trialStart,
        trialEnd: s.trialEnd,
        pausedAt: s.pausedAt,
        pastDueAt: s.pastDueAt,
        paymentMethod: card ? { id: card.id, brand: card.data.brand, last4: card.data.last4, expMonth: card.data.expMonth, expYear: card.data.expYear } : null,
        metadata: { ...row.data.metadata },
        createdAt: s.createdAt,
      },
      invoices: invoices.map((i) => invoiceOf(i)),
    };
  }

  async listSubscriptionIds(projectId: string, customerId: string): Promise<ProcessorResult<string[]>> {
    const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', customerId);
    if (!customer) return noSuch('customer', customerId);
    return processorOk(await this.ctx.objects.subscriptionIdsOf(projectId, customerId));
  }
}
