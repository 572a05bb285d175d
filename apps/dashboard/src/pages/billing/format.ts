import { echoAmount, formatMoney, isCurrency } from '../../../../../domain/billing/money';
import type { api } from '../../api';

type Ok<T> = Extract<Awaited<T>, { status: 200; body: unknown }>['body'];
export type Connection = NonNullable<Ok<ReturnType<typeof api.billing.get>>['connection']>;
export type Plan = Ok<ReturnType<typeof api.billing.listPlans>>['plans'][number];

export const locale = () => navigator.language || 'en-US';
/** An amount in minor units, written in its currency with Intl.NumberFormat. */
export const money = (amount: number, currency: string) => (isCurrency(currency) ? formatMoney({ amount, currency }, locale()) : `${amount} ${currency}`);

/** A date without its time (an invoice's period bounds). */
export const day = (iso: string) => new Date(iso).toLocaleDateString();

/** What an invoice was for, in words (the processor's billing reason otherwise). */
const INVOICE_REASONS: Record<string, string> = {
  subscription_create: 'New subscription',
  subscription_cycle: 'Renewal',
  subscription_update: 'Plan change',
  manual: 'Manual',
};
export const invoiceReason = (reason: string) => INVOICE_REASONS[reason] ?? reason;

export const firstIssue = (r: { success: false; error: { issues: Array<{ message: string }> } }) => r.error.issues[0]!.message;

/** A price as it will be created, shown back before it is: `490 = $4.90 / month`. */
export const echoPrice = (p: { amount: number; currency: string; interval: string }) =>
  `${echoAmount({ amount: p.amount, currency: p.currency }, locale())} / ${p.interval}`;
