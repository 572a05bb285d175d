import { describe, expect, it } from 'vitest';
import type { BillingConnection, BillingSubscription } from './billing.store';
import type { PaymentProcessor } from './payment-processor';
import {
  aBillingSubscription,
  aProject,
  aStoredPlan,
  aStoredPrice,
  aUser,
  CallLog,
  fakeSubscriptionLocks,
  FixedClock,
  strictBillingDeps,
  strictFake,
} from '../testing/fakes';
import { makeChangeSubscription, makePreviewChange } from './change-subscription';

const actor = { project: aProject(), user: aUser() };
const NEW_PRICE = aStoredPrice();

const aConnection = (processor: BillingConnection['processor']): BillingConnection => ({
  projectId: 'project-1',
  processor,
  secretKey: null,
  publishableKey: null,
  webhookSecret: null,
  keyLast4: null,
  livemode: false,
  accountId: null,
  currency: 'usd',
  connectedAt: new Date('2029-01-01T00:00:00.000Z'),
  updatedAt: new Date('2029-01-01T00:00:00.000Z'),
});

/**
 * A user with `subscription` (none: null) changing to NEW_PRICE (2,000 USD a month) mid-May 2030.
 * `connection` is what the project is connected to; `processor` the processor it gets, a strict fake
 * with no methods: a change the rules refuse never reaches it.
 */
function setup(options: { subscription: BillingSubscription | null; now?: string; connection?: BillingConnection | null; sandboxAllowed?: boolean }) {
  const log = new CallLog();
  const clock = new FixedClock(options.now ?? '2030-05-15T00:00:00.000Z');
  const locks = fakeSubscriptionLocks(log, clock);
  const processor = strictFake<PaymentProcessor>('processor', { kind: 'sandbox' }, log);
  const deps = strictBillingDeps(log, clock, {
    locks,
    subscriptions: { findLive: async () => options.subscription },
    catalog: { getPrice: async (_p: string, id: string) => (id === NEW_PRICE.id ? NEW_PRICE : null), getPlan: async () => aStoredPlan() },
    ...(options.connection !== undefined ? { connections: { get: async () => options.connection! } } : {}),
    processors: { forConnection: () => processor },
    settings: { sandboxAllowed: options.sandboxAllowed ?? true },
  });
  return { change: makeChangeSubscription(deps), preview: makePreviewChange(deps), log, locks };
}

const changeTo = (priceId: string) => ({ newPriceId: priceId, requestKey: 'key-1' });

describe('which subscription changes the rules allow, before any processor is asked', () => {
  it('without a live subscription there is nothing to change; the lease is released', async () => {
    const { change, log, locks } = setup({ subscription: null });
    expect(await change(actor, changeTo(NEW_PRICE.id))).toEqual({ ok: false, error: 'subscription_not_found' });
    expect(log.names('locks')).toEqual(['locks.acquire', 'locks.release']);
    expect(locks.holderOf('project-1', 'user-1')).toBeNull();
  });

  it.each([
    ['past due (pay the open invoice first)', { status: 'past_due' as const, pastDueAt: new Date('2030-05-10T00:00:00.000Z') }, 'subscription_past_due'],
    ['paused (resume first)', { status: 'paused' as const, pausedAt: new Date('2030-05-10T00:00:00.000Z') }, 'subscription_paused'],
    ['pending cancellation (resume first)', { cancelAtPeriodEnd: true, canceledAt: new Date('2030-05-10T00:00:00.000Z') }, 'cancellation_scheduled'],
    ['already on that price', { price: { id: NEW_PRICE.id, planId: 'plan-1', amount: 2000, currency: 'usd', interval: 'month' as const } }, 'same_price'],
    [
      'billed in another currency',
      { price: { id: '00000000-0000-4000-8000-000000000009', planId: 'plan-1', amount: 900, currency: 'eur', interval: 'month' as const } },
      'currency_mismatch',
    ],
  ])('refused when %s', async (_case, overrides, error) => {
    const { change, preview, log } = setup({ subscription: aBillingSubscription(overrides) });
    expect(await change(actor, changeTo(NEW_PRICE.id))).toEqual({ ok: false, error });
    expect(await preview(actor, NEW_PRICE.id)).toEqual({ ok: false, error });
    // Neither the connection nor the processor was asked.
    expect(log.names('connections')).toEqual([]);
    expect(log.names('processor')).toEqual([]);
  });

  it('an unknown or archived price is refused', async () => {
    const { change } = setup({ subscription: aBillingSubscription() });
    expect(await change(actor, changeTo('00000000-0000-4000-8000-0000000000ff'))).toEqual({ ok: false, error: 'price_not_found' });
    expect(await change(actor, changeTo('not-a-uuid'))).toEqual({ ok: false, error: 'price_not_found' });
  });

  it("just after the period end, before the processor's renewal arrives, the change is checked at the period's start, not refused", async () => {
    const { change, log } = setup({ subscription: aBillingSubscription(), now: '2030-06-01T00:00:05.000Z', connection: null });
    // Allowed by the rules, it goes on to the connection (here: none).
    expect(await change(actor, changeTo(NEW_PRICE.id))).toEqual({ ok: false, error: 'billing_not_connected' });
    expect(log.names('connections')).toEqual(['connections.get']);
  });

  it('an allowed change needs the project connected, to a processor this deployment allows, that bills the subscription', async () => {
    expect(await setup({ subscription: aBillingSubscription(), connection: null }).change(actor, changeTo(NEW_PRICE.id))).toEqual({
      ok: false,
      error: 'billing_not_connected',
    });
    expect(
      await setup({ subscription: aBillingSubscription(), connection: aConnection('sandbox'), sandboxAllowed: false }).change(actor, changeTo(NEW_PRICE.id)),
    ).toEqual({
      ok: false,
      error: 'sandbox_unavailable',
    });
    const other = setup({ subscription: aBillingSubscription({ processor: 'stripe' }), connection: aConnection('sandbox') });
    expect(await other.change(actor, changeTo(NEW_PRICE.id))).toMatchObject({ ok: false, error: 'billing_not_connected' });
    expect(other.log.names('processor.')).toEqual([]);
  });
});
