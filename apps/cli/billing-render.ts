import type { BillingEvent } from '../../application/billing/billing.store';
import type { ConnectionView, OperatorInvoiceView, OperatorPlanView, OperatorSubscriptionView } from '../../application/billing/views';
import { formatMoney, isCurrency } from '../../domain/billing/money';
import type { SeatPolicy, SeatPricing } from '../../domain/billing/seat-terms';
import { fields, table } from './render';

/**
 * What the billing commands print: the JSON each answers with --json and the text it prints
 * otherwise (connections, plans and prices, subscriptions, invoices, events).
 */

export const iso = (date: Date | string | null | undefined): string | null => (date === null || date === undefined ? null : new Date(date).toISOString());

export const money = (amount: number, currency: string): string => (isCurrency(currency) ? formatMoney({ amount, currency }) : `${amount} ${currency}`);

/** What the CLI shows of a connection: never a key, only the secret key's last 4 characters. */
export function connectionJson(view: ConnectionView) {
  return {
    processor: view.processor,
    connected: view.connected,
    mode: view.mode,
    keyLast4: view.keyLast4,
    accountId: view.accountId,
    currency: view.currency,
    connectedAt: iso(view.connectedAt),
    webhookUrl: view.webhookUrl,
  };
}

export function connectionText(view: ReturnType<typeof connectionJson>): string {
  const rows: [string, string][] = [
    ['processor', view.processor],
    ['mode', view.mode],
  ];
  if (view.processor === 'stripe') {
    rows.push(['secret key', view.keyLast4 ? `…${view.keyLast4}` : '(unknown)']);
    if (view.accountId) rows.push(['account', view.accountId]);
  }
  rows.push(['currency', view.currency], ['connected', view.connectedAt ?? '']);
  if (view.webhookUrl) rows.push(['webhook URL', view.webhookUrl]);
  return fields(rows, 12);
}

type PriceView = OperatorPlanView['prices'][number];

export const priceJson = (price: PriceView) => ({ ...price });
export const planJson = (plan: OperatorPlanView) => ({ ...plan, prices: plan.prices.map(priceJson) });

/** "1 seat", "3 seats". */
export const seatCount = (n: number): string => `${n} ${n === 1 ? 'seat' : 'seats'}`;

/**
 * What a price charges per period, without its interval, in the console's words: `$12.50` for a
 * flat price; for a per-seat one `$20.00 + $8.00/seat over 3 seats` (the base covers the first 3),
 * `$20.00 + $8.00/seat` with none included, `$8.00/seat` with no base either.
 */
export function priceAmount(p: { amount: number; currency: string; seats: SeatPricing | null }): string {
  if (p.seats === null) return money(p.amount, p.currency);
  const unit = `${money(p.seats.unitAmount, p.currency)}/seat`;
  if (p.seats.included > 0) return `${money(p.amount, p.currency)} + ${unit} over ${seatCount(p.seats.included)}`;
  return p.amount > 0 ? `${money(p.amount, p.currency)} + ${unit}` : unit;
}

/** The seats a per-seat price sells: `1 to 50 seats`, `from 1 seat`. */
export const seatRange = (s: Pick<SeatPricing, 'minimum' | 'maximum'>): string =>
  s.maximum === null ? `from ${seatCount(s.minimum)}` : `${s.minimum} to ${seatCount(s.maximum)}`;

/** A plan's seat policy in words, as the console says it (its per-seat prices follow it). */
export function seatPolicyText(policy: SeatPolicy): string {
  const mode = policy.mode === 'bought' ? 'bought by the organization' : `automatic (the members${policy.countInvitations ? ' and pending invitations' : ''})`;
  return `${mode}; a freed seat ${policy.removal === 'immediately' ? 'credited at once' : 'billed until the period ends'}`;
}

export const priceLine = (p: PriceView) => `${priceAmount(p)} / ${p.interval}`;

/** A plan's prices as a table, each line indented under the plan; a SEATS column when one of them is per seat. */
function priceTable(prices: readonly PriceView[]): string[] {
  const perSeat = prices.some((p) => p.seats !== null);
  const rows = prices.map((p) => [
    p.name,
    priceLine(p),
    ...(perSeat ? [p.seats ? seatRange(p.seats) : '-'] : []),
    p.active ? 'active' : 'archived',
    p.id,
    p.processorPriceId ?? '-',
  ]);
  return table(['PRICE', 'AMOUNT', ...(perSeat ? ['SEATS'] : []), 'STATUS', 'ID', 'PROCESSOR ID'], rows)
    .split('\n')
    .map((l) => `    ${l}`);
}

/** Whom a plan is sold to, in words. */
const AUDIENCE_TEXT = { users: 'users', organizations: 'organizations', both: 'users and organizations' } as const;
const soldTo = (plan: OperatorPlanView): string => AUDIENCE_TEXT[plan.audience];
/** A plan sold to organizations shows how the seats of its per-seat prices move. */
const sellsSeats = (plan: OperatorPlanView): boolean => plan.audience !== 'users';

