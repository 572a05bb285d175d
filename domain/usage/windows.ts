import type { UsageReset } from './limits';

/** A window of usage: [start, end). Usage counts in the window that holds its timestamp. */
export interface UsageWindow {
  start: Date;
  end: Date;
}

const utcDay = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
const utcMonth = (at: Date, add = 0): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + add, 1));

/**
 * The window that holds `at` for a limit's reset: `day` the UTC day, `month` the UTC calendar
 * month, `period` the subscription's current billing period (a subject without one: the calendar
 * month). Usage happening now (`current`) and any event from the current period count in the
 * period as the processor states it, even before the clock reaches its start (a sandbox clock run
 * ahead) or after its end (a renewal processed late: usage does not reset before the renewal does).
 * An event reported late from before the period began counts in a window of its own, from its UTC
 * day to the period's start, so the new period is not charged for it.
 */
export function usageWindow(reset: UsageReset, at: Date, period: UsageWindow | null, current = false): UsageWindow {
  if (reset === 'day') {
    const start = utcDay(at);
    return { start, end: new Date(start.getTime() + 86_400_000) };
  }
  if (reset === 'month' || period === null) return { start: utcMonth(at), end: utcMonth(at, 1) };
  if (current || at.getTime() >= period.start.getTime()) return period;
  return { start: utcDay(at), end: period.start };
}
