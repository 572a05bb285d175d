import { IDEMPOTENCY_TTL_SECONDS } from '../../../domain/billing/idempotency';
import { addSeconds } from '../../../domain/billing/periods';
import { isUuid } from '../../persistence/rows';
import type { SandboxContext } from './sandbox-context';
import type { SandboxSubscriptions } from './sandbox-subscriptions';

const DUE_BATCH = 200;

/** Each project's sandbox clock (like a Stripe test clock) and the work that falls due as it moves. */
export class SandboxClock {
  constructor(
    private readonly ctx: SandboxContext,
    private readonly subscriptions: SandboxSubscriptions,
  ) {}

  async advanceClock(projectId: string, seconds: number): Promise<Date> {
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw new RangeError(`A sandbox clock only moves forward by whole seconds: ${seconds}`);
    const offset = await this.ctx.objects.addOffset(projectId, seconds);
    return addSeconds(this.ctx.deps.clock.now(), offset);
  }

  /**
   * Every subscription due at its project's sandbox time (or one project's), each in its own
   * transaction under a row lock taken with `skip locked`: a second worker passes over what the
   * first holds, and finds it no longer due once the first commits, so nothing is charged twice.
   */
  async runDue(projectId?: string): Promise<Array<{ projectId: string; subscriptionId: string }>> {
    const changed: Array<{ projectId: string; subscriptionId: string }> = [];
    if (projectId !== undefined && !isUuid(projectId)) return changed;
    await this.ctx.objects.purgeIdempotency(this.ctx.deps.clock.now(), projectId ?? null, IDEMPOTENCY_TTL_SECONDS);
    let after = '';
    for (;;) {
      const batch = await this.ctx.objects.dueSubscriptions(this.ctx.deps.clock.now(), projectId ?? null, after, DUE_BATCH);
      for (const candidate of batch) {
        const didChange = await this.ctx.transaction(async () => {
          const now = await this.ctx.now(candidate.projectId);
          const row = await this.ctx.objects.lockDueSubscription(candidate.id, now);
          if (!row) return false;
          return (await this.subscriptions.applyDue(candidate.projectId, row, now)).changed;
        });
        if (didChange) changed.push({ projectId: candidate.projectId, subscriptionId: candidate.id });
      }
      if (batch.length < DUE_BATCH) return changed;
      after = batch[batch.length - 1]!.id;
    }
  }
}
