import type { ProcessorMetadata } from '../../../application/billing/payment-processor';
import type { PriceSnapshot } from '../../../domain/billing/catalog';
import type { SeatPricing } from '../../../domain/billing/seat-terms';
import type { InvoiceLineKind, InvoiceReason, InvoiceStatus } from '../../../domain/billing/invoice';
import type { BillingInterval } from '../../../domain/billing/periods';
import type { Subscription, SubscriptionStatus } from '../../../domain/billing/subscription';
import type { Database } from '../../persistence/database';
import { isUuid, read, rowMapper } from '../../persistence/rows';
import type { Decline } from './test-cards';

/**
 * The sandbox's own state: one row of `sandbox_objects` per object, with Stripe-like id prefixes,
 * its project, its parent (a card's or subscription's customer, an invoice's subscription) and its
 * fields as JSON; `due_at` on a subscription is when its next transition falls due (the domain's
 * `nextActionAt`). `sandbox_clocks` holds each project's clock offset.
 */
export type SandboxKind =
  | 'customer'
  | 'payment_method'
  | 'subscription'
  | 'invoice'
  | 'checkout_session'
  | 'setup_intent'
  | 'promotion_code'
  | 'product'
  | 'price'
  | 'refund'
  | 'idempotency';

export const ID_PREFIX = {
  customer: 'cus_sbx_',
  payment_method: 'pm_sbx_',
  subscription: 'sub_sbx_',
  invoice: 'in_sbx_',
  checkout_session: 'cs_sbx_',
  setup_intent: 'seti_sbx_',
  promotion_code: 'promo_sbx_',
  product: 'prod_sbx_',
  price: 'price_sbx_',
  refund: 're_sbx_',
  idempotency: 'idem_sbx_',
} as const satisfies Record<SandboxKind, string>;

/** Dates inside `data` are ISO strings. */
type Iso = string;

export interface CustomerData {
  email: string | null;
  name: string | null;
  metadata: Partial<ProcessorMetadata>;
  /** Credit the customer holds (downgrade credits), minor units, zero or positive. */
  creditBalance: number;
  defaultPaymentMethodId: string | null;
}

export interface PaymentMethodData {
  /** The test payment method it was cloned from (`pm_card_visa`). */
  source: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  /** Every charge fails with this (pm_card_chargeCustomerFail); null when charges succeed. */
  declineOnCharge: Decline | null;
}

export interface ProductData {
  name: string;
  description: string;
  features: string[];
  active: boolean;
  metadata: Partial<ProcessorMetadata>;
}

export interface PriceData {
  productId: string;
  name: string;
  amount: number;
  currency: string;
  interval: BillingInterval;
  active: boolean;
  /** A per-seat price's terms (absent on prices made before seats: flat). */
  seats?: SeatPricing | null;
  /** A metered price (usage past a plan's included amount): `amount` per started package of `packageSize` units of the meter. */
  metered?: { meterKey: string; meterName: string; packageSize: number } | null;
  metadata: Partial<ProcessorMetadata>;
}

export interface SubscriptionJson {
  status: SubscriptionStatus;
  price: PriceSnapshot;
  currentPeriodStart: Iso;
  currentPeriodEnd: Iso;
  billingCycleAnchor: Iso;
  cancelAtPeriodEnd: boolean;
  canceledAt: Iso | null;
  endedAt: Iso | null;
  trialStart: Iso | null;
  trialEnd: Iso | null;
  pausedAt: Iso | null;
  pastDueAt: Iso | null;
  createdAt: Iso;
}

export interface SubscriptionData {
  /** 1, 2, 3, ... per customer: the order of the customer's subscriptions (newest has the highest). */
  sequence: number;
  subscription: SubscriptionJson;
  customerId: string;
  /** The card renewals are charged to. */
  paymentMethodId: string | null;
  metadata: Partial<ProcessorMetadata>;
  /** A promotion code's percent off, kept until the first invoice with a subscription line uses it. */
  pendingPercentOff: number | null;
  /** The checkout session that created it, if any. */
  checkoutId: string | null;
  /**
   * Due work was applied by a request that then failed, so no answer told Tollgate about it: the
   * next `runDue` reports the subscription as changed.
   */
  unreported?: boolean;
  /** Usage reported this period, by metered price: the units and the identifiers recorded (each once); billed at the renewal. */
  metered?: Record<string, { quantity: number; identifiers: string[] }>;
}

