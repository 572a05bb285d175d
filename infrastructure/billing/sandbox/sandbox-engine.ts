import {
  type ChangePreview,
  type CheckoutInput,
  type ProcessorFailure,
  type ProcessorInvoice,
  type ProcessorInvoiceLine,
  type ProcessorMetadata,
  type ProcessorResult,
  type ProcessorSnapshot,
  processorFailed,
  processorOk,
} from '../../../application/billing/payment-processor';
import type { SandboxCheckoutView } from '../../../application/billing/processors';
import type { Clock } from '../../../application/ports/clock';
import type { TokenCrypto } from '../../../application/ports/crypto';
import type { Plan, Price } from '../../../domain/billing/catalog';
import { IDEMPOTENCY_TTL_SECONDS, type JsonValue, canonicalJson, idempotencyDecision } from '../../../domain/billing/idempotency';
import { type InvoiceDraft, type InvoiceLine, type InvoiceReason, draftInvoice } from '../../../domain/billing/invoice';
import { formatMoney, parseCurrency, validateAmount } from '../../../domain/billing/money';
import { MAX_TRIAL_DAYS, addSeconds, isBillingInterval, toWholeSeconds } from '../../../domain/billing/periods';
import { prorate } from '../../../domain/billing/proration';
import {
  type PaymentOutcome,
  type Subscription,
  type SubscriptionError,
  type Transition,
  cancelAtPeriodEnd,
  cancelNow,
  changePrice,
  dueAction,
  endAfterGracePeriod,
  endAtPeriodEnd,
  endTrial,
  endTrialNow,
  expireIncomplete,
  nextActionAt,
  pause,
  previewChange,
  renew,
  resume,
  skipPausedPeriod,
  startSubscription,
} from '../../../domain/billing/subscription';
import type { Result } from '../../../domain/result';
import type { Database } from '../../persistence/database';
import { isUuid } from '../../persistence/rows';
import {
  type CheckoutData,
  type CustomerData,
  ID_PREFIX,
  type IdempotencyData,
  type InvoiceData,
  type InvoiceLineJson,
  type PaymentMethodData,
  type PriceData,
  type ProductData,
  type PromotionCodeData,
  type RefundData,
  type SandboxKind,
  type SandboxObject,
  SandboxObjects,
  type SetupIntentData,
  type SubscriptionData,
  reviveDates,
  subscriptionFromJson,
  subscriptionToJson,
} from './sandbox-objects';
import { type Decline, GENERIC_DECLINE, TEST_PAYMENT_METHODS, isTestPaymentMethod } from './test-cards';

export interface SandboxDependencies {
  db: Database;
  clock: Clock;
  crypto: TokenCrypto;
  /** Tollgate's public base URL: checkout pages live at `${publicUrl}/sandbox/checkout/<id>`. */
  publicUrl: string;
}

/** How long an open checkout session stays payable (Stripe's default `expires_at`: 24 hours). */
export const CHECKOUT_TTL_SECONDS = 24 * 60 * 60;

/** Invoices a snapshot carries, the latest ones. */
export const SNAPSHOT_INVOICE_LIMIT = 20;

/** Transitions applied to one subscription in one go; a clock moved further catches up on the next run. */
const MAX_STEPS_PER_RUN = 2_000;

const DUE_BATCH = 200;

type Outcome = Result<Transition, SubscriptionError>;

/** An invoice as the sandbox bills it: the domain's draft, less a promotion code's discount. */
interface BilledInvoice {
  reason: InvoiceReason;
  currency: string;
  lines: readonly InvoiceLine[];
  subtotal: number;
  discount: number;
  creditApplied: number;
  amountDue: number;
  creditBalanceAfter: number;
}

interface Settled {
  transition: Transition;
  invoice: BilledInvoice | null;
  /** 'failed' only when an amount was due and the card was declined. */
  payment: PaymentOutcome;
  /** The pending promotion code was used by this invoice. */
  discountUsed: boolean;
}

interface CardCharge {
  payment: PaymentOutcome;
  decline: Decline | null;
}

const invalidRequest = (message: string): ProcessorFailure => ({ kind: 'invalid_request', message });
const noSuch = (what: string, id: string) => processorFailed(invalidRequest(`No such ${what}: '${id}'`));
const declined = (decline: Decline) =>
  processorFailed({ kind: 'card_declined', message: decline.message, declineCode: decline.declineCode });

/** Stripe-like words for the domain's refusals. */
function refusalMessage(error: SubscriptionError): string {
  switch (error) {
    case 'price_inactive':
      return 'The price specified is inactive. This field only accepts active prices.';
    case 'trials_not_enabled':
    case 'invalid_trial_days':
    case 'trial_not_eligible':
      return `Invalid trial_period_days: must be an integer from 1 to ${MAX_TRIAL_DAYS}.`;
    case 'subscription_canceled':
      return 'A canceled subscription can only update its cancellation_details and metadata.';
    case 'subscription_incomplete':
      return 'This subscription never started: its first payment was not made.';
    case 'subscription_paused':
      return 'This subscription is paused: resume it first.';
    case 'subscription_past_due':
      return 'This subscription is past due: its open invoice must be paid first.';
    case 'subscription_trialing':
      return 'A subscription in its trial cannot be paused.';
    case 'subscription_not_resumable':
      return 'This subscription is neither paused nor scheduled to cancel.';
    case 'cancellation_scheduled':
      return 'This subscription is scheduled to cancel at the end of its period: resume it first.';
    case 'same_price':
      return 'The subscription is already on this price.';
    case 'currency_mismatch':
      return "The price's currency differs from the subscription's currency.";
    case 'outside_current_period':
      return "The subscription's current period has ended.";
    default:
      return `The request was refused (${error}).`;
  }
}

const refused = (error: SubscriptionError) => processorFailed(invalidRequest(refusalMessage(error)));

const iso = (d: Date) => d.toISOString();
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Stripe's date in line descriptions: `15 Jan 2025`. */
const shortDate = (d: Date) => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;

