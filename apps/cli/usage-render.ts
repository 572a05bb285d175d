import type { UsageFeatureView } from '../../application/usage/standing';
import { echoAmount, isCurrency } from '../../domain/billing/money';
import type { BillingSubject } from '../../domain/billing/subject';
import type { CreditPack } from '../../domain/usage/credit-pack';
import type { CreditGrant } from '../../domain/usage/credits';
import type { OverageMode, UsageLimit } from '../../domain/usage/limits';
import type { Meter } from '../../domain/usage/meter';
import { iso } from './billing-render';
import { fields, table } from './render';

/**
 * How the usage commands print meters, credit grants, credit packs, a subject's usage and a meter's
 * top consumers (text and --json), and how the plan commands print a plan's usage limits. Units are
 * whole numbers; money is integer minor units, shown as `200 = $2.00` as `price create` echoes it.
 */

/** A whole number of units as the console writes it: `5,000`. */
export const count = (n: number): string => n.toLocaleString('en-US');

/** A number of units with the meter's unit label, when it has one: `5,000 calls`, `12`. */
export const units = (n: number, unit: string): string => (unit ? `${count(n)} ${unit}` : count(n));

/** `user:<id>` or `organization:<id>`: how the commands take and print a subject. */
export const subjectText = (subject: BillingSubject): string => `${subject.kind}:${subject.id}`;

export const subjectJson = (subject: BillingSubject) => ({ type: subject.kind, id: subject.id });

export function meterJson(m: Meter) {
  return { id: m.id, key: m.key, name: m.name, unit: m.unit, aggregation: m.aggregation, createdAt: m.createdAt.toISOString() };
}
export type MeterJson = ReturnType<typeof meterJson>;

/** How a meter adds up its events, in words (as the console's Meters page says it). */
const AGGREGATION_WORDS: Record<Meter['aggregation'], string> = {
  sum: 'sum of the values',
  count: 'count of the events',
  max: 'highest value (a level)',
};

export function meterText(m: MeterJson): string {
  return fields(
    [
      ['key', m.key],
      ['name', m.name],
      ['unit', m.unit || '(none)'],
      ['aggregation', `${m.aggregation} (${AGGREGATION_WORDS[m.aggregation]})`],
      ['id', m.id],
      ['created', m.createdAt],
    ],
    12,
  );
}

export function meterListText(projectId: string, meters: MeterJson[]): string {
  if (meters.length === 0) return `Project ${projectId} has no meters yet. Create one with: tollgate meter create ${projectId} <key> --name <name>`;
  return table(
    ['KEY', 'AGGREGATION', 'UNIT', 'CREATED', 'ID', 'NAME'],
    meters.map((m) => [m.key, m.aggregation, m.unit || '-', m.createdAt, m.id, m.name]),
  );
}

/** A grant as the CLI shows it; `expired` once its expiry is past (what is left of it is gone). */
export function grantJson(g: CreditGrant & { meterKey: string }, now: Date) {
  return {
    id: g.id,
    feature: g.meterKey,
    amount: g.amount,
    remaining: g.remaining,
    expiresAt: iso(g.expiresAt),
    reason: g.reason,
    source: g.source,
    createdAt: g.createdAt.toISOString(),
    expired: g.expiredAt !== null || (g.expiresAt !== null && g.expiresAt.getTime() <= now.getTime()),
  };
}
export type GrantJson = ReturnType<typeof grantJson>;

/** `active`, `used up` or `expired`. */
const grantStatus = (g: GrantJson): string => (g.expired ? 'expired' : g.remaining === 0 ? 'used up' : 'active');

export function grantsTable(grants: GrantJson[]): string {
  return table(
    ['FEATURE', 'AMOUNT', 'REMAINING', 'STATUS', 'EXPIRES', 'SOURCE', 'CREATED', 'ID', 'REASON'],
    grants.map((g) => [g.feature, count(g.amount), count(g.remaining), grantStatus(g), g.expiresAt ?? 'never', g.source, g.createdAt, g.id, g.reason || '-']),
  );
}

export function grantText(g: GrantJson): string {
  return fields(
    [
      ['id', g.id],
      ['feature', g.feature],
      ['amount', count(g.amount)],
      ['remaining', count(g.remaining)],
      ['expires', g.expiresAt ?? 'never'],
      ['reason', g.reason || '(none)'],
      ['source', g.source],
      ['created', g.createdAt],
    ],
    10,
  );
}

/** A credit pack as the CLI shows it (the admin API's fields, camelCase; `feature` is the meter key, as a grant's). */
export function packJson(p: CreditPack) {
  return {
    id: p.id,
    feature: p.meterKey,
    name: p.name,
    units: p.units,
    amount: p.amount,
    currency: p.currency,
    expiresInDays: p.expiresInDays,
    active: p.active,
    createdAt: p.createdAt.toISOString(),
  };
}
export type PackJson = ReturnType<typeof packJson>;

