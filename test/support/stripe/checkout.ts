import type Stripe from 'stripe';
import type { StripeObject } from './account';
import { MINIMUM_CHARGE, createPaymentIntent, createSubscription, declinePaymentIntent, formatAmount } from './billing';
import { applyMetadata, createPrice, priceAmount, promotionCodeProblem } from './catalog';
import type { Ctx, Route } from './context';
import { attachPaymentMethod, chargeOutcome, resolvePaymentMethod } from './customers';
import { cardError, invalidRequest, missingParameter, paramError } from './errors';
import { createdFilter, listFields, s } from './params';
import { DAY, newId, paginate, randomString } from './util';

/**
 * Checkout Sessions in `subscription` and `payment` mode (https://docs.stripe.com/api/checkout/sessions,
 * https://docs.stripe.com/payments/checkout/how-checkout-works). The session's `url` points at this
 * server (`/checkout/<id>`), whose page (or the `completeCheckout` test control) plays the customer
 * paying with a test card. A `payment` session sells one-off prices (an existing one-time `price`,
 * or inline `price_data` with `product_data`, which Stripe turns into a one-time price that is not
 * sold again: `active: false`); paying it charges the card once through a PaymentIntent created
 * then (since 2022-08-01 Checkout creates it at confirmation, so an open session's `payment_intent`
 * is null), with `payment_intent_data.metadata`; a declined card leaves the session open, and a
 * paid one is `complete` with `payment_status: paid`. No subscription, invoice or customer card
 * is made (no `setup_future_usage`).
 */

type Session = Stripe.Checkout.Session;

function checkUrl(value: string | undefined, param: string) {
  if (value === undefined) return;
  try {
    const u = new URL(value.replace('{CHECKOUT_SESSION_ID}', 'x'));
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw paramError('Not a valid URL', param, 'url_invalid');
  }
}

/** The price of a line item: an existing one, or a one-time price made from its `price_data` (not sold again). */
function linePrice(acct: Ctx['acct'], li: Record<string, any>, i: number, mode: 'payment' | 'subscription'): Stripe.Price {
  const at = `line_items[${i}]`;
  if (li.price && li.price_data) throw invalidRequest('You may only specify one of these parameters: price, price_data.', { param: `${at}[price]` });
  if (li.price_data) {
    if (mode !== 'payment' || li.price_data.recurring) {
      throw invalidRequest('This Stripe-shaped test server takes `price_data` for one-time prices in `payment` mode only.', { param: `${at}[price_data]` });
    }
    if (li.price_data.unit_amount === undefined) throw missingParameter(`${at}[price_data][unit_amount]`);
    return createPrice(acct, { ...li.price_data, active: false }, `${at}[price_data]`);
  }
  if (!li.price) throw missingParameter(`${at}[price]`);
  const price = acct.find<Stripe.Price>('price', li.price, 'price', `${at}[price]`);
  if (!price.active) throw invalidRequest(`The price specified is inactive. This field only accepts active prices.`, { param: `${at}[price]` });
  if (mode === 'payment' && price.type === 'recurring') {
    throw invalidRequest('You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.', {
      param: `${at}[price]`,
    });
  }
  return price;
}

