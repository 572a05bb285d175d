import { describe, expect, it } from 'vitest';
import {
  addDays,
  cycleBoundary,
  daysInMonth,
  isBillingInterval,
  isWithin,
  nextCycleBoundary,
  periodContaining,
  periodFrom,
  periodSeconds,
  toWholeSeconds,
} from './periods';

const d = (iso: string): Date => new Date(iso);
const iso = (date: Date): string => date.toISOString();

describe('daysInMonth', () => {
  it('knows the Gregorian leap years', () => {
    expect(daysInMonth(2024, 1)).toBe(29);
    expect(daysInMonth(2025, 1)).toBe(28);
    expect(daysInMonth(2000, 1)).toBe(29);
    expect(daysInMonth(2100, 1)).toBe(28);
    expect(daysInMonth(2025, 3)).toBe(30);
    expect(daysInMonth(2025, 11)).toBe(31);
  });
});

describe('cycleBoundary: the month-end rule', () => {
  it("Stripe's example: anchored on Jan 31, bills Feb 28 (Feb 29 in a leap year), Mar 31, Apr 30", () => {
    const anchor = d('2025-01-31T00:00:00Z');
    expect([1, 2, 3, 4].map((n) => iso(cycleBoundary(anchor, 'month', n)))).toEqual([
      '2025-02-28T00:00:00.000Z',
      '2025-03-31T00:00:00.000Z',
      '2025-04-30T00:00:00.000Z',
      '2025-05-31T00:00:00.000Z',
    ]);
    expect(iso(cycleBoundary(d('2024-01-31T00:00:00Z'), 'month', 1))).toBe('2024-02-29T00:00:00.000Z');
  });

  it('an anchor on the 30th returns to the 30th after February', () => {
    const anchor = d('2025-01-30T00:00:00Z');
    expect(iso(cycleBoundary(anchor, 'month', 1))).toBe('2025-02-28T00:00:00.000Z');
    expect(iso(cycleBoundary(anchor, 'month', 2))).toBe('2025-03-30T00:00:00.000Z');
  });

  it('keeps the time of day of the anchor, and n = 0 is the anchor', () => {
    const anchor = d('2025-01-31T15:45:10Z');
    expect(iso(cycleBoundary(anchor, 'month', 0))).toBe('2025-01-31T15:45:10.000Z');
    expect(iso(cycleBoundary(anchor, 'month', 1))).toBe('2025-02-28T15:45:10.000Z');
  });

  it('crosses year ends both ways', () => {
    expect(iso(cycleBoundary(d('2024-12-31T08:00:00Z'), 'month', 1))).toBe('2025-01-31T08:00:00.000Z');
    expect(iso(cycleBoundary(d('2024-12-31T08:00:00Z'), 'month', 2))).toBe('2025-02-28T08:00:00.000Z');
    expect(iso(cycleBoundary(d('2025-03-31T00:00:00Z'), 'month', -1))).toBe('2025-02-28T00:00:00.000Z');
    expect(iso(cycleBoundary(d('2025-01-15T00:00:00Z'), 'month', -1))).toBe('2024-12-15T00:00:00.000Z');
  });

  it('yearly from Feb 29: Feb 28 in common years, Feb 29 again in the next leap year', () => {
    const anchor = d('2024-02-29T12:00:00Z');
    expect([1, 2, 3, 4].map((n) => iso(cycleBoundary(anchor, 'year', n)))).toEqual([
      '2025-02-28T12:00:00.000Z',
      '2026-02-28T12:00:00.000Z',
      '2027-02-28T12:00:00.000Z',
      '2028-02-29T12:00:00.000Z',
    ]);
  });

  it('yearly from an ordinary date keeps month and day', () => {
    expect(iso(cycleBoundary(d('2025-07-02T00:00:00Z'), 'year', 1))).toBe('2026-07-02T00:00:00.000Z');
  });

  it('drops milliseconds: boundaries are whole seconds', () => {
    expect(iso(cycleBoundary(d('2025-01-31T10:00:00.750Z'), 'month', 1))).toBe('2025-02-28T10:00:00.000Z');
  });

  it('refuses a fractional count', () => {
    expect(() => cycleBoundary(d('2025-01-31T00:00:00Z'), 'month', 1.5)).toThrow(RangeError);
  });
});

