import type { BillingDeps } from './deps';
import { connectedProcessor } from './connected-processor';

const BATCH = 100;

/**
 * Usage past the included amounts reported to the processor that bills it (docs/usage.md): for
 * each window whose overage grew since it was last reported, the subject's live subscription on a
 * plan that bills overage on the meter gets the increment at the plan's overage price (the
 * processor's metered price for those terms, found or created), under an identifier made of the
 * window and the overage reached, so a report repeated after a crash is recorded once. Overage
 * that nothing bills (a hard or soft limit, no live subscription, another processor) is marked
 * reported and never billed. Runs every minute, and before the sandbox's renewals.
 */
export function makeReportUsage(
  deps: Pick<BillingDeps, 'meteredUsage' | 'subscriptions' | 'catalog' | 'connections' | 'processors' | 'settings' | 'clock' | 'logger'>,
) {
  return async function reportUsage(projectId: string | null = null): Promise<{ reported: number }> {
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
  };

  async function reportOne(row: Awaited<ReturnType<BillingDeps['meteredUsage']['unreported']>>[number]): Promise<'reported' | 'unbilled' | 'retry'> {
    const sub = await deps.subscriptions.findLive(row.projectId, row.subject);
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
      timestamp: deps.clock.now(),
    });
    if (!sent.ok) {
      deps.logger.warn({ projectId: row.projectId, meter: row.meterKey, failure: sent.failure.message }, 'usage: overage could not be reported');
      return 'retry';
    }
    await deps.meteredUsage.markReported(row, row.overage);
    return 'reported';
  }
}

const keyOf = (r: { projectId: string; subject: { id: string }; meterId: string; windowStart: Date }) =>
  `${r.projectId}/${r.subject.id}/${r.meterId}/${r.windowStart.toISOString()}`;
