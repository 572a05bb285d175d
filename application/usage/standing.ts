import { isEntitled } from '../../domain/billing/entitlements';
import type { BillingSubject } from '../../domain/billing/subject';
import { type MeterBalance, remainingOf } from '../../domain/usage/balance';
import type { OverageMode, UsageLimit } from '../../domain/usage/limits';
import type { Meter } from '../../domain/usage/meter';
import { type UsageWindow, usageWindow } from '../../domain/usage/windows';
import type { UsageFeatureView } from '../../domain/usage/feature';
import type { CounterState, SubjectPlanRead } from './usage.store';

export type { UsageFeatureView };

/** What a subject may use of a meter at a time: the plan's limit (if its subscription entitles), the window holding the time. */
export interface MeterTerms {
  limit: UsageLimit | null;
  included: number;
  mode: OverageMode;
  window: UsageWindow;
}

/**
 * The terms of `meter` for a subject at `at`: an entitled subscription's plan limit on it (its
 * included amount, what happens past it, its reset); without one, nothing included and a hard
 * limit (only credits can be used), counted per calendar month.
 */
export function termsOf(read: SubjectPlanRead | null, meter: Pick<Meter, 'key'>, at: Date, now: Date, current = at === now): MeterTerms {
  const entitled = read !== null && isEntitled(read.subscription, now);
  const limit = entitled ? (read.plan.usageLimits.find((l) => l.meter === meter.key) ?? null) : null;
  const period = entitled ? { start: read.subscription.currentPeriodStart, end: read.subscription.currentPeriodEnd } : null;
  return { limit, included: limit?.included ?? 0, mode: limit?.overage ?? 'refuse', window: usageWindow(limit?.reset ?? 'period', at, period, current) };
}

export const EMPTY_COUNTER: CounterState = { used: 0, overage: 0, notified: 0, version: 0 };

/** The balance the rules read. */
export const meterBalance = (meter: Meter, terms: MeterTerms, counter: CounterState, grants: MeterBalance['grants']): MeterBalance => ({
  aggregation: meter.aggregation,
  included: terms.included,
  used: counter.used,
  overage: counter.overage,
  mode: terms.mode,
  grants,
});

export function featureView(meter: Meter, terms: MeterTerms, counter: Pick<CounterState, 'used' | 'overage'>, credits: number): UsageFeatureView {
  const balance: MeterBalance = { ...meterBalance(meter, terms, { ...EMPTY_COUNTER, ...counter }, []), grants: [] };
  return {
    feature: meter.key,
    name: meter.name,
    unit: meter.unit,
    included: terms.included,
    used: counter.used,
    credits: meter.aggregation === 'max' ? 0 : credits,
    remaining: remainingOf(balance, new Date(0)) + (meter.aggregation === 'max' ? 0 : credits),
    overage: counter.overage,
    limit: terms.mode,
    windowStart: terms.window.start,
    resetsAt: terms.window.end,
  };
}

/** The subject the API names: `{type, id}`. */
export interface SubjectInput {
  type: 'user' | 'organization';
  id: string;
}

export const subjectOf = (input: SubjectInput): BillingSubject => ({ kind: input.type, id: input.id });
