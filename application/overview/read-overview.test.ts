import { describe, expect, it } from 'vitest';
import { FixedClock, strictFake } from '../testing/fakes';
import type { OverviewReader, OverviewWindow } from './overview.store';
import { makeReadOverview, overviewDays, parseOverviewRange } from './read-overview';

const PROJECT = '7d0c3a8e-0000-4000-8000-000000000001';

describe('the overview range', () => {
  it('takes 7, 30 or 90, 30 when absent, and refuses anything else', () => {
    expect([undefined, '', '7', '30', '90'].map(parseOverviewRange)).toEqual([30, 30, 7, 30, 90]);
    for (const bad of ['5', '007', '7.0', ' 7', '-7', 'abc', '365']) expect(parseOverviewRange(bad)).toBeNull();
  });

  it('ends today (UTC) and lists its days oldest first, across a month', () => {
    expect(overviewDays(new Date('2026-03-02T23:59:00Z'), 7)).toEqual([
      '2026-02-24',
      '2026-02-25',
      '2026-02-26',
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
  });
});

describe('reading the overview', () => {
  const empty = { users: 0, withFactor: 0, byMethod: { totp: 0, sms: 0, passkey: 0 }, daily: [] };

  it('refuses a bad range without reading anything', async () => {
    const read = makeReadOverview({ reader: strictFake<OverviewReader>('reader', {}), clock: new FixedClock() });
    expect(await read(PROJECT, '14')).toEqual({ ok: false, error: 'invalid_overview_range' });
  });

  it("sums the series, takes today's figures, and measures the MRR's change from the day before the range", async () => {
    const windows: OverviewWindow[] = [];
    const seen =
      <T>(value: T) =>
      async (w: OverviewWindow) => {
        windows.push(w);
        return value;
      };
    const reader = strictFake<OverviewReader>('reader', {
      signUps: seen([
        { day: '2030-01-06', count: 2 },
        { day: '2030-01-07', count: 3 },
      ]),
      activeUsers: seen([{ day: '2030-01-07', daily: 4, monthly: 9 }]),
      signIns: seen([
        { day: '2030-01-06', method: 'passkey', succeeded: 1, failed: 0 },
        { day: '2030-01-07', method: 'email', succeeded: 5, failed: 2 },
      ]),
      mfaAdoption: seen({ ...empty, users: 4, withFactor: 1, byMethod: { totp: 1, sms: 0, passkey: 0 } }),
      subscriptionsByPlan: seen({
        plans: [
          { id: 'pro', name: 'Pro' },
          { id: 'old', name: 'Old' },
        ],
        daily: [
          { day: '2030-01-06', planId: 'old', active: 1 },
          { day: '2030-01-07', planId: 'pro', active: 2 },
        ],
      }),
      revenue: seen([
        { day: '2029-12-31', currency: 'usd', mrr: 1000 },
        { day: '2030-01-01', currency: 'usd', mrr: 1000 },
        { day: '2030-01-07', currency: 'usd', mrr: 2750 },
        { day: '2030-01-07', currency: 'eur', mrr: 0 },
      ]),
      churn: seen([{ day: '2030-01-07', count: 1 }]),
      webhooks: seen([{ day: '2030-01-07', succeeded: 3, failed: 1, pending: 2, lagP50Ms: 10, lagP95Ms: 20 }]),
    });
    const read = makeReadOverview({ reader, clock: new FixedClock('2030-01-07T12:00:00Z') });
    const r = await read(PROJECT, '7');
    if (!r.ok) throw new Error(r.error);
    expect(new Set(windows.map((w) => JSON.stringify(w)))).toEqual(
      new Set([JSON.stringify({ projectId: PROJECT, firstDay: '2030-01-01', lastDay: '2030-01-07' })]),
    );
    expect(r.value.signUps.total).toBe(5);
    expect(r.value.activeUsers.today).toEqual({ daily: 4, monthly: 9 });
    expect(r.value.signIns).toMatchObject({ methods: ['email', 'passkey'], succeeded: 6, failed: 2 });
    expect(r.value.mfa.share).toBe(0.25);
    expect(r.value.subscriptions).toMatchObject({
      active: 2,
      plans: [
        { id: 'pro', name: 'Pro', active: 2 },
        { id: 'old', name: 'Old', active: 0 },
      ],
    });
    expect(r.value.revenue).toEqual([
      { currency: 'eur', mrr: 0, startMrr: 0, change: 0, daily: [] },
      {
        currency: 'usd',
        mrr: 2750,
        startMrr: 1000,
        change: 1750,
        daily: [
          { day: '2030-01-01', mrr: 1000 },
          { day: '2030-01-07', mrr: 2750 },
        ],
      },
    ]);
    expect(r.value.churn.total).toBe(1);
    expect(r.value.webhooks).toMatchObject({ succeeded: 3, failed: 1, pending: 2, successRate: 0.75 });
  });
});