function planFlags(plan: OperatorPlanView): string {
  const flags = [
    plan.hidden ? 'hidden' : 'visible',
    ...(plan.recommended ? ['recommended'] : []),
    plan.trialsEnabled ? `trials${plan.defaultTrialDays ? ` (${plan.defaultTrialDays} days by default)` : ''}` : 'no trials',
  ];
  return flags.join(', ');
}

export function planText(plan: OperatorPlanView): string {
  const head = fields(
    [
      ['id', plan.id],
      ['name', plan.name],
      ['tier', `${plan.position + 1} (tier 1 is the lowest; "position": ${plan.position} in --json)`],
      ['description', plan.description || '(none)'],
      ['features', plan.features.join(', ') || '(none)'],
      ['flags', planFlags(plan)],
      ['sold to', soldTo(plan)],
      ...(sellsSeats(plan) ? [['seats', seatPolicyText(plan.seatPolicy)] as const] : []),
      ['product', plan.processorProductId ?? '(not pushed to a processor)'],
    ],
    12,
  );
  const prices = plan.prices.length
    ? priceTable(plan.prices).join('\n')
    : '    (no prices yet: tollgate price create <project> <plan> --name ... --amount ... --interval month)';
  return `${head}\n  prices      :\n${prices}`;
}

export function planListText(projectId: string, plans: readonly OperatorPlanView[]): string {
  if (plans.length === 0) return `Project ${projectId} has no plans yet. Create one with: tollgate plan create ${projectId} --name <name>`;
  const blocks = plans.map((plan) => {
    const title = `Tier ${plan.position + 1}  ${plan.name}  (${plan.id}; product ${plan.processorProductId ?? '-'})`;
    const lines = [
      `  ${planFlags(plan)}`,
      `  sold to: ${soldTo(plan)}`,
      ...(sellsSeats(plan) ? [`  seats: ${seatPolicyText(plan.seatPolicy)}`] : []),
      `  features: ${plan.features.join(', ') || '(none)'}`,
    ];
    const prices = plan.prices.length ? priceTable(plan.prices) : ['    (no prices)'];
    return [title, ...lines, ...prices].join('\n');
  });
  return [`Plans of project ${projectId}, lowest tier first:`, '', blocks.join('\n\n')].join('\n');
}

/** Whose a subscription or invoice is: the user's id, or `org:` and the organization's id. */
const ownerId = (r: { userId: string | null; organizationId: string | null }): string => r.userId ?? `org:${r.organizationId ?? '-'}`;
const ownerName = (r: { userEmail: string | null; organizationName: string | null }): string => r.userEmail ?? r.organizationName ?? '-';

/**
 * The subscriptions as table rows; with `perSeat` (the ids of the project's per-seat prices) a
 * SEATS cell after the price: the quantity of a per-seat subscription, `-` for a flat one.
 */
export function subscriptionRows(subscriptions: readonly OperatorSubscriptionView[], perSeat?: ReadonlySet<string>): string[][] {
  return subscriptions.map((s) => [
    s.id,
    ownerId(s),
    ownerName(s),
    s.status,
    s.plan.name,
    `${s.price.name} ${money(s.price.amount, s.price.currency)}/${s.price.interval}`,
    ...(perSeat ? [perSeat.has(s.price.id) ? String(s.quantity) : '-'] : []),
    iso(s.currentPeriodEnd) ?? '',
    s.processor,
  ]);
}

/** The subscriptions' table: a SEATS column when one of them is on a per-seat price. */
export function subscriptionTable(subscriptions: readonly OperatorSubscriptionView[], perSeatPrices: ReadonlySet<string>): string {
  const perSeat = subscriptions.some((s) => perSeatPrices.has(s.price.id)) ? perSeatPrices : undefined;
  return table(
    ['ID', 'USER', 'EMAIL', 'STATUS', 'PLAN', 'PRICE', ...(perSeat ? ['SEATS'] : []), 'PERIOD END', 'PROCESSOR'],
    subscriptionRows(subscriptions, perSeat),
  );
}

export function invoiceRows(invoices: readonly OperatorInvoiceView[]): string[][] {
  return invoices.map((i) => [
    iso(i.createdAt) ?? '',
    ownerId(i),
    ownerName(i),
    i.status,
    i.reason,
    money(i.amountDue, i.currency),
    `${iso(i.periodStart) ?? ''} – ${iso(i.periodEnd) ?? ''}`,
    i.id,
  ]);
}

/** An event as the CLI shows it: its columns, and the payload as delivered to project endpoints. */
export function eventJson(event: BillingEvent) {
  const payload = event.payload ?? {};
  const amount = typeof payload.amount === 'number' ? payload.amount : null;
  const currency = typeof payload.currency === 'string' ? payload.currency : null;
  return {
    id: event.id,
    type: event.type,
    userId: event.userId,
    subscriptionId: event.subscriptionId,
    amount,
    currency,
    createdAt: iso(event.createdAt),
    payload,
  };
}
