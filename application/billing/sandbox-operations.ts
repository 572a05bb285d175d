import { type Result, err, ok } from '../../domain/result';
import type { BillingDeps } from './deps';
import { makeReportUsage } from './report-usage';
import { makeFulfilPackCheckout } from './credit-packs';
import { type FailureCode, refuseFailure } from './errors';
import type { PaymentProcessor } from './payment-processor';
import type { SandboxCheckoutView } from './processors';
import { makeSyncSubscription } from './sync-subscription';

/** The sandbox's clock as the operator reads it. */
export interface SandboxClockView {
  /** The project's sandbox time: real time plus the offset the clock was moved by. */
  now: Date;
  realNow: Date;
  /** How far the sandbox is ahead of real time, in seconds (0 until it is moved). */
  aheadSeconds: number;
}

/**
 * The sandbox processor's work that Tollgate drives: its scheduled renewals, its clock (moved by
 * the operator, like Stripe test clocks) and its checkout page. Whatever the sandbox changes is
 * then recorded exactly as a Stripe webhook would be: re-read and compared.
 */
export function makeSandboxOperations(deps: BillingDeps) {
  const syncSubscription = makeSyncSubscription(deps);
  const reportUsage = makeReportUsage(deps);
  const fulfilPackCheckout = makeFulfilPackCheckout(deps);

  /** The sandbox processor of a project, whatever it is connected to now (its subscriptions keep running). */
  const sandboxOf = (projectId: string): PaymentProcessor =>
    deps.processors.forConnection({
      projectId,
      processor: 'sandbox',
      secretKey: null,
      publishableKey: null,
      webhookSecret: null,
      keyLast4: null,
      livemode: false,
      accountId: null,
      currency: 'usd',
      connectedAt: new Date(0),
      updatedAt: new Date(0),
    });

  async function recordChanged(changed: ReadonlyArray<{ projectId: string; subscriptionId: string }>): Promise<number> {
    let recorded = 0;
    for (const { projectId, subscriptionId } of changed) {
      const done = await syncSubscription(projectId, sandboxOf(projectId), subscriptionId);
      if (done.ok && done.value?.ok) recorded += 1;
    }
    return recorded;
  }

  return {
    /** The scheduled job: every project's due renewals, trial ends, scheduled cancellations and expiries. */
    async runSandboxRenewals(): Promise<{ changed: number }> {
      if (deps.sandbox === null) return { changed: 0 };
      // Usage past the included amounts reaches the sandbox before the renewals that bill it.
      await reportUsage();
      return { changed: await recordChanged(await deps.sandbox.runDue()) };
    },

    /** `tollgate billing sandbox advance <project> --days N`. */
    async advanceSandbox(
      projectId: string,
      days: number,
    ): Promise<Result<{ now: Date; changed: number }, 'project_not_found' | 'sandbox_unavailable' | 'invalid_sandbox_days'>> {
      if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
      if (deps.sandbox === null) return err('sandbox_unavailable');
      if (!Number.isFinite(days) || days <= 0 || days > 3660) return err('invalid_sandbox_days');
      await reportUsage(projectId);
      const now = await deps.sandbox.advanceClock(projectId, Math.round(days * 86_400));
      const changed = await recordChanged(await deps.sandbox.runDue(projectId));
      return ok({ now, changed });
    },

    /**
     * The project's sandbox time, the real time it was read at and how far ahead the sandbox is, in
     * whole seconds (`tollgate billing sandbox time`, the console's Sandbox clock card).
     */
    async sandboxClock(projectId: string): Promise<Result<SandboxClockView, 'project_not_found' | 'sandbox_unavailable'>> {
      if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
      if (deps.sandbox === null) return err('sandbox_unavailable');
      const realNow = deps.clock.now();
      const now = await deps.sandbox.now(projectId);
      return ok({ now, realNow, aheadSeconds: Math.round((now.getTime() - realNow.getTime()) / 1000) });
    },

    async createSandboxPromotionCode(
      projectId: string,
      code: string,
      percentOff: number,
    ): Promise<Result<{ code: string; percentOff: number }, 'project_not_found' | 'sandbox_unavailable' | 'invalid_promotion_code' | 'invalid_percent_off'>> {
      if ((await deps.projects.findById(projectId)) === null) return err('project_not_found');
      if (deps.sandbox === null) return err('sandbox_unavailable');
      const trimmed = code.trim();
      if (!/^[A-Za-z0-9_-]{1,50}$/.test(trimmed)) return err('invalid_promotion_code');
      if (!Number.isInteger(percentOff) || percentOff < 1 || percentOff > 100) return err('invalid_percent_off');
      await deps.sandbox.createPromotionCode(projectId, trimmed, percentOff);
      return ok({ code: trimmed, percentOff });
    },

    async sandboxCheckout(checkoutId: string): Promise<Result<SandboxCheckoutView, 'sandbox_unavailable' | 'checkout_not_found'>> {
      if (deps.sandbox === null) return err('sandbox_unavailable');
      const view = await deps.sandbox.getCheckout(checkoutId);
      return view === null ? err('checkout_not_found') : ok(view);
    },

    /** Pays a sandbox checkout with a test card, records the subscription, and answers where the browser goes. */
    async completeSandboxCheckout(
      checkoutId: string,
      card: string,
    ): Promise<Result<{ redirectTo: string }, 'sandbox_unavailable' | 'checkout_not_found' | 'checkout_not_open' | FailureCode>> {
      if (deps.sandbox === null) return err('sandbox_unavailable');
      const view = await deps.sandbox.getCheckout(checkoutId);
      if (view === null) return err('checkout_not_found');
      if (view.status !== 'open') return err('checkout_not_open');
      const done = await deps.sandbox.completeCheckout(checkoutId, card);
      if (!done.ok) return refuseFailure(done.failure);
      if (done.value.subscriptionId === null) {
        // A credit pack paid: its credits are granted now (once per checkout).
        const granted = await fulfilPackCheckout(done.value.projectId, sandboxOf(done.value.projectId), checkoutId);
        if (!granted.ok) return refuseFailure(granted.failure);
        return ok({ redirectTo: done.value.successUrl });
      }
      const synced = await syncSubscription(done.value.projectId, sandboxOf(done.value.projectId), done.value.subscriptionId);
      if (!synced.ok) return refuseFailure(synced.failure);
      const recorded = synced.value;
      if (recorded?.ok && recorded.subscription.trialStart !== null) {
        await deps.customers.markTrialUsed(done.value.projectId, recorded.subscription.subject, 'sandbox');
      }
      return ok({ redirectTo: done.value.successUrl });
    },
  };
}