/** A promotion code's percent off: more than 0, at most 100, at most two decimals (Stripe's `percent_off`). */
export const isPercentOff = (p: number): boolean =>
  Number.isFinite(p) && p > 0 && p <= 100 && Math.abs(p * 100 - Math.round(p * 100)) < 1e-9;

/** A promotion code as the sandbox takes it: letters, digits, `-` and `_`, 1 to 50 characters. */
export const isPromotionCode = (code: string): boolean => /^[A-Za-z0-9_-]{1,50}$/.test(code.trim());

const isTrialDays = (days: number) => Number.isInteger(days) && days >= 1 && days <= MAX_TRIAL_DAYS;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The sandbox processor's work, shared by the per-project `SandboxProcessor` (the port) and the
 * cross-project `SandboxControlService` (clock, due work, checkout page, promotion codes). Every
 * transition is the domain's (domain/billing/subscription.ts); this class stores the results the
 * way Stripe would report them and charges test cards. No money moves.
 */
export class SandboxEngine {
  readonly objects: SandboxObjects;

  constructor(private readonly deps: SandboxDependencies) {
    this.objects = new SandboxObjects(deps.db);
  }

  // ---- time ---------------------------------------------------------------------------------------

  /** The project's sandbox time: the clock plus the project's offset (like a Stripe test clock). */
  async now(projectId: string): Promise<Date> {
    return addSeconds(this.deps.clock.now(), await this.objects.offsetSeconds(projectId));
  }

  async advanceClock(projectId: string, seconds: number): Promise<Date> {
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw new RangeError(`A sandbox clock only moves forward by whole seconds: ${seconds}`);
    const offset = await this.objects.addOffset(projectId, seconds);
    return addSeconds(this.deps.clock.now(), offset);
  }

  private newId(kind: SandboxKind): string {
    return `${ID_PREFIX[kind]}${this.deps.crypto.uuid().replace(/-/g, '')}`;
  }

