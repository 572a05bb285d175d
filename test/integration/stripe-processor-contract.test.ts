import { afterAll, beforeAll, expect } from 'vitest';
import { StripeProcessor } from '../../infrastructure/billing/stripe/stripe-processor';
import { StripeApiError } from '../support/stripe/errors';
import { startFakeStripe, type FakeStripe } from '../support/stripe/server';
import { describePaymentProcessorContract } from './payment-processor.suite';

/**
 * The port's contract suite against the Stripe adapter, talking to the Stripe-shaped server
 * (test/support/stripe) through the real stripe client: one fresh Stripe account per test, whose
 * clock starts where the sandbox's does (Jan 31 of a leap year, so Jan 31 renews on Feb 29) and is
 * Tollgate's clock too, as it is against Stripe. No network retries: every write's Idempotency-Key
 * is the adapter's own. After each test, every parameter the adapter sent exists for the pinned
 * API version.
 */

const START = Date.UTC(2024, 0, 31, 12, 0, 0) / 1000;

let fake: FakeStripe;

beforeAll(async () => {
  fake = await startFakeStripe({ startTime: START });
});

afterAll(async () => {
  await fake?.close();
});

describePaymentProcessorContract('stripe', async () => {
  const account = fake.createAccount();
  const processor = new StripeProcessor({
    secretKey: account.secretKey,
    apiUrl: fake.url,
    maxNetworkRetries: 0,
    now: () => new Date(fake.now(account.id) * 1000),
  });
  return {
    processor,
    async advance(seconds) {
      fake.advance(account.id, seconds);
      await fake.webhooks.settled();
    },
    async payCheckout(checkoutId, paymentMethod) {
      try {
        fake.completeCheckout(checkoutId, { paymentMethod });
        await fake.webhooks.settled();
        return null;
      } catch (error) {
        if (!(error instanceof StripeApiError)) throw error;
        const { type, message, decline_code } = error.body;
        return type === 'card_error' ? { kind: 'card_declined', message, declineCode: decline_code ?? null } : { kind: 'invalid_request', message };
      }
    },
    async close() {
      try {
        expect(fake.unexpected).toEqual([]);
      } finally {
        fake.unexpected.length = 0;
      }
    },
  };
});
