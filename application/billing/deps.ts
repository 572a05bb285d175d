import { subscriptionState, upcomingInvoice } from '../../domain/billing/subscription';
import type { AuditLog } from '../audit/audit-log';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { Logger } from '../ports/logger';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { ProjectStore } from '../projects/project.store';
import type { UserDirectory } from '../users/user-directory';
import type { UserStore } from '../users/user.store';
import type {
  BillingConnection,
  BillingConnectionStore,
  BillingEventLog,
  BillingInvoice,
  BillingSubscription,
  CatalogStore,
  CustomerStore,
  EntitlementsReader,
  EventPublisher,
  InvoiceStore,
  ProcessorEventLog,
  StoredPlan,
  StoredPrice,
  SubscriptionLocks,
  SubscriptionStore,
} from './billing.store';
import { type BillingOutcome, refuse } from './errors';
import type { PaymentProcessor, ProcessorInvoiceLine } from './payment-processor';
import type { InboundWebhooks, ProcessorDirectory, SandboxControl } from './processors';
import type { InvoiceLineView, InvoiceView, OperatorInvoiceView, OperatorPlanView, PlanView, PriceView, SubscriptionView } from './views';
import { keepRenewing } from '../keep-renewing';

/** Everything billing's use cases may ask for; each use case takes the part it needs (`Pick`). */
export interface BillingDeps {
  connections: BillingConnectionStore;
  catalog: CatalogStore;
  customers: CustomerStore;
  subscriptions: SubscriptionStore;
  invoices: InvoiceStore;
  events: EventPublisher;
  eventLog: BillingEventLog;
  locks: SubscriptionLocks;
  processorEvents: ProcessorEventLog;
  entitlementsReader: EntitlementsReader;
  processors: ProcessorDirectory;
  webhooks: InboundWebhooks;
  /** The sandbox's controls; null when the sandbox is disabled (production without the setting). */
  sandbox: SandboxControl | null;
  projects: Pick<ProjectStore, 'findById'>;
  users: Pick<UserStore, 'findById'>;
  /** The operator's lists name each row's user by email. */
  directory: Pick<UserDirectory, 'emails'>;
  uow: UnitOfWork;
  clock: Clock;
  crypto: Pick<TokenCrypto, 'uuid' | 'hash'>;
  logger: Logger;
  /** What Tollgate does on its own (a duplicate's refund) is audited here; user actions are audited where they are wired. */
  audit: AuditLog;
  settings: BillingSettings;
}

export interface BillingSettings {
  /** The sandbox may be connected (not production, or production with the explicit setting). */
  sandboxAllowed: boolean;
  /** Public base URL (the Stripe webhook URL shown to operators). */
  publicUrl: string;
}

/**
 * Tollgate's id for the subscription one request creates (subscribe, checkout), derived from the
 * request: the project, the user and the request's key (its Idempotency-Key, or a fresh one). The id
 * travels to the processor as metadata in an idempotent write, so a retried request must name the
 * same id: with a fresh one the repeated write carries other parameters, and Stripe refuses it
 * ("Keys for idempotent requests can only be used with the same parameters") instead of replaying
 * it. A UUID in the RFC 9562 version 8 layout, from SHA-256.
 */
