import type Stripe from 'stripe';
import type { Account } from './account';
import { applyMetadata, matchesCreated } from './catalog';
import type { Ctx, Route } from './context';
import { cardError, invalidRequest, resourceMissing, type Decline } from './errors';
import { createdFilter, listFields, s, type Fields } from './params';
import { fingerprint, newId, paginate, randomString } from './util';

/**
 * Customers (https://docs.stripe.com/api/customers), PaymentMethods (/api/payment_methods) and
 * SetupIntents (/api/setup_intents), with Stripe's test PaymentMethods
 * (https://docs.stripe.com/testing#cards and #declined-payments).
 */

// ---- test cards ------------------------------------------------------------------------------

interface TestCard {
  number: string;
  brand: string;
  funding: 'credit' | 'debit' | 'prepaid';
  /** Declined when attached (Stripe verifies the card) and on every charge. */
  decline?: Decline;
  /** Attaches, but every charge is declined ("Decline after attaching": pm_card_chargeCustomerFail). */
  declineOnCharge?: Decline;
}

const generic: Decline = { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };
const insufficient: Decline = { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' };
const lost: Decline = { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' };
const stolen: Decline = { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' };
const expired: Decline = { code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.' };
const cvc: Decline = { code: 'incorrect_cvc', decline_code: 'incorrect_cvc', message: "Your card's security code is incorrect." };
const processing: Decline = {
  code: 'processing_error',
  decline_code: 'processing_error',
  message: 'An error occurred while processing your card. Try again in a little bit.',
};

export const TEST_CARDS: Record<string, TestCard> = {
  pm_card_visa: { number: '4242424242424242', brand: 'visa', funding: 'credit' },
  pm_card_visa_debit: { number: '4000056655665556', brand: 'visa', funding: 'debit' },
  pm_card_mastercard: { number: '5555555555554444', brand: 'mastercard', funding: 'credit' },
  pm_card_mastercard_debit: { number: '5200828282828210', brand: 'mastercard', funding: 'debit' },
  pm_card_mastercard_prepaid: { number: '5105105105105100', brand: 'mastercard', funding: 'prepaid' },
  pm_card_amex: { number: '378282246310005', brand: 'amex', funding: 'credit' },
  pm_card_discover: { number: '6011111111111117', brand: 'discover', funding: 'credit' },
  pm_card_chargeDeclined: { number: '4000000000000002', brand: 'visa', funding: 'credit', decline: generic },
  pm_card_visa_chargeDeclined: { number: '4000000000000002', brand: 'visa', funding: 'credit', decline: generic },
  pm_card_chargeDeclinedInsufficientFunds: { number: '4000000000009995', brand: 'visa', funding: 'credit', decline: insufficient },
  pm_card_visa_chargeDeclinedInsufficientFunds: { number: '4000000000009995', brand: 'visa', funding: 'credit', decline: insufficient },
  pm_card_chargeDeclinedLostCard: { number: '4000000000009987', brand: 'visa', funding: 'credit', decline: lost },
  pm_card_visa_chargeDeclinedLostCard: { number: '4000000000009987', brand: 'visa', funding: 'credit', decline: lost },
  pm_card_chargeDeclinedStolenCard: { number: '4000000000009979', brand: 'visa', funding: 'credit', decline: stolen },
  pm_card_visa_chargeDeclinedStolenCard: { number: '4000000000009979', brand: 'visa', funding: 'credit', decline: stolen },
  pm_card_chargeDeclinedExpiredCard: { number: '4000000000000069', brand: 'visa', funding: 'credit', decline: expired },
  pm_card_chargeDeclinedIncorrectCvc: { number: '4000000000000127', brand: 'visa', funding: 'credit', decline: cvc },
  pm_card_chargeDeclinedProcessingError: { number: '4000000000000119', brand: 'visa', funding: 'credit', decline: processing },
  pm_card_chargeCustomerFail: { number: '4000000000000341', brand: 'visa', funding: 'credit', declineOnCharge: generic },
};

export const isTestToken = (id: string) => Object.hasOwn(TEST_CARDS, id);

const emptyAddress = (): Stripe.Address => ({ city: null, country: null, line1: null, line2: null, postal_code: null, state: null });

/** A new PaymentMethod cloned from a test id, as Stripe makes when `pm_card_visa` is used. */
export function paymentMethodFromTestToken(acct: Account, token: string): Stripe.PaymentMethod {
  const card = TEST_CARDS[token]!;
  const now = new Date(acct.now * 1000);
  const pm: Stripe.PaymentMethod = {
    id: newId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: { address: emptyAddress(), email: null, name: null, phone: null, tax_id: null },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: null },
      country: 'US',
      display_brand: card.brand === 'amex' ? 'american_express' : card.brand,
      exp_month: now.getUTCMonth() + 1,
      exp_year: now.getUTCFullYear() + 1,
      fingerprint: fingerprint(card.number),
      funding: card.funding,
      generated_from: null,
      last4: card.number.slice(-4),
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: acct.now,
    customer: null,
    livemode: false,
    metadata: {},
    type: 'card',
  };
  acct.put(pm);
  acct.state(pm.id).card = card.decline
    ? { behaviour: 'decline_on_attach', decline: card.decline }
    : card.declineOnCharge
      ? { behaviour: 'decline_on_charge', decline: card.declineOnCharge }
      : { behaviour: 'ok' };
  return pm;
}

/** A stored PaymentMethod, or one made from a test id (`pm_card_visa`). */
export function resolvePaymentMethod(acct: Account, id: string, param = 'payment_method'): Stripe.PaymentMethod {
  if (isTestToken(id)) return paymentMethodFromTestToken(acct, id);
  const pm = acct.get(id);
  if (pm?.object !== 'payment_method') throw resourceMissing('PaymentMethod', id, param);
  return pm as Stripe.PaymentMethod;
}

/** The decline a charge on this PaymentMethod meets, or null when it succeeds. */
export function chargeOutcome(acct: Account, pmId: string): Decline | null {
  const card = acct.state(pmId).card;
  if (!card || card.behaviour === 'ok') return null;
  return card.decline ?? generic;
}

export function attachPaymentMethod(acct: Account, pmIdOrToken: string, customerId: string, param = 'payment_method'): Stripe.PaymentMethod {
  const customer = acct.find<Stripe.Customer>('customer', customerId, 'customer', 'customer');
  const pm = resolvePaymentMethod(acct, pmIdOrToken, param);
  if (pm.customer === customer.id) return pm;
  if (pm.customer) throw invalidRequest('The payment method you provided has already been attached to a customer.', { param });
  if (acct.state(pm.id).card?.behaviour === 'decline_on_attach') {
    const decline = acct.state(pm.id).card!.decline!;
    throw cardError(decline, { param: '' });
  }
  acct.update(pm, (o) => {
    o.customer = customer.id;
  });
  acct.emit('payment_method.attached', pm);
  return pm;
}

/** "The customer does not have a payment method with the ID pm_x." unless attached to it. */
export function requireAttached(acct: Account, pmId: string, customerId: string, param: string): Stripe.PaymentMethod {
  const pm = acct.get(pmId) as Stripe.PaymentMethod | undefined;
  if (pm?.object !== 'payment_method' || pm.customer !== customerId) {
    throw invalidRequest(`The customer does not have a payment method with the ID ${pmId}. The payment method must be attached to the customer.`, {
      param,
      code: 'resource_missing',
    });
  }
  return pm;
}

// ---- customers -------------------------------------------------------------------------------

const addressFields = s.obj({ city: s.str(), country: s.str(), line1: s.str(), line2: s.str(), postal_code: s.str(), state: s.str() }, { emptyable: true });

const customerFields: Fields = {
  email: s.str({ max: 512, emptyable: true }),
  name: s.str({ max: 256, emptyable: true }),
  description: s.str({ max: 350, emptyable: true }),
  phone: s.str({ max: 20, emptyable: true }),
  metadata: s.meta(),
  address: addressFields,
  preferred_locales: s.arr(s.str(), { emptyable: true }),
  balance: s.int(),
  invoice_prefix: s.str({ max: 12 }),
  tax_exempt: s.enum(['exempt', 'none', 'reverse'], { emptyable: true }),
  invoice_settings: s.obj({
    default_payment_method: s.str({ emptyable: true }),
    footer: s.str({ max: 5000, emptyable: true }),
  }),
};

function customerCreate(ctx: Ctx, p: Record<string, any>): Stripe.Customer {
  const { acct } = ctx;
  const customer: Stripe.Customer = {
    id: newId('cus', 14),
    object: 'customer',
    address: p.address ? { ...emptyAddress(), ...p.address } : null,
    balance: p.balance ?? 0,
    created: acct.now,
    currency: null,
    default_source: null,
    delinquent: false,
    description: p.description ?? null,
    discount: null,
    email: p.email ?? null,
    invoice_prefix: p.invoice_prefix ?? randomString(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: p.invoice_settings?.footer ?? null, rendering_options: null },
    livemode: false,
    metadata: applyMetadata({}, p.metadata),
    name: p.name ?? null,
    next_invoice_sequence: 1,
    phone: p.phone ?? null,
    preferred_locales: p.preferred_locales ?? [],
    shipping: null,
    tax_exempt: p.tax_exempt ?? 'none',
    test_clock: null,
  };
  acct.put(customer);
  acct.emit('customer.created', customer);
  if (p.payment_method) {
    const pm = attachPaymentMethod(acct, p.payment_method, customer.id, 'payment_method');
    if (p.invoice_settings?.default_payment_method === p.payment_method) p.invoice_settings.default_payment_method = pm.id;
  }
  if (p.invoice_settings?.default_payment_method) {
    const pm = requireAttached(acct, p.invoice_settings.default_payment_method, customer.id, 'invoice_settings[default_payment_method]');
    acct.update(customer, (o) => {
      o.invoice_settings.default_payment_method = pm.id;
    });
  }
  return customer;
}

function customerUpdate(ctx: Ctx, p: Record<string, any>, path: Record<string, string>): Stripe.Customer {
  const { acct } = ctx;
  const customer = acct.find<Stripe.Customer>('customer', path.id!, 'customer');
  if (p.invoice_settings?.default_payment_method) {
    requireAttached(acct, p.invoice_settings.default_payment_method, customer.id, 'invoice_settings[default_payment_method]');
  }
  return acct.update(
    customer,
    (o) => {
      for (const key of ['email', 'name', 'description', 'phone', 'preferred_locales', 'balance', 'invoice_prefix', 'tax_exempt'] as const) {
        if (p[key] !== undefined) (o as any)[key] = p[key] ?? (key === 'preferred_locales' ? [] : key === 'tax_exempt' ? 'none' : null);
      }
      if (p.address !== undefined) o.address = p.address ? { ...emptyAddress(), ...(o.address ?? {}), ...p.address } : null;
      if (p.invoice_settings) {
        if (p.invoice_settings.default_payment_method !== undefined) o.invoice_settings.default_payment_method = p.invoice_settings.default_payment_method;
        if (p.invoice_settings.footer !== undefined) o.invoice_settings.footer = p.invoice_settings.footer;
      }
      o.metadata = applyMetadata(o.metadata, p.metadata);
    },
    'customer.updated',
  );
}

// ---- payment methods -------------------------------------------------------------------------

function paymentMethodDetach(ctx: Ctx, _p: Record<string, any>, path: Record<string, string>): Stripe.PaymentMethod {
  const { acct } = ctx;
  const pm = acct.find<Stripe.PaymentMethod>('payment_method', path.id!, 'PaymentMethod');
  if (!pm.customer) {
    throw invalidRequest(`The payment method ${pm.id} is not attached to a customer so detachment is impossible.`, { code: 'payment_method_unexpected_state' });
  }
  const customer = acct.get(pm.customer as string) as Stripe.Customer | undefined;
  acct.update(
    pm,
    (o) => {
      o.customer = null;
    },
    'payment_method.detached',
  );
  if (customer && customer.invoice_settings.default_payment_method === pm.id) {
    acct.update(
      customer,
      (o) => {
        o.invoice_settings.default_payment_method = null;
      },
      'customer.updated',
    );
  }
  return pm;
}

function paymentMethodUpdate(ctx: Ctx, p: Record<string, any>, path: Record<string, string>): Stripe.PaymentMethod {
  const { acct } = ctx;
  const pm = acct.find<Stripe.PaymentMethod>('payment_method', path.id!, 'PaymentMethod');
  if (!pm.customer && (p.card || p.billing_details)) {
    throw invalidRequest('You must save this PaymentMethod to a customer before you can update it.', { code: 'payment_method_unexpected_state' });
  }
  return acct.update(
    pm,
    (o) => {
      if (p.billing_details) {
        const b = p.billing_details;
        if (b.address !== undefined) o.billing_details.address = b.address ? { ...emptyAddress(), ...b.address } : emptyAddress();
        for (const k of ['email', 'name', 'phone'] as const) if (b[k] !== undefined) o.billing_details[k] = b[k];
      }
      if (p.card && o.card) {
        if (p.card.exp_month !== undefined) o.card.exp_month = p.card.exp_month;
        if (p.card.exp_year !== undefined) o.card.exp_year = p.card.exp_year;
      }
      if (p.allow_redisplay !== undefined) o.allow_redisplay = p.allow_redisplay;
      o.metadata = applyMetadata(o.metadata, p.metadata);
    },
    'payment_method.updated',
  );
}

function paymentMethodList(acct: Account, customer: string, p: Record<string, any>, url: string) {
  const items = acct.all<Stripe.PaymentMethod>('payment_method', (x) => x.customer === customer && (!p.type || x.type === p.type));
  return paginate(items, p, url);
}

// ---- setup intents ---------------------------------------------------------------------------

function setupIntentCreate(ctx: Ctx, p: Record<string, any>): Stripe.SetupIntent {
  const { acct } = ctx;
  if (p.customer) acct.find('customer', p.customer, 'customer', 'customer');
  const id = newId('seti');
  const automatic = !p.payment_method_types;
  const si: Stripe.SetupIntent = {
    id,
    object: 'setup_intent',
    application: null,
    automatic_payment_methods: automatic ? { allow_redirects: p.automatic_payment_methods?.allow_redirects ?? 'always', enabled: true } : null,
    cancellation_reason: null,
    client_secret: `${id}_secret_${randomString(32)}`,
    created: acct.now,
    customer: p.customer ?? null,
    description: p.description ?? null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata: applyMetadata({}, p.metadata),
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: automatic ? { id: 'pmc_fake_default', parent: null } : null,
    payment_method_options: { card: { mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: p.payment_method_types ?? ['card'],
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage: p.usage ?? 'off_session',
  };
  acct.put(si);
  if (p.payment_method) {
    const pm = resolvePaymentMethod(acct, p.payment_method);
    acct.update(si, (o) => {
      o.payment_method = pm.id;
      o.status = 'requires_confirmation';
    });
  }
  acct.emit('setup_intent.created', si);
  if (p.confirm) return setupIntentConfirm(ctx, {}, { id });
  return si;
}

function setupIntentConfirm(ctx: Ctx, p: Record<string, any>, path: Record<string, string>): Stripe.SetupIntent {
  const { acct } = ctx;
  const si = acct.find<Stripe.SetupIntent>('setup_intent', path.id!, 'setup_intent');
  if (si.status === 'succeeded' || si.status === 'canceled') {
    throw invalidRequest(`You cannot confirm this SetupIntent because it has a status of ${si.status}.`, { code: 'setup_intent_unexpected_state' });
  }
  const pmId = p.payment_method ?? (si.payment_method as string | null);
  if (!pmId)
    throw invalidRequest(
      "You cannot confirm this SetupIntent because it's missing a payment method. To confirm a SetupIntent, you must provide a payment method.",
      { code: 'setup_intent_unexpected_state' },
    );
  const pm = resolvePaymentMethod(acct, pmId);
  const card = acct.state(pm.id).card;
  if (card?.behaviour === 'decline_on_attach') {
    const decline = card.decline!;
    acct.update(si, (o) => {
      o.payment_method = null;
      o.status = 'requires_payment_method';
      o.last_setup_error = {
        type: 'card_error',
        code: decline.code as never,
        decline_code: decline.decline_code,
        message: decline.message,
        payment_method: pm,
      };
    });
    acct.emit('setup_intent.setup_failed', si);
    throw cardError(decline, { setup_intent: acct.render(acct, si) }).committed();
  }
  if (si.customer) attachPaymentMethod(acct, pm.id, si.customer as string);
  acct.update(si, (o) => {
    o.payment_method = pm.id;
    o.status = 'succeeded';
    o.last_setup_error = null;
  });
  acct.emit('setup_intent.succeeded', si);
  return si;
}

// ---- routes ----------------------------------------------------------------------------------

export const customerRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/customers',
    paramsType: 'CustomerCreateParams',
    fields: { ...customerFields, payment_method: s.str() },
    handler: customerCreate,
  },
  {
    method: 'GET',
    path: '/v1/customers/:id',
    paramsType: 'CustomerRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => {
      const c = ctx.acct.get(path.id!);
      if (c?.object !== 'customer') throw resourceMissing('customer', path.id!);
      return c.deleted ? { id: c.id, object: 'customer', deleted: true } : c;
    },
  },
  { method: 'POST', path: '/v1/customers/:id', paramsType: 'CustomerUpdateParams', fields: customerFields, handler: customerUpdate },
  {
    method: 'GET',
    path: '/v1/customers',
    paramsType: 'CustomerListParams',
    fields: { ...listFields, email: s.str({ max: 512 }), created: createdFilter },
    handler: (ctx, p) =>
      paginate(
        ctx.acct.all<Stripe.Customer>('customer', (x) => (p.email === undefined || x.email === p.email) && matchesCreated(x.created, p.created)),
        p,
        '/v1/customers',
      ),
  },
  {
    method: 'GET',
    path: '/v1/customers/:id/payment_methods',
    paramsType: 'CustomerListPaymentMethodsParams',
    fields: { ...listFields, type: s.str(), allow_redisplay: s.enum(['always', 'limited', 'unspecified']) },
    handler: (ctx, p, path) => {
      ctx.acct.find('customer', path.id!, 'customer');
      return paymentMethodList(ctx.acct, path.id!, p, `/v1/customers/${path.id}/payment_methods`);
    },
  },
  {
    method: 'GET',
    path: '/v1/payment_methods/:id',
    paramsType: 'PaymentMethodRetrieveParams',
    fields: {},
    handler: (ctx, _p, path) => resolvePaymentMethod(ctx.acct, path.id!, 'id'),
  },
  {
    method: 'POST',
    path: '/v1/payment_methods/:id',
    paramsType: 'PaymentMethodUpdateParams',
    fields: {
      billing_details: s.obj({
        address: addressFields,
        email: s.str({ emptyable: true }),
        name: s.str({ emptyable: true }),
        phone: s.str({ emptyable: true }),
      }),
      card: s.obj({ exp_month: s.int({ min: 1, max: 12 }), exp_year: s.int() }),
      metadata: s.meta(),
      allow_redisplay: s.enum(['always', 'limited', 'unspecified']),
    },
    handler: paymentMethodUpdate,
  },
  {
    method: 'POST',
    path: '/v1/payment_methods/:id/attach',
    paramsType: 'PaymentMethodAttachParams',
    fields: { customer: s.req(s.str()) },
    handler: (ctx, p, path) => attachPaymentMethod(ctx.acct, path.id!, p.customer, 'id'),
  },
  { method: 'POST', path: '/v1/payment_methods/:id/detach', paramsType: 'PaymentMethodDetachParams', fields: {}, handler: paymentMethodDetach },
  {
    method: 'GET',
    path: '/v1/payment_methods',
    paramsType: 'PaymentMethodListParams',
    fields: { ...listFields, customer: s.str(), type: s.str() },
    handler: (ctx, p) => {
      if (!p.customer) throw invalidRequest('This Stripe-shaped test server lists PaymentMethods of a customer only; pass `customer`.', { param: 'customer' });
      return paymentMethodList(ctx.acct, p.customer, p, '/v1/payment_methods');
    },
  },
  {
    method: 'POST',
    path: '/v1/setup_intents',
    paramsType: 'SetupIntentCreateParams',
    fields: {
      customer: s.str(),
      payment_method: s.str(),
      payment_method_types: s.arr(s.str()),
      automatic_payment_methods: s.obj({ enabled: s.req(s.bool()), allow_redirects: s.enum(['always', 'never']) }),
      usage: s.enum(['off_session', 'on_session']),
      description: s.str({ max: 1000 }),
      metadata: s.meta(),
      confirm: s.bool(),
      return_url: s.str(),
    },
    handler: setupIntentCreate,
  },
  {
    method: 'GET',
    path: '/v1/setup_intents/:id',
    paramsType: 'SetupIntentRetrieveParams',
    fields: { client_secret: s.str() },
    handler: (ctx, _p, path) => ctx.acct.find('setup_intent', path.id!, 'setup_intent'),
  },
  {
    method: 'POST',
    path: '/v1/setup_intents/:id',
    paramsType: 'SetupIntentUpdateParams',
    fields: { customer: s.str(), description: s.str({ emptyable: true }), metadata: s.meta(), payment_method: s.str() },
    handler: (ctx, p, path) => {
      const { acct } = ctx;
      const si = acct.find<Stripe.SetupIntent>('setup_intent', path.id!, 'setup_intent');
      if (p.customer) acct.find('customer', p.customer, 'customer', 'customer');
      const pm = p.payment_method ? resolvePaymentMethod(acct, p.payment_method) : null;
      return acct.update(si, (o) => {
        if (p.customer) o.customer = p.customer;
        if (p.description !== undefined) o.description = p.description;
        if (pm) {
          o.payment_method = pm.id;
          o.status = 'requires_confirmation';
        }
        o.metadata = applyMetadata(o.metadata, p.metadata);
      });
    },
  },
  {
    method: 'POST',
    path: '/v1/setup_intents/:id/confirm',
    paramsType: 'SetupIntentConfirmParams',
    fields: { payment_method: s.str(), return_url: s.str() },
    handler: setupIntentConfirm,
  },
  {
    method: 'POST',
    path: '/v1/setup_intents/:id/cancel',
    paramsType: 'SetupIntentCancelParams',
    fields: { cancellation_reason: s.enum(['abandoned', 'duplicate', 'requested_by_customer']) },
    handler: (ctx, p, path) => {
      const { acct } = ctx;
      const si = acct.find<Stripe.SetupIntent>('setup_intent', path.id!, 'setup_intent');
      if (si.status === 'succeeded' || si.status === 'canceled') {
        throw invalidRequest(`You cannot cancel this SetupIntent because it has a status of ${si.status}.`, { code: 'setup_intent_unexpected_state' });
      }
      acct.update(si, (o) => {
        o.status = 'canceled';
        o.cancellation_reason = p.cancellation_reason ?? null;
      });
      acct.emit('setup_intent.canceled', si);
      return si;
    },
  },
];
