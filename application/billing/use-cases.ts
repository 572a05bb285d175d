import type { PlanInput, PlanOrderError, PriceInput } from '../../domain/billing/catalog';
import type { InvoiceStatus } from '../../domain/billing/invoice';
import type { Project } from '../../domain/project';
import type { Result } from '../../domain/result';
import type { SubjectKind } from '../../domain/billing/subject';
import type { BillingEvent } from './billing.store';
import type { makeOrganizationBilling, makeWindDownOrganization } from './organization-billing';
import type { makeSubjectEntitlements } from './read-subscription';
import type { makeReportUsage } from './report-usage';
import type { makeArchiveCreditPack, makeBuyCreditPack, makeCreateCreditPack, makeListCreditPacks } from './credit-packs';
import type { makePreviewSeats, makeSetSeats, makeSyncSeats } from './organization-seats';
import type { SubjectError } from './billing-subject';
import type { ChangeSubscriptionError, PreviewChangeError } from './change-subscription';
import type { ConnectedError } from './connected-processor';
import type { BillingErrorCode, FailureCode, RequestFailureCode } from './errors';
import type { ListFilter, RecordPage } from './list-records';
import type { ConnectBillingError } from './manage-connection';
import type { CreatePlanError, UpdatePlanError } from './manage-plans';
import type { CreatePriceError } from './manage-prices';
import type { CancelSubscriptionError, PauseSubscriptionError, ResumeSubscriptionError } from './manage-subscription';
import type { SandboxCheckoutView } from './processors';
import type { ProcessorWebhook, ReceiveWebhookError } from './receive-processor-webhook';
import type { BillingActor, CheckoutRequest, ConnectInput } from './requests';
import type { SandboxClockView } from './sandbox-operations';
import type { StartCheckoutError } from './start-checkout';
import type { SubscribeError } from './subscribe';
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
 * this folder; this interface is their one list. Each answers `Result<T, E>` with the narrow union
 * `E` of the codes it can really answer, so a route that does not declare one of them fails to
 * compile.
 */

export type { BillingActor, CheckoutRequest, ConnectInput };

type OperatorPrice = OperatorPlanView['prices'][number];

export interface OperatorUseCases {
  connectBilling(projectId: string, input: ConnectInput): Promise<Result<ConnectionView, ConnectBillingError>>;
  billingStatus(projectId: string): Promise<Result<ConnectionView | null, 'project_not_found'>>;
  /** Stops billing through the processor; plans, prices, subscriptions and invoices stay. */
  disconnectBilling(projectId: string): Promise<Result<{ disconnected: boolean }, 'project_not_found'>>;
  createPlan(projectId: string, input: PlanInput): Promise<Result<OperatorPlanView, CreatePlanError>>;
  /** `plan` is an id or a name. */
  updatePlan(projectId: string, plan: string, patch: Partial<PlanInput>): Promise<Result<OperatorPlanView, UpdatePlanError>>;
  listPlans(projectId: string): Promise<Result<OperatorPlanView[], 'project_not_found'>>;
  /** Every plan of the project, lowest tier first, by id or name. */
  reorderPlans(projectId: string, plans: readonly string[]): Promise<Result<OperatorPlanView[], 'project_not_found' | 'plan_not_found' | PlanOrderError>>;
  createPrice(projectId: string, plan: string, input: PriceInput): Promise<Result<OperatorPrice, CreatePriceError>>;
  archivePrice(projectId: string, priceId: string): Promise<Result<OperatorPrice, 'project_not_found' | 'price_not_found' | RequestFailureCode>>;
  /** The project's subscriptions, newest first, a page at a time (50 by default, at most 500). */
  listSubscriptions(
    projectId: string,
    filter: ListFilter & { status?: string },
  ): Promise<Result<RecordPage<OperatorSubscriptionView>, 'project_not_found' | 'invalid_cursor'>>;
  /** Every user's invoices of the project, newest first, a page at a time (50 by default, at most 500). */
  listProjectInvoices(
    projectId: string,
    filter: ListFilter & { status?: InvoiceStatus },
  ): Promise<Result<RecordPage<OperatorInvoiceView>, 'project_not_found' | 'invalid_cursor'>>;
  listEvents(projectId: string, filter: { type?: BillingEvent['type']; limit?: number }): Promise<Result<BillingEvent[], 'project_not_found'>>;
  /** Moves the project's sandbox clock and applies what falls due (renewals, trial ends, ...). */
  advanceSandbox(
    projectId: string,
    days: number,
  ): Promise<Result<{ now: Date; changed: number }, 'project_not_found' | 'sandbox_unavailable' | 'invalid_sandbox_days'>>;
  /** The project's sandbox time and how far ahead of real time it is. */
  sandboxClock(projectId: string): Promise<Result<SandboxClockView, 'project_not_found' | 'sandbox_unavailable'>>;
  createSandboxPromotionCode(
    projectId: string,
    code: string,
    percentOff: number,
  ): Promise<Result<{ code: string; percentOff: number }, 'project_not_found' | 'sandbox_unavailable' | 'invalid_promotion_code' | 'invalid_percent_off'>>;
  /** Credit packs (docs/usage.md): created, listed (archived ones too for the operator), archived. */
  createCreditPack: ReturnType<typeof makeCreateCreditPack>;
  listCreditPacks: ReturnType<typeof makeListCreditPacks>;
  archiveCreditPack: ReturnType<typeof makeArchiveCreditPack>;
}