export interface InvoiceLineJson {
  kind: InvoiceLineKind;
  description: string;
  priceId: string | null;
  /** The seats of a per-seat line (absent: a flat price's line). */
  quantity?: number;
  amount: number;
  periodStart: Iso;
  periodEnd: Iso;
}

export interface InvoiceData {
  /** 1, 2, 3, ... per subscription: the invoices' order. */
  number: number;
  subscriptionId: string;
  customerId: string;
  status: InvoiceStatus;
  reason: InvoiceReason;
  currency: string;
  /** Sum of the lines, before the discount. */
  subtotal: number;
  /** Taken off by a promotion code. */
  discount: number;
  creditApplied: number;
  amountDue: number;
  amountPaid: number;
  attemptCount: number;
  lines: InvoiceLineJson[];
  periodStart: Iso;
  periodEnd: Iso;
  createdAt: Iso;
  paidAt: Iso | null;
  /** Refunded of `amountPaid` so far (absent on invoices stored before refunds existed: 0). */
  amountRefunded?: number;
}

/** A refund of (part of) a paid invoice's payment; its parent is the invoice. */
export interface RefundData {
  invoiceId: string;
  amount: number;
  currency: string;
  reason: string;
  status: 'succeeded';
}

export interface CheckoutData {
  customerId: string;
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCodeId: string | null;
  percentOff: number | null;
  trialDays: number | null;
  /** Seats of a per-seat price (absent on sessions made before seats: 1). */
  quantity?: number;
  metadata: ProcessorMetadata;
  email: string | null;
  status: 'open' | 'complete';
  expiresAt: Iso;
  subscriptionId: string | null;
  completedAt: Iso | null;
  /** A one-off payment (a credit pack: Stripe's `mode: payment`) instead of a subscription. */
  payment?: { name: string; amount: number; currency: string; paid: boolean } | null;
}

export interface SetupIntentData {
  customerId: string;
  clientSecret: string;
  status: 'requires_payment_method';
}

export interface PromotionCodeData {
  code: string;
  percentOff: number;
  active: boolean;
}

export interface IdempotencyData {
  /** Which call, with which parameters: another call with the same key is refused. */
  fingerprint: string;
  /** The stored answer (dates as ISO strings); null while the first call runs. */
  answer: unknown;
  expiresAt: Iso;
}

export interface SandboxObject<D> {
  id: string;
  projectId: string;
  kind: SandboxKind;
  parentId: string | null;
  data: D;
  dueAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const toObject = rowMapper<SandboxObject<unknown>>({
  id: read.text,
  projectId: read.text,
  kind: read.as<SandboxKind>(),
  parentId: read.textOrNull,
  data: (v) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v),
  dueAt: read.dateOrNull,
  createdAt: read.date,
  updatedAt: read.date,
});

export const SANDBOX_OBJECT_COLUMNS = toObject.columns;
export const toSandboxObject = <D>(row: object): SandboxObject<D> => toObject(row) as SandboxObject<D>;

/** Reads and writes `sandbox_objects` and `sandbox_clocks` with plain SQL. */
export class SandboxObjects {
  constructor(private readonly db: Database) {}

  /** One object of the project, optionally locked (`for update`) until the transaction ends. */
  async get<D>(projectId: string, kind: SandboxKind, id: string, options: { lock?: boolean } = {}): Promise<SandboxObject<D> | null> {
    if (!id.startsWith(ID_PREFIX[kind])) return null;
    const rows = await this.db.query(
      `select ${toObject.columns} from sandbox_objects where id = ? and project_id = ? and kind = ?${options.lock ? ' for update' : ''}`,
      [id, projectId, kind],
    );
    return rows.length > 0 ? toSandboxObject<D>(rows[0]!) : null;
  }

  /** An object by id in any project (checkout pages are reached by the session id alone). */
  async getAnyProject<D>(kind: SandboxKind, id: string, options: { lock?: boolean } = {}): Promise<SandboxObject<D> | null> {
    if (!id.startsWith(ID_PREFIX[kind])) return null;
    const rows = await this.db.query(`select ${toObject.columns} from sandbox_objects where id = ? and kind = ?${options.lock ? ' for update' : ''}`, [
      id,
      kind,
    ]);
    return rows.length > 0 ? toSandboxObject<D>(rows[0]!) : null;
  }