  private transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.deps.db.transaction(work);
  }

  // ---- idempotency --------------------------------------------------------------------------------

  /**
   * Runs `work` once per (project, key), as Stripe's idempotent requests: the same key with the same
   * parameters answers the stored answer for 24 hours (sandbox time), declines included; the same
   * key with other parameters is refused; a refusal of the request itself (an unknown id) is not
   * stored. A concurrent call with the same key waits for the first and answers its answer.
   */
  async idempotent<T>(
    projectId: string,
    key: string,
    operation: string,
    params: JsonValue,
    work: (now: Date) => Promise<ProcessorResult<T>>,
  ): Promise<ProcessorResult<T>> {
    if (key.length === 0 || key.length > 255) return processorFailed(invalidRequest('Idempotency keys are 1 to 255 characters long.'));
    let fingerprint: string;
    try {
      fingerprint = this.deps.crypto.hash(canonicalJson({ operation, params }));
    } catch {
      return processorFailed(invalidRequest('Invalid parameters: numbers must be finite.'));
    }
    const id = `${ID_PREFIX.idempotency}${this.deps.crypto.hash(`${projectId}\n${key}`)}`;
    return this.transaction(async () => {
      const now = await this.now(projectId);
      const placeholder: SandboxObject<IdempotencyData> = {
        id,
        projectId,
        kind: 'idempotency',
        parentId: null,
        data: { fingerprint, answer: null, expiresAt: iso(addSeconds(now, IDEMPOTENCY_TTL_SECONDS)) },
        dueAt: null,
        createdAt: now,
        updatedAt: now,
      };
      if (!(await this.objects.insertIfAbsent(placeholder))) {
        const stored = await this.objects.get<IdempotencyData>(projectId, 'idempotency', id, { lock: true });
        if (stored) {
          const decision = idempotencyDecision(
            { fingerprint: stored.data.fingerprint, createdAt: stored.createdAt, completedAt: stored.updatedAt },
            fingerprint,
            now,
          );
          if (decision === 'mismatch') {
            return processorFailed(
              invalidRequest(
                `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
              ),
            );
          }
          if (decision === 'replay') return reviveDates<ProcessorResult<T>>(stored.data.answer);
        }
        await this.objects.update({ ...placeholder, parentId: null });
        await this.deps.db.query(`update sandbox_objects set created_at = ? where id = ?`, [now, id]);
      }
      const answer = await work(now);
      if (!answer.ok && answer.failure.kind !== 'card_declined') {
        await this.objects.remove(id);
        return answer;
      }
      await this.objects.update<IdempotencyData>({
        id,
        parentId: null,
        data: { ...placeholder.data, answer: JSON.parse(JSON.stringify(answer)) as unknown },
        dueAt: null,
        updatedAt: now,
      });
      return answer;
    });
  }

  // ---- catalog ------------------------------------------------------------------------------------

  async upsertProduct(projectId: string, plan: Plan, productId: string | null, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    const now = await this.now(projectId);
    const data: ProductData = {
      name: plan.name,
      description: plan.description,
      features: [...plan.features],
      active: true,
      metadata: { ...metadata },
    };
    if (productId === null) {
      const id = this.newId('product');
      await this.objects.insert({ id, projectId, kind: 'product', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk(id);
    }
    return this.transaction(async () => {
      const product = await this.objects.get<ProductData>(projectId, 'product', productId, { lock: true });
      if (!product) return noSuch('product', productId);
      await this.objects.update({ ...product, data: { ...data, active: product.data.active }, updatedAt: now });
      return processorOk(productId);
    });
  }

  async createPrice(projectId: string, price: Price, productId: string, metadata: ProcessorMetadata): Promise<ProcessorResult<string>> {
    const product = await this.objects.get<ProductData>(projectId, 'product', productId);
    if (!product) return noSuch('product', productId);
    const currency = parseCurrency(price.currency);
    if (currency === null) return processorFailed(invalidRequest(`Invalid currency: ${price.currency}.`));
    if (!isBillingInterval(price.interval)) return processorFailed(invalidRequest(`Invalid recurring[interval]: ${String(price.interval)}.`));
    if (!validateAmount(price.amount, currency).ok) return processorFailed(invalidRequest(`Invalid unit_amount: ${price.amount}.`));
    const now = await this.now(projectId);
    const id = this.newId('price');
    const data: PriceData = {
      productId,
      name: price.name,
      amount: price.amount,
      currency,
      interval: price.interval,
      active: price.active,
      metadata: { ...metadata },
    };
    await this.objects.insert({ id, projectId, kind: 'price', parentId: productId, data, dueAt: null, createdAt: now, updatedAt: now });
    return processorOk(id);
  }

  async archivePrice(projectId: string, priceId: string): Promise<ProcessorResult<void>> {
    return this.transaction(async () => {
      const price = await this.objects.get<PriceData>(projectId, 'price', priceId, { lock: true });
      if (!price) return noSuch('price', priceId);
      await this.objects.update({ ...price, data: { ...price.data, active: false }, updatedAt: await this.now(projectId) });
      return processorOk(undefined);
    });
  }

  // ---- customers, setup intents, promotion codes --------------------------------------------------

  createCustomer(
    projectId: string,
    input: { email: string | null; name: string | null; metadata: ProcessorMetadata; idempotencyKey: string },
  ): Promise<ProcessorResult<string>> {
    const params = { email: input.email, name: input.name, metadata: { ...input.metadata } };
    return this.idempotent(projectId, input.idempotencyKey, 'customers.create', params, async (now) => {
      const id = this.newId('customer');
      const data: CustomerData = { ...params, creditBalance: 0, defaultPaymentMethodId: null };
      await this.objects.insert({ id, projectId, kind: 'customer', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk(id);
    });
  }

  createSetupIntent(projectId: string, customerId: string, idempotencyKey: string): Promise<ProcessorResult<{ id: string; clientSecret: string }>> {
    return this.idempotent(projectId, idempotencyKey, 'setup_intents.create', { customerId }, async (now) => {
      const customer = await this.objects.get<CustomerData>(projectId, 'customer', customerId);
      if (!customer) return noSuch('customer', customerId);
      const id = this.newId('setup_intent');
      const clientSecret = `${id}_secret_${this.deps.crypto.uuid().replace(/-/g, '')}`;
      const data: SetupIntentData = { customerId, clientSecret, status: 'requires_payment_method' };
      await this.objects.insert({ id, projectId, kind: 'setup_intent', parentId: customerId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, clientSecret });
    });
  }

  async findPromotionCode(projectId: string, code: string): Promise<ProcessorResult<string | null>> {
    const found = await this.objects.findPromotionCode(projectId, code);
    return processorOk(found?.id ?? null);
  }

  /**
   * A promotion code (percent off the first invoice). Codes are case-insensitive; creating an
   * existing code again changes its percentage rather than making a second one.
   */
  async createPromotionCode(projectId: string, code: string, percentOff: number): Promise<void> {
    const trimmed = code.trim();
    if (!isPromotionCode(trimmed)) throw new RangeError(`Not a promotion code (letters, digits, - and _, up to 50): ${code}`);
    if (!isPercentOff(percentOff)) throw new RangeError(`Not a percentage from 0.01 to 100: ${percentOff}`);
    if (!isUuid(projectId)) throw new RangeError(`Not a project id: ${projectId}`);
    await this.transaction(async () => {
      const now = await this.now(projectId);
      // One writer per project at a time, so two creations of one code cannot both insert.
      await this.deps.db.query(`select pg_advisory_xact_lock(hashtext(?))`, [`sandbox-promo:${projectId}`]);
      const existing = await this.objects.findPromotionCode(projectId, trimmed);
      if (existing) {
        await this.objects.update({ ...existing, data: { ...existing.data, percentOff }, updatedAt: now });
        return;
      }
      const data: PromotionCodeData = { code: trimmed, percentOff, active: true };
      await this.objects.insert({ id: this.newId('promotion_code'), projectId, kind: 'promotion_code', parentId: null, data, dueAt: null, createdAt: now, updatedAt: now });
    });
  }

  // ---- payment methods ----------------------------------------------------------------------------

  /**
   * The card for a customer: a test payment method (`pm_card_visa`) is cloned into a new
   * `pm_sbx_...` (to attach; not yet stored), a `pm_sbx_...` of this customer is used as it is.
   * A card declined on attach answers `card_declined`.
   */
  private async resolveCard(
    projectId: string,
    customerId: string,
    paymentMethodId: string,
    now: Date,
  ): Promise<ProcessorResult<{ id: string; data: PaymentMethodData; attach: boolean }>> {
    if (isTestPaymentMethod(paymentMethodId)) {
      const card = TEST_PAYMENT_METHODS[paymentMethodId]!;
      if (card.declineOnAttach) return declined(card.declineOnAttach);
      const data: PaymentMethodData = {
        source: paymentMethodId,
        brand: card.brand,
        last4: card.number.slice(-4),
        expMonth: 12,
        expYear: now.getUTCFullYear() + 1,
        declineOnCharge: card.declineOnCharge ?? null,
      };
      return processorOk({ id: this.newId('payment_method'), data, attach: true });
    }
    const stored = await this.objects.get<PaymentMethodData>(projectId, 'payment_method', paymentMethodId);
    if (!stored) return processorFailed({ kind: 'invalid_payment_method', message: `No such PaymentMethod: '${paymentMethodId}'` });
    if (stored.parentId !== customerId) {
      return processorFailed({
        kind: 'invalid_payment_method',
        message: 'The payment method you provided has already been attached to a customer.',
      });
    }
    return processorOk({ id: stored.id, data: stored.data, attach: false });
  }

  /** Stores a cloned card on the customer and makes it the customer's default. */
  private async attachCard(
    projectId: string,
    customer: SandboxObject<CustomerData>,
    card: { id: string; data: PaymentMethodData; attach: boolean },
    now: Date,
  ): Promise<SandboxObject<CustomerData>> {
    if (card.attach) {
      await this.objects.insert({ id: card.id, projectId, kind: 'payment_method', parentId: customer.id, data: card.data, dueAt: null, createdAt: now, updatedAt: now });
    }
    const updated = { ...customer, data: { ...customer.data, defaultPaymentMethodId: card.id }, updatedAt: now };
    await this.objects.update(updated);
    return updated;
  }

  private async cardOf(projectId: string, paymentMethodId: string | null): Promise<SandboxObject<PaymentMethodData> | null> {
    return paymentMethodId === null ? null : this.objects.get<PaymentMethodData>(projectId, 'payment_method', paymentMethodId);
  }

  /** What charging this card gives: test cards decide; no card is a decline. */
  private charge(card: PaymentMethodData | null): CardCharge {
    if (card === null) return { payment: 'failed', decline: GENERIC_DECLINE };
    return card.declineOnCharge ? { payment: 'failed', decline: card.declineOnCharge } : { payment: 'paid', decline: null };
  }

  // ---- billing a transition -----------------------------------------------------------------------

  /**
   * Runs a domain transition that may bill: first as if paid, to learn its invoice; the pending
   * promotion code (if this invoice has a subscription line) comes off that invoice; if an amount
   * is still due and the card fails, the transition again with the failed payment.
   */
  private settle(
    run: (payment: PaymentOutcome) => Outcome,
    card: CardCharge,
    percentOff: number | null,
    creditBalance: number,
  ): Result<Settled, SubscriptionError> {
    const probe = run('paid');
    if (!probe.ok) return probe;
    const draft = probe.value.invoice;
    if (draft === null) return { ok: true, value: { transition: probe.value, invoice: null, payment: 'paid', discountUsed: false } };
    const discountable = percentOff !== null && draft.lines.some((l) => l.kind === 'subscription' && l.amount > 0);
    const invoice = discountable ? discounted(draft, percentOff, creditBalance) : { ...draft, discount: 0 };
    if (invoice.amountDue > 0 && card.payment === 'failed') {
      const failed = run('failed');
      if (!failed.ok) return failed;
      return { ok: true, value: { transition: failed.value, invoice, payment: 'failed', discountUsed: discountable } };
    }
    return { ok: true, value: { transition: probe.value, invoice, payment: 'paid', discountUsed: discountable } };
  }

  /** Stores an invoice of a subscription, paid or left open after a failed attempt. */
  private async recordInvoice(
    projectId: string,
    subscriptionId: string,
    customerId: string,
    invoice: BilledInvoice,
    payment: PaymentOutcome,
    at: Date,
  ): Promise<void> {
    const number = (await this.objects.countChildren(projectId, 'invoice', subscriptionId)) + 1;
    const lines = await this.describeLines(projectId, invoice.lines);
    const starts = invoice.lines.map((l) => l.period.start.getTime());
    const ends = invoice.lines.map((l) => l.period.end.getTime());
    const charged = invoice.amountDue > 0;
    const paid = !charged || payment === 'paid';
    const data: InvoiceData = {
      number,
      subscriptionId,
      customerId,
      status: paid ? 'paid' : 'open',
      reason: invoice.reason,
      currency: invoice.currency,
      subtotal: invoice.subtotal,
      discount: invoice.discount,
      creditApplied: invoice.creditApplied,
      amountDue: invoice.amountDue,
      amountPaid: paid ? invoice.amountDue : 0,
      attemptCount: charged ? 1 : 0,
      lines,
      periodStart: iso(new Date(starts.length > 0 ? Math.min(...starts) : at.getTime())),
      periodEnd: iso(new Date(ends.length > 0 ? Math.max(...ends) : at.getTime())),
      createdAt: iso(at),
      paidAt: paid ? iso(at) : null,
    };
    await this.objects.insert({ id: this.newId('invoice'), projectId, kind: 'invoice', parentId: subscriptionId, data, dueAt: null, createdAt: at, updatedAt: at });
  }

  /** Lines with Stripe's descriptions: "1 × Pro (at $10.00 / month)", "Unused time on Pro after 15 Jan 2025". */
  private async describeLines(projectId: string, lines: readonly InvoiceLine[]): Promise<InvoiceLineJson[]> {
    const names = new Map<string, string>();
    const nameOf = async (priceId: string): Promise<string> => {
      const known = names.get(priceId);
      if (known !== undefined) return known;
      const price = await this.objects.get<PriceData>(projectId, 'price', priceId);
      const product = price ? await this.objects.get<ProductData>(projectId, 'product', price.data.productId) : null;
      const name = product?.data.name ?? price?.data.name ?? priceId;
      names.set(priceId, name);
      return name;
    };
    const out: InvoiceLineJson[] = [];
    for (const line of lines) {
      const name = await nameOf(line.priceId);
      let description: string;
      if (line.kind === 'subscription') {
        const price = await this.objects.get<PriceData>(projectId, 'price', line.priceId);
        const each = price ? `${formatMoney({ amount: price.data.amount, currency: price.data.currency })} / ${price.data.interval}` : null;
        description = each ? `1 × ${name} (at ${each})` : `1 × ${name}`;
      } else {
        description = `${line.kind === 'unused_time' ? 'Unused' : 'Remaining'} time on ${name} after ${shortDate(line.period.start)}`;
      }
      out.push({
        kind: line.kind,
        description,
        priceId: line.priceId,
        amount: line.amount,
        periodStart: iso(line.period.start),
        periodEnd: iso(line.period.end),
      });
    }
    return out;
  }

  private async saveCustomerBalance(customer: SandboxObject<CustomerData>, creditBalance: number, now: Date): Promise<SandboxObject<CustomerData>> {
    if (customer.data.creditBalance === creditBalance) return customer;
    const updated = { ...customer, data: { ...customer.data, creditBalance }, updatedAt: now };
    await this.objects.update(updated);
    return updated;
  }

  private async saveSubscription(row: SandboxObject<SubscriptionData>, subscription: Subscription, patch: Partial<SubscriptionData>, now: Date): Promise<SandboxObject<SubscriptionData>> {
    const updated: SandboxObject<SubscriptionData> = {
      ...row,
      data: { ...row.data, ...patch, subscription: subscriptionToJson(subscription) },
      dueAt: nextActionAt(subscription),
      updatedAt: now,
    };
    await this.objects.update(updated);
    return updated;
  }

  // ---- subscriptions ------------------------------------------------------------------------------

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
      metadata: Partial<ProcessorMetadata>;
      percentOff: number | null;
      checkoutId: string | null;
      keepCardOnDecline: boolean;
    },
    now: Date,
  ): Promise<ProcessorResult<string>> {
    let customer = await this.objects.get<CustomerData>(projectId, 'customer', input.customerId, { lock: true });
    if (!customer) return noSuch('customer', input.customerId);
    const price = await this.objects.get<PriceData>(projectId, 'price', input.priceId);
    if (!price) return noSuch('price', input.priceId);
    if (input.trialDays !== null && !isTrialDays(input.trialDays)) return refused('invalid_trial_days');
    const card = await this.resolveCard(projectId, customer.id, input.paymentMethodId, now);
    if (!card.ok) return card;

    const id = this.newId('subscription');
    const domainPrice: Price = { id: price.id, planId: price.data.productId, ...pick(price.data) };
    const plan = { id: price.data.productId, trialsEnabled: true, defaultTrialDays: null };
    const creditBalance = customer.data.creditBalance;
    const settled = this.settle(
      (payment) => startSubscription({ id, price: domainPrice, plan, at: now, trialDays: input.trialDays, creditBalance, payment }),
      this.charge(card.value.data),
      input.percentOff,
      creditBalance,
    );
    if (!settled.ok) return refused(settled.error);
    const { transition, invoice, payment, discountUsed } = settled.value;
    if (payment === 'failed') {
      if (input.keepCardOnDecline) await this.attachCard(projectId, customer, card.value, now);
      return declined(this.charge(card.value.data).decline ?? GENERIC_DECLINE);
    }
    customer = await this.attachCard(projectId, customer, card.value, now);
    const subscription = transition.subscription;
    const data: SubscriptionData = {
      // The customer is locked: no other subscription of theirs is numbered meanwhile.
      sequence: (await this.objects.countChildren(projectId, 'subscription', customer.id)) + 1,
      subscription: subscriptionToJson(subscription),
      customerId: customer.id,
      paymentMethodId: card.value.id,
      metadata: { ...input.metadata },
      pendingPercentOff: discountUsed ? null : input.percentOff,
      checkoutId: input.checkoutId,
    };
    await this.objects.insert({
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
      await this.recordInvoice(projectId, id, customer.id, invoice, payment, subscription.createdAt);
      await this.saveCustomerBalance(customer, invoice.creditBalanceAfter, now);
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
        customer ??= await this.objects.get<CustomerData>(projectId, 'customer', row.data.customerId, { lock: true });
        card ??= this.charge((await this.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
        const creditBalance = customer?.data.creditBalance ?? 0;
        const current = subscription;
        const run =
          action === 'renew'
            ? (payment: PaymentOutcome) => renew(current, at, payment, creditBalance)
            : (payment: PaymentOutcome) => endTrial(current, at, payment, creditBalance);
        const settled = this.settle(run, card, pendingPercentOff, creditBalance);
        if (!settled.ok) throw new Error(`Sandbox ${action} of ${row.id} refused: ${settled.error}`);
        billed = settled.value;
        outcome = { ok: true, value: settled.value.transition };
      } else if (action === 'end_at_period_end') outcome = endAtPeriodEnd(subscription, at);
      else if (action === 'end_after_grace_period') outcome = endAfterGracePeriod(subscription, at);
      else if (action === 'skip_paused_period') outcome = skipPausedPeriod(subscription, at);
      else if (action === 'expire_incomplete') outcome = expireIncomplete(subscription, at);
      else break;
      if (!outcome.ok) throw new Error(`Sandbox ${action} of ${row.id} refused: ${outcome.error}`);
      subscription = outcome.value.subscription;
      changed = true;
      if (billed?.invoice) {
        await this.recordInvoice(projectId, row.id, row.data.customerId, billed.invoice, billed.payment, at);
        if (customer) customer = await this.saveCustomerBalance(customer, billed.invoice.creditBalanceAfter, now);
        if (billed.discountUsed) pendingPercentOff = null;
      }
    }
    if (!changed && !row.data.unreported) return { row, changed: false };
    return { row: await this.saveSubscription(row, subscription, { pendingPercentOff, unreported: false }, now), changed: true };
  }

  /**
   * A user operation on a subscription: locks it, catches up on what fell due (so a change never
   * lands in a period that already ended), applies `operate`, stores the result. `operate` answers
   * the new subscription and the invoice it bills, or a failure (nothing is stored then).
   */
  private operate(
    projectId: string,
    subscriptionId: string,
    key: string,
    operation: string,
    params: JsonValue,
    operate: (
      subscription: Subscription,
      context: { row: SandboxObject<SubscriptionData>; now: Date; customer: SandboxObject<CustomerData> | null },
    ) => Promise<ProcessorResult<{ subscription: Subscription; settled: Settled | null } | 'unchanged'>>,
  ): Promise<ProcessorResult<ProcessorSnapshot>> {
    const fingerprinted = { ...(params as { readonly [key: string]: JsonValue }), subscriptionId };
    return this.idempotent(projectId, key, operation, fingerprinted, async (now) => {
      const locked = await this.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId, { lock: true });
      if (!locked) return noSuch('subscription', subscriptionId);
      const { row, changed: caughtUp } = await this.applyDue(projectId, locked, now);
      const customer = await this.objects.get<CustomerData>(projectId, 'customer', row.data.customerId, { lock: true });
      const result = await operate(subscriptionFromJson(row.id, row.data.subscription), { row, now, customer });
      if (!result.ok) {
        // The catch-up stays (it fell due anyway); the next runDue reports it, as no answer does.
        if (caughtUp) await this.objects.update({ ...row, data: { ...row.data, unreported: true }, dueAt: now, updatedAt: now });
        return result;
      }
      if (result.value !== 'unchanged') {
        const { subscription, settled } = result.value;
        let pendingPercentOff = row.data.pendingPercentOff;
        if (settled?.invoice) {
          await this.recordInvoice(projectId, row.id, row.data.customerId, settled.invoice, settled.payment, toWholeSeconds(now));
          if (customer) await this.saveCustomerBalance(customer, settled.invoice.creditBalanceAfter, now);
          if (settled.discountUsed) pendingPercentOff = null;
        }
        await this.saveSubscription(row, subscription, { pendingPercentOff }, now);
      }
      const snapshot = await this.snapshot(projectId, subscriptionId);
      return processorOk(snapshot!);
    });
  }

  async previewChange(projectId: string, subscriptionId: string, priceId: string): Promise<ProcessorResult<ChangePreview>> {
    const row = await this.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId);
    if (!row) return noSuch('subscription', subscriptionId);
    const price = await this.objects.get<PriceData>(projectId, 'price', priceId);
    if (!price) return noSuch('price', priceId);
    const customer = await this.objects.get<CustomerData>(projectId, 'customer', row.data.customerId);
    const now = await this.now(projectId);
    const subscription = subscriptionFromJson(row.id, row.data.subscription);
    const preview = previewChange(subscription, domainPriceOf(price), now, customer?.data.creditBalance ?? 0);
    if (!preview.ok) return refused(preview.error);
    if (preview.value === null) {
      return processorOk({
        amountDue: 0,
        currency: subscription.price.currency,
        subtotal: 0,
        lines: [],
        periodStart: subscription.currentPeriodStart,
        periodEnd: subscription.currentPeriodEnd,
      });
    }
    const { invoice, period } = preview.value;
    const lines = (await this.describeLines(projectId, invoice.lines)).map(lineOf);
    return processorOk({
      amountDue: invoice.amountDue,
      currency: invoice.currency,
      subtotal: invoice.subtotal,
      lines,
      periodStart: period.start,
      periodEnd: period.end,
    });
  }

  changeSubscription(projectId: string, subscriptionId: string, priceId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.change', { priceId }, async (subscription, { row, now, customer }) => {
      const price = await this.objects.get<PriceData>(projectId, 'price', priceId);
      if (!price) return noSuch('price', priceId);
      const card = this.charge((await this.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
      const creditBalance = customer?.data.creditBalance ?? 0;
      const settled = this.settle(
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
    return this.operate(projectId, subscriptionId, key, 'subscriptions.cancel', { atPeriodEnd }, async (subscription, { now }) => {
      const outcome = atPeriodEnd ? cancelAtPeriodEnd(subscription, now) : cancelNow(subscription, now);
      if (!outcome.ok) {
        // Asking again for what is already scheduled changes nothing, as on Stripe.
        if (outcome.error === 'cancellation_scheduled') return processorOk('unchanged');
        if (outcome.error === 'subscription_canceled' && !atPeriodEnd) return processorFailed(invalidRequest('This subscription is already canceled.'));
        return refused(outcome.error);
      }
      return processorOk({ subscription: outcome.value.subscription, settled: null });
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
  resumeSubscription(projectId: string, subscriptionId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.resume', {}, async (subscription, { row, now, customer }) => {
      const billed = await this.settleOnCard(projectId, row, customer, (payment, creditBalance) => resume(subscription, now, payment, creditBalance));
      if (!billed.ok) return billed.error === 'subscription_not_resumable' ? processorOk('unchanged') : refused(billed.error);
      if (billed.value.settled.payment === 'failed') return declined(billed.value.card.decline ?? GENERIC_DECLINE);
      return processorOk({ subscription: billed.value.settled.transition.subscription, settled: billed.value.settled });
    });
  }

  /** Ends a trial now (Stripe's `trial_end=now`): a new period starts and is charged; a decline makes it past due. A subscription out of its trial is answered as it is. */
  endTrial(projectId: string, subscriptionId: string, key: string): Promise<ProcessorResult<ProcessorSnapshot>> {
    return this.operate(projectId, subscriptionId, key, 'subscriptions.end_trial', {}, async (subscription, { row, now, customer }) => {
      // Already out of its trial (ended here before, or by time): nothing to do, as Tollgate's Stripe adapter answers.
      if (subscription.status !== 'trialing') return processorOk('unchanged');
      const billed = await this.settleOnCard(projectId, row, customer, (payment, creditBalance) => endTrialNow(subscription, now, payment, creditBalance));
      if (!billed.ok) return refused(billed.error);
      return processorOk({ subscription: billed.value.settled.transition.subscription, settled: billed.value.settled });
    });
  }

  /**
   * Refunds `amount` of a paid invoice's payment, as Stripe's `POST /v1/refunds`: at most what is
   * left unrefunded; the invoice keeps its status and records the amount refunded.
   */
  refundInvoice(
    projectId: string,
    invoiceId: string,
    input: { amount: number; reason: string; idempotencyKey: string },
  ): Promise<ProcessorResult<{ id: string; invoiceId: string; amount: number; currency: string; createdAt: Date }>> {
    const params = { invoiceId, amount: input.amount, reason: input.reason };
    return this.idempotent(projectId, input.idempotencyKey, 'refunds.create', params, async (now) => {
      const invoice = await this.objects.get<InvoiceData>(projectId, 'invoice', invoiceId, { lock: true });
      if (!invoice) return noSuch('invoice', invoiceId);
      const refunded = invoice.data.amountRefunded ?? 0;
      const left = invoice.data.status === 'paid' ? invoice.data.amountPaid - refunded : 0;
      if (left <= 0) {
        return processorFailed(invalidRequest(refunded > 0 ? `Invoice ${invoiceId} has already been refunded.` : `Invoice ${invoiceId} has no payment to refund.`));
      }
      if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || input.amount > left) {
        return processorFailed(invalidRequest(`Refund amount (${input.amount}) is greater than unrefunded amount on charge (${left}).`));
      }
      await this.objects.update({ ...invoice, data: { ...invoice.data, amountRefunded: refunded + input.amount }, updatedAt: now });
      const id = this.newId('refund');
      const data: RefundData = { invoiceId, amount: input.amount, currency: invoice.data.currency, reason: input.reason, status: 'succeeded' };
      await this.objects.insert({ id, projectId, kind: 'refund', parentId: invoiceId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, invoiceId, amount: input.amount, currency: invoice.data.currency, createdAt: toWholeSeconds(now) });
    });
  }

  /** A transition that may bill, settled on the subscription's card and the customer's credit. */
  private async settleOnCard(
    projectId: string,
    row: SandboxObject<SubscriptionData>,
    customer: SandboxObject<CustomerData> | null,
    run: (payment: PaymentOutcome, creditBalance: number) => Outcome,
  ): Promise<Result<{ settled: Settled; card: CardCharge }, SubscriptionError>> {
    const card = this.charge((await this.cardOf(projectId, row.data.paymentMethodId))?.data ?? null);
    const creditBalance = customer?.data.creditBalance ?? 0;
    const settled = this.settle((payment) => run(payment, creditBalance), card, row.data.pendingPercentOff, creditBalance);
    return settled.ok ? { ok: true, value: { settled: settled.value, card } } : settled;
  }

  /** The subscription with its latest invoices (oldest first) and its card, or null. */
  async snapshot(projectId: string, subscriptionId: string): Promise<ProcessorSnapshot | null> {
    const row = await this.objects.get<SubscriptionData>(projectId, 'subscription', subscriptionId);
    if (!row) return null;
    const s = subscriptionFromJson(row.id, row.data.subscription);
    const card = await this.cardOf(projectId, row.data.paymentMethodId);
    const invoices = await this.objects.invoicesOf(projectId, row.id, SNAPSHOT_INVOICE_LIMIT);
    return {
      subscription: {
        id: row.id,
        customerId: row.data.customerId,
        priceId: s.price.id,
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
        paymentMethod: card
          ? { id: card.id, brand: card.data.brand, last4: card.data.last4, expMonth: card.data.expMonth, expYear: card.data.expYear }
          : null,
        metadata: { ...row.data.metadata },
        createdAt: s.createdAt,
      },
      invoices: invoices.map((i) => invoiceOf(i)),
    };
  }

  async listSubscriptionIds(projectId: string, customerId: string): Promise<ProcessorResult<string[]>> {
    const customer = await this.objects.get<CustomerData>(projectId, 'customer', customerId);
    if (!customer) return noSuch('customer', customerId);
    return processorOk(await this.objects.subscriptionIdsOf(projectId, customerId));
  }

  // ---- due work -----------------------------------------------------------------------------------

  /**
   * Every subscription due at its project's sandbox time (or one project's), each in its own
   * transaction under a row lock taken with `skip locked`: a second worker passes over what the
   * first holds, and finds it no longer due once the first commits, so nothing is charged twice.
   */
  async runDue(projectId?: string): Promise<Array<{ projectId: string; subscriptionId: string }>> {
    const changed: Array<{ projectId: string; subscriptionId: string }> = [];
    if (projectId !== undefined && !isUuid(projectId)) return changed;
    await this.objects.purgeIdempotency(this.deps.clock.now(), projectId ?? null, IDEMPOTENCY_TTL_SECONDS);
    let after = '';
    for (;;) {
      const batch = await this.objects.dueSubscriptions(this.deps.clock.now(), projectId ?? null, after, DUE_BATCH);
      for (const candidate of batch) {
        const didChange = await this.transaction(async () => {
          const now = await this.now(candidate.projectId);
          const row = await this.objects.lockDueSubscription(candidate.id, now);
          if (!row) return false;
          return (await this.applyDue(candidate.projectId, row, now)).changed;
        });
        if (didChange) changed.push({ projectId: candidate.projectId, subscriptionId: candidate.id });
      }
      if (batch.length < DUE_BATCH) return changed;
      after = batch[batch.length - 1]!.id;
    }
  }

  // ---- checkout -----------------------------------------------------------------------------------

  createCheckout(projectId: string, input: CheckoutInput): Promise<ProcessorResult<{ id: string; url: string }>> {
    const params = {
      customerId: input.customerId,
      priceId: input.priceId,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      promotionCodeId: input.promotionCodeId,
      trialDays: input.trialDays,
      metadata: { ...input.metadata },
      email: input.email,
    };
    return this.idempotent(projectId, input.idempotencyKey, 'checkout.sessions.create', params, async (now) => {
      const customer = await this.objects.get<CustomerData>(projectId, 'customer', input.customerId);
      if (!customer) return noSuch('customer', input.customerId);
      const price = await this.objects.get<PriceData>(projectId, 'price', input.priceId);
      if (!price) return noSuch('price', input.priceId);
      if (!price.data.active) return refused('price_inactive');
      if (!isHttpUrl(input.successUrl)) return processorFailed(invalidRequest('Invalid URL: success_url must be a valid URL.'));
      if (!isHttpUrl(input.cancelUrl)) return processorFailed(invalidRequest('Invalid URL: cancel_url must be a valid URL.'));
      if (input.trialDays !== null && !isTrialDays(input.trialDays)) return refused('invalid_trial_days');
      let percentOff: number | null = null;
      if (input.promotionCodeId !== null) {
        const promo = await this.objects.get<PromotionCodeData>(projectId, 'promotion_code', input.promotionCodeId);
        if (!promo) return noSuch('promotion code', input.promotionCodeId);
        if (!promo.data.active) return processorFailed(invalidRequest('This promotion code is inactive.'));
        percentOff = promo.data.percentOff;
      }
      const id = this.newId('checkout_session');
      const data: CheckoutData = {
        ...params,
        percentOff,
        status: 'open',
        expiresAt: iso(addSeconds(toWholeSeconds(now), CHECKOUT_TTL_SECONDS)),
        subscriptionId: null,
        completedAt: null,
      };
      await this.objects.insert({ id, projectId, kind: 'checkout_session', parentId: input.customerId, data, dueAt: null, createdAt: now, updatedAt: now });
      return processorOk({ id, url: `${this.deps.publicUrl.replace(/\/+$/, '')}/sandbox/checkout/${id}` });
    });
  }

  async checkoutSubscriptionId(projectId: string, checkoutId: string): Promise<ProcessorResult<string | null>> {
    const session = await this.objects.get<CheckoutData>(projectId, 'checkout_session', checkoutId);
    if (!session) return noSuch('checkout.session', checkoutId);
    return processorOk(session.data.subscriptionId);
  }

  async getCheckout(checkoutId: string): Promise<SandboxCheckoutView | null> {
    const session = await this.objects.getAnyProject<CheckoutData>('checkout_session', checkoutId);
    if (!session) return null;
    const { projectId, data } = session;
    const price = await this.objects.get<PriceData>(projectId, 'price', data.priceId);
    const product = price ? await this.objects.get<ProductData>(projectId, 'product', price.data.productId) : null;
    const now = await this.now(projectId);
    return {
      id: session.id,
      projectId,
      status: data.status === 'open' && new Date(data.expiresAt).getTime() <= now.getTime() ? 'expired' : data.status,
      planName: product?.data.name ?? '',
      priceName: price?.data.name ?? '',
      amount: price?.data.amount ?? 0,
      currency: price?.data.currency ?? '',
      interval: price?.data.interval ?? '',
      trialDays: data.trialDays,
      percentOff: data.percentOff,
      email: data.email,
      successUrl: data.successUrl,
      cancelUrl: data.cancelUrl,
    };
  }

  /**
   * Pays an open checkout session with a test card: the subscription is created as
   * `createSubscription` creates it, with the session's trial and promotion code. A declined card
   * leaves the session open (and nothing attached); a completed or expired session is refused.
   */
  completeCheckout(
    checkoutId: string,
    paymentMethodId: string,
  ): Promise<ProcessorResult<{ projectId: string; subscriptionId: string; successUrl: string }>> {
    return this.transaction(async () => {
      const session = await this.objects.getAnyProject<CheckoutData>('checkout_session', checkoutId, { lock: true });
      if (!session) return noSuch('checkout.session', checkoutId);
      const { projectId, data } = session;
      const now = await this.now(projectId);
      if (data.status === 'complete') return processorFailed(invalidRequest('This Checkout Session is already complete.'));
      if (new Date(data.expiresAt).getTime() <= now.getTime()) return processorFailed(invalidRequest('This Checkout Session has expired.'));
      const created = await this.subscribe(
        projectId,
        {
          customerId: data.customerId,
          priceId: data.priceId,
          paymentMethodId,
          trialDays: data.trialDays,
          metadata: data.metadata,
          percentOff: data.percentOff,
          checkoutId,
          keepCardOnDecline: false,
        },
        now,
      );
      if (!created.ok) return created;
      await this.objects.update({
        ...session,
        data: { ...data, status: 'complete', subscriptionId: created.value, completedAt: iso(now) },
        updatedAt: now,
      });
      return processorOk({
        projectId,
        subscriptionId: created.value,
        successUrl: data.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', checkoutId),
      });
    });
  }
}

// ---- mapping ---------------------------------------------------------------------------------------

const pick = (p: PriceData) => ({ name: p.name, amount: p.amount, currency: p.currency, interval: p.interval, active: p.active });

const domainPriceOf = (price: SandboxObject<PriceData>): Price => ({ id: price.id, planId: price.data.productId, ...pick(price.data) });

/**
 * The draft with `percentOff` taken off its subscription lines (each rounded on its own, as
 * proration lines are), then the customer's credit applied by the domain's rule. The lines and
 * subtotal stay as billed; the discount is reported beside them, as Stripe's `discount_amounts`.
 */
function discounted(draft: InvoiceDraft, percentOff: number, creditBalance: number): BilledInvoice {
  const basisPoints = Math.round(percentOff * 100);
  let discount = 0;
  const net = draft.lines.map((line) => {
    if (line.kind !== 'subscription' || line.amount <= 0) return line;
    const off = prorate(line.amount, basisPoints, 10_000);
    discount += off;
    return { ...line, amount: line.amount - off };
  });
  const after = draftInvoice(draft.reason, draft.currency, net, creditBalance);
  return {
    reason: draft.reason,
    currency: draft.currency,
    lines: draft.lines,
    subtotal: draft.subtotal,
    discount,
    creditApplied: after.creditApplied,
    amountDue: after.amountDue,
    creditBalanceAfter: after.creditBalanceAfter,
  };
}

const lineOf = (l: InvoiceLineJson): ProcessorInvoiceLine => ({
  kind: l.kind,
  description: l.description,
  priceId: l.priceId,
  amount: l.amount,
  periodStart: new Date(l.periodStart),
  periodEnd: new Date(l.periodEnd),
});

function invoiceOf(row: SandboxObject<InvoiceData>): ProcessorInvoice {
  const d = row.data;
  return {
    id: row.id,
    subscriptionId: d.subscriptionId,
    customerId: d.customerId,
    status: d.status,
    reason: d.reason,
    currency: d.currency,
    subtotal: d.subtotal,
    amountDue: d.amountDue,
    amountPaid: d.amountPaid,
    attemptCount: d.attemptCount,
    lines: d.lines.map(lineOf),
    periodStart: new Date(d.periodStart),
    periodEnd: new Date(d.periodEnd),
    hostedUrl: null,
    createdAt: new Date(d.createdAt),
    paidAt: d.paidAt === null ? null : new Date(d.paidAt),
  };
}
