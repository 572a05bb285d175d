import { describe, expect, it } from 'vitest';
import type { BillingSubject } from '../../domain/billing/subject';
import type { UsageLimit } from '../../domain/usage/limits';
import { CallLog, FixedClock, aBillingSubscription, aStoredPlan, strictBillingDeps, strictFake } from '../testing/fakes';
import type { BillingConnection, BillingSubscription, UnreportedOverage } from './billing.store';
import { type PaymentProcessor, type UsageReport, processorOk } from './payment-processor';
import { makeReportUsage, usageTime } from './report-usage';

const iso = (s: string) => new Date(s);
const PERIOD = { currentPeriodStart: iso('2030-05-01T00:00:00Z'), currentPeriodEnd: iso('2030-06-01T00:00:00Z'), endedAt: null };

describe('usageTime: when the usage of a window happened, as late as it can have', () => {
  it('now, in the current period', () => {
    expect(usageTime(iso('2030-05-01T00:00:00Z'), 'period', PERIOD, iso('2030-05-20T10:00:00Z'))).toEqual(iso('2030-05-20T10:00:00Z'));
  });

  it("the period's last second once it ended (the renewal not yet recorded, or recorded)", () => {
    expect(usageTime(iso('2030-05-01T00:00:00Z'), 'period', PERIOD, iso('2030-06-01T00:00:40Z'))).toEqual(iso('2030-05-31T23:59:59Z'));
    // A window from before the current period (the record moved on) ended where the period begins.
    expect(usageTime(iso('2030-04-01T00:00:00Z'), 'period', PERIOD, iso('2030-05-01T00:00:40Z'))).toEqual(iso('2030-04-30T23:59:59Z'));
  });

  it('a day or month window ends with its UTC day or month', () => {
    expect(usageTime(iso('2030-05-10T00:00:00Z'), 'day', PERIOD, iso('2030-05-11T00:00:30Z'))).toEqual(iso('2030-05-10T23:59:59Z'));
    expect(usageTime(iso('2030-05-10T00:00:00Z'), 'day', PERIOD, iso('2030-05-10T08:00:00Z'))).toEqual(iso('2030-05-10T08:00:00Z'));
    expect(usageTime(iso('2030-12-01T00:00:00Z'), 'month', PERIOD, iso('2031-01-01T00:01:00Z'))).toEqual(iso('2030-12-31T23:59:59Z'));
  });

  it('before the end of a subscription that ended, and never before the window', () => {
    const ended = { ...PERIOD, endedAt: iso('2030-05-15T12:00:00Z') };
    expect(usageTime(iso('2030-05-01T00:00:00Z'), 'period', ended, iso('2030-05-15T12:00:30Z'))).toEqual(iso('2030-05-15T11:59:59Z'));
    expect(usageTime(iso('2030-05-15T11:59:59.500Z'), 'day', ended, iso('2030-05-16T00:00:00Z'))).toEqual(iso('2030-05-15T11:59:59.500Z'));
  });
});

describe('reportUsage', () => {
  const user = (id: string): BillingSubject => ({ kind: 'user', id });
  const billed: UsageLimit = { meter: 'api_calls', included: 1000, reset: 'period', overage: 'bill', price: { unitAmount: 200, packageSize: 1000 } };
  const row = (subject: BillingSubject, windowStart = '2030-05-01T00:00:00Z'): UnreportedOverage => ({
    projectId: 'project-1',
    subject,
    meterId: 'meter-1',
    meterKey: 'api_calls',
    meterName: 'API calls',
    windowStart: iso(windowStart),
    overage: 1500,
    reported: 0,
  });
  const connection = { projectId: 'project-1', processor: 'sandbox' } as BillingConnection;

  function setup(options: { rows: UnreportedOverage[]; live?: BillingSubscription | null; latest?: BillingSubscription[]; now: string }) {
    const log = new CallLog();
    const reports: UsageReport[] = [];
    const marked: Array<[string, number]> = [];
    const processor = strictFake<PaymentProcessor>(
      'processor',
      {
        kind: 'sandbox',
        ensureMeteredPrice: async () => processorOk('price_metered'),
        reportUsage: async (input) => {
          reports.push(input);
          return processorOk(undefined);
        },
      },
      log,
    );
    const deps = strictBillingDeps(log, new FixedClock(options.now), {
      meteredUsage: {
        unreported: async (_projectId, limit, subject) =>
          options.rows.filter((r) => subject === undefined || (r.subject.kind === subject.kind && r.subject.id === subject.id)).slice(0, limit),
        markReported: async (r, to) => {
          marked.push([r.subject.id, to]);
          options.rows = options.rows.filter((x) => x !== r);
          return true;
        },
      },
      subscriptions: { findLive: async () => options.live ?? null, list: async () => options.latest ?? [] },
      catalog: { getPlan: async () => aStoredPlan({ usageLimits: [billed] }) },
      connections: { get: async () => connection },
      processors: { forConnection: () => processor },
    });
    return { reportUsage: makeReportUsage(deps), reports, marked, log };
  }

  it('reports the overage to the live subscription, dated now in its current period', async () => {
    const { reportUsage, reports, marked } = setup({ rows: [row(user('user-1'))], live: aBillingSubscription(), now: '2030-05-20T10:00:00Z' });
    expect(await reportUsage()).toEqual({ reported: 1 });
    expect(reports).toEqual([
      expect.objectContaining({ subscriptionId: 'sub_1', meteredPriceId: 'price_metered', quantity: 1500, timestamp: iso('2030-05-20T10:00:00Z') }),
    ]);
    expect(marked).toEqual([['user-1', 1500]]);
  });

  it('reports the last period of a subscription that ended after the window began (canceled at its period end), dated before its end', async () => {
    const ended = aBillingSubscription({ status: 'canceled', endedAt: iso('2030-06-01T00:00:00Z'), canceledAt: iso('2030-05-10T00:00:00Z') });
    const { reportUsage, reports } = setup({ rows: [row(user('user-1'))], live: null, latest: [ended], now: '2030-06-01T00:00:30Z' });
    expect(await reportUsage()).toEqual({ reported: 1 });
    expect(reports).toEqual([expect.objectContaining({ subscriptionId: 'sub_1', timestamp: iso('2030-05-31T23:59:59Z') })]);
  });

  it('marks unbilled the overage of a window that began after the subscription ended', async () => {
    const ended = aBillingSubscription({ status: 'canceled', endedAt: iso('2030-05-01T00:00:00Z') });
    const { reportUsage, reports, marked } = setup({
      rows: [row(user('user-1'), '2030-05-02T00:00:00Z')],
      live: null,
      latest: [ended],
      now: '2030-05-03T00:00:00Z',
    });
    expect(await reportUsage()).toEqual({ reported: 0 });
    expect(reports).toEqual([]);
    expect(marked).toEqual([['user-1', 1500]]);
  });

  it("forSubject reports that subject's windows only (before its subscription is canceled now)", async () => {
    const rows = [row(user('user-2')), row(user('user-1')), row({ kind: 'organization', id: 'user-1' })];
    const { reportUsage, reports, marked } = setup({ rows, live: aBillingSubscription(), now: '2030-05-20T10:00:00Z' });
    expect(await reportUsage.forSubject('project-1', user('user-1'))).toEqual({ reported: 1 });
    expect(reports).toHaveLength(1);
    expect(marked).toEqual([['user-1', 1500]]);
  });
});
