import type { BillingEvent } from '../../application/billing/billing.store';
import type { ConnectionView, OperatorInvoiceView, OperatorPlanView, OperatorSubscriptionView } from '../../application/billing/views';
import { formatMoney, isCurrency } from '../../domain/billing/money';
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

export const priceLine = (p: PriceView) => `${money(p.amount, p.currency)} / ${p.interval}`;

function priceRows(prices: readonly PriceView[]): string[][] {
  return prices.map((p) => [p.name, priceLine(p), p.active ? 'active' : 'archived', p.id, p.processorPriceId ?? '-']);
}

/** A plan's prices as a table, each line indented under the plan. */
function priceTable(prices: readonly PriceView[]): string[] {
  return table(['PRICE', 'AMOUNT', 'STATUS', 'ID', 'PROCESSOR ID'], priceRows(prices))
    .split('\n')
    .map((l) => `    ${l}`);
}

/** Whom a plan is sold to, in words. */
const AUDIENCE_TEXT = { users: 'users', organizations: 'organizations', both: 'users and organizations' } as const;
const soldTo = (plan: OperatorPlanView): string => AUDIENCE_TEXT[plan.audience];

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
    const lines = [`  ${planFlags(plan)}`, `  sold to: ${soldTo(plan)}`, `  features: ${plan.features.join(', ') || '(none)'}`];
    const prices = plan.prices.length ? priceTable(plan.prices) : ['    (no prices)'];
    return [title, ...lines, ...prices].join('\n');
  });
  return [`Plans of project ${projectId}, lowest tier first:`, '', blocks.join('\n\n')].join('\n');
}

/** Whose a subscription or invoice is: the user's id, or `org:` and the organization's id. */
const ownerId = (r: { userId: string | null; organizationId: string | null }): string => r.userId ?? `org:${r.organizationId ?? '-'}`;
const ownerName = (r: { userEmail: string | null; organizationName: string | null }): string => r.userEmail ?? r.organizationName ?? '-';

export function subscriptionRows(subscriptions: readonly OperatorSubscriptionView[]): string[][] {
  return subscriptions.map((s) => [
    s.id,
    ownerId(s),
    ownerName(s),
    s.status,
    s.plan.name,
    `${s.price.name} ${money(s.price.amount, s.price.currency)}/${s.price.interval}`,
    iso(s.currentPeriodEnd) ?? '',
    s.processor,
  ]);
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
