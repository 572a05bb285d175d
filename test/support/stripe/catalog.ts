import type Stripe from 'stripe';
import type { Account } from './account';
import type { Ctx, Route } from './context';
import { invalidRequest, missingParameter, paramError, resourceMissing } from './errors';
import { requireMeter } from './meters';
import { createdFilter, listFields, s, type Fields } from './params';
import { newId, paginate, randomString } from './util';

/**
 * Products, prices, coupons and promotion codes: https://docs.stripe.com/api/products,
 * /api/prices, /api/coupons, /api/promotion_codes (API version 2025-08-27.basil).
 */

export function applyMetadata(current: Record<string, string> | null, update: Record<string, string | null> | null | undefined) {
  if (update === undefined) return current ?? {};
  if (update === null) return {};
  const out = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(update)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

export function matchesCreated(created: number, filter: Record<string, number> | number | undefined) {
  if (filter === undefined) return true;
  if (typeof filter === 'number') return created === filter;
  return (
    (filter.gt === undefined || created > filter.gt) &&
    (filter.gte === undefined || created >= filter.gte) &&
    (filter.lt === undefined || created < filter.lt) &&
    (filter.lte === undefined || created <= filter.lte)
  );
}

const currency = () => s.str({ max: 3 });
function checkCurrency(value: string, param: string) {
  if (!/^[a-z]{3}$/.test(value)) throw paramError(`Invalid currency: ${value}. Stripe currently supports these currencies: usd, eur, gbp, ...`, param);
}

// ---- products --------------------------------------------------------------------------------

const productFields: Fields = {
  name: s.str({ max: 5000 }),
  active: s.bool(),
  description: s.str({ max: 40000, emptyable: true }),
  metadata: s.meta(),
  images: s.arr(s.str(), { emptyable: true, maxItems: 8 }),
  marketing_features: s.arr(s.obj({ name: s.req(s.str({ max: 80 })) }), { emptyable: true, maxItems: 15 }),
  statement_descriptor: s.str({ max: 22, emptyable: true }),
  tax_code: s.str({ emptyable: true }),
  unit_label: s.str({ max: 12, emptyable: true }),
  url: s.str({ max: 5000, emptyable: true }),
  shippable: s.bool(),
};

const recurringFields: Fields = {
  interval: s.req(s.enum(['day', 'week', 'month', 'year'])),
  interval_count: s.int({ min: 1 }),
  usage_type: s.enum(['licensed', 'metered']),
  meter: s.str(),
  trial_period_days: s.int({ min: 0, max: 730 }),
};

function productCreate(ctx: Ctx, p: Record<string, any>): Stripe.Product {
  const { acct } = ctx;
  if (p.id && acct.get(p.id)) throw invalidRequest('Product already exists.', { param: 'id', code: 'resource_already_exists' });
  const product: Stripe.Product = {
    id: p.id ?? newId('prod', 14),
    object: 'product',
    active: p.active ?? true,
    created: acct.now,
    default_price: null,
    description: p.description ?? null,
    images: p.images ?? [],
    livemode: false,
    marketing_features: p.marketing_features ?? [],
    metadata: applyMetadata({}, p.metadata),
    name: p.name,
    package_dimensions: null,
    shippable: p.shippable ?? null,
    statement_descriptor: p.statement_descriptor ?? null,
    tax_code: p.tax_code ?? null,
    type: 'service',
    unit_label: p.unit_label ?? null,
    updated: acct.now,
    url: p.url ?? null,
  };
  acct.put(product);
  acct.emit('product.created', product);
  if (p.default_price_data) {
    const price = createPrice(acct, { ...p.default_price_data, product: product.id }, 'default_price_data');
    acct.update(product, (o) => {
      o.default_price = price.id;
    });
  }
  return product;
}

function productUpdate(ctx: Ctx, p: Record<string, any>, path: Record<string, string>): Stripe.Product {
  const { acct } = ctx;
  const product = acct.find<Stripe.Product>('product', path.id!, 'product');
  if (p.default_price) {
    const price = acct.find<Stripe.Price>('price', p.default_price, 'price', 'default_price');
    if (price.product !== product.id) throw invalidRequest('The default price must belong to this product.', { param: 'default_price' });
  }
  return acct.update(
    product,
    (o) => {
      for (const key of [
        'name',
        'active',
        'description',
        'images',
        'marketing_features',
        'statement_descriptor',
        'tax_code',
        'unit_label',
        'url',
        'shippable',
        'default_price',
      ] as const) {
        if (p[key] !== undefined) (o as any)[key] = p[key];
      }
      o.metadata = applyMetadata(o.metadata, p.metadata);
      o.updated = acct.now;
    },
    'product.updated',
  );
}

function productDelete(ctx: Ctx, _p: Record<string, any>, path: Record<string, string>) {
  const { acct } = ctx;
  const product = acct.find<Stripe.Product>('product', path.id!, 'product');
  if (acct.all('price', (x) => x.product === product.id).length) {
    throw invalidRequest('This product cannot be deleted because it has one or more user-created prices.', { code: 'product_has_prices' });
  }
  acct.emit('product.deleted', product);
  acct.remove(product.id);
  return { id: product.id, object: 'product', deleted: true } as const;
}

// ---- prices ----------------------------------------------------------------------------------

export function createPrice(acct: Account, p: Record<string, any>, paramPrefix = ''): Stripe.Price {
  const at = (k: string) => (paramPrefix ? `${paramPrefix}[${k}]` : k);
  checkCurrency(p.currency, at('currency'));
  if (p.product && p.product_data) {
    throw invalidRequest('You may only specify one of these parameters: product, product_data.', { param: 'product' });
  }
  let productId: string;
  if (p.product_data) {
    const product: Stripe.Product = productCreate({ acct } as Ctx, { ...p.product_data });
    productId = product.id;
  } else if (p.product) {
    productId = acct.find<Stripe.Product>('product', p.product, 'product', at('product')).id;
  } else throw missingParameter(at('product'));
  const scheme: 'per_unit' | 'tiered' = p.billing_scheme ?? 'per_unit';
  const tiers = scheme === 'tiered' ? tiersOf(p, at) : null;
  if (scheme === 'per_unit' && (p.tiers !== undefined || p.tiers_mode !== undefined)) {
    throw invalidRequest('You may only specify `tiers` and `tiers_mode` when `billing_scheme` is `tiered`.', {
      param: at(p.tiers !== undefined ? 'tiers' : 'tiers_mode'),
    });
  }
  let amount: number | null = null;
  if (scheme === 'per_unit') {
    amount = p.unit_amount ?? (p.unit_amount_decimal !== undefined ? Number(p.unit_amount_decimal) : null);
    if (amount === null) throw missingParameter(at('unit_amount'));
    if (p.unit_amount !== undefined && p.unit_amount_decimal !== undefined) {
      throw invalidRequest('You may only specify one of these parameters: unit_amount, unit_amount_decimal.', { param: at('unit_amount') });
    }
    if (!Number.isInteger(amount)) {
      throw invalidRequest('This Stripe-shaped test server only supports whole minor-unit amounts.', { param: at('unit_amount_decimal') });
    }
  } else if (p.unit_amount !== undefined || p.unit_amount_decimal !== undefined) {
    throw invalidRequest('You may not specify `unit_amount` for a price with `billing_scheme=tiered`: give each tier its amounts.', {
      param: at(p.unit_amount !== undefined ? 'unit_amount' : 'unit_amount_decimal'),
    });
  }
  if (p.lookup_key) claimLookupKey(acct, p.lookup_key, p.transfer_lookup_key === true, null);
  const recurring: Stripe.Price.Recurring | null = p.recurring
    ? {
        interval: p.recurring.interval,
        interval_count: p.recurring.interval_count ?? 1,
        meter: meteredBy(acct, p.recurring, at),
        trial_period_days: p.recurring.trial_period_days ?? null,
        usage_type: p.recurring.usage_type ?? 'licensed',
      }
    : null;
  if (p.transform_quantity && scheme === 'tiered') {
    throw invalidRequest('You may not specify `transform_quantity` for a price with `billing_scheme=tiered`.', { param: at('transform_quantity') });
  }
  if (recurring) {
    const max = { day: 1095, week: 156, month: 36, year: 3 }[recurring.interval];
    if (recurring.interval_count > max) {
      throw invalidRequest(`The maximum billing frequency is three years (${max} ${recurring.interval}s).`, { param: at('recurring[interval_count]') });
    }
  }
  const price: Stripe.Price = {
    id: newId('price'),
    object: 'price',
    active: p.active ?? true,
    billing_scheme: scheme,
    created: acct.now,
    currency: p.currency,
    custom_unit_amount: null,
    livemode: false,
    lookup_key: p.lookup_key ?? null,
    metadata: applyMetadata({}, p.metadata),
    nickname: p.nickname ?? null,
    product: productId,
    recurring,
    tax_behavior: p.tax_behavior ?? 'unspecified',
    tiers_mode: tiers ? p.tiers_mode : null,
    transform_quantity: p.transform_quantity ? { divide_by: p.transform_quantity.divide_by, round: p.transform_quantity.round } : null,
    type: recurring ? 'recurring' : 'one_time',
    unit_amount: amount,
    unit_amount_decimal: amount === null ? null : String(amount),
  };
  acct.put(price);
  if (tiers) acct.state(price.id).tiers = tiers;
  acct.emit('price.created', price);
  return price;
}

/**
 * The meter of a metered price (https://docs.stripe.com/billing/subscriptions/usage-based): since
 * 2025-03-31.basil a metered price must name an active meter (usage records are gone), and only a
 * metered price may.
 */
function meteredBy(acct: Account, recurring: Record<string, any>, at: (k: string) => string): string | null {
  if (recurring.usage_type !== 'metered') {
    if (recurring.meter !== undefined) {
      throw invalidRequest('You may only specify `recurring[meter]` for a price with `recurring[usage_type]=metered`.', { param: at('recurring[meter]') });
    }
    return null;
  }
  if (recurring.meter === undefined) throw missingParameter(at('recurring[meter]'));
  return requireMeter(acct, recurring.meter, at('recurring[meter]')).id;
}

/**
 * A tiered price's tiers as Stripe keeps them (https://docs.stripe.com/api/prices/create#create_price-tiers):
 * ascending `up_to` bounds, the last one `inf` (shown as `up_to: null`), each tier with a
 * `unit_amount` (per unit in the tier), a `flat_amount` (for the whole tier) or both.
 */
function tiersOf(p: Record<string, any>, at: (k: string) => string): Stripe.Price.Tier[] {
  if (!p.tiers?.length) throw missingParameter(at('tiers'));
  if (!p.tiers_mode) throw missingParameter(at('tiers_mode'));
  let previous = 0;
  return p.tiers.map((tier: Record<string, any>, i: number): Stripe.Price.Tier => {
    const where = (k: string) => at(`tiers[${i}][${k}]`);
    const last = i === p.tiers.length - 1;
    const upTo = tier.up_to === 'inf' ? null : /^\d+$/.test(tier.up_to) ? Number(tier.up_to) : undefined;
    if (upTo === undefined) throw invalidRequest(`Invalid up_to: must be a positive integer or \`inf\`.`, { param: where('up_to') });
    if (last !== (upTo === null)) {
      throw invalidRequest('The last tier must have `up_to=inf`, and only the last one.', { param: where('up_to') });
    }
    if (upTo !== null) {
      if (upTo <= previous) throw invalidRequest('Each tier must have an `up_to` greater than the tier before it.', { param: where('up_to') });
      previous = upTo;
    }
    const pick = (name: 'unit_amount' | 'flat_amount'): number | null => {
      const whole = tier[name];
      const decimal = tier[`${name}_decimal`];
      if (whole !== undefined && decimal !== undefined) {
        throw invalidRequest(`You may only specify one of these parameters: ${name}, ${name}_decimal.`, { param: where(name) });
      }
      const value = whole ?? (decimal !== undefined ? Number(decimal) : null);
      if (value !== null && !Number.isInteger(value)) {
        throw invalidRequest('This Stripe-shaped test server only supports whole minor-unit amounts.', { param: where(`${name}_decimal`) });
      }
      return value;
    };
    const unit = pick('unit_amount');
    const flat = pick('flat_amount');
    if (unit === null && flat === null) throw invalidRequest('Each tier must have a `unit_amount` or a `flat_amount`.', { param: at(`tiers[${i}]`) });
    return {
      flat_amount: flat,
      flat_amount_decimal: flat === null ? null : String(flat),
      unit_amount: unit,
      unit_amount_decimal: unit === null ? null : String(unit),
      up_to: upTo,
    };
  });
}

/** What one tier of a tiered price charges for a quantity: its units and its flat fee. */
export interface TierCharge {
  /** 1-based, as Stripe's line descriptions number them ("Tier 2 at $10.00 / month"). */
  tier: number;
  units: number;
  unitAmount: number;
  /** The tier's flat fee, or null when it has none. */
  flatAmount: number | null;
}

/**
 * How a tiered price charges `quantity` (https://docs.stripe.com/subscriptions/pricing-models/tiered-pricing):
 * graduated, each tier bills the units that fall into it (its `unit_amount` each) plus its
 * `flat_amount`, and the totals are summed; volume, the tier the whole quantity falls into bills all
 * of it. A tier no unit falls into bills nothing. Null for a per-unit price.
 */
export function tierCharges(acct: Account, price: Stripe.Price, quantity: number): TierCharge[] | null {
  if (price.billing_scheme !== 'tiered') return null;
  const tiers = acct.state(price.id).tiers ?? [];
  const out: TierCharge[] = [];
  let below = 0;
  for (const [i, tier] of tiers.entries()) {
    const top = tier.up_to ?? Number.POSITIVE_INFINITY;
    const charge = { tier: i + 1, unitAmount: tier.unit_amount ?? 0, flatAmount: tier.flat_amount };
    if (price.tiers_mode === 'volume') {
      if (quantity <= top) {
        if (quantity > 0) out.push({ ...charge, units: quantity });
        break;
      }
    } else {
      const units = Math.max(0, Math.min(quantity, top) - below);
      if (units > 0) out.push({ ...charge, units });
    }
    below = top;
  }
  return out;
}

/**
 * The quantity a per-unit price bills: with `transform_quantity`, the quantity divided by
 * `divide_by` and rounded up or down (https://docs.stripe.com/billing/subscriptions/usage-based/transform-quantities).
 */
export function billedQuantity(price: Stripe.Price, quantity: number): number {
  const t = price.transform_quantity;
  if (!t) return quantity;
  return t.round === 'up' ? Math.ceil(quantity / t.divide_by) : Math.floor(quantity / t.divide_by);
}

/** What a price charges per period for `quantity` units, tiers included. */
export function priceAmount(acct: Account, price: Stripe.Price, quantity: number): number {
  const charges = tierCharges(acct, price, quantity);
  if (charges === null) return (price.unit_amount ?? 0) * billedQuantity(price, quantity);
  return charges.reduce((sum, c) => sum + c.unitAmount * c.units + (c.flatAmount ?? 0), 0);
}

function claimLookupKey(acct: Account, key: string, transfer: boolean, self: string | null) {
  const holder = acct.all<Stripe.Price>('price', (x) => x.lookup_key === key && x.id !== self)[0];
  if (!holder) return;
  if (!transfer) {
    throw invalidRequest(`A price (\`${holder.id}\`) already uses that lookup key.`, { param: 'lookup_key' });
  }
  acct.update(
    holder,
    (o) => {
      o.lookup_key = null;
    },
    'price.updated',
  );
}

const priceCreateFields: Fields = {
  currency: s.req(currency()),
  unit_amount: s.int({ min: 0 }),
  unit_amount_decimal: s.num({ min: 0 }),
  product: s.str(),
  product_data: s.obj({
    name: s.req(s.str()),
    active: s.bool(),
    id: s.str(),
    metadata: s.meta(),
    statement_descriptor: s.str({ max: 22 }),
    tax_code: s.str(),
    unit_label: s.str({ max: 12 }),
  }),
  recurring: s.obj(recurringFields),
  transform_quantity: s.obj({ divide_by: s.req(s.int({ min: 1 })), round: s.req(s.enum(['down', 'up'])) }),
  active: s.bool(),
  lookup_key: s.str({ max: 200 }),
  transfer_lookup_key: s.bool(),
  nickname: s.str({ max: 5000 }),
  metadata: s.meta(),
  tax_behavior: s.enum(['exclusive', 'inclusive', 'unspecified']),
  billing_scheme: s.enum(['per_unit', 'tiered']),
  tiers_mode: s.enum(['graduated', 'volume']),
  tiers: s.arr(
    s.obj({
      // An integer or `inf`: checked by the handler.
      up_to: s.req(s.str()),
      unit_amount: s.int({ min: 0 }),
      unit_amount_decimal: s.num({ min: 0 }),
      flat_amount: s.int({ min: 0 }),
      flat_amount_decimal: s.num({ min: 0 }),
    }),
  ),
};

function priceUpdate(ctx: Ctx, p: Record<string, any>, path: Record<string, string>): Stripe.Price {
  const { acct } = ctx;
  const price = acct.find<Stripe.Price>('price', path.id!, 'price');
  if (p.lookup_key) claimLookupKey(acct, p.lookup_key, p.transfer_lookup_key === true, price.id);
  if (p.tax_behavior && price.tax_behavior !== 'unspecified' && p.tax_behavior !== price.tax_behavior) {
    throw invalidRequest('Tax behavior cannot be changed once it has been set to inclusive or exclusive.', { param: 'tax_behavior' });
  }
  return acct.update(
    price,
    (o) => {
      if (p.active !== undefined) o.active = p.active;
      if (p.lookup_key !== undefined) o.lookup_key = p.lookup_key;
      if (p.nickname !== undefined) o.nickname = p.nickname;
      if (p.tax_behavior !== undefined) o.tax_behavior = p.tax_behavior;
      o.metadata = applyMetadata(o.metadata, p.metadata);
    },
    'price.updated',
  );
}

function priceList(ctx: Ctx, p: Record<string, any>) {
  const items = ctx.acct.all<Stripe.Price>('price', (x: Stripe.Price) => {
    if (p.active !== undefined && x.active !== p.active) return false;
    if (p.product && x.product !== p.product) return false;
    if (p.currency && x.currency !== p.currency) return false;
    if (p.type && x.type !== p.type) return false;
    if (p.lookup_keys && !(x.lookup_key && p.lookup_keys.includes(x.lookup_key))) return false;
    if (p.recurring?.interval && x.recurring?.interval !== p.recurring.interval) return false;
    if (p.recurring?.usage_type && x.recurring?.usage_type !== p.recurring.usage_type) return false;
    if (p.recurring?.meter && x.recurring?.meter !== p.recurring.meter) return false;
    return matchesCreated(x.created, p.created);
  });
  return paginate(items, p, '/v1/prices');
}

// ---- coupons and promotion codes -------------------------------------------------------------

export function couponValid(acct: Account, coupon: Stripe.Coupon): boolean {
  if (coupon.redeem_by !== null && acct.now > coupon.redeem_by) return false;
  if (coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions) return false;
  return true;
}

function couponCreate(ctx: Ctx, p: Record<string, any>): Stripe.Coupon {
  const { acct } = ctx;
  if (p.id && acct.get(p.id)) throw invalidRequest('Coupon already exists.', { param: 'id', code: 'resource_already_exists' });
  if ((p.percent_off === undefined) === (p.amount_off === undefined)) {
    throw invalidRequest('You must pass either `amount_off` or `percent_off` (but not both).', {
      param: p.amount_off === undefined ? 'percent_off' : 'amount_off',
    });
  }
  if (p.amount_off !== undefined && !p.currency) throw invalidRequest('You must pass currency when passing amount_off', { param: 'currency' });
  if (p.currency) checkCurrency(p.currency, 'currency');
  if (p.percent_off !== undefined && (p.percent_off <= 0 || p.percent_off > 100)) {
    throw invalidRequest('Invalid percent_off: must be greater than 0 and less than or equal to 100.', { param: 'percent_off' });
  }
  const duration = p.duration ?? 'once';
  if (duration === 'repeating' && !p.duration_in_months) throw missingParameter('duration_in_months');
  if (duration !== 'repeating' && p.duration_in_months !== undefined) {
    throw invalidRequest('You may only specify duration_in_months when duration is repeating.', { param: 'duration_in_months' });
  }
  const coupon: Stripe.Coupon = {
    id: p.id ?? randomString(8),
    object: 'coupon',
    amount_off: p.amount_off ?? null,
    created: acct.now,
    currency: p.currency ?? null,
    duration,
    duration_in_months: p.duration_in_months ?? null,
    livemode: false,
    max_redemptions: p.max_redemptions ?? null,
    metadata: applyMetadata({}, p.metadata),
    name: p.name ?? null,
    percent_off: p.percent_off ?? null,
    redeem_by: p.redeem_by ?? null,
    times_redeemed: 0,
    valid: true,
  };
  if (p.applies_to) coupon.applies_to = { products: p.applies_to.products ?? [] };
  acct.put(coupon);
  acct.emit('coupon.created', coupon);
  return coupon;
}

function promotionCodeCreate(ctx: Ctx, p: Record<string, any>): Stripe.PromotionCode {
  const { acct } = ctx;
  const coupon = acct.find<Stripe.Coupon>('coupon', p.coupon, 'coupon', 'coupon');
  if (p.code !== undefined && !/^[A-Za-z0-9]+$/.test(p.code)) {
    throw invalidRequest('Promotion codes may only contain letters (a-z, A-Z) and digits (0-9).', { param: 'code' });
  }
  const code = p.code ?? randomString(8, 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789');
  const clash = acct.all<Stripe.PromotionCode>(
    'promotion_code',
    (x) => x.active && x.code.toLowerCase() === code.toLowerCase() && (x.customer ?? null) === (p.customer ?? null),
  );
  if (clash.length) throw invalidRequest(`An active promotion code with \`code: ${code}\` already exists.`, { param: 'code' });
  if (p.customer) acct.find('customer', p.customer, 'customer', 'customer');
  const promo: Stripe.PromotionCode = {
    id: newId('promo'),
    object: 'promotion_code',
    active: p.active ?? true,
    code,
    coupon: coupon,
    created: acct.now,
    customer: p.customer ?? null,
    expires_at: p.expires_at ?? null,
    livemode: false,
    max_redemptions: p.max_redemptions ?? null,
    metadata: applyMetadata({}, p.metadata),
    restrictions: {
      first_time_transaction: p.restrictions?.first_time_transaction ?? false,
      minimum_amount: p.restrictions?.minimum_amount ?? null,
      minimum_amount_currency: p.restrictions?.minimum_amount_currency ?? null,
    },
    times_redeemed: 0,
  };
  acct.put(promo);
  acct.emit('promotion_code.created', promo);
  return promo;
}

/**
 * Can this promotion code be redeemed now (by this customer, on an invoice of this amount)?
 * Returns Stripe's refusal, or null.
 */
export function promotionCodeProblem(acct: Account, promo: Stripe.PromotionCode, customer: string | null, amount?: number, currency?: string): string | null {
  const coupon = acct.get(typeof promo.coupon === 'string' ? promo.coupon : promo.coupon.id) as Stripe.Coupon | undefined;
  if (!promo.active) return 'This promotion code is inactive.';
  if (promo.expires_at !== null && acct.now > promo.expires_at) return 'This promotion code has expired.';
  if (promo.max_redemptions !== null && promo.times_redeemed >= promo.max_redemptions)
    return 'This promotion code has reached its maximum number of redemptions.';
  if (!coupon || !couponValid(acct, coupon)) return 'This promotion code cannot be redeemed because the associated coupon is no longer valid.';
  if (promo.customer && customer && promo.customer !== customer) return 'This promotion code cannot be redeemed by this customer.';
  if (promo.restrictions.minimum_amount !== null && amount !== undefined) {
    if (currency === promo.restrictions.minimum_amount_currency && amount < promo.restrictions.minimum_amount) {
      return 'This promotion code requires a minimum order amount.';
    }
  }
  if (coupon.amount_off !== null && currency && coupon.currency !== currency) return 'This coupon cannot be applied because its currency does not match.';
  return null;
}

// ---- routes ----------------------------------------------------------------------------------

export const catalogRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/products',
    paramsType: 'ProductCreateParams',
    fields: {
      ...productFields,
      name: s.req(s.str({ max: 5000 })),
      id: s.str(),
      default_price_data: s.obj({
        currency: s.req(currency()),
        unit_amount: s.int({ min: 0 }),
        unit_amount_decimal: s.num({ min: 0 }),
        recurring: s.obj({ interval: s.req(s.enum(['day', 'week', 'month', 'year'])), interval_count: s.int({ min: 1 }) }),
        metadata: s.meta(),
        tax_behavior: s.enum(['exclusive', 'inclusive', 'unspecified']),
      }),
    },
    handler: productCreate,
  },
  {
    method: 'GET',
    path: '/v1/products/:id',
    fields: {},
    paramsType: 'ProductRetrieveParams',
    handler: (ctx, _p, path) => ctx.acct.find('product', path.id!, 'product'),
  },
  {
    method: 'POST',
    path: '/v1/products/:id',
    paramsType: 'ProductUpdateParams',
    fields: { ...productFields, name: s.str({ max: 5000 }), default_price: s.str() },
    handler: productUpdate,
  },
  { method: 'DELETE', path: '/v1/products/:id', paramsType: 'ProductDeleteParams', noExpand: true, fields: {}, handler: productDelete as never },
  {
    method: 'GET',
    path: '/v1/products',
    paramsType: 'ProductListParams',
    fields: { ...listFields, active: s.bool(), ids: s.arr(s.str()), created: createdFilter, shippable: s.bool(), url: s.str() },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.Product>(
          'product',
          (x) =>
            (p.active === undefined || x.active === p.active) &&
            (!p.ids || p.ids.includes(x.id)) &&
            (p.shippable === undefined || x.shippable === p.shippable) &&
            (p.url === undefined || x.url === p.url) &&
            matchesCreated(x.created, p.created),
        ),
        p,
        '/v1/products',
      ),
  },
  { method: 'POST', path: '/v1/prices', paramsType: 'PriceCreateParams', fields: priceCreateFields, handler: (ctx, p) => createPrice(ctx.acct, p) },
  {
    method: 'GET',
    path: '/v1/prices/:id',
    fields: {},
    paramsType: 'PriceRetrieveParams',
    handler: (ctx, _p, path) => ctx.acct.find('price', path.id!, 'price'),
  },
  {
    method: 'POST',
    path: '/v1/prices/:id',
    paramsType: 'PriceUpdateParams',
    fields: {
      active: s.bool(),
      lookup_key: s.str({ max: 200, emptyable: true }),
      transfer_lookup_key: s.bool(),
      nickname: s.str({ emptyable: true }),
      metadata: s.meta(),
      tax_behavior: s.enum(['exclusive', 'inclusive', 'unspecified']),
    },
    handler: priceUpdate,
  },
  {
    method: 'GET',
    path: '/v1/prices',
    paramsType: 'PriceListParams',
    fields: {
      ...listFields,
      active: s.bool(),
      currency: currency(),
      product: s.str(),
      type: s.enum(['one_time', 'recurring']),
      lookup_keys: s.arr(s.str(), { maxItems: 10 }),
      recurring: s.obj({ interval: s.enum(['day', 'week', 'month', 'year']), usage_type: s.enum(['licensed', 'metered']), meter: s.str() }),
      created: createdFilter,
    },
    handler: priceList,
  },
  {
    method: 'POST',
    path: '/v1/coupons',
    paramsType: 'CouponCreateParams',
    fields: {
      id: s.str(),
      amount_off: s.int({ min: 1 }),
      currency: currency(),
      percent_off: s.num(),
      duration: s.enum(['forever', 'once', 'repeating']),
      duration_in_months: s.int({ min: 1 }),
      max_redemptions: s.int({ min: 1 }),
      metadata: s.meta(),
      name: s.str({ max: 40 }),
      redeem_by: s.int(),
      applies_to: s.obj({ products: s.arr(s.str()) }),
    },
    handler: couponCreate,
  },
  {
    method: 'GET',
    path: '/v1/coupons/:id',
    fields: {},
    paramsType: 'CouponRetrieveParams',
    handler: (ctx, _p, path) => ctx.acct.find('coupon', path.id!, 'coupon'),
  },
  {
    method: 'POST',
    path: '/v1/coupons/:id',
    paramsType: 'CouponUpdateParams',
    fields: { name: s.str({ max: 40, emptyable: true }), metadata: s.meta() },
    handler: (ctx, p, path) => {
      const coupon = ctx.acct.find<Stripe.Coupon>('coupon', path.id!, 'coupon');
      return ctx.acct.update(
        coupon,
        (o) => {
          if (p.name !== undefined) o.name = p.name;
          o.metadata = applyMetadata(o.metadata, p.metadata);
        },
        'coupon.updated',
      );
    },
  },
  {
    method: 'DELETE',
    path: '/v1/coupons/:id',
    paramsType: 'CouponDeleteParams',
    noExpand: true,
    fields: {},
    handler: ((ctx: Ctx, _p: unknown, path: Record<string, string>) => {
      const coupon = ctx.acct.find<Stripe.Coupon>('coupon', path.id!, 'coupon');
      ctx.acct.emit('coupon.deleted', coupon);
      ctx.acct.update(coupon, (o) => {
        (o as any).deleted = true;
        o.valid = false;
      });
      return { id: coupon.id, object: 'coupon', deleted: true };
    }) as never,
  },
  {
    method: 'GET',
    path: '/v1/coupons',
    paramsType: 'CouponListParams',
    fields: { ...listFields, created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.Coupon>('coupon', (x) => matchesCreated(x.created, p.created)),
        p,
        '/v1/coupons',
      ),
  },
  {
    method: 'POST',
    path: '/v1/promotion_codes',
    paramsType: 'PromotionCodeCreateParams',
    fields: {
      coupon: s.req(s.str()),
      code: s.str({ max: 500 }),
      active: s.bool(),
      customer: s.str(),
      expires_at: s.int(),
      max_redemptions: s.int({ min: 1 }),
      metadata: s.meta(),
      restrictions: s.obj({ first_time_transaction: s.bool(), minimum_amount: s.int({ min: 0 }), minimum_amount_currency: currency() }),
    },
    handler: promotionCodeCreate,
  },
  {
    method: 'GET',
    path: '/v1/promotion_codes/:id',
    fields: {},
    paramsType: 'PromotionCodeRetrieveParams',
    handler: (ctx, _p, path) => ctx.acct.find('promotion_code', path.id!, 'promotion code'),
  },
  {
    method: 'POST',
    path: '/v1/promotion_codes/:id',
    paramsType: 'PromotionCodeUpdateParams',
    fields: { active: s.bool(), metadata: s.meta() },
    handler: (ctx, p, path) => {
      const promo = ctx.acct.find<Stripe.PromotionCode>('promotion_code', path.id!, 'promotion code');
      if (p.active === true && !promo.active && !couponValid(ctx.acct, ctx.acct.find<Stripe.Coupon>('coupon', promo.coupon.id, 'coupon'))) {
        throw invalidRequest('This promotion code cannot be reactivated because its coupon is no longer valid.', { param: 'active' });
      }
      return ctx.acct.update(
        promo,
        (o) => {
          if (p.active !== undefined) o.active = p.active;
          o.metadata = applyMetadata(o.metadata, p.metadata);
        },
        'promotion_code.updated',
      );
    },
  },
  {
    method: 'GET',
    path: '/v1/promotion_codes',
    paramsType: 'PromotionCodeListParams',
    fields: { ...listFields, active: s.bool(), code: s.str(), coupon: s.str(), customer: s.str(), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.PromotionCode>(
          'promotion_code',
          (x) =>
            (p.active === undefined || x.active === p.active) &&
            (p.code === undefined || x.code.toLowerCase() === String(p.code).toLowerCase()) &&
            (p.coupon === undefined || x.coupon.id === p.coupon) &&
            (p.customer === undefined || x.customer === p.customer) &&
            matchesCreated(x.created, p.created),
        ),
        p,
        '/v1/promotion_codes',
      ),
  },
];

export { resourceMissing };
