import { err, ok, type Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import type { ActiveUsersDay, DayCount, MfaAdoption, OverviewReader, OverviewWindow, PlanDay, PlanName, SignInsDay, WebhookDay } from './overview.store';

/** The ranges the overview offers, in days ending today (UTC). */
export const OVERVIEW_RANGES = [7, 30, 90] as const;
export type OverviewRange = (typeof OVERVIEW_RANGES)[number];
export const DEFAULT_OVERVIEW_RANGE: OverviewRange = 30;

const DAY_MS = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The UTC days of a range ending on the day of `now`, oldest first. */
export function overviewDays(now: Date, range: OverviewRange): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: range }, (_, i) => isoDay(today - (range - 1 - i) * DAY_MS));
}

/** A range as the query gives it: absent means the default; anything but 7, 30 or 90 is refused. */
export function parseOverviewRange(raw: string | undefined): OverviewRange | null {
  if (raw === undefined || raw === '') return DEFAULT_OVERVIEW_RANGE;
  return OVERVIEW_RANGES.find((range) => String(range) === raw) ?? null;
}

export interface CurrencyRevenue {
  currency: string;
  /** MRR at the end of today, in minor units. */
  mrr: number;
  /** MRR at the end of the day before the range. */
  startMrr: number;
  change: number;
  daily: Array<{ day: string; mrr: number }>;
}

export interface ProjectOverview {
  range: OverviewRange;
  /** The range's UTC days, oldest first; every series below lists only days that have something. */
  days: string[];
  signUps: { total: number; daily: DayCount[] };
  activeUsers: { daily: ActiveUsersDay[]; today: { daily: number; monthly: number } };
  signIns: { methods: string[]; succeeded: number; failed: number; daily: SignInsDay[] };
  mfa: MfaAdoption & { share: number | null };
  subscriptions: { active: number; plans: Array<PlanName & { active: number }>; daily: PlanDay[] };
  revenue: CurrencyRevenue[];
  churn: { total: number; daily: DayCount[] };
  webhooks: { succeeded: number; failed: number; pending: number; successRate: number | null; daily: WebhookDay[] };
}

const sum = <T>(rows: readonly T[], of: (row: T) => number) => rows.reduce((n, r) => n + of(r), 0);

/**
 * A project's overview over the last 7, 30 or 90 days (the console's project home): sign-ups,
 * daily and monthly active users, sign-ins by method and failures, MFA adoption, live
 * subscriptions by plan, monthly recurring revenue per currency and its change, churned
 * subscriptions and webhook delivery success and lag. The caller has checked that the account may
 * read the project. Each part is one statement; they run side by side.
 */
export function makeReadOverview(deps: { reader: OverviewReader; clock: Clock }) {
  return async (projectId: string, rawRange: string | undefined): Promise<Result<ProjectOverview, 'invalid_overview_range'>> => {
    const range = parseOverviewRange(rawRange);
    if (range === null) return err('invalid_overview_range');
    const days = overviewDays(deps.clock.now(), range);
    const w: OverviewWindow = { projectId, firstDay: days[0]!, lastDay: days[days.length - 1]! };
    const [signUps, active, signIns, mfa, plans, revenue, churn, webhooks] = await Promise.all([
      deps.reader.signUps(w),
      deps.reader.activeUsers(w),
      deps.reader.signIns(w),
      deps.reader.mfaAdoption(w),
      deps.reader.subscriptionsByPlan(w),
      deps.reader.revenue(w),
      deps.reader.churn(w),
      deps.reader.webhooks(w),
    ]);
    const today = active.find((d) => d.day === w.lastDay);
    const liveToday = plans.daily.filter((d) => d.day === w.lastDay);
    const succeeded = sum(webhooks, (d) => d.succeeded);
    const failed = sum(webhooks, (d) => d.failed);
    return ok({
      range,
      days,
      signUps: { total: sum(signUps, (d) => d.count), daily: signUps },
      activeUsers: { daily: active, today: { daily: today?.daily ?? 0, monthly: today?.monthly ?? 0 } },
      signIns: {
        methods: [...new Set(signIns.map((d) => d.method))].sort(),
        succeeded: sum(signIns, (d) => d.succeeded),
        failed: sum(signIns, (d) => d.failed),
        daily: signIns,
      },
      mfa: { ...mfa, share: mfa.users === 0 ? null : mfa.withFactor / mfa.users },
      subscriptions: {
        active: sum(liveToday, (d) => d.active),
        plans: plans.plans.map((p) => ({
          ...p,
          active: sum(
            liveToday.filter((d) => d.planId === p.id),
            (d) => d.active,
          ),
        })),
        daily: plans.daily,
      },
      revenue: revenueByCurrency(revenue, w),
      churn: { total: sum(churn, (d) => d.count), daily: churn },
      webhooks: {
        succeeded,
        failed,
        pending: sum(webhooks, (d) => d.pending),
        successRate: succeeded + failed === 0 ? null : succeeded / (succeeded + failed),
        daily: webhooks,
      },
    });
  };
}

/** Per currency: today's MRR, the day before the range's, the change, and the range's days that had some. */
function revenueByCurrency(rows: ReadonlyArray<{ day: string; currency: string; mrr: number }>, w: OverviewWindow): CurrencyRevenue[] {
  const currencies = [...new Set(rows.map((r) => r.currency))].sort();
  return currencies.map((currency) => {
    const own = rows.filter((r) => r.currency === currency);
    const mrr = own.find((r) => r.day === w.lastDay)?.mrr ?? 0;
    const startMrr = own.find((r) => r.day < w.firstDay)?.mrr ?? 0;
    const daily = own.filter((r) => r.day >= w.firstDay && r.mrr !== 0).map((r) => ({ day: r.day, mrr: r.mrr }));
    return { currency, mrr, startMrr, change: mrr - startMrr, daily };
  });
}
