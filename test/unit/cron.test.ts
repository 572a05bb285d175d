import cronParser from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../infrastructure/jobs/cron';

const MINUTE = 60_000;

/** The minutes in [from, to) at which `expression` fires, as cron-parser (pg-boss's cron library) computes them. */
function firesByCronParser(expression: string, from: Date, to: Date): number[] {
  const interval = cronParser.parseExpression(expression, { tz: 'UTC', currentDate: new Date(from.getTime() - 1), endDate: to });
  const fires: number[] = [];
  while (interval.hasNext()) {
    const next = interval.next().getTime();
    if (next >= to.getTime()) break;
    fires.push(next);
  }
  return fires;
}

function firesByParseCron(expression: string, from: Date, to: Date): number[] {
  const schedule = parseCron(expression);
  const fires: number[] = [];
  for (let t = from.getTime(); t < to.getTime(); t += MINUTE) if (schedule.matches(new Date(t))) fires.push(t);
  return fires;
}

describe('parseCron', () => {
  it("fires at the minutes cron-parser computes, for Tollgate's schedules and the other shapes a field may take", () => {
    const from = new Date('2026-02-26T22:00:00Z'); // across a month's end, in a leap-free February
    const expressions: Array<[string, number]> = [
      // [expression, hours of minutes compared]
      ['* * * * *', 3],
      ['*/5 * * * *', 6],
      ['*/10 * * * *', 6],
      ['7 * * * *', 30],
      ['23 * * * *', 30],
      ['41 * * * *', 30],
      ['23 3 * * *', 24 * 5],
      ['0,15,30-33 * * * *', 6],
      ['10-50/20 */6 * * *', 48],
      ['5/15 * * * *', 6],
      ['0 12 1 * *', 24 * 40],
      ['30 8 * * 1-5', 24 * 9],
      ['30 8 * * 0', 24 * 15],
      ['30 8 * * 7', 24 * 15],
      ['0 0 13 * 5', 24 * 60], // day of month or day of week
      ['0 0 */10 * *', 24 * 40],
      ['0 9 * 3 *', 24 * 40],
    ];
    for (const [expression, hours] of expressions) {
      const to = new Date(from.getTime() + hours * 60 * MINUTE);
      const expected = firesByCronParser(expression, from, to);
      expect(expected.length, expression).toBeGreaterThan(0);
      expect(firesByParseCron(expression, from, to), expression).toEqual(expected);
    }
  });

  it('matches anywhere inside the minute, in UTC', () => {
    const schedule = parseCron('23 3 * * *');
    expect(schedule.matches(new Date('2026-11-29T03:23:00.000Z'))).toBe(true);
    expect(schedule.matches(new Date('2026-11-29T03:23:59.999Z'))).toBe(true);
    expect(schedule.matches(new Date('2026-11-29T03:24:00.000Z'))).toBe(false);
    expect(schedule.matches(new Date('2026-11-29T04:23:00.000Z'))).toBe(false);
    expect(schedule.expression).toBe('23 3 * * *');
  });

  it('refuses what is not a five-field expression of numbers, ranges, steps and lists', () => {
    expect(() => parseCron('* * * *')).toThrow('must have 5 fields, not 4');
    expect(() => parseCron('* * * * * *')).toThrow('must have 5 fields, not 6');
    expect(() => parseCron('60 * * * *')).toThrow('"60" is outside 0-59');
    expect(() => parseCron('* 24 * * *')).toThrow('"24" is outside 0-23');
    expect(() => parseCron('* * 0 * *')).toThrow('"0" is outside 1-31');
    expect(() => parseCron('* * * 13 *')).toThrow('"13" is outside 1-12');
    expect(() => parseCron('* * * * 8')).toThrow('"8" is outside 0-7');
    expect(() => parseCron('30-10 * * * *')).toThrow('"30-10" is outside 0-59');
    expect(() => parseCron('*/0 * * * *')).toThrow('"*/0" has a step below 1');
    expect(() => parseCron('* * * JAN *')).toThrow('"JAN" is not *, a number, a range or a step');
    expect(() => parseCron('1,,2 * * * *')).toThrow('is not *, a number, a range or a step');
    expect(() => parseCron('@hourly')).toThrow('must have 5 fields, not 1');
  });
});
