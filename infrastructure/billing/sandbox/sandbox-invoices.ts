import type { ProcessorInvoice, ProcessorInvoiceLine } from '../../../application/billing/payment-processor';
import { type InvoiceDraft, type InvoiceLine, type InvoiceReason, draftInvoice } from '../../../domain/billing/invoice';
import { formatMoney } from '../../../domain/billing/money';
import { prorate } from '../../../domain/billing/proration';
import type { PaymentOutcome, SubscriptionError, Transition } from '../../../domain/billing/subscription';
import type { Result } from '../../../domain/result';
import { type SandboxContext, iso } from './sandbox-context';
import type { InvoiceData, InvoiceLineJson, PriceData, ProductData, SandboxObject } from './sandbox-objects';
import type { CardCharge } from './sandbox-payment-methods';

export type Outcome = Result<Transition, SubscriptionError>;

/** An invoice as the sandbox bills it: the domain's draft, less a promotion code's discount. */
export interface BilledInvoice {
  reason: InvoiceReason;
  currency: string;
  lines: readonly InvoiceLine[];
  subtotal: number;
  discount: number;
  creditApplied: number;
  amountDue: number;
  creditBalanceAfter: number;
}

export interface Settled {
  transition: Transition;
  invoice: BilledInvoice | null;
  /** 'failed' only when an amount was due and the card was declined. */
  payment: PaymentOutcome;
  /** The pending promotion code was used by this invoice. */
  discountUsed: boolean;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Stripe's date in line descriptions: `15 Jan 2025`. */
const shortDate = (d: Date) => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;

/**
 * Runs a domain transition that may bill: first as if paid, to learn its invoice; the pending
 * promotion code (if this invoice has a subscription line) comes off that invoice; if an amount
 * is still due and the card fails, the transition again with the failed payment.
 */
export function settle(
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

/** Invoices of subscriptions, with Stripe's line descriptions. */
export class SandboxInvoices {
  constructor(private readonly ctx: SandboxContext) {}

  /** Stores an invoice of a subscription, paid or left open after a failed attempt. */
  async recordInvoice(projectId: string, subscriptionId: string, customerId: string, invoice: BilledInvoice, payment: PaymentOutcome, at: Date): Promise<void> {
    const number = (await this.ctx.objects.countChildren(projectId, 'invoice', subscriptionId)) + 1;
    const lines = await this.describeLines(projectId, invoice.lines);
    const period = await this.periodOf(projectId, invoice.lines, at);
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
      periodStart: iso(period.start),
      periodEnd: iso(period.end),
      createdAt: iso(at),
      paidAt: paid ? iso(at) : null,
    };
    await this.ctx.objects.insert({
      id: this.ctx.newId('invoice'),
      projectId,
      kind: 'invoice',
      parentId: subscriptionId,
      data,
      dueAt: null,
      createdAt: at,
      updatedAt: at,
    });
  }

  /**
   * The period an invoice bills, as the Stripe adapter reads a Stripe invoice: its plan's line's
   * (a renewal bills the period that begins; its metered lines, in arrears, the one that ended),
   * else any subscription line's (a final invoice of usage only), else the span of its lines
   * (prorations), else the moment it was made.
   */
  private async periodOf(projectId: string, lines: readonly InvoiceLine[], at: Date): Promise<{ start: Date; end: Date }> {
    const periodLines = lines.filter((l) => l.kind === 'subscription');
    for (const line of periodLines) {
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', line.priceId);
      if (!price?.data.metered) return line.period;
    }
    if (periodLines[0]) return periodLines[0].period;
    if (lines.length === 0) return { start: at, end: at };
    return {
      start: new Date(Math.min(...lines.map((l) => l.period.start.getTime()))),
      end: new Date(Math.max(...lines.map((l) => l.period.end.getTime()))),
    };
  }

  /** Lines with Stripe's descriptions: "1 × Pro (at $10.00 / month)", "Unused time on Pro after 15 Jan 2025". */
  async describeLines(projectId: string, lines: readonly InvoiceLine[]): Promise<InvoiceLineJson[]> {
    const names = new Map<string, string>();
    const nameOf = async (priceId: string): Promise<string> => {
      const known = names.get(priceId);
      if (known !== undefined) return known;
      const price = await this.ctx.objects.get<PriceData>(projectId, 'price', priceId);
      const product = price ? await this.ctx.objects.get<ProductData>(projectId, 'product', price.data.productId) : null;
      const name = product?.data.name ?? price?.data.name ?? priceId;
      names.set(priceId, name);
      return name;
    };
    const out: InvoiceLineJson[] = [];
    for (const line of lines) {
      const name = await nameOf(line.priceId);
      let description: string;
      if (line.kind === 'subscription') {
        const price = await this.ctx.objects.get<PriceData>(projectId, 'price', line.priceId);
        const seats = price?.data.seats ?? null;
        const metered = price?.data.metered ?? null;
        if (price && metered) {
          // A metered line: the packages of usage past the included amount, at the package's price.
          const per = metered.packageSize === 1 ? 'unit' : `${metered.packageSize.toLocaleString('en-US')} units`;
          const each = formatMoney({ amount: price.data.amount, currency: price.data.currency });
          description = `${line.quantity ?? 0} × ${metered.meterName} (at ${each} / ${per})`;
        } else if (line.quantity !== undefined && price && seats) {
          // A per-seat line: the seats, what each costs beyond those the base covers (Stripe's tiered line reads the same way).
          const unit = `${formatMoney({ amount: seats.unitAmount, currency: price.data.currency })} / seat`;
          const base =
            price.data.amount > 0 || seats.included > 0
              ? `, ${formatMoney({ amount: price.data.amount, currency: price.data.currency })} for the first ${seats.included}`
              : '';
          description = `${line.quantity} seats × ${name} (at ${unit}${base} / ${price.data.interval})`;
        } else {
          const each = price ? `${formatMoney({ amount: price.data.amount, currency: price.data.currency })} / ${price.data.interval}` : null;
          description = each ? `1 × ${name} (at ${each})` : `1 × ${name}`;
        }
      } else {
        const what = line.quantity === undefined ? name : `${line.quantity} × ${name}`;
        description = `${line.kind === 'unused_time' ? 'Unused' : 'Remaining'} time on ${what} after ${shortDate(line.period.start)}`;
      }
      out.push({
        kind: line.kind,
        description,
        priceId: line.priceId,
        ...(line.quantity === undefined ? {} : { quantity: line.quantity }),
        amount: line.amount,
        periodStart: iso(line.period.start),
        periodEnd: iso(line.period.end),
      });
    }
    return out;
  }
}

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

export const lineOf = (l: InvoiceLineJson): ProcessorInvoiceLine => ({
  kind: l.kind,
  description: l.description,
  priceId: l.priceId,
  quantity: l.quantity ?? null,
  amount: l.amount,
  periodStart: new Date(l.periodStart),
  periodEnd: new Date(l.periodEnd),
});

export function invoiceOf(row: SandboxObject<InvoiceData>): ProcessorInvoice {
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
