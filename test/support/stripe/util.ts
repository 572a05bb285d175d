import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { invalidRequest } from './errors';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomString(length: number, alphabet = ALPHABET): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[bytes[i]! % alphabet.length];
  return out;
}

/** Ids shaped like Stripe's: a type prefix, an underscore, then random alphanumerics. */
export const newId = (prefix: string, length = 24) => `${prefix}_${randomString(length)}`;

export const fingerprint = (value: string) =>
  createHash('sha256')
    .update(value)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 16);

export const DAY = 86_400;
export type Interval = 'day' | 'week' | 'month' | 'year';

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/**
 * Adds `count` intervals to a unix timestamp, the way Stripe advances billing periods from the
 * billing cycle anchor: a month after January 31 is the last day of February (the anchor's day
 * when the month has it, else the month's last day), at the anchor's time of day
 * (https://docs.stripe.com/billing/subscriptions/billing-cycle).
 */
export function addInterval(ts: number, interval: Interval, count: number): number {
  if (interval === 'day') return ts + count * DAY;
  if (interval === 'week') return ts + count * 7 * DAY;
  const d = new Date(ts * 1000);
  const months = interval === 'month' ? count : count * 12;
  const total = d.getUTCMonth() + months;
  const year = d.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const day = Math.min(d.getUTCDate(), daysInMonth(year, month));
  return Math.floor(Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000);
}

/** The first period boundary strictly after `after`, counted from `anchor`. */
export function nextBoundary(anchor: number, interval: Interval, count: number, after: number): number {
  if (anchor > after) return anchor;
  for (let n = 1; n < 100_000; n++) {
    const t = addInterval(anchor, interval, n * count);
    if (t > after) return t;
  }
  throw new Error('nextBoundary: no boundary found');
}

export const formatDate = (ts: number) => {
  const d = new Date(ts * 1000);
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${String(d.getUTCDate()).padStart(2, '0')} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
};

export const clone = <T>(value: T): T => structuredClone(value);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * `data.previous_attributes` of an `*.updated` event: the changed fields with their old values,
 * nested objects reduced to their changed keys (https://docs.stripe.com/api/events/object).
 */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(before)) {
    const b = before[key];
    const a = after[key];
    if (deepEqual(a, b)) continue;
    if (isPlainObject(b) && isPlainObject(a) && b.object !== 'list') out[key] = previousAttributes(b, a);
    else out[key] = b;
  }
  return out;
}

export interface ListObject<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export interface PageParams {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
}

/**
 * Cursor pagination as Stripe lists do it: `items` newest first; `starting_after` returns the page
 * after that object, `ending_before` the page before it; `limit` 1..100, default 10
 * (https://docs.stripe.com/api/pagination).
 */
export function paginate<T extends { id?: string }>(items: T[], params: PageParams, url: string): ListObject<T> {
  const limit = params.limit ?? 10;
  if (params.starting_after && params.ending_before) {
    throw invalidRequest('You may only specify one of these parameters: ending_before, starting_after.', { param: 'ending_before' });
  }
  if (params.starting_after) {
    const i = items.findIndex((x) => x.id === params.starting_after);
    if (i < 0) throw invalidRequest(`No such object: '${params.starting_after}'`, { param: 'starting_after', code: 'resource_missing', status: 404 });
    const rest = items.slice(i + 1);
    return { object: 'list', data: rest.slice(0, limit), has_more: rest.length > limit, url };
  }
  if (params.ending_before) {
    const i = items.findIndex((x) => x.id === params.ending_before);
    if (i < 0) throw invalidRequest(`No such object: '${params.ending_before}'`, { param: 'ending_before', code: 'resource_missing', status: 404 });
    const before = items.slice(0, i);
    return { object: 'list', data: before.slice(Math.max(before.length - limit, 0)), has_more: before.length > limit, url };
  }
  return { object: 'list', data: items.slice(0, limit), has_more: items.length > limit, url };
}

let typesDir: string | null | undefined;
/** node_modules/stripe/types of the installed stripe package (its exports hide package.json). */
export function stripeTypesDir(): string | null {
  if (typesDir !== undefined) return typesDir;
  typesDir = null;
  try {
    let dir = path.dirname(createRequire(import.meta.url).resolve('stripe'));
    for (let i = 0; i < 5; i++) {
      const pkg = path.join(dir, 'package.json');
      if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'stripe') {
        typesDir = path.join(dir, 'types');
        break;
      }
      dir = path.dirname(dir);
    }
  } catch {
    typesDir = null;
  }
  return typesDir;
}
