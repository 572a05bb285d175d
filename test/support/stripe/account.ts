import type Stripe from 'stripe';
import { resourceMissing, StripeApiError } from './errors';
import { clone, newId, previousAttributes, randomString } from './util';

export const API_VERSION = '2025-08-27.basil';

/** Any stored Stripe object: `object` names its type, `id` its Stripe id. */
export type StripeObject = { id?: string; object: string; [key: string]: any };

export interface RequestInfo {
  requestId: string;
  idempotencyKey: string | null;
}

export interface IdempotencyRecord {
  method: string;
  path: string;
  params: string;
  status: number;
  body: string;
  requestId: string;
  createdAt: number;
}

/** Per-object state Stripe keeps but does not show (test-card behaviour, trial_will_end sent, ...). */
export interface Internal {
  card?: { behaviour: 'ok' | 'decline_on_attach' | 'decline_on_charge'; decline?: { code: string; decline_code: string; message: string } };
  /** customer.subscription.trial_will_end was sent for the current trial. */
  trialWillEndSent?: boolean;
  /** How many invoices a discount has been applied to (a `once` coupon applies to one). */
  discountInvoices?: number;
  /** A tiered price's tiers (`billing_scheme=tiered`), shown only when asked for (`expand[]=tiers`). */
  tiers?: Stripe.Price.Tier[];
  /** A Checkout Session's line items and subscription_data, used when it completes. */
  session?: { lineItems: StripeObject[]; subscriptionData: Record<string, any>; paymentIntentData?: Record<string, any> };
}

export interface AccountKeys {
  id: string;
  secretKey: string;
  restrictedKey: string;
  publishableKey: string;
  webhookSecret: string;
}

interface Snapshot {
  objects: Map<string, StripeObject>;
  order: Map<string, number>;
  internal: Map<string, Internal>;
  seq: number;
  invoiceNumber: number;
}

/**
 * One Stripe account: its keys, its objects, its own clock (like a Stripe test clock that every
 * object of the account is attached to), its events and its idempotency keys. Accounts never see
 * each other's objects.
 */
