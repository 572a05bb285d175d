import type { OrganizationEventType } from '../../domain/organizations/events';
import type { UsageEventType } from '../../domain/usage/events';
import type { UsageFeatureView } from '../../domain/usage/feature';
import type { CreditPack } from '../../domain/usage/credit-pack';
import type { Plan, Price } from '../../domain/billing/catalog';
import type { BillingEventType } from '../../domain/billing/events';
import type { InvoiceStatus, PaymentMethodSummary } from '../../domain/billing/invoice';
import type { Currency } from '../../domain/billing/money';
import type { EntitlementFacts } from '../../domain/billing/entitlements';
import type { BillingSubject } from '../../domain/billing/subject';
import type { Subscription } from '../../domain/billing/subscription';
import type { ProcessorInvoice, ProcessorKind } from './payment-processor';

/**
 * The stores billing use cases need (PostgreSQL adapters in infrastructure/persistence). Each
 * interface is what the use cases ask for, nothing more. Every read and write is scoped by project.
 */

/** A project's connection to its payment processor. Secrets decrypted only in memory. */
export interface BillingConnection {
  projectId: string;
  processor: ProcessorKind;
  /** Stripe secret or restricted key; null for the sandbox. */
  secretKey: string | null;
  publishableKey: string | null;
  /** Stripe webhook signing secret (whsec_...); null for the sandbox. */
  webhookSecret: string | null;
  keyLast4: string | null;
  livemode: boolean;
  accountId: string | null;
  currency: Currency;
  connectedAt: Date;
  updatedAt: Date;
}

export interface BillingConnectionStore {
  get(projectId: string): Promise<BillingConnection | null>;
  /** Insert or replace (secrets are encrypted by the store). */
  save(connection: BillingConnection): Promise<void>;
  remove(projectId: string): Promise<boolean>;
}