  async insert<D>(object: SandboxObject<D>): Promise<void> {
    await this.db.query(
      `insert into sandbox_objects (id, project_id, kind, parent_id, data, due_at, created_at, updated_at)
       values (?, ?, ?, ?, ?::jsonb, ?, ?, ?)`,
      [object.id, object.projectId, object.kind, object.parentId, JSON.stringify(object.data), object.dueAt, object.createdAt, object.updatedAt],
    );
  }

  /** Inserts unless the id exists; true when inserted (waits for a concurrent insert of the same id). */
  async insertIfAbsent<D>(object: SandboxObject<D>): Promise<boolean> {
    const rows = await this.db.query(
      `insert into sandbox_objects (id, project_id, kind, parent_id, data, due_at, created_at, updated_at)
       values (?, ?, ?, ?, ?::jsonb, ?, ?, ?) on conflict (id) do nothing returning id`,
      [object.id, object.projectId, object.kind, object.parentId, JSON.stringify(object.data), object.dueAt, object.createdAt, object.updatedAt],
    );
    return rows.length > 0;
  }

  async update<D>(object: Pick<SandboxObject<D>, 'id' | 'data' | 'dueAt' | 'parentId' | 'updatedAt'>): Promise<void> {
    await this.db.query(`update sandbox_objects set data = ?::jsonb, due_at = ?, parent_id = ?, updated_at = ? where id = ?`, [
      JSON.stringify(object.data),
      object.dueAt,
      object.parentId,
      object.updatedAt,
      object.id,
    ]);
  }

  async remove(id: string): Promise<void> {
    await this.db.query(`delete from sandbox_objects where id = ?`, [id]);
  }

  /** A customer's subscriptions' ids, newest first. */
  async subscriptionIdsOf(projectId: string, customerId: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `select id from sandbox_objects where project_id = ? and kind = 'subscription' and parent_id = ?
        order by (data->>'sequence')::int desc, created_at desc, id desc`,
      [projectId, customerId],
    );
    return rows.map((r) => r.id);
  }

  /** A subscription's latest invoices (by number), oldest first. */
  async invoicesOf(projectId: string, subscriptionId: string, limit: number): Promise<Array<SandboxObject<InvoiceData>>> {
    const rows = await this.db.query(
      `select ${toObject.columns} from sandbox_objects
        where project_id = ? and kind = 'invoice' and parent_id = ?
        order by (data->>'number')::int desc limit ?`,
      [projectId, subscriptionId, limit],
    );
    return rows.map((r) => toSandboxObject<InvoiceData>(r)).reverse();
  }

  async countChildren(projectId: string, kind: SandboxKind, parentId: string): Promise<number> {
    const rows = await this.db.query<{ n: string }>(`select count(*) as n from sandbox_objects where project_id = ? and kind = ? and parent_id = ?`, [
      projectId,
      kind,
      parentId,
    ]);
    return read.number(rows[0]?.n ?? 0);
  }

  /** The project's active promotion code with this code, compared case-insensitively. */
  async findPromotionCode(projectId: string, code: string): Promise<SandboxObject<PromotionCodeData> | null> {
    const rows = await this.db.query(
      `select ${toObject.columns} from sandbox_objects
        where project_id = ? and kind = 'promotion_code' and lower(data->>'code') = lower(?) and (data->>'active')::boolean
        order by created_at limit 1`,
      [projectId, code.trim()],
    );
    return rows.length > 0 ? toSandboxObject<PromotionCodeData>(rows[0]!) : null;
  }

  /** The project's clock offset in seconds (0 when it never moved). */
  async offsetSeconds(projectId: string): Promise<number> {
    if (!isUuid(projectId)) return 0;
    const rows = await this.db.query<{ s: string }>(`select offset_seconds as s from sandbox_clocks where project_id = ?`, [projectId]);
    return rows.length > 0 ? read.number(rows[0]!.s) : 0;
  }

  /** Adds to the project's clock offset; answers the new offset. */
  async addOffset(projectId: string, seconds: number): Promise<number> {
    const rows = await this.db.query<{ s: string }>(
      `insert into sandbox_clocks (project_id, offset_seconds) values (?, ?)
       on conflict (project_id) do update set offset_seconds = sandbox_clocks.offset_seconds + excluded.offset_seconds
       returning offset_seconds as s`,
      [projectId, seconds],
    );
    return read.number(rows[0]!.s);
  }

  /**
   * Up to `limit` subscriptions due at their project's sandbox time (`now` plus the project's
   * offset), after `afterId` in id order.
   */
  async dueSubscriptions(now: Date, projectId: string | null, afterId: string, limit: number): Promise<Array<{ id: string; projectId: string }>> {
    const rows = await this.db.query<{ id: string; project_id: string }>(
      `select o.id, o.project_id from sandbox_objects o
         left join sandbox_clocks c on c.project_id = o.project_id
        where o.kind = 'subscription' and o.due_at is not null
          and o.due_at <= ?::timestamptz + make_interval(secs => coalesce(c.offset_seconds, 0)::double precision)
          and o.id > ?${projectId === null ? '' : ' and o.project_id = ?'}
        order by o.id limit ?`,
      projectId === null ? [now, afterId, limit] : [now, afterId, projectId, limit],
    );
    return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
  }

  /** Deletes stored idempotent answers older than `ttlSeconds` of their project's sandbox time. */
  async purgeIdempotency(now: Date, projectId: string | null, ttlSeconds: number): Promise<void> {
    await this.db.query(
      `delete from sandbox_objects o
        where o.kind = 'idempotency'${projectId === null ? '' : ' and o.project_id = ?'}
          and o.created_at <= ?::timestamptz - make_interval(secs => ?::double precision)
            + make_interval(secs => coalesce((select c.offset_seconds from sandbox_clocks c where c.project_id = o.project_id), 0)::double precision)`,
      projectId === null ? [now, ttlSeconds] : [projectId, now, ttlSeconds],
    );
  }

  /** Locks a subscription if it is due at `now` and no other worker holds it; null otherwise. */
  async lockDueSubscription(id: string, now: Date): Promise<SandboxObject<SubscriptionData> | null> {
    const rows = await this.db.query(
      `select ${toObject.columns} from sandbox_objects
        where id = ? and kind = 'subscription' and due_at is not null and due_at <= ?
        for update skip locked`,
      [id, now],
    );
    return rows.length > 0 ? toSandboxObject<SubscriptionData>(rows[0]!) : null;
  }
}

