import type { PlanInput, PriceInput } from '../../domain/billing/catalog';
import type { BillingEventType } from '../../domain/billing/events';
import type { InvoiceStatus } from '../../domain/billing/invoice';
import type { Project } from '../../domain/project';
import type { EndUser } from '../../domain/user';
import type { RequestOrigin } from '../ports/request-origin';
import type { BillingEvent } from './billing.store';
import type { ListFilter, RecordPage } from './list-records';
import type { BillingErrorCode, BillingOutcome } from './errors';
import type { SandboxClockView } from './sandbox-operations';
import type {
  ChangePreviewView,
  ConnectionView,
  Entitlements,
  InvoiceView,
  OperatorInvoiceView,
  OperatorPlanView,
  PlanView,
  OperatorSubscriptionView,
  SubscriptionView,
} from './views';

/**
 * Billing's use cases, as the composition root assembles them (apps/server/features/billing.ts):
 * the HTTP routes, the CLI and the dashboard call these and nothing below them. Each is one file in
 * this folder; this interface is their one list.
 */

/** Who calls a user-scoped use case: the project (from the access token) and its signed-in user. */
export interface BillingActor {
  project: Project;
  user: EndUser;
  /** Where the request came from (the audit log of subscribe, change, cancel, pause and resume). */
  origin?: RequestOrigin;
}

export type ConnectInput =
  | { processor: 'sandbox'; currency?: string }
  | { processor: 'stripe'; secretKey: string; publishableKey: string; webhookSecret: string; currency?: string };

export interface CheckoutRequest {
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCode?: string;
  trialDays?: number;
  /** Idempotency of the processor writes: the request's Idempotency-Key, or a fresh id. */
  requestKey: string;
}

export interface OperatorUseCases {
  connectBilling(projectId: string, input: ConnectInput): Promise<BillingOutcome<ConnectionView>>;
  billingStatus(projectId: string): Promise<BillingOutcome<ConnectionView | null>>;
  /** Stops billing through the processor; plans, prices, subscriptions and invoices stay. */
  disconnectBilling(projectId: string): Promise<BillingOutcome<{ disconnected: boolean }>>;
  createPlan(projectId: string, input: PlanInput): Promise<BillingOutcome<OperatorPlanView>>;
  /** `plan` is an id or a name. */
  updatePlan(projectId: string, plan: string, patch: Partial<PlanInput>): Promise<BillingOutcome<OperatorPlanView>>;
  listPlans(projectId: string): Promise<BillingOutcome<OperatorPlanView[]>>;
  /** Every plan of the project, lowest tier first, by id or name. */
  reorderPlans(projectId: string, plans: readonly string[]): Promise<BillingOutcome<OperatorPlanView[]>>;
  createPrice(projectId: string, plan: string, input: PriceInput): Promise<BillingOutcome<OperatorPlanView['prices'][number]>>;
  archivePrice(projectId: string, priceId: string): Promise<BillingOutcome<OperatorPlanView['prices'][number]>>;
  /** The project's subscriptions, newest first, a page at a time (50 by default, at most 500). */
  listSubscriptions(projectId: string, filter: ListFilter & { status?: string }): Promise<BillingOutcome<RecordPage<OperatorSubscriptionView>>>;
  /** Every user's invoices of the project, newest first, a page at a time (50 by default, at most 500). */
  listProjectInvoices(projectId: string, filter: ListFilter & { status?: InvoiceStatus }): Promise<BillingOutcome<RecordPage<OperatorInvoiceView>>>;
  listEvents(projectId: string, filter: { type?: BillingEventType; limit?: number }): Promise<BillingOutcome<BillingEvent[]>>;
  /** Moves the project's sandbox clock and applies what falls due (renewals, trial ends, ...). */
  advanceSandbox(projectId: string, days: number): Promise<BillingOutcome<{ now: Date; changed: number }>>;
  /** The project's sandbox time and how far ahead of real time it is. */
  sandboxClock(projectId: string): Promise<BillingOutcome<SandboxClockView>>;
  createSandboxPromotionCode(projectId: string, code: string, percentOff: number): Promise<BillingOutcome<{ code: string; percentOff: number }>>;
}

export interface UserUseCases {
  /** Visible plans in hierarchy order with their active prices. */
  listVisiblePlans(project: Project): Promise<PlanView[]>;
  /** Every plan (hidden ones too: a project may sell them by link) with its active prices. */
  listProducts(project: Project): Promise<PlanView[]>;
  startCheckout(actor: BillingActor, input: CheckoutRequest): Promise<BillingOutcome<{ id: string; url: string }>>;
  createSetupIntent(actor: BillingActor, requestKey: string): Promise<BillingOutcome<{ clientSecret: string; publishableKey: string }>>;
  subscribe(actor: BillingActor, input: { priceId: string; paymentMethodId: string; requestKey: string }): Promise<BillingOutcome<SubscriptionView>>;
  /** The live subscription, or null. */
  currentSubscription(actor: BillingActor): Promise<BillingOutcome<SubscriptionView | null>>;
  listInvoices(actor: BillingActor, limit: number): Promise<BillingOutcome<InvoiceView[]>>;
  entitlements(actor: BillingActor): Promise<Entitlements | null>;
  previewChange(actor: BillingActor, newPriceId: string): Promise<BillingOutcome<ChangePreviewView>>;
  changeSubscription(actor: BillingActor, input: { newPriceId: string; requestKey: string }): Promise<BillingOutcome<SubscriptionView>>;
  cancelSubscription(actor: BillingActor, input: { atPeriodEnd: boolean; requestKey: string }): Promise<BillingOutcome<SubscriptionView>>;
  pauseSubscription(actor: BillingActor, input: { requestKey: string }): Promise<BillingOutcome<SubscriptionView>>;
  resumeSubscription(actor: BillingActor, input: { requestKey: string }): Promise<BillingOutcome<SubscriptionView>>;
}

export interface ProcessorUseCases {
  /**
   * A Stripe webhook: the project from the path (when given) or the payload's hints, the signature
   * checked with that project's webhook secret, the event applied once.
   */
  receiveStripeWebhook(input: {
    rawBody: Buffer;
    signature: string | undefined;
    projectId: string | null;
  }): Promise<BillingOutcome<{ received: true; duplicate: boolean }>>;
  /** Applies the sandbox's due work for every project (the scheduled job). */
  runSandboxRenewals(): Promise<{ changed: number }>;
  sandboxCheckout(checkoutId: string): Promise<BillingOutcome<import('./processors').SandboxCheckoutView>>;
  /** Pays a sandbox checkout with a test card; answers where to send the browser. */
  completeSandboxCheckout(checkoutId: string, card: string): Promise<BillingOutcome<{ redirectTo: string }>>;
}

export type BillingUseCases = OperatorUseCases & UserUseCases & ProcessorUseCases;

export type { BillingErrorCode };