function sessionCreate(ctx: Ctx, p: Record<string, any>): Session {
  const { acct, settings } = ctx;
  if (p.mode !== 'subscription' && p.mode !== 'payment') {
    throw invalidRequest('This Stripe-shaped test server implements Checkout in `subscription` and `payment` mode only.', { param: 'mode' });
  }
  const mode: 'payment' | 'subscription' = p.mode;
  if (mode === 'payment' && p.subscription_data)
    throw invalidRequest('You can not pass `subscription_data` in `payment` mode.', { param: 'subscription_data' });
  if (mode === 'subscription' && p.payment_intent_data) {
    throw invalidRequest('You can not pass `payment_intent_data` in `subscription` mode.', { param: 'payment_intent_data' });
  }
  if (p.ui_mode && p.ui_mode !== 'hosted') throw invalidRequest('This Stripe-shaped test server implements hosted Checkout only.', { param: 'ui_mode' });
  if (!p.success_url) throw missingParameter('success_url');
  checkUrl(p.success_url, 'success_url');
  checkUrl(p.cancel_url, 'cancel_url');
  if (p.customer && p.customer_email)
    throw invalidRequest('You may only specify one of these parameters: customer, customer_email.', { param: 'customer_email' });
  if (p.discounts && p.allow_promotion_codes) {
    throw invalidRequest('You may only specify one of these parameters: allow_promotion_codes, discounts.', { param: 'allow_promotion_codes' });
  }
  const customer = p.customer ? acct.find<Stripe.Customer>('customer', p.customer, 'customer', 'customer') : null;
  if (!p.line_items?.length) throw missingParameter('line_items');
  const now = acct.now;
  if (p.expires_at !== undefined && (p.expires_at < now + 1800 || p.expires_at > now + DAY)) {
    throw invalidRequest('The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.', { param: 'expires_at' });
  }
  const id = `cs_test_${randomString(58)}`;
  if (mode === 'payment') {
    for (const [i, li] of (p.line_items as Record<string, any>[]).entries()) {
      if (li.quantity === undefined) throw missingParameter(`line_items[${i}][quantity]`);
    }
  }
  const prices: Stripe.Price[] = p.line_items.map((li: Record<string, any>, i: number) => linePrice(acct, li, i, mode));
  if (mode === 'subscription' && !prices.some((x: Stripe.Price) => x.type === 'recurring')) {
    throw invalidRequest('You must provide at least one recurring price in `subscription` mode when using prices.', { param: 'line_items' });
  }
  if (new Set(prices.map((x) => x.currency)).size > 1) {
    throw invalidRequest('All line items must have the same currency.', { param: 'line_items' });
  }
  const currency = prices[0]!.currency;
  const trial = !!p.subscription_data?.trial_period_days || !!p.subscription_data?.trial_end;
  const discounts: Stripe.Checkout.Session.Discount[] = [];
  for (const [i, d] of (p.discounts ?? []).entries()) {
    if (d.promotion_code) {
      const promo = acct.find<Stripe.PromotionCode>('promotion_code', d.promotion_code, 'promotion code', `discounts[${i}][promotion_code]`);
      const problem = promotionCodeProblem(acct, promo, customer?.id ?? null);
      if (problem) throw invalidRequest(problem, { param: `discounts[${i}][promotion_code]` });
      discounts.push({ coupon: null, promotion_code: promo.id });
    } else if (d.coupon) {
      acct.find('coupon', d.coupon, 'coupon', `discounts[${i}][coupon]`);
      discounts.push({ coupon: d.coupon, promotion_code: null });
    } else throw invalidRequest('You must specify either coupon or promotion_code.', { param: `discounts[${i}]` });
  }
  const lineItems = p.line_items.map((li: Record<string, any>, i: number) => {
    const price = prices[i]!;
    const qty = li.quantity ?? 1;
    const amount = trial && price.type === 'recurring' ? 0 : priceAmount(acct, price, qty);
    const product = acct.get(price.product as string);
    const item: Stripe.LineItem = {
      id: newId('li'),
      object: 'item',
      amount_discount: 0,
      amount_subtotal: amount,
      amount_tax: 0,
      amount_total: amount,
      currency: price.currency,
      description: (product?.name as string) ?? null,
      price,
      quantity: qty,
    };
    return item;
  });
  const subtotal = lineItems.reduce((sum: number, li: Stripe.LineItem) => sum + li.amount_subtotal, 0);
  const minimum = MINIMUM_CHARGE[currency] ?? 50;
  if (mode === 'payment' && subtotal < minimum) {
    throw invalidRequest(`The Checkout Session's total amount due must add up to at least ${formatAmount(minimum, currency)} ${currency}.`, {
      param: 'line_items',
    });
  }
  const session: Session = {
    id,
    object: 'checkout.session',
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: p.allow_promotion_codes ?? null,
    amount_subtotal: subtotal,
    amount_total: subtotal,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: p.billing_address_collection ?? null,
    cancel_url: p.cancel_url ?? null,
    client_reference_id: p.client_reference_id ?? null,
    client_secret: null,
    collected_information: null,
    consent: null,
    consent_collection: null,
    created: now,
    currency,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: customer?.id ?? null,
    customer_creation: null,
    customer_details: customer ? { address: null, email: customer.email, name: null, phone: null, tax_exempt: 'none', tax_ids: null } : null,
    customer_email: p.customer_email ?? null,
    discounts,
    expires_at: p.expires_at ?? now + DAY,
    invoice: null,
    invoice_creation: null,
    livemode: false,
    locale: p.locale ?? null,
    metadata: applyMetadata({}, p.metadata),
    mode,
    origin_context: null,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: p.payment_method_collection ?? 'always',
    payment_method_configuration_details: null,
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: p.payment_method_types ?? ['card'],
    payment_status: 'unpaid',
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: { allow_redisplay_filters: ['always'], payment_method_remove: null, payment_method_save: null },
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: p.success_url,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: `${settings.baseUrl}/checkout/${id}`,
    wallet_options: null,
  };
  acct.put(session);
  acct.state(id).session = {
    lineItems: lineItems as unknown as StripeObject[],
    subscriptionData: p.subscription_data ?? {},
    paymentIntentData: p.payment_intent_data ?? {},
  };
  return session;
}