describe('nextCycleBoundary', () => {
  const anchor = d('2025-01-31T00:00:00Z');

  it('from a boundary computes from the anchor, so a short month does not drag later dates back', () => {
    // Chaining "+1 month" from Feb 28 would give Mar 28; anchoring gives Mar 31.
    expect(iso(nextCycleBoundary(anchor, 'month', d('2025-02-28T00:00:00Z')))).toBe('2025-03-31T00:00:00.000Z');
    expect(iso(nextCycleBoundary(anchor, 'month', d('2025-04-30T00:00:00Z')))).toBe('2025-05-31T00:00:00.000Z');
  });

  it('is strictly after: one second before a boundary gives that boundary', () => {
    expect(iso(nextCycleBoundary(anchor, 'month', d('2025-02-27T23:59:59Z')))).toBe('2025-02-28T00:00:00.000Z');
    expect(iso(nextCycleBoundary(anchor, 'month', d('2025-02-28T00:00:00Z')))).toBe('2025-03-31T00:00:00.000Z');
  });

  it('before the anchor (a running trial) the anchor itself is next', () => {
    const trialEnd = d('2025-03-15T09:00:00Z');
    expect(iso(nextCycleBoundary(trialEnd, 'month', d('2025-03-01T09:00:00Z')))).toBe('2025-03-15T09:00:00.000Z');
    expect(iso(nextCycleBoundary(trialEnd, 'year', d('2024-01-01T00:00:00Z')))).toBe('2024-03-15T09:00:00.000Z');
  });

  it('far from the anchor', () => {
    expect(iso(nextCycleBoundary(d('2024-01-31T00:00:00Z'), 'month', d('2030-06-15T00:00:00Z')))).toBe('2030-06-30T00:00:00.000Z');
    expect(iso(nextCycleBoundary(d('2024-02-29T00:00:00Z'), 'year', d('2031-06-01T00:00:00Z')))).toBe('2032-02-29T00:00:00.000Z');
  });

  it('a leap-year monthly schedule anchored on Jan 31', () => {
    let start = d('2024-01-31T06:00:00Z');
    const ends: string[] = [];
    for (let i = 0; i < 13; i += 1) {
      start = nextCycleBoundary(d('2024-01-31T06:00:00Z'), 'month', start);
      ends.push(iso(start).slice(0, 10));
    }
    expect(ends).toEqual([
      '2024-02-29',
      '2024-03-31',
      '2024-04-30',
      '2024-05-31',
      '2024-06-30',
      '2024-07-31',
      '2024-08-31',
      '2024-09-30',
      '2024-10-31',
      '2024-11-30',
      '2024-12-31',
      '2025-01-31',
      '2025-02-28',
    ]);
  });
});

describe('periods', () => {
  it('periodFrom starts at the given boundary and ends at the next', () => {
    const period = periodFrom(d('2025-01-31T00:00:00Z'), 'month', d('2025-02-28T00:00:00Z'));
    expect(iso(period.start)).toBe('2025-02-28T00:00:00.000Z');
    expect(iso(period.end)).toBe('2025-03-31T00:00:00.000Z');
  });

  it('periodContaining finds the period around a time', () => {
    const period = periodContaining(d('2025-01-31T00:00:00Z'), 'month', d('2025-06-15T12:00:00Z'));
    expect(iso(period.start)).toBe('2025-05-31T00:00:00.000Z');
    expect(iso(period.end)).toBe('2025-06-30T00:00:00.000Z');
    const atBoundary = periodContaining(d('2025-01-31T00:00:00Z'), 'month', d('2025-06-30T00:00:00Z'));
    expect(iso(atBoundary.start)).toBe('2025-06-30T00:00:00.000Z');
    expect(iso(atBoundary.end)).toBe('2025-07-31T00:00:00.000Z');
  });

  it('isWithin is half-open [start, end)', () => {
    const period = { start: d('2025-04-01T00:00:00Z'), end: d('2025-05-01T00:00:00Z') };
    expect(isWithin(period, d('2025-04-01T00:00:00Z'))).toBe(true);
    expect(isWithin(period, d('2025-04-30T23:59:59Z'))).toBe(true);
    expect(isWithin(period, d('2025-05-01T00:00:00Z'))).toBe(false);
    expect(isWithin(period, d('2025-03-31T23:59:59Z'))).toBe(false);
  });

  it('periodSeconds: April has 30 days, a leap February 29, a common year 365', () => {
    expect(periodSeconds({ start: d('2025-04-01T00:00:00Z'), end: d('2025-05-01T00:00:00Z') })).toBe(2_592_000);
    expect(periodSeconds({ start: d('2024-02-01T00:00:00Z'), end: d('2024-03-01T00:00:00Z') })).toBe(2_505_600);
    expect(periodSeconds({ start: d('2025-01-01T00:00:00Z'), end: d('2026-01-01T00:00:00Z') })).toBe(31_536_000);
  });

  it('helpers', () => {
    expect(iso(toWholeSeconds(d('2025-01-01T00:00:00.999Z')))).toBe('2025-01-01T00:00:00.000Z');
    expect(iso(addDays(d('2025-02-27T10:00:00Z'), 2))).toBe('2025-03-01T10:00:00.000Z');
    expect(isBillingInterval('month')).toBe(true);
    expect(isBillingInterval('year')).toBe(true);
    expect(isBillingInterval('week')).toBe(false);
  });
});