export function requestScopedId(deps: Pick<BillingDeps, 'crypto'>, kind: string, projectId: string, userId: string, requestKey: string): string {
  const h = deps.crypto.hash(`tollgate:${kind}:${projectId}:${userId}:${requestKey}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** How long a subscription change may hold the user's lease before another request may take it. */
/** The user's billing lease lasts this long unless renewed, every LOCK_HEARTBEAT_MS while its work runs. */
export const LOCK_TTL_SECONDS = 10;
const LOCK_HEARTBEAT_MS = 3_000;

/** The project's connection and its processor, or the refusal when billing cannot run. */
export async function connectedProcessor(
  deps: Pick<BillingDeps, 'connections' | 'processors' | 'settings'>,
  projectId: string,
): Promise<BillingOutcome<{ connection: BillingConnection; processor: PaymentProcessor }>> {
  const connection = await deps.connections.get(projectId);
  if (connection === null) return refuse('billing_not_connected');
  if (connection.processor === 'sandbox' && !deps.settings.sandboxAllowed) return refuse('sandbox_unavailable');
  return { ok: true, value: { connection, processor: deps.processors.forConnection(connection) } };
}

/** How long a request waits for the user's lease held by another one before it gives up. */
export const LOCK_WAIT_MS = 5_000;
const LOCK_POLL_MS = 25;

/**
 * Runs `work` holding the user's billing lease, or answers null when another holder kept it for
 * {@link LOCK_WAIT_MS}. Every path that changes or records a user's subscription takes it: the
 * user's own actions, and the re-reading of the processor's state that a webhook or a sandbox
 * renewal causes. So a state read from the processor is recorded before anyone changes it again,
 * and a webhook's re-read never writes back a state older than one already recorded. The lease is
 * renewed while `work` runs and expires on its own within LOCK_TTL_SECONDS if this process dies
 * (a retry after a crash waits seconds, not a minute).
 */
export async function underUserLock<T>(
  deps: Pick<BillingDeps, 'locks' | 'crypto' | 'clock'>,
  projectId: string,
  userId: string,
  work: () => Promise<T>,
): Promise<{ value: T } | null> {
  const holder = deps.crypto.uuid();
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  while (!(await deps.locks.acquire(projectId, userId, holder, LOCK_TTL_SECONDS, deps.clock.now()))) {
    if (Date.now() >= giveUpAt) return null;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS + Math.floor(Math.random() * LOCK_POLL_MS)));
  }
  const heartbeat = keepRenewing(() => deps.locks.renew(projectId, userId, holder, LOCK_TTL_SECONDS, deps.clock.now()), LOCK_HEARTBEAT_MS);
  try {
    return { value: await work() };
  } finally {
    await heartbeat.stop();
    await deps.locks.release(projectId, userId, holder);
  }
}

/**
 * A user action on billing under the user's lease (see {@link underUserLock}): concurrent changes
 * to one user's subscription (20 parallel subscribes) run one after the other, so the later ones
 * see the first one's subscription instead of making a second charge; `subscription_busy` when the
 * lease stayed taken.
 */
export async function withUserLock<T>(
  deps: Pick<BillingDeps, 'locks' | 'crypto' | 'clock'>,
  projectId: string,
  userId: string,
  work: () => Promise<BillingOutcome<T>>,
): Promise<BillingOutcome<T>> {
  const done = await underUserLock(deps, projectId, userId, work);
  return done === null ? refuse('subscription_busy') : done.value;
}

export const priceView = (price: StoredPrice): PriceView => ({
  id: price.id,
  planId: price.planId,
  name: price.name,
  amount: price.amount,
  currency: price.currency,
  interval: price.interval,
  active: price.active,
});

export const planView = (plan: StoredPlan, prices: readonly StoredPrice[]): PlanView => ({
  id: plan.id,
  name: plan.name,
  description: plan.description,
  features: [...plan.features],
  hidden: plan.hidden,
  recommended: plan.recommended,
  trialsEnabled: plan.trialsEnabled,
  defaultTrialDays: plan.defaultTrialDays,
  position: plan.position,
  prices: prices.map(priceView),
});

export const operatorPlanView = (plan: StoredPlan, prices: readonly StoredPrice[]): OperatorPlanView => ({
  ...planView(plan, []),
  processorProductId: plan.processorProductId,
  prices: prices.map((p) => ({ ...priceView(p), processorPriceId: p.processorPriceId })),
});

/** Names of the plan and price a subscription is on, for its view. */
export interface CatalogNames {
  planName(planId: string): string;
  priceName(priceId: string): string;
}

export async function catalogNames(catalog: CatalogStore, projectId: string): Promise<CatalogNames> {
  const [plans, prices] = await Promise.all([catalog.listPlans(projectId), catalog.listPrices(projectId)]);
  const planNames = new Map(plans.map((p) => [p.id, p.name]));
  const priceNames = new Map(prices.map((p) => [p.id, p.name]));
  return { planName: (id) => planNames.get(id) ?? '', priceName: (id) => priceNames.get(id) ?? '' };
}

export function subscriptionView(s: BillingSubscription, names: CatalogNames): SubscriptionView {
  const next = upcomingInvoice(s);
  return {
    id: s.id,
    userId: s.userId,
    status: subscriptionState(s),
    plan: { id: s.price.planId, name: names.planName(s.price.planId) },
    price: { id: s.price.id, name: names.priceName(s.price.id), amount: s.price.amount, currency: s.price.currency, interval: s.price.interval },
    currentPeriodStart: s.currentPeriodStart,
    currentPeriodEnd: s.currentPeriodEnd,
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    canceledAt: s.canceledAt,
    endedAt: s.endedAt,
    trialStart: s.trialStart,
    trialEnd: s.trialEnd,
    pausedAt: s.pausedAt,
    nextInvoice: next,
    paymentMethod: s.paymentMethod
      ? { brand: s.paymentMethod.brand, last4: s.paymentMethod.last4, expMonth: s.paymentMethod.expMonth, expYear: s.paymentMethod.expYear }
      : null,
    processor: s.processor,
    createdAt: s.createdAt,
  };
}

export const invoiceLineView = (line: ProcessorInvoiceLine): InvoiceLineView => ({
  description: line.description,
  amount: line.amount,
  proration: line.kind !== 'subscription',
  priceId: line.priceId,
  periodStart: line.periodStart,
  periodEnd: line.periodEnd,
});

export const invoiceView = (invoice: BillingInvoice): InvoiceView => ({
  id: invoice.id,
  subscriptionId: invoice.subscriptionId,
  status: invoice.status,
  reason: invoice.reason,
  currency: invoice.currency,
  subtotal: invoice.subtotal,
  amountDue: invoice.amountDue,
  amountPaid: invoice.amountPaid,
  amountRefunded: invoice.amountRefunded,
  lines: invoice.lines.map(invoiceLineView),
  periodStart: invoice.periodStart,
  periodEnd: invoice.periodEnd,
  hostedUrl: invoice.hostedUrl,
  createdAt: invoice.createdAt,
  paidAt: invoice.paidAt,
});

export const operatorInvoiceView = (invoice: BillingInvoice, userEmail: string | null): OperatorInvoiceView => ({
  ...invoiceView(invoice),
  userId: invoice.userId,
  userEmail,
  processor: invoice.processor,
  processorInvoiceId: invoice.processorInvoiceId,
});

/** A view as it is stored in an event payload: plain JSON, dates as ISO strings. */
export const toJson = (value: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
