import {
  type ChangePreview,
  type ProcessorFailure,
  type ProcessorResult,
  type ProcessorSnapshot,
  type RequestFailure,
  processorFailed,
  processorOk,
} from '../../../application/billing/payment-processor';
import type { JsonValue } from '../../../domain/billing/idempotency';
import type { InvoiceDraft } from '../../../domain/billing/invoice';
import { toWholeSeconds } from '../../../domain/billing/periods';
import {
  type PaymentOutcome,
  type Subscription,
  type SubscriptionError,
  cancelAtPeriodEnd,
  cancelNow,
  changePrice,
  changeQuantity,
  endTrialNow,
  pause,
  previewChange,
  previewQuantityChange,
  resume,
} from '../../../domain/billing/subscription';
import { seatSnapshotOf } from '../../../domain/billing/catalog';
import { checkQuantity } from '../../../domain/billing/seats';
import type { Result } from '../../../domain/result';
import { domainPriceOf } from './sandbox-catalog';
import type { SandboxContext } from './sandbox-context';
import type { SandboxCustomers } from './sandbox-customers';
import { declined, invalidRequest, noSuch, refused } from './sandbox-errors';
import { type Outcome, type SandboxInvoices, type Settled, lineOf, settle } from './sandbox-invoices';
import { type CustomerData, type PriceData, type SandboxObject, type SubscriptionData, subscriptionFromJson } from './sandbox-objects';
import { type CardCharge, type SandboxPaymentMethods, chargeCard } from './sandbox-payment-methods';
import type { SandboxSubscriptions } from './sandbox-subscriptions';
import { GENERIC_DECLINE } from './test-cards';

/** What a customer does to a subscription: change its price (with a preview), cancel, pause, resume, end its trial. */
export class SandboxSubscriptionChanges {
  constructor(
    private readonly ctx: SandboxContext,
    private readonly customers: SandboxCustomers,
    private readonly paymentMethods: SandboxPaymentMethods,
    private readonly invoices: SandboxInvoices,
    private readonly subscriptions: SandboxSubscriptions,
  ) {}