// ---- dates in JSON -------------------------------------------------------------------------------

const iso = (d: Date): Iso => d.toISOString();
const isoOrNull = (d: Date | null): Iso | null => (d === null ? null : d.toISOString());
const date = (s: Iso): Date => new Date(s);
const dateOrNull = (s: Iso | null): Date | null => (s === null ? null : new Date(s));

export function subscriptionToJson(s: Subscription): SubscriptionJson {
  return {
    status: s.status,
    price: {
      id: s.price.id,
      planId: s.price.planId,
      amount: s.price.amount,
      currency: s.price.currency,
      interval: s.price.interval,
      ...(s.price.quantity === undefined ? {} : { quantity: s.price.quantity }),
    },
    currentPeriodStart: iso(s.currentPeriodStart),
    currentPeriodEnd: iso(s.currentPeriodEnd),
    billingCycleAnchor: iso(s.billingCycleAnchor),
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    canceledAt: isoOrNull(s.canceledAt),
    endedAt: isoOrNull(s.endedAt),
    trialStart: isoOrNull(s.trialStart),
    trialEnd: isoOrNull(s.trialEnd),
    pausedAt: isoOrNull(s.pausedAt),
    pastDueAt: isoOrNull(s.pastDueAt),
    createdAt: iso(s.createdAt),
  };
}

export function subscriptionFromJson(id: string, j: SubscriptionJson): Subscription {
  return {
    id,
    status: j.status,
    price: j.price,
    currentPeriodStart: date(j.currentPeriodStart),
    currentPeriodEnd: date(j.currentPeriodEnd),
    billingCycleAnchor: date(j.billingCycleAnchor),
    cancelAtPeriodEnd: j.cancelAtPeriodEnd,
    canceledAt: dateOrNull(j.canceledAt),
    endedAt: dateOrNull(j.endedAt),
    trialStart: dateOrNull(j.trialStart),
    trialEnd: dateOrNull(j.trialEnd),
    pausedAt: dateOrNull(j.pausedAt),
    pastDueAt: dateOrNull(j.pastDueAt),
    createdAt: date(j.createdAt),
  };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** JSON of a stored answer with its dates (ISO strings, as `JSON.stringify` wrote them) back as `Date`s. */
export function reviveDates<T>(value: unknown): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return ISO_DATE.test(v) ? new Date(v) : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}
