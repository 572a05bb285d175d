import type { BillingSubject } from '../../domain/billing/subject';
import type { UsageLimit } from '../../domain/usage/limits';
import type { BillingSubscription, UnreportedOverage } from './billing.store';
import { connectedProcessor } from './connected-processor';
import type { BillingDeps } from './deps';

const BATCH = 100;
/** At most this many of a subject's unreported windows are reported before a cancellation (a subject has a few per meter). */
const SUBJECT_WINDOWS = 1000;
const SECOND = 1000;
const DAY = 86_400_000;

type Deps = Pick<BillingDeps, 'meteredUsage' | 'subscriptions' | 'catalog' | 'connections' | 'processors' | 'settings' | 'clock' | 'logger'>;

/**
 * Usage past the included amounts reported to the processor that bills it (docs/usage.md, "Money"):
 * for each window whose overage grew since it was last reported, the subject's subscription on a
 * plan that bills overage on the meter gets the increment at the plan's overage price (the
 * processor's metered price for those terms, found or created), under an identifier made of the
 * window and the overage reached, so a report repeated after a crash is recorded once. Overage
 * that nothing bills (a hard or soft limit, no subscription, another processor) is marked reported
 * and never billed. Runs every minute, before the sandbox's renewals, and for one subject before
 * its subscription is canceled now (`forSubject`), so the final invoice has it.
 *
 * The report is dated within the window the usage happened in (the latest moment of it, no later
 * than now): a window that ended (the period renewed, or the subscription ended at its period end)
 * is billed in the period it belongs to when the processor can still bill it there (Stripe: until
 * that period's invoice is finalized, an hour after the period end by default), else on the next
 * invoice; a subscription that ended is looked up as long as the window began before it ended.
 */
export function makeReportUsage(deps: Deps) {
  async function reportUsage(projectId: string | null = null): Promise<{ reported: number }> {
    let reported = 0;
    const skipped = new Set<string>();
    for (let round = 0; round < 50; round++) {
      const due = (await deps.meteredUsage.unreported(projectId, BATCH)).filter((r) => !skipped.has(keyOf(r)));
      if (due.length === 0) break;
      for (const row of due) {
        const done = await reportOne(row);
        if (done === 'reported') reported++;
        if (done === 'retry') skipped.add(keyOf(row));
      }
      if (due.length < BATCH) break;
    }
    return { reported };
  }

  /** One subject's unreported overage, now: before its subscription is canceled. */
  async function forSubject(projectId: string, subject: BillingSubject): Promise<{ reported: number }> {
    let reported = 0;
    for (const row of await deps.meteredUsage.unreported(projectId, SUBJECT_WINDOWS, subject)) {
      if ((await reportOne(row)) === 'reported') reported++;
    }
    return { reported };
  }

  async function reportOne(row: UnreportedOverage): Promise<'reported' | 'unbilled' | 'retry'> {
    const sub = await subscriptionOf(row);
    const plan = sub === null ? null : await deps.catalog.getPlan(row.projectId, sub.price.planId);
    const limit = plan?.usageLimits.find((l) => l.meter === row.meterKey) ?? null;
    const connected = sub === null ? null : await connectedProcessor(deps, row.projectId);
    if (
      sub === null ||
      limit === null ||
      limit.overage !== 'bill' ||
      limit.price === null ||
      !connected?.ok ||
      connected.value.connection.processor !== sub.processor
    ) {
      await deps.meteredUsage.markReported(row, row.overage);
      return 'unbilled';
    }
    const { processor } = connected.value;
    const price = await processor.ensureMeteredPrice({
      meterKey: row.meterKey,
      meterName: row.meterName,
      unitAmount: limit.price.unitAmount,
      packageSize: limit.price.packageSize,
      currency: sub.price.currency,
      interval: sub.price.interval,
      metadata: { projectId: row.projectId },
    });
    if (!price.ok) {
      deps.logger.warn({ projectId: row.projectId, meter: row.meterKey, failure: price.failure.message }, 'usage: the metered price could not be set up');
      return 'retry';
    }
    const sent = await processor.reportUsage({
      subscriptionId: sub.processorSubscriptionId,
      customerId: sub.customerId,
      meteredPriceId: price.value,
      meterKey: row.meterKey,
      quantity: row.overage - row.reported,
      identifier: `${row.subject.id}:${row.meterId}:${row.windowStart.toISOString()}:${row.overage}`,
      timestamp: usageTime(row.windowStart, limit.reset, sub, deps.clock.now()),
    });
    if (!sent.ok) {
      deps.logger.warn({ projectId: row.projectId, meter: row.meterKey, failure: sent.failure.message }, 'usage: overage could not be reported');
      return 'retry';
    }
    await deps.meteredUsage.markReported(row, row.overage);
    return 'reported';
  }

  /** The live subscription, else the latest one if it ended after the window began (its last period's usage). */
  async function subscriptionOf(row: UnreportedOverage): Promise<BillingSubscription | null> {
    const live = await deps.subscriptions.findLive(row.projectId, row.subject);
    if (live !== null) return live;
    const [latest] = await deps.subscriptions.list(row.projectId, { subject: row.subject, limit: 1 });
    return latest?.endedAt != null && latest.endedAt.getTime() > row.windowStart.getTime() ? latest : null;
  }

  return Object.assign(reportUsage, { forSubject });
}

/**
 * When the usage of a window happened, as late as it can have: now, unless the window ended
 * (the last second before its end). A `period` window ends with the subscription's period (or its
 * end, for one that ended); one that began before the current period ended where it begins.
 */
export function usageTime(
  windowStart: Date,
  reset: UsageLimit['reset'],
  sub: Pick<BillingSubscription, 'currentPeriodStart' | 'currentPeriodEnd' | 'endedAt'>,
  now: Date,
): Date {
  let end: number;
  if (reset === 'day') end = windowStart.getTime() + DAY;
  else if (reset === 'month') end = Date.UTC(windowStart.getUTCFullYear(), windowStart.getUTCMonth() + 1, 1);
  else if (windowStart.getTime() < sub.currentPeriodStart.getTime()) end = sub.currentPeriodStart.getTime();
  else end = sub.currentPeriodEnd.getTime();
  if (sub.endedAt !== null) end = Math.min(end, sub.endedAt.getTime());
  return new Date(Math.max(windowStart.getTime(), Math.min(now.getTime(), end - SECOND)));
}

const keyOf = (r: { projectId: string; subject: { id: string }; meterId: string; windowStart: Date }) =>
  `${r.projectId}/${r.subject.id}/${r.meterId}/${r.windowStart.toISOString()}`;