/** An amount in minor units, echoed formatted: `900 = $9.00`. */
export const minorAmount = (amount: number, currency: string): string => (isCurrency(currency) ? echoAmount({ amount, currency }) : `${amount} ${currency}`);

/** When a pack's credits expire, as the console says it: `30 days after purchase`, `never`. */
export const packExpiry = (days: number | null): string => (days === null ? 'never' : `${count(days)} ${days === 1 ? 'day' : 'days'} after purchase`);

/** `active` (for sale) or `archived`. */
const packStatus = (p: PackJson): string => (p.active ? 'active' : 'archived');

/** The unit label of a pack's meter, when the project still has it. */
const unitOf = (p: PackJson, meters: readonly Pick<Meter, 'key' | 'unit'>[]): string => meters.find((m) => m.key === p.feature)?.unit ?? '';

export function packsTable(packs: PackJson[], meters: readonly Pick<Meter, 'key' | 'unit'>[]): string {
  return table(
    ['ID', 'NAME', 'METER', 'UNITS', 'PRICE', 'CREDITS EXPIRE', 'STATUS'],
    packs.map((p) => [
      p.id,
      p.name,
      p.feature,
      units(p.units, unitOf(p, meters)),
      minorAmount(p.amount, p.currency),
      packExpiry(p.expiresInDays),
      packStatus(p),
    ]),
  );
}

export function packText(p: PackJson, meters: readonly Pick<Meter, 'key' | 'unit'>[]): string {
  return fields(
    [
      ['id', p.id],
      ['name', p.name],
      ['meter', p.feature],
      ['units', units(p.units, unitOf(p, meters))],
      ['price', `${minorAmount(p.amount, p.currency)} (${p.currency} minor units)`],
      ['expires', packExpiry(p.expiresInDays)],
      ['status', packStatus(p)],
      ['created', p.createdAt],
    ],
    8,
  );
}

/** What happens past the included amount and the credits, in a word. */
export const LIMIT_WORDS: Record<OverageMode, string> = { refuse: 'refused', bill: 'billed', allow: 'allowed' };

export function featureJson(f: UsageFeatureView & { daily?: Array<{ date: string; used: number }> }) {
  return {
    feature: f.feature,
    name: f.name,
    unit: f.unit,
    included: f.included,
    used: f.used,
    credits: f.credits,
    remaining: f.remaining,
    overage: f.overage,
    limit: f.limit,
    windowStart: f.windowStart.toISOString(),
    resetsAt: f.resetsAt.toISOString(),
    ...(f.daily ? { daily: f.daily } : {}),
  };
}
export type FeatureJson = ReturnType<typeof featureJson>;

/** A subject's features: used of included, credits, remaining, overage, what happens past the limit, the reset. */
export function featuresTable(features: FeatureJson[]): string {
  return table(
    ['FEATURE', 'USED / INCLUDED', 'CREDITS', 'REMAINING', 'OVERAGE', 'PAST THE LIMIT', 'RESETS AT'],
    features.map((f) => [
      f.feature,
      `${count(f.used)} / ${units(f.included, f.unit)}`,
      count(f.credits),
      count(f.remaining),
      count(f.overage),
      LIMIT_WORDS[f.limit],
      f.resetsAt,
    ]),
  );
}

/** The price of billed overage in minor units, echoed formatted: `200 = $2.00 per 1,000`, `5 = $0.05 each`. */
export function overagePriceText(price: NonNullable<UsageLimit['price']>, currency: string): string {
  const amount = minorAmount(price.unitAmount, currency);
  return price.packageSize === 1 ? `${amount} each` : `${amount} per ${count(price.packageSize)}`;
}

/**
 * A plan's limit in words, as the console's plan list says it (the meter's name, its key when the
 * project no longer has it): `5,000 API calls (api_calls) / period, then 200 = $2.00 per 1,000`;
 * `100 Reports (reports) / month, then refused`; `10 Storage (storage_gb) / day, then allowed (not billed)`.
 */
export function usageLimitText(limit: UsageLimit, meters: readonly Pick<Meter, 'key' | 'name'>[], currency: string): string {
  const meter = meters.find((m) => m.key === limit.meter);
  const name = meter && meter.name !== meter.key ? `${meter.name} (${limit.meter})` : limit.meter;
  const then =
    limit.overage === 'refuse'
      ? 'then refused'
      : limit.overage === 'allow'
        ? 'then allowed (not billed)'
        : `then ${limit.price ? overagePriceText(limit.price, currency) : 'billed'}`;
  return `${count(limit.included)} ${name} / ${limit.reset}, ${then}`;
}

/** A plan's usage limits under its fields, as `plan create` and `plan update` print them. */
export function usageLimitsText(limits: readonly UsageLimit[], meters: readonly Pick<Meter, 'key' | 'name'>[], currency: string): string {
  if (limits.length === 0) return '  usage limits: (none)';
  return ['  usage limits:', ...limits.map((l) => `    ${usageLimitText(l, meters, currency)}`)].join('\n');
}
