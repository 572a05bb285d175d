import { type Result, err, ok } from '../result';

/**
 * A meter measures one kind of usage of a project's product (API calls, AI tokens, reports
 * generated): a key the project's server reports events under, a name and a unit label for people,
 * and how a period's events add up. Values are whole numbers (Stripe's meter events take integers
 * too): measure storage in megabytes, not fractions of gigabytes.
 *
 * - `sum`: the period's usage is the sum of the events' values (API calls, tokens).
 * - `count`: each event counts 1, whatever its value (reports generated).
 * - `max`: the period's usage is the highest value reported (peak storage, seats of a sub-product);
 *   it is compared with the limit but draws no credits and bills no overage by units consumed.
 */
export interface Meter {
  id: string;
  projectId: string;
  key: string;
  name: string;
  unit: string;
  aggregation: MeterAggregation;
  createdAt: Date;
}

export const METER_AGGREGATIONS = ['sum', 'count', 'max'] as const;
export type MeterAggregation = (typeof METER_AGGREGATIONS)[number];

export const METER_KEY = /^[a-z][a-z0-9_]{0,63}$/;
export const METER_NAME_MAX_LENGTH = 100;
export const METER_UNIT_MAX_LENGTH = 30;
export const MAX_METERS_PER_PROJECT = 100;
/** The largest value one event or one check may carry; a total is kept exactly up to 2^53. */
export const MAX_USAGE_VALUE = 1_000_000_000_000;

export type MeterError = 'invalid_meter_key' | 'invalid_meter_name' | 'invalid_meter_unit' | 'invalid_meter_aggregation';

export interface MeterInput {
  key: string;
  name?: string | null;
  unit?: string | null;
  aggregation?: string | null;
}

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

const isAggregation = (value: unknown): value is MeterAggregation => typeof value === 'string' && (METER_AGGREGATIONS as readonly string[]).includes(value);

function text(value: string | null | undefined, max: number, fallback: string): string | null {
  const t = (value ?? fallback).trim();
  return t.length > max || CONTROL_CHARS.test(t) ? null : t;
}

/** A new meter's fields: key `[a-z][a-z0-9_]*` (at most 64), name (defaults to the key), unit (may be empty), aggregation (sum by default). */
export function validateMeterInput(input: MeterInput): Result<Pick<Meter, 'key' | 'name' | 'unit' | 'aggregation'>, MeterError> {
  const key = typeof input.key === 'string' ? input.key.trim() : '';
  if (!METER_KEY.test(key)) return err('invalid_meter_key');
  const name = text(input.name, METER_NAME_MAX_LENGTH, key);
  if (name === null || name.length === 0) return err('invalid_meter_name');
  const unit = text(input.unit, METER_UNIT_MAX_LENGTH, '');
  if (unit === null) return err('invalid_meter_unit');
  const aggregation = input.aggregation ?? 'sum';
  if (!isAggregation(aggregation)) return err('invalid_meter_aggregation');
  return ok({ key, name, unit, aggregation });
}

/** A meter's name and unit changed; its key and aggregation never change (events and limits name it, totals depend on it). */
export function applyMeterUpdate(
  meter: Meter,
  patch: { name?: string | null; unit?: string | null },
): Result<Meter, 'invalid_meter_name' | 'invalid_meter_unit'> {
  const name = patch.name === undefined || patch.name === null ? meter.name : text(patch.name, METER_NAME_MAX_LENGTH, '');
  if (name === null || name.length === 0) return err('invalid_meter_name');
  const unit = patch.unit === undefined || patch.unit === null ? meter.unit : text(patch.unit, METER_UNIT_MAX_LENGTH, '');
  if (unit === null) return err('invalid_meter_unit');
  return ok({ ...meter, name, unit });
}

/** A value an event or a check may carry: a whole number from 0 (1 for a check) to {@link MAX_USAGE_VALUE}. */
export const isUsageValue = (value: unknown, min = 0): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= MAX_USAGE_VALUE;
