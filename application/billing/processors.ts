import type { Result } from '../../domain/result';
import type { BillingConnection } from './billing.store';
import type { PaymentProcessor, ProcessorEvent, ProcessorResult } from './payment-processor';

/** Finds the processor of a project's connection: a Stripe client for its key, or the sandbox. */
export interface ProcessorDirectory {
  forConnection(connection: BillingConnection): PaymentProcessor;
}

/** Inbound webhooks of a processor (Stripe): read before trusting, then verify with the project's secret. */
export interface InboundWebhooks {
  /**
   * An untrusted look at the payload: the project its metadata names, or the customer it is about
   * (to find the project by its customer). Null when the body is not an event at all.
   */
  hints(rawBody: Buffer): { projectId: string | null; customerId: string | null; eventId: string | null } | null;
  /** Checks the signature header against `secret` (5-minute tolerance) and reads the event. */
  verify(rawBody: Buffer, signatureHeader: string | undefined, secret: string, now: Date): Result<ProcessorEvent, 'invalid_signature'>;
}

/** What a sandbox checkout page shows. */
export interface SandboxCheckoutView {
  id: string;
  projectId: string;
  status: 'open' | 'complete' | 'expired';
  planName: string;
  priceName: string;
  amount: number;
  currency: string;
  interval: string;
  trialDays: number | null;
  /** The discount a promotion code gives, percent; null without one. */
  percentOff: number | null;
  email: string | null;
  successUrl: string;
  cancelUrl: string;
}

/**
 * The sandbox processor's controls, beyond the port: its clock (like Stripe test clocks), its due
 * work (renewals, trial ends, cancellations at period end, expiries), its checkout page and its
 * promotion codes. The sandbox never moves real money.
 */
export interface SandboxControl {
  /** The project's sandbox time (real time plus the project's offset). */
  now(projectId: string): Promise<Date>;
  /** Moves the project's sandbox clock forward by `seconds`; answers the new sandbox time. */
  advanceClock(projectId: string, seconds: number): Promise<Date>;
  /**
   * Applies every transition due at each project's sandbox time (or one project's): renewals
   * charged to the card on file, trial ends, scheduled cancellations, past-due grace ends, expiry
   * of incomplete subscriptions. Answers the sandbox subscriptions that changed.
   */
  runDue(projectId?: string): Promise<Array<{ projectId: string; subscriptionId: string }>>;
  getCheckout(checkoutId: string): Promise<SandboxCheckoutView | null>;
  /**
   * Pays a sandbox checkout with a test card (a `pm_card_*` name, or a test card number such as
   * 4242 4242 4242 4242): creates the subscription as `createSubscription` would.
   */
  completeCheckout(
    checkoutId: string,
    card: string,
  ): Promise<ProcessorResult<{ projectId: string; subscriptionId: string; successUrl: string }>>;
  /** Creates a promotion code (percent off the first invoice) for a project's sandbox. */
  createPromotionCode(projectId: string, code: string, percentOff: number): Promise<void>;
}