export interface CompleteCheckoutOptions {
  /** A test PaymentMethod id (default pm_card_visa) or a PaymentMethod of the session's customer. */
  paymentMethod?: string;
  /** The email the customer types (default: the session's customer_email, else customer@example.test). */
  email?: string;
  name?: string;
  /** A promotion code the customer enters (needs allow_promotion_codes). */
  promotionCode?: string;
}

/**
 * The customer pays on the Checkout page: a Customer is created (or the session's one used), the
 * card attached, the subscription created and its first invoice paid, then
 * `checkout.session.completed`. A declined card leaves the session open and throws, as the hosted
 * page shows the decline and lets the customer try again.
 */
export function completeSession(ctx: Ctx, sessionId: string, opts: CompleteCheckoutOptions = {}): Session {
  const { acct } = ctx;
  const session = acct.find<Session>('checkout.session', sessionId, 'checkout.session');
  if (session.status !== 'open') throw invalidRequest(`This Checkout Session is ${session.status}.`, { code: 'checkout_session_unexpected_state' });
  const state = acct.state(sessionId).session!;
  let customerId = session.customer as string | null;
  const email =
    opts.email ?? session.customer_email ?? (customerId ? ((acct.get(customerId)?.email as string | null) ?? null) : null) ?? 'customer@example.test';
  if (!customerId) {
    const customer: Stripe.Customer = {
      id: newId('cus', 14),
      object: 'customer',
      address: null,
      balance: 0,
      created: acct.now,
      currency: null,
      default_source: null,
      delinquent: false,
      description: null,
      discount: null,
      email,
      invoice_prefix: randomString(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
      metadata: {},
      name: opts.name ?? null,
      next_invoice_sequence: 1,
      phone: null,
      preferred_locales: [],
      shipping: null,
      tax_exempt: 'none',
      test_clock: null,
    };
    acct.put(customer);
    acct.emit('customer.created', customer);
    customerId = customer.id;
  }
  let discounts = (session.discounts ?? []).map((d) => (d.promotion_code ? { promotion_code: d.promotion_code as string } : { coupon: d.coupon as string }));
  if (opts.promotionCode) {
    if (!session.allow_promotion_codes) throw invalidRequest('This Checkout Session does not accept promotion codes.');
    const promo = acct.all<Stripe.PromotionCode>('promotion_code', (x) => x.active && x.code.toLowerCase() === opts.promotionCode!.toLowerCase())[0];
    if (!promo) throw invalidRequest('This code is invalid.');
    const problem = promotionCodeProblem(acct, promo, customerId, session.amount_subtotal ?? undefined, session.currency ?? undefined);
    if (problem) throw invalidRequest(problem);
    discounts = [{ promotion_code: promo.id }];
  }
  if (session.mode === 'payment') return payOnce(ctx, session, customerId, email, opts);
  const pm = attachPaymentMethod(acct, opts.paymentMethod ?? 'pm_card_visa', customerId);
  const data = state.subscriptionData;
  const sub = createSubscription(
    ctx,
    {
      customer: customerId,
      items: state.lineItems.filter((li) => li.price.type === 'recurring').map((li) => ({ price: li.price.id, quantity: li.quantity })),
      default_payment_method: pm.id,
      payment_behavior: 'error_if_incomplete',
      trial_period_days: data.trial_period_days,
      trial_end: data.trial_end,
      trial_settings: data.trial_settings,
      metadata: data.metadata,
      description: data.description,
      discounts: discounts.length ? discounts : undefined,
    },
    { checkoutSession: session.id },
  );
  const invoice = acct.get(sub.latest_invoice as string) as Stripe.Invoice;
  const discountTotal = (invoice.total_discount_amounts ?? []).reduce((sum, d) => sum + d.amount, 0);
  acct.update(session, (o) => {
    o.status = 'complete';
    o.payment_status = invoice.amount_due === 0 ? 'no_payment_required' : 'paid';
    o.customer = customerId;
    o.customer_details = { address: null, email, name: opts.name ?? null, phone: null, tax_exempt: 'none', tax_ids: [] };
    o.subscription = sub.id;
    o.invoice = invoice.id!;
    o.amount_subtotal = invoice.subtotal;
    o.amount_total = invoice.total;
    o.total_details = { amount_discount: discountTotal, amount_shipping: 0, amount_tax: 0 };
    o.discounts = discounts.map((d) => ({ coupon: (d as any).coupon ?? null, promotion_code: (d as any).promotion_code ?? null }));
    o.url = null;
  });
  acct.emit('checkout.session.completed', session);
  return session;
}

/**
 * A `payment` session paid: the card (a test payment method, not attached: no future usage) is
 * charged once by a PaymentIntent made now; a decline fails the intent and throws, leaving the
 * session open for another card, as the hosted page does.
 */
function payOnce(ctx: Ctx, session: Session, customerId: string, email: string, opts: CompleteCheckoutOptions): Session {
  const { acct } = ctx;
  if (opts.promotionCode) throw invalidRequest('This Checkout Session does not accept promotion codes.');
  const pm = resolvePaymentMethod(acct, opts.paymentMethod ?? 'pm_card_visa');
  const decline = chargeOutcome(acct, pm.id);
  const amount = session.amount_total ?? 0;
  const intentData = acct.state(session.id).session?.paymentIntentData ?? {};
  const pi = createPaymentIntent(acct, {
    amount,
    currency: session.currency ?? acct.defaultCurrency,
    customer: customerId,
    description: intentData.description ?? null,
    metadata: applyMetadata({}, intentData.metadata),
    paymentMethod: pm.id,
  });
  if (decline) {
    declinePaymentIntent(acct, pi, decline);
    // The declined attempt stays (its PaymentIntent and events); the session stays open.
    throw cardError(decline, { param: '' }).committed();
  }
  acct.update(pi, (o) => {
    o.status = 'succeeded';
    o.amount_received = o.amount;
  });
  acct.emit('payment_intent.succeeded', pi);
  acct.update(session, (o) => {
    o.status = 'complete';
    o.payment_status = 'paid';
    o.customer = customerId;
    o.customer_details = { address: null, email, name: opts.name ?? null, phone: null, tax_exempt: 'none', tax_ids: [] };
    o.payment_intent = pi.id;
    o.url = null;
  });
  acct.emit('checkout.session.completed', session);
  return session;
}

export const checkoutRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/checkout/sessions',
    paramsType: 'Checkout.SessionCreateParams',
    fields: {
      mode: s.req(s.enum(['payment', 'setup', 'subscription'])),
      line_items: s.arr(
        s.obj({
          price: s.str(),
          price_data: s.obj({
            currency: s.req(s.str()),
            unit_amount: s.int({ min: 0 }),
            product: s.str(),
            product_data: s.obj({ name: s.req(s.str({ max: 250 })), description: s.str(), metadata: s.meta() }),
          }),
          quantity: s.int({ min: 1 }),
        }),
      ),
      payment_intent_data: s.obj({ metadata: s.meta(), description: s.str({ max: 1000 }) }),
      success_url: s.str({ max: 5000 }),
      cancel_url: s.str({ max: 5000 }),
      customer: s.str(),
      customer_email: s.str(),
      client_reference_id: s.str({ max: 200 }),
      metadata: s.meta(),
      subscription_data: s.obj({
        trial_period_days: s.int({ min: 1, max: 730 }),
        trial_end: s.int(),
        metadata: s.meta(),
        description: s.str({ max: 500 }),
        trial_settings: s.obj({ end_behavior: s.req(s.obj({ missing_payment_method: s.req(s.enum(['cancel', 'create_invoice', 'pause'])) })) }),
      }),
      discounts: s.arr(s.obj({ coupon: s.str(), promotion_code: s.str() })),
      allow_promotion_codes: s.bool(),
      payment_method_types: s.arr(s.str()),
      payment_method_collection: s.enum(['always', 'if_required']),
      billing_address_collection: s.enum(['auto', 'required']),
      locale: s.str(),
      expires_at: s.int(),
      ui_mode: s.enum(['custom', 'embedded', 'hosted']),
    },
    handler: sessionCreate,
  },
  {
    method: 'GET',
    path: '/v1/checkout/sessions/:id',
    paramsType: 'Checkout.SessionRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => ctx.acct.find('checkout.session', path.id!, 'checkout.session'),
  },
  {
    method: 'GET',
    path: '/v1/checkout/sessions',
    paramsType: 'Checkout.SessionListParams',
    fields: { ...listFields, customer: s.str(), subscription: s.str(), status: s.enum(['complete', 'expired', 'open']), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Session>(
          'checkout.session',
          (x) => (!p.customer || x.customer === p.customer) && (!p.subscription || x.subscription === p.subscription) && (!p.status || x.status === p.status),
        ),
        p,
        '/v1/checkout/sessions',
      ),
  },
  {
    method: 'GET',
    path: '/v1/checkout/sessions/:id/line_items',
    paramsType: 'Checkout.SessionListLineItemsParams',
    fields: listFields,
    handler: (ctx, p, path) => {
      ctx.acct.find('checkout.session', path.id!, 'checkout.session');
      return paginate(ctx.acct.state(path.id!).session?.lineItems ?? [], p, `/v1/checkout/sessions/${path.id}/line_items`);
    },
  },
  {
    method: 'POST',
    path: '/v1/checkout/sessions/:id/expire',
    paramsType: 'Checkout.SessionExpireParams',
    fields: {},
    handler: (ctx, _p, path) => {
      const session = ctx.acct.find<Session>('checkout.session', path.id!, 'checkout.session');
      if (session.status !== 'open') {
        throw invalidRequest(`Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`, {
          code: 'checkout_session_unexpected_state',
        });
      }
      ctx.acct.update(session, (o) => {
        o.status = 'expired';
        o.url = null;
      });
      ctx.acct.emit('checkout.session.expired', session);
      return session;
    },
  },
];