export interface UserUseCases {
  /** Visible plans in hierarchy order with their active prices: those sold to users (default) or to organizations. */
  listVisiblePlans(project: Project, kind?: SubjectKind): Promise<PlanView[]>;
  /** Every plan (hidden ones too: a project may sell them by link) with its active prices. */
  listProducts(project: Project): Promise<PlanView[]>;
  startCheckout(actor: BillingActor, input: CheckoutRequest): Promise<Result<{ id: string; url: string }, StartCheckoutError>>;
  createSetupIntent(
    actor: BillingActor,
    requestKey: string,
  ): Promise<Result<{ clientSecret: string; publishableKey: string }, ConnectedError | RequestFailureCode | SubjectError>>;
  subscribe(
    actor: BillingActor,
    input: { priceId: string; paymentMethodId: string; quantity?: unknown; requestKey: string },
  ): Promise<Result<SubscriptionView, SubscribeError>>;
  /** What setting the organization's bought seats to `quantity` would charge now. */
  previewSeats: ReturnType<typeof makePreviewSeats>;
  /** The organization's bought seats set to `quantity` (org:billing:manage). */
  setSeats: ReturnType<typeof makeSetSeats>;
  /** The live subscription, or null. */
  currentSubscription(actor: BillingActor): Promise<Result<SubscriptionView | null, SubjectError<'read'>>>;
  listInvoices(actor: BillingActor, limit: number): Promise<Result<InvoiceView[], SubjectError<'read'>>>;
  entitlements(actor: BillingActor): Promise<Result<Entitlements | null, SubjectError<'read'>>>;
  previewChange(actor: BillingActor, newPriceId: string): Promise<Result<ChangePreviewView, PreviewChangeError>>;
  changeSubscription(actor: BillingActor, input: { newPriceId: string; requestKey: string }): Promise<Result<SubscriptionView, ChangeSubscriptionError>>;
  cancelSubscription(actor: BillingActor, input: { atPeriodEnd: boolean; requestKey: string }): Promise<Result<SubscriptionView, CancelSubscriptionError>>;
  pauseSubscription(actor: BillingActor, input: { requestKey: string }): Promise<Result<SubscriptionView, PauseSubscriptionError>>;
  resumeSubscription(actor: BillingActor, input: { requestKey: string }): Promise<Result<SubscriptionView, ResumeSubscriptionError>>;
  /** A hosted checkout for one credit pack, for the user or their active organization. */
  buyCreditPack: ReturnType<typeof makeBuyCreditPack>;
}

export interface ProcessorUseCases {
  /**
   * A payment processor's webhook: its inbound webhooks found by the processor's name, the project
   * from the path (when given) or the payload's hints, the signature checked with that project's
   * webhook secret, the event applied once.
   */
  receiveProcessorWebhook(input: ProcessorWebhook): Promise<Result<{ received: true; duplicate: boolean }, ReceiveWebhookError>>;
  /** Applies the sandbox's due work for every project (the scheduled job). */
  runSandboxRenewals(): Promise<{ changed: number }>;
  sandboxCheckout(checkoutId: string): Promise<Result<SandboxCheckoutView, 'sandbox_unavailable' | 'checkout_not_found'>>;
  /** Pays a sandbox checkout with a test card; answers where to send the browser. */
  completeSandboxCheckout(
    checkoutId: string,
    card: string,
  ): Promise<Result<{ redirectTo: string }, 'sandbox_unavailable' | 'checkout_not_found' | 'checkout_not_open' | FailureCode>>;
}

/** What the project's own server may do (its API key), and what follows an organization's deletion. */
export interface ProjectServerUseCases {
  /** Any organization's subscription, entitlements and invoices, and cancelling it. */
  organizationBilling: ReturnType<typeof makeOrganizationBilling>;
  /** ORGANIZATION_DELETED_TOPIC's handler: the organization's subscription canceled at period end. */
  windDownOrganization: ReturnType<typeof makeWindDownOrganization>;
  /** A subject's entitlements now (token verification with `include: ["entitlements"]`). */
  subjectEntitlements: ReturnType<typeof makeSubjectEntitlements>;
  /** Usage past the included amounts reported to the processor (every minute, and before the sandbox's renewals). */
  reportUsage: ReturnType<typeof makeReportUsage>;
  /** ORGANIZATION_SEATS_TOPIC's handler: an automatic per-seat subscription's quantity follows the seats in use. */
  syncSeats: ReturnType<typeof makeSyncSeats>;
}

export type BillingUseCases = OperatorUseCases & UserUseCases & ProcessorUseCases & ProjectServerUseCases;

export type { BillingErrorCode };
