import type Stripe from 'stripe';
import type { Account, StripeObject } from './account';
import { invalidRequest } from './errors';
import { clone, isPlainObject } from './util';

export function planFromPrice(price: Stripe.Price): Stripe.Plan {
  return {
    id: price.id,
    object: 'plan',
    active: price.active,
    amount: price.unit_amount,
    amount_decimal: price.unit_amount_decimal,
    billing_scheme: price.billing_scheme,
    created: price.created,
    currency: price.currency,
    interval: price.recurring?.interval ?? 'month',
    interval_count: price.recurring?.interval_count ?? 1,
    livemode: false,
    metadata: price.metadata,
    meter: price.recurring?.meter ?? null,
    nickname: price.nickname,
    product: price.product,
    tiers_mode: price.tiers_mode,
    transform_usage: price.transform_quantity ? { ...price.transform_quantity } : null,
    trial_period_days: price.recurring?.trial_period_days ?? null,
    usage_type: price.recurring?.usage_type ?? 'licensed',
  };
}

const EMBEDDED_LIST_LIMIT = 10;

/**
 * The object as the API shows it now: embedded objects that Stripe always returns in full
 * (a subscription item's price and plan, a discount's or promotion code's coupon) are read fresh,
 * and embedded lists (invoice lines, subscription items) show their first 10 entries with has_more.
 */
export function renderObject(acct: Account, stored: StripeObject): StripeObject {
  const obj = clone(stored);
  switch (obj.object) {
    case 'subscription':
      obj.items = { ...obj.items, data: obj.items.data.map((i: StripeObject) => renderItem(acct, i)) };
      obj.items = truncateList(obj.items);
      break;
    case 'subscription_item':
      return renderItem(acct, obj);
    case 'discount':
    case 'promotion_code': {
      const coupon = acct.get(obj.coupon.id);
      if (coupon) obj.coupon = clone(coupon);
      break;
    }
    case 'invoice':
      obj.lines = truncateList(obj.lines);
      break;
  }
  return obj;
}

function renderItem(acct: Account, item: StripeObject): StripeObject {
  const out = clone(item);
  const price = acct.get(item.price.id) as Stripe.Price | undefined;
  if (price) {
    out.price = clone(price);
    out.plan = planFromPrice(price);
  }
  return out;
}

function truncateList(list: StripeObject): StripeObject {
  const total = list.data.length;
  return { ...list, data: list.data.slice(0, EMBEDDED_LIST_LIMIT), has_more: total > EMBEDDED_LIST_LIMIT };
}

// ---- expansion -------------------------------------------------------------------------------

/** Fields that hold an id which `expand[]` replaces with the object (per object type, dotted). */
const EXPANDABLE: Record<string, string[]> = {
  customer: ['default_source', 'invoice_settings.default_payment_method', 'test_clock'],
  product: ['default_price', 'tax_code'],
  price: ['product'],
  payment_method: ['customer'],
  setup_intent: ['customer', 'payment_method', 'latest_attempt', 'mandate', 'single_use_mandate', 'application', 'on_behalf_of'],
  subscription: [
    'customer',
    'default_payment_method',
    'default_source',
    'latest_invoice',
    'discounts',
    'pending_setup_intent',
    'schedule',
    'application',
    'on_behalf_of',
    'test_clock',
  ],
  subscription_item: ['discounts'],
  invoice: [
    'customer',
    'default_payment_method',
    'default_source',
    'discounts',
    'latest_revision',
    'on_behalf_of',
    'application',
    'test_clock',
    'parent.subscription_details.subscription',
  ],
  line_item: ['discounts', 'subscription'],
  invoiceitem: ['customer', 'invoice', 'discounts', 'test_clock'],
  invoice_payment: ['invoice', 'payment.payment_intent', 'payment.charge'],
  payment_intent: ['customer', 'payment_method', 'latest_charge', 'application', 'on_behalf_of', 'review'],
  'checkout.session': ['customer', 'subscription', 'invoice', 'payment_intent', 'setup_intent', 'payment_link'],
  promotion_code: ['customer'],
  discount: ['customer', 'promotion_code'],
};

