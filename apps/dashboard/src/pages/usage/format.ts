import type { z } from 'zod';
import type {
  AdminCreditGrantSchema,
  AdminCreditPackSchema,
  AdminMeterSchema,
  AdminUsageFeatureSchema,
  AdminUsageLimitSchema,
} from '../../../../../contract/admin';
import { locale, money } from '../billing/format';

export type Meter = z.infer<typeof AdminMeterSchema>;
export type UsageFeature = z.infer<typeof AdminUsageFeatureSchema>;
export type CreditGrant = z.infer<typeof AdminCreditGrantSchema>;
export type UsageLimit = z.infer<typeof AdminUsageLimitSchema>;
export type CreditPack = z.infer<typeof AdminCreditPackSchema>;
export type SubjectType = 'user' | 'organization';

/** A whole number of units as the reader's locale writes it: `5,000`. */
export const count = (n: number) => new Intl.NumberFormat(locale()).format(n);

/** A number of units with the meter's unit label, when it has one: `5,000 calls`, `12`. */
export const units = (n: number, unit: string) => (unit ? `${count(n)} ${unit}` : count(n));

/** When a credit pack's credits expire, counted from the purchase: `30 days after purchase`, or `never`. */
export const packExpiry = (days: number | null) => (days === null ? 'never' : `${count(days)} ${days === 1 ? 'day' : 'days'} after purchase`);

/** How a meter adds up its events, in words (the Meters page and its form). */
export const AGGREGATION_LABELS: Record<Meter['aggregation'], string> = {
  sum: 'Sum of the values',
  count: 'Count of the events',
  max: 'Highest value (a level)',
};

/** A limit's window, as the plan list writes it after the included amount: `5,000 API calls / period`. */
export const RESET_WORDS: Record<UsageLimit['reset'], string> = { period: 'period', day: 'day', month: 'month' };

/** The form's choices for a limit's window. */
export const RESET_LABELS: Record<UsageLimit['reset'], string> = {
  period: 'Each billing period',
  day: 'Each day (UTC)',
  month: 'Each calendar month (UTC)',
};

/** The form's choices for what happens past the included amount and the credits. */
export const OVERAGE_LABELS: Record<UsageLimit['overage'], string> = {
  refuse: 'Refuse (hard limit)',
  bill: 'Bill the overage',
  allow: 'Allow, not billed (soft limit)',
};

/** The price of billed overage: `$2.00 per 1,000`, or `$0.01 each` per unit. */
export function overagePriceText(price: { unit_amount: number; package_size: number }, currency: string): string {
  const amount = money(price.unit_amount, currency);
  return price.package_size === 1 ? `${amount} each` : `${amount} per ${count(price.package_size)}`;
}

/**
 * A plan's limit in words, as the plan list shows it: `5,000 API calls / period, then $2.00 per 1,000`;
 * `100 reports / month, then refused`; `10 GB / day, then allowed (not billed)`. The meter's name is
 * its key when the project no longer has it.
 */
export function usageLimitText(limit: UsageLimit, meters: readonly Meter[] | null, currency: string): string {
  const name = meters?.find((m) => m.key === limit.meter)?.name ?? limit.meter;
  const then =
    limit.overage === 'refuse'
      ? 'then refused'
      : limit.overage === 'allow'
        ? 'then allowed (not billed)'
        : limit.price
          ? `then ${overagePriceText(limit.price, currency)}`
          : 'then billed';
  return `${count(limit.included)} ${name} / ${RESET_WORDS[limit.reset]}, ${then}`;
}

/** Whose page a subject's row links to: the user's, or the organization's. */
export const subjectPath = (projectId: string, type: SubjectType, id: string) => `/projects/${projectId}/${type === 'user' ? 'users' : 'organizations'}/${id}`;

/** A date and time in UTC without seconds, as windows reset in UTC: `2026-12-01 00:00 UTC`. */
export const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