/** A plan as stored: the domain plan plus its processor product. */
export interface StoredPlan extends Plan {
  projectId: string;
  processor: ProcessorKind | null;
  processorProductId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredPrice extends Price {
  projectId: string;
  processor: ProcessorKind | null;
  processorPriceId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CatalogStore {
  /** Every plan of the project (hidden included), in hierarchy order. */
  listPlans(projectId: string): Promise<StoredPlan[]>;
  /** Every price of the project (archived included), oldest first. */
  listPrices(projectId: string): Promise<StoredPrice[]>;
  getPlan(projectId: string, planId: string): Promise<StoredPlan | null>;
  getPrice(projectId: string, priceId: string): Promise<StoredPrice | null>;
  findPriceByProcessorId(projectId: string, processor: ProcessorKind, processorPriceId: string): Promise<StoredPrice | null>;
  /** False when the name is taken in the project (case-insensitive): unique index. */
  insertPlan(plan: StoredPlan): Promise<boolean>;
  /** False when the new name is taken. */
  updatePlan(plan: StoredPlan): Promise<boolean>;
  /** Sets every listed plan's position (one statement). */
  setPositions(projectId: string, positions: ReadonlyArray<{ id: string; position: number }>): Promise<void>;
  insertPrice(price: StoredPrice): Promise<void>;
  updatePrice(price: StoredPrice): Promise<void>;
}

/** A subject's customer at a processor (a user's, or an organization's). */
export interface BillingCustomer {
  projectId: string;
  subject: BillingSubject;
  processor: ProcessorKind;
  customerId: string;
  trialUsed: boolean;
  createdAt: Date;
}

export interface CustomerStore {
  find(projectId: string, subject: BillingSubject, processor: ProcessorKind): Promise<BillingCustomer | null>;
  findByProcessorId(processor: ProcessorKind, customerId: string): Promise<BillingCustomer | null>;
  /** Inserts unless one exists; answers the stored one (first writer wins). */
  insert(customer: BillingCustomer): Promise<BillingCustomer>;
  markTrialUsed(projectId: string, subject: BillingSubject, processor: ProcessorKind): Promise<void>;
  /**
   * Forgets the project's customers at `processor` (the project connected another account of it,
   * where they do not exist); each is created again on next need. Answers how many were forgotten.
   */
  forget(projectId: string, processor: ProcessorKind): Promise<number>;
}

/** Tollgate's record of a subscription: the domain subscription plus who (a user or an organization) and where. */
export interface BillingSubscription extends Subscription {
  projectId: string;
  subject: BillingSubject;
  processor: ProcessorKind;
  processorSubscriptionId: string;
  customerId: string;
  paymentMethod: PaymentMethodSummary | null;
  updatedAt: Date;
}

export interface SubscriptionStore {
  /** The subject's live subscription (trialing, active, past_due, paused), if any. */
  findLive(projectId: string, subject: BillingSubject): Promise<BillingSubscription | null>;
  findById(projectId: string, id: string): Promise<BillingSubscription | null>;
  /** The record of a processor's subscription, without locking it. */
  findByProcessorId(processor: ProcessorKind, processorSubscriptionId: string): Promise<BillingSubscription | null>;
  /** The record, locked for update until the transaction ends. */
  findByProcessorIdForUpdate(processor: ProcessorKind, processorSubscriptionId: string): Promise<BillingSubscription | null>;
  /**
   * Insert or update by id. Answers 'live_conflict' when the write would give the subject a second
   * live subscription (the partial unique index).
   */
  save(subscription: BillingSubscription): Promise<'saved' | 'live_conflict'>;
  /** Newest first; `after`: only those listed after the subscription with this id (the previous page's last). */
  list(projectId: string, filter: { subject?: BillingSubject; status?: string; limit: number; after?: string }): Promise<BillingSubscription[]>;
  /** What Tollgate keeps of a per-seat subscription's seat changes (application/billing/organization-seats.ts). */
  seatLedger(projectId: string, id: string): Promise<SeatLedger>;
  saveSeatLedger(projectId: string, id: string, ledger: SeatLedger): Promise<void>;
}

/**
 * A per-seat subscription's seat changes: the most seats paid for in the period starting at
 * `periodStart` (a seat freed and taken again within it is not charged again), and how many
 * changes were made (it names their idempotency keys at the processor).
 */
export interface SeatLedger {
  paid: number | null;
  periodStart: Date | null;
  changes: number;
}

/** Tollgate's record of an invoice: the processor's invoice, owned by a subject (user or organization) and its subscription. */
export interface BillingInvoice extends Omit<ProcessorInvoice, 'id' | 'subscriptionId' | 'customerId'> {
  id: string;
  projectId: string;
  subject: BillingSubject;
  /** Tollgate's subscription id. */
  subscriptionId: string | null;
  processor: ProcessorKind;
  processorInvoiceId: string;
  /** Refunded of `amountPaid` by Tollgate (a duplicate subscription's charge); 0 when none. */
  amountRefunded: number;
  /** When Tollgate last refunded it; null when never. */
  refundedAt: Date | null;
  updatedAt: Date;
}

export interface InvoiceStore {
  findByProcessorIds(processor: ProcessorKind, processorInvoiceIds: readonly string[]): Promise<BillingInvoice[]>;
  /** Insert or update by (processor, processor invoice id); the id of an existing row is kept. */
  save(invoice: BillingInvoice): Promise<void>;
  /** Newest first; invoices of the same second in the order they were recorded (a renewal, then its plan change's proration). */
  listForSubject(projectId: string, subject: BillingSubject, limit: number): Promise<BillingInvoice[]>;
  /** The project's invoices in the same order as `listForSubject`, optionally only one subject's and only of one status. */
  /** Newest first; `after`: only those listed after the invoice with this id (the previous page's last). */
  list(projectId: string, filter: { subject?: BillingSubject; status?: InvoiceStatus; limit: number; after?: string }): Promise<BillingInvoice[]>;
}

/** A project event as recorded (delivery to project endpoints reads these). */
export interface BillingEvent {
  id: string;
  projectId: string;
  /** A billing event, or an organization's (the organizations feature records its events through the same log). */
  type: BillingEventType | OrganizationEventType | UsageEventType;
  userId: string | null;
  /** The organization the event concerns (an organization's subscription or invoice, an organization event), or null. */
  organizationId: string | null;
  subscriptionId: string | null;
  dedupeKey: string | null;
  /** The whole event as delivered: id, type, created, subscriptionId, userId, organizationId, amount, currency, data. */
  payload: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Records project events in the caller's transaction. An event whose dedupe key the project already
 * has is skipped (answers false), so an event derived twice lands once.
 */
export interface EventPublisher {
  publish(event: BillingEvent): Promise<boolean>;
}

export interface BillingEventLog {
  list(projectId: string, filter: { type?: BillingEvent['type']; limit: number }): Promise<BillingEvent[]>;
}

/**
 * A short lease per (project, subject) held while the subject's subscription is being changed at
 * the processor, so concurrent requests cannot create two subscriptions or charge twice. A lease
 * left by a crashed process expires. Keyed by the subject's id (user and organization ids are both
 * UUIDs, so they never meet).
 */
export interface SubscriptionLocks {
  /** True when acquired (free, or the previous lease expired). */
  acquire(projectId: string, subjectId: string, holder: string, ttlSeconds: number, now: Date): Promise<boolean>;
  /** Extends `holder`'s lease to `now` + `ttlSeconds`; false when it no longer holds it. */
  renew(projectId: string, subjectId: string, holder: string, ttlSeconds: number, now: Date): Promise<boolean>;
  release(projectId: string, subjectId: string, holder: string): Promise<void>;
}

/** Inbound processor events applied: each id once. */
export interface ProcessorEventLog {
  /** False when the event was already claimed (a duplicate). */
  claim(event: { processor: ProcessorKind; eventId: string; projectId: string; type: string; receivedAt: Date }): Promise<boolean>;
  /** Forget a claim whose handling failed, so the processor's retry applies it. */
  unclaim(processor: ProcessorKind, eventId: string): Promise<void>;
}

/**
 * The entitlements read, on every GET billing/entitlements (never cached): what the rules need of
 * the subject's live or most recent subscription, with its plan's name and features, in one query.
 */
export interface EntitlementsReader {
  /** `now`: pending invitations not yet expired then hold a seat. */
  current(projectId: string, subject: BillingSubject, now: Date): Promise<EntitlementsRead | null>;
}

/**
 * What the entitlements read answers: the subscription's facts, its plan, its quantity (null: a
 * flat price) and, on a per-seat price, the subject's members and pending invitations (in the same
 * round trip: an organization's seats cost no second query; the invitations are counted only where
 * the plan's seat policy counts them, else 0).
 */
/** Usage past the included amounts, seen from billing: what plans may limit, and what is still to be reported to the processor. */
export interface MeteredUsage {
  /** The keys of the project's meters (a plan's usage limits name them). */
  meterKeys(projectId: string): Promise<string[]>;
  /** Windows whose overage grew past what was reported, oldest first (every project's, or one's; or one subject's of a project). */
  unreported(projectId: string | null, limit: number, subject?: BillingSubject): Promise<UnreportedOverage[]>;
  /** Records `to` as reported, if nothing else did since `from` was read; false otherwise. */
  markReported(row: UnreportedOverage, to: number): Promise<boolean>;
  /** A meter of the project by key, or null. */
  meter(projectId: string, key: string): Promise<{ id: string; key: string; name: string; unit: string } | null>;
  /** Grants purchased credits once per `externalId` (a paid checkout's id); false when it was granted before. */
  grantPurchase(grant: PurchasedCredits): Promise<boolean>;
}

export interface PurchasedCredits {
  id: string;
  projectId: string;
  subject: BillingSubject;
  meterKey: string;
  units: number;
  expiresAt: Date | null;
  reason: string;
  externalId: string;
  at: Date;
}

/** A project's credit packs (docs/usage.md). */
export interface CreditPackStore {
  insert(pack: CreditPack): Promise<void>;
  /** Newest first; archived ones too unless `activeOnly`. */
  list(projectId: string, options: { activeOnly: boolean }): Promise<CreditPack[]>;
  get(projectId: string, id: string): Promise<CreditPack | null>;
  setActive(projectId: string, id: string, active: boolean): Promise<void>;
}

export interface UnreportedOverage {
  projectId: string;
  subject: BillingSubject;
  meterId: string;
  meterKey: string;
  meterName: string;
  windowStart: Date;
  overage: number;
  reported: number;
}

/** The standing of the metered features of a subject's plan (usage-based billing), given what the entitlements read found. */
export type MeteredFeatures = (projectId: string, subject: BillingSubject, current: EntitlementsRead) => Promise<UsageFeatureView[]>;

export interface EntitlementsRead {
  subscription: EntitlementFacts & { currentPeriodStart: Date };
  plan: Pick<Plan, 'id' | 'name' | 'features' | 'seatPolicy' | 'usageLimits'>;
  quantity: number | null;
  seatsHeld: { members: number; pendingInvitations: number } | null;
}