/**
 * Fields Stripe leaves out of an object unless asked for with `expand[]` ("includable"):
 * an invoice's `payments` and `confirmation_secret` (basil), a Checkout Session's `line_items`,
 * a tiered price's `tiers`.
 */
const INCLUDABLE: Record<string, Record<string, (acct: Account, obj: StripeObject) => unknown>> = {
  price: {
    tiers: (acct, obj) => (obj.billing_scheme === 'tiered' ? clone(acct.state(obj.id!).tiers ?? []) : undefined),
  },
  invoice: {
    payments: (acct, obj) => {
      const data = acct
        .all('invoice_payment', (p) => p.invoice === obj.id)
        .reverse()
        .map((p) => renderObject(acct, p));
      return { object: 'list', data, has_more: false, url: `/v1/invoice_payments?invoice=${obj.id}` };
    },
    confirmation_secret: (acct, obj) => {
      if (obj.status !== 'open') return null;
      const payment = acct.all('invoice_payment', (p) => p.invoice === obj.id && p.status === 'open')[0];
      const pi = payment ? acct.get(payment.payment.payment_intent) : undefined;
      return pi ? { client_secret: pi.client_secret, type: 'payment_intent' } : null;
    },
  },
  'checkout.session': {
    line_items: (acct, obj) => {
      const items = acct.state(obj.id!).session?.lineItems ?? [];
      return { object: 'list', data: clone(items), has_more: false, url: `/v1/checkout/sessions/${obj.id}/line_items` };
    },
  },
};

const cannotExpand = (path: string) => invalidRequest(`This property cannot be expanded (${path}).`, { param: 'expand' });

export function expand(acct: Account, value: StripeObject, paths: string[] = []): StripeObject {
  let out = value;
  for (const path of paths) {
    const segs = path.split('.');
    if (segs.length > 4) {
      throw invalidRequest(`You cannot expand more than 4 levels of a property. Property: ${path}`, { param: 'expand' });
    }
    out = expandPath(acct, out, segs, path);
  }
  return out;
}

function resolve(acct: Account, v: unknown): unknown {
  if (typeof v === 'string') {
    const found = acct.get(v);
    return found ? renderObject(acct, found) : v;
  }
  if (Array.isArray(v)) return v.map((x) => resolve(acct, x));
  return v;
}

function expandPath(acct: Account, node: StripeObject, segs: string[], full: string): StripeObject {
  if (node.object === 'list') {
    if (segs[0] !== 'data') throw cannotExpand(full);
    const rest = segs.slice(1);
    if (!rest.length) return node;
    return { ...node, data: node.data.map((item: StripeObject) => expandPath(acct, item, rest, full)) };
  }
  const type = node.object;
  for (let k = segs.length; k >= 1; k--) {
    const key = segs.slice(0, k).join('.');
    const includable = INCLUDABLE[type]?.[key];
    const expandable = EXPANDABLE[type]?.includes(key);
    if (!includable && !expandable) continue;
    const result = clone(node);
    let container: Record<string, any> = result;
    for (const seg of segs.slice(0, k - 1)) {
      if (!isPlainObject(container[seg])) return result;
      container = container[seg] as Record<string, any>;
    }
    const leaf = segs[k - 1]!;
    container[leaf] = includable ? includable(acct, node) : resolve(acct, container[leaf]);
    const rest = segs.slice(k);
    if (rest.length) {
      const child = container[leaf];
      if (Array.isArray(child)) container[leaf] = child.map((c) => (isPlainObject(c) && c.object ? expandPath(acct, c as StripeObject, rest, full) : c));
      else if (isPlainObject(child) && child.object) container[leaf] = expandPath(acct, child as StripeObject, rest, full);
    }
    return result;
  }
  // An embedded typed object (a subscription's `items` list, an invoice's `lines`): descend.
  const head = segs[0]!;
  const child = node[head];
  if (segs.length > 1 && isPlainObject(child) && typeof child.object === 'string') {
    return { ...node, [head]: expandPath(acct, child as StripeObject, segs.slice(1), full) };
  }
  throw cannotExpand(full);
}
