import type { Result } from '../../domain/result';
import type { BillingConnection } from './billing.store';
import type { PaymentProcessor, ProcessorEvent, ProcessorFailure, ProcessorKind, ProcessorResult } from './payment-processor';

/**
 * The processors Tollgate bills through, by name: the client of a project's connection (a Stripe
 * client for its key, or the sandbox), and each processor's inbound webhooks.
 */
export interface ProcessorDirectory {
  forConnection(connection: BillingConnection): PaymentProcessor;
  /** The processor's inbound webhooks; null for a processor that sends none (the sandbox records its changes itself). */
  inboundWebhooks(processor: ProcessorKind): InboundWebhooks | null;
}

/** An inbound request's headers, by lower-case name (as Node reads them). */
export type InboundHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * An untrusted look at a webhook's payload: the project its metadata names, or the customer it is
 * about (to find the project by its customer), and the event's id.
 */
export interface WebhookHints {
  projectId: string | null;
  customerId: string | null;
  eventId: string | null;
}

/**
 * A processor's inbound webhooks: where its signature travels, an untrusted look at the payload to
 * find the project, and the check of the signature with that project's secret, which alone makes
 * the event (in the port's neutral shape) trusted.
 */
export interface InboundWebhooks {
  /** The processor whose events these are: the connection's `processor`, and the name its events are stored under. */
  readonly processor: ProcessorKind;
  /** The request's signature (Stripe: the Stripe-Signature header, one value), or undefined without one. */
  signature(headers: InboundHeaders): string | undefined;
  /** Null when the body is not an event at all. */
  hints(rawBody: Uint8Array): WebhookHints | null;
  /** Checks the signature against `secret` (with the processor's tolerance for its timestamp) and reads the event. */
  verify(rawBody: Uint8Array, signature: string | undefined, secret: string, now: Date): Result<ProcessorEvent, 'invalid_signature'>;
}

/** What a sandbox checkout page shows. */
export interface SandboxCheckoutView {
  id: string;
  projectId: string;
  status: 'open' | 'complete' | 'expired';
  planName: string;
  priceName: string;
  /** For the session's quantity of a per-seat price. */
  amount: number;
  /** Seats of a per-seat price; null for a flat one. */
  quantity: number | null;
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
  ): Promise<ProcessorResult<{ projectId: string; subscriptionId: string | null; successUrl: string }, ProcessorFailure>>;
  /** Creates a promotion code (percent off the first invoice) for a project's sandbox. */
  createPromotionCode(projectId: string, code: string, percentOff: number): Promise<void>;
}