export class Account implements AccountKeys {
  readonly id: string;
  readonly secretKey: string;
  readonly restrictedKey: string;
  readonly publishableKey: string;
  readonly webhookSecret: string;
  readonly name: string;
  readonly email: string;
  readonly country: string;
  readonly defaultCurrency: string;
  /** Endpoints (METHOD /v1/prefix) the restricted key may not call: answered with 403. */
  readonly restrictedKeyDenies: string[];
  now: number;
  objects = new Map<string, StripeObject>();
  order = new Map<string, number>();
  internal = new Map<string, Internal>();
  seq = 0;
  invoiceNumber = 0;
  readonly invoicePrefix = randomString(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
  events: Stripe.Event[] = [];
  idempotency = new Map<string, IdempotencyRecord>();
  private pending: Stripe.Event[] | null = null;
  private request: RequestInfo | null = null;
  render: (account: Account, object: StripeObject) => StripeObject = (_a, o) => clone(o);
  onEvents: (account: Account, events: Stripe.Event[]) => void = () => {};

  constructor(
    init: Partial<AccountKeys> & { name?: string; email?: string; country?: string; defaultCurrency?: string; now: number; restrictedKeyDenies?: string[] },
  ) {
    this.id = init.id ?? newId('acct', 16);
    this.secretKey = init.secretKey ?? `sk_test_${randomString(32)}`;
    this.restrictedKey = init.restrictedKey ?? `rk_test_${randomString(32)}`;
    this.publishableKey = init.publishableKey ?? `pk_test_${randomString(32)}`;
    this.webhookSecret = init.webhookSecret ?? `whsec_${randomString(32)}`;
    this.name = init.name ?? 'Tollgate test account';
    this.email = init.email ?? 'owner@example.test';
    this.country = init.country ?? 'US';
    this.defaultCurrency = init.defaultCurrency ?? 'usd';
    this.restrictedKeyDenies = init.restrictedKeyDenies ?? [];
    this.now = init.now;
  }

  keys(): AccountKeys {
    return {
      id: this.id,
      secretKey: this.secretKey,
      restrictedKey: this.restrictedKey,
      publishableKey: this.publishableKey,
      webhookSecret: this.webhookSecret,
    };
  }

  // ---- objects -------------------------------------------------------------------------------

  put<T extends StripeObject>(obj: T): T {
    if (!obj.id) throw new Error('put: object without id');
    if (!this.order.has(obj.id)) this.order.set(obj.id, ++this.seq);
    this.objects.set(obj.id, obj);
    return obj;
  }

  get(id: string): StripeObject | undefined {
    return this.objects.get(id);
  }

  /** The stored object of that type, or Stripe's 404 "No such <kind>: '<id>'". */
  find<T = StripeObject>(type: string, id: string, kind: string, param = 'id'): T {
    const obj = this.objects.get(id);
    if (!obj || obj.object !== type || obj.deleted) throw resourceMissing(kind, id, param);
    return obj as T;
  }

  remove(id: string) {
    this.objects.delete(id);
  }

  /** Objects of one type, newest first (Stripe's list order). */
  all<T = StripeObject>(type: string, filter: (o: T) => boolean = () => true): T[] {
    const out: StripeObject[] = [];
    for (const o of this.objects.values()) if (o.object === type && !o.deleted && filter(o as T)) out.push(o);
    out.sort((a, b) => this.order.get(b.id!)! - this.order.get(a.id!)!);
    return out as T[];
  }

  state(id: string): Internal {
    let s = this.internal.get(id);
    if (!s) {
      s = {};
      this.internal.set(id, s);
    }
    return s;
  }

  // ---- transactions and events ---------------------------------------------------------------

  /**
   * Runs one API request or one clock step atomically, as Stripe applies a request: if it throws,
   * every object goes back to how it was and its events are dropped; if it succeeds, its events
   * are recorded and handed to webhook delivery.
   */
  transaction<T>(request: RequestInfo | null, fn: () => T): T {
    if (this.pending) return fn();
    const snapshot: Snapshot = {
      objects: clone(this.objects),
      order: new Map(this.order),
      internal: clone(this.internal),
      seq: this.seq,
      invoiceNumber: this.invoiceNumber,
    };
    this.pending = [];
    this.request = request;
    try {
      const result = fn();
      const events = this.pending;
      this.pending = null;
      this.request = null;
      this.events.push(...events);
      if (events.length) this.onEvents(this, events);
      return result;
    } catch (e) {
      if (e instanceof StripeApiError && e.commit) {
        const events = this.pending ?? [];
        this.pending = null;
        this.request = null;
        this.events.push(...events);
        if (events.length) this.onEvents(this, events);
        throw e;
      }
      this.objects = snapshot.objects;
      this.order = snapshot.order;
      this.internal = snapshot.internal;
      this.seq = snapshot.seq;
      this.invoiceNumber = snapshot.invoiceNumber;
      this.pending = null;
      this.request = null;
      throw e;
    }
  }

  private muted: ((type: string) => boolean) | null = null;

  /** Runs `fn` dropping the events `mute` matches (invoices made while collection is paused). */
  withoutEvents<T>(mute: (type: string) => boolean, fn: () => T): T {
    const previous = this.muted;
    this.muted = mute;
    try {
      return fn();
    } finally {
      this.muted = previous;
    }
  }

  /** Records an event whose `data.object` is the object as it is now (rendered, unexpanded). */
  emit(type: string, obj: StripeObject, previous?: Record<string, unknown>): Stripe.Event {
    const data: Record<string, unknown> = { object: this.render(this, obj) };
    if (previous && Object.keys(previous).length) data.previous_attributes = previous;
    const event = {
      id: newId('evt'),
      object: 'event',
      api_version: API_VERSION,
      created: this.now,
      data,
      livemode: false,
      pending_webhooks: 0,
      request: { id: this.request?.requestId ?? null, idempotency_key: this.request?.idempotencyKey ?? null },
      type,
    } as unknown as Stripe.Event;
    if (this.muted?.(type)) return event;
    if (this.pending) this.pending.push(event);
    else {
      this.events.push(event);
      this.onEvents(this, [event]);
    }
    return event;
  }

  /**
   * Applies `mutate` to a stored object and, when `eventType` is given, emits it with
   * `previous_attributes` holding what changed (only if something changed).
   */
  update<T extends StripeObject>(obj: T, mutate: (o: T) => void, eventType?: string): T {
    const before = this.render(this, obj);
    mutate(obj);
    if (eventType) {
      const prev = previousAttributes(before, this.render(this, obj));
      if (Object.keys(prev).length) this.emit(eventType, obj, prev);
    }
    return obj;
  }

  /** A position in this request's events, for {@link emitAt}. */
  mark(): number {
    return this.pending ? this.pending.length : this.events.length;
  }

  /**
   * Emits an event placed at `index` among this request's events: a request that creates a
   * subscription and charges it reports `customer.subscription.created` (with the final status)
   * before the invoice events it caused, as Stripe lists them.
   */
  emitAt(index: number, type: string, obj: StripeObject, previous?: Record<string, unknown>): Stripe.Event {
    if (!this.pending || this.muted?.(type)) return this.emit(type, obj, previous);
    const event = this.emit(type, obj, previous);
    this.pending.pop();
    this.pending.splice(index, 0, event);
    return event;
  }

  /** Runs `fn` against the current state and then puts everything back (invoice previews). */
  dryRun<T>(fn: () => T): T {
    const snapshot: Snapshot = {
      objects: clone(this.objects),
      order: new Map(this.order),
      internal: clone(this.internal),
      seq: this.seq,
      invoiceNumber: this.invoiceNumber,
    };
    const pending = this.pending;
    const request = this.request;
    this.pending = [];
    try {
      return clone(fn());
    } finally {
      this.objects = snapshot.objects;
      this.order = snapshot.order;
      this.internal = snapshot.internal;
      this.seq = snapshot.seq;
      this.invoiceNumber = snapshot.invoiceNumber;
      this.pending = pending;
      this.request = request;
    }
  }

  nextInvoiceNumber(): string {
    this.invoiceNumber += 1;
    return `${this.invoicePrefix}-${String(this.invoiceNumber).padStart(4, '0')}`;
  }
}