  /**
   * A user operation on a subscription: locks it, catches up on what fell due (so a change never
   * lands in a period that already ended), applies `operate`, stores the result. `operate` answers
   * the new subscription and the invoice it bills, or a failure (nothing is stored then).
   */
  private operate<F extends ProcessorFailure = RequestFailure>(
    projectId: string,
    subscriptionId: string,
    key: string,
    operation: string,
    params: JsonValue,
    operate: (
      subscription: Subscription,
      context: { row: SandboxObject<SubscriptionData>; now: Date; customer: SandboxObject<CustomerData> | null },
    ) => Promise<ProcessorResult<{ subscription: Subscription; settled: Settled | null; patch?: Partial<SubscriptionData> } | 'unchanged', F>>,
  ): Promise<ProcessorResult<ProcessorSnapshot, F | RequestFailure>> {
    const fingerprinted = { ...(params as { readonly [key: string]: JsonValue }), subscriptionId };
    return this.ctx.idempotent<ProcessorSnapshot, F | RequestFailure>(projectId, key, operation, fingerprinted, async (now) => {
      const locked = await this.ctx.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId, { lock: true });
      if (!locked) return noSuch('subscription', subscriptionId);
      const { row, changed: caughtUp } = await this.subscriptions.applyDue(projectId, locked, now);
      const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', row.data.customerId, { lock: true });
      const result = await operate(subscriptionFromJson(row.id, row.data.subscription), { row, now, customer });
      if (!result.ok) {
        // The catch-up stays (it fell due anyway); the next runDue reports it, as no answer does.
        if (caughtUp) await this.ctx.objects.update({ ...row, data: { ...row.data, unreported: true }, dueAt: now, updatedAt: now });
        return result;
      }
      if (result.value !== 'unchanged') {
        const { subscription, settled, patch } = result.value;
        let pendingPercentOff = row.data.pendingPercentOff;
        if (settled?.invoice) {
          await this.invoices.recordInvoice(projectId, row.id, row.data.customerId, settled.invoice, settled.payment, toWholeSeconds(now));
          if (customer) await this.customers.saveCustomerBalance(customer, settled.invoice.creditBalanceAfter, now);
          if (settled.discountUsed) pendingPercentOff = null;
        }
        await this.subscriptions.saveSubscription(row, subscription, { ...patch, pendingPercentOff }, now);
      }
      const snapshot = await this.subscriptions.snapshot(projectId, subscriptionId);
      return processorOk(snapshot!);
    });
  }

  /** The price of a subscription as the domain prices a quantity of it, or a failure as Stripe answers it. */
  private async seatPriceOf(projectId: string, subscription: Subscription, quantity: number) {
    const price = await this.ctx.objects.get<PriceData>(projectId, 'price', subscription.price.id);
    if (!price) return noSuch('price', subscription.price.id);
    const domain = domainPriceOf(price);
    if (domain.seats === null || subscription.price.quantity === undefined) {
      return processorFailed(invalidRequest('This subscription item has a price that is not per unit: its quantity cannot change.'));
    }
    const checked = checkQuantity(domain, quantity);
    if (!checked.ok) return processorFailed(invalidRequest(`Invalid quantity: ${checked.detail ?? quantity}.`));
    return processorOk(seatSnapshotOf(domain, quantity));
  }

  async previewQuantity(projectId: string, subscriptionId: string, quantity: number): Promise<ProcessorResult<ChangePreview>> {
    const row = await this.ctx.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId);
    if (!row) return noSuch('subscription', subscriptionId);
    const subscription = subscriptionFromJson(row.id, row.data.subscription);
    const to = await this.seatPriceOf(projectId, subscription, quantity);
    if (!to.ok) return to;
    const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', row.data.customerId);
    const now = await this.ctx.now(projectId);
    const preview = previewQuantityChange(subscription, to.value, now, customer?.data.creditBalance ?? 0);
    if (!preview.ok) return preview.error === 'same_quantity' ? this.emptyPreview(subscription) : refused(preview.error);
    if (preview.value === null) return this.emptyPreview(subscription);
    return this.previewOf(projectId, preview.value);
  }

  /**
   * Sets a per-seat subscription's quantity: prorated and charged now, or (`prorate: false`) for the
   * next renewal to bill. The same quantity answers the subscription as it is.
   */
  updateQuantity(
    projectId: string,
    subscriptionId: string,
    quantity: number,
    options: { prorate: boolean; idempotencyKey: string },
  ): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    const params = { quantity, prorate: options.prorate };
    return this.operate<ProcessorFailure>(
      projectId,
      subscriptionId,
      options.idempotencyKey,
      'subscriptions.quantity',
      params,
      async (subscription, { row, now, customer }) => {
        if (subscription.price.quantity === quantity) return processorOk('unchanged');
        const to = await this.seatPriceOf(projectId, subscription, quantity);
        if (!to.ok) return to;
        const card = chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
        const creditBalance = customer?.data.creditBalance ?? 0;
        const settled = settle(
          (payment) => changeQuantity(subscription, to.value, now, { creditBalance, payment, prorate: options.prorate }),
          card,
          // A promotion code's discount applies to a subscription line, never to a proration.
          null,
          creditBalance,
        );
        if (!settled.ok) return refused(settled.error);
        if (settled.value.payment === 'failed') return declined(card.decline ?? GENERIC_DECLINE);
        return processorOk({ subscription: settled.value.transition.subscription, settled: settled.value.invoice ? settled.value : null });
      },
    );
  }

  private emptyPreview(subscription: Subscription): ProcessorResult<ChangePreview> {
    return processorOk({
      amountDue: 0,
      currency: subscription.price.currency,
      subtotal: 0,
      lines: [],
      periodStart: subscription.currentPeriodStart,
      periodEnd: subscription.currentPeriodEnd,
    });
  }

  private async previewOf(projectId: string, preview: { invoice: InvoiceDraft; period: { start: Date; end: Date } }): Promise<ProcessorResult<ChangePreview>> {
    const { invoice, period } = preview;
    const lines = (await this.invoices.describeLines(projectId, invoice.lines)).map(lineOf);
    return processorOk({
      amountDue: invoice.amountDue,
      currency: invoice.currency,
      subtotal: invoice.subtotal,
      lines,
      periodStart: period.start,
      periodEnd: period.end,
    });
  }

  async previewChange(projectId: string, subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>> {
    const row = await this.ctx.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId);
    if (!row) return noSuch('subscription', subscriptionId);
    const price = await this.ctx.objects.get<PriceData>(projectId, 'price', priceId);
    if (!price) return noSuch('price', priceId);
    const customer = await this.ctx.objects.get<CustomerData>(projectId, 'customer', row.data.customerId);
    const now = await this.ctx.now(projectId);
    const subscription = subscriptionFromJson(row.id, row.data.subscription);
    const preview = previewChange(subscription, domainPriceOf(price), now, customer?.data.creditBalance ?? 0);
    if (!preview.ok) return refused(preview.error);
    if (preview.value === null) return this.emptyPreview(subscription);
    return this.previewOf(projectId, preview.value);
  }

  changeSubscription(projectId: string, subscriptionId: string, priceId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.operate<ProcessorFailure>(projectId, subscriptionId, key, 'subscriptions.change', { priceId }, async (subscription, { row, now, customer }) => {
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', priceId);
      if (!price) return noSuch('price', priceId);
      const card = chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
      const creditBalance = customer?.data.creditBalance ?? 0;
      const settled = settle(
        (payment) => changePrice(subscription, domainPriceOf(price), now, { creditBalance, payment }),
        card,
        row.data.pendingPercentOff,
        creditBalance,
      );
      if (!settled.ok) return refused(settled.error);
      if (settled.value.payment === 'failed') return declined(card.decline ?? GENERIC_DECLINE);
      return processorOk({ subscription: settled.value.transition.subscription, settled: settled.value });
    });
  }

  cancelSubscription(projectId: string, subscriptionId: string, atPeriodEnd: boolean, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.cancel', { atPeriodEnd }, async (subscription, { row, now, customer }) => {
      const outcome = atPeriodEnd ? cancelAtPeriodEnd(subscription, now) : cancelNow(subscription, now);
      if (!outcome.ok) {
        // Asking again for what is already scheduled changes nothing, as on Stripe.
        if (outcome.error === 'cancellation_scheduled') return processorOk('unchanged');
        if (outcome.error === 'subscription_canceled' && !atPeriodEnd) return processorFailed(invalidRequest('This subscription is already canceled.'));
        return refused(outcome.error);
      }
      if (atPeriodEnd) return processorOk({ subscription: outcome.value.subscription, settled: null });
      // Canceled now: the usage reported in the period so far is billed on a final invoice (Stripe: `invoice_now`).
      const card = chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
      const settled = await this.subscriptions.finalUsageInvoice(
        projectId,
        row.data.metered ?? {},
        subscription,
        toWholeSeconds(now),
        'subscription_update',
        card,
        customer,
      );
      return processorOk({ subscription: outcome.value.subscription, settled, patch: { metered: {} } });
    });
  }

  pauseSubscription(projectId: string, subscriptionId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.pause', {}, async (subscription, { now }) => {
      const outcome = pause(subscription, now);
      if (!outcome.ok) return outcome.error === 'subscription_paused' ? processorOk('unchanged') : refused(outcome.error);
      return processorOk({ subscription: outcome.value.subscription, settled: null });
    });
  }

  /**
   * Resumes a paused subscription (a new period charged at once when one began while paused; a
   * decline leaves it paused) or drops a pending cancellation.
   */
  resumeSubscription(projectId: string, subscriptionId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot, ProcessorFailure>> {
    return this.operate<ProcessorFailure>(projectId, subscriptionId, key, 'subscriptions.resume', {}, async (subscription, { row, now, customer }) => {
      const billed = await this.settleOnCard(projectId, row, customer, (payment, creditBalance) => resume(subscription, now, payment, creditBalance));
      if (!billed.ok) return billed.error === 'subscription_not_resumable' ? processorOk('unchanged') : refused(billed.error);
      if (billed.value.settled.payment === 'failed') return declined(billed.value.card.decline ?? GENERIC_DECLINE);
      return processorOk({ subscription: billed.value.settled.transition.subscription, settled: billed.value.settled });
    });
  }

  /** Ends a trial now (Stripe's `trial_end=now`): a new period starts and is charged; a decline makes it
   * past due. A subscription out of its trial is answered as it is. */
  endTrial(projectId: string, subscriptionId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.end_trial', {}, async (subscription, { row, now, customer }) => {
      // Already out of its trial (ended here before, or by time): nothing to do, as Tollgate's Stripe adapter answers.
      if (subscription.status !== 'trialing') return processorOk('unchanged');
      const billed = await this.settleOnCard(projectId, row, customer, (payment, creditBalance) => endTrialNow(subscription, now, payment, creditBalance));
      if (!billed.ok) return refused(billed.error);
      return processorOk({ subscription: billed.value.settled.transition.subscription, settled: billed.value.settled });
    });
  }

  /** A transition that may bill, settled on the subscription's card and the customer's credit. */
  private async settleOnCard(
    projectId: string,
    row: SandboxObject<SubscriptionData>,
    customer: SandboxObject<CustomerData> | null,
    run: (payment: PaymentOutcome, creditBalance: number) => Outcome,
  ): Promise<Result<{ settled: Settled; card: CardCharge }, SubscriptionError>> {
    const card = chargeCard((await this.paymentMethods.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
    const creditBalance = customer?.data.creditBalance ?? 0;
    const settled = settle((payment) => run(payment, creditBalance), card, row.data.pendingPercentOff, creditBalance);
    return settled.ok ? { ok: true, value: { settled: settled.value, card } } : settled;
  }
}
