import type { BillingErrorCode } from '../../application/billing/errors';
import type { ConnectInput, OperatorUseCases } from '../../application/billing/use-cases';
import type { PriceInput } from '../../domain/billing/catalog';
import { BILLING_EVENT_TYPES, isBillingEventType } from '../../domain/billing/events';
import { INVOICE_STATUSES, type InvoiceStatus } from '../../domain/billing/invoice';
import {
  DEFAULT_CURRENCY,
  currencyExponent,
  echoAmount,
  formatMoney,
  isCurrency,
  parseAmountInput,
  parseCurrency,
  HUNDREDS_ONLY_CURRENCIES,
} from '../../domain/billing/money';
import { BILLING_INTERVALS } from '../../domain/billing/periods';
import { SUBSCRIPTION_STATUSES } from '../../domain/billing/subscription';
import type { Result } from '../../domain/result';
import type { Options } from './args';
import {
  connectionJson,
  connectionText,
  eventJson,
  invoiceRows,
  iso,
  money,
  priceJson,
  priceLine,
  seatCount,
  seatRange,
  subscriptionTable,
} from './billing-render';
import type { Command } from './command';
import { billingError, type BillingErrorContext } from './messages';
import { PLAN_COMMANDS } from './plan-commands';
import { fields, table } from './render';
import { readSecret, SECRET_SOURCES } from './secrets';

/**
 * The billing commands: the project's connection to a payment processor, its catalog (plans and
 * prices), its subscriptions, invoices and events, and the sandbox's clock and promotion codes. Each calls
 * one of billing's operator use cases (application/billing/use-cases.ts `OperatorUseCases`), the
 * same the console calls. The plan commands are in plan-commands.ts, listed here in their place.
 */

export const BILLING_GROUPS: Record<string, string> = {
  billing: "a project's payment processor (Stripe or the sandbox), its events and the sandbox",
  'billing sandbox': "the sandbox processor's clock and promotion codes",
  plan: 'plans (products) of a project and their order, the plan hierarchy',
  price: 'prices of a plan',
  subscription: "end users' subscriptions",
  invoice: "end users' invoices",
};

// ---------------------------------------------------------------------------------------------
// Argument checks the use cases cannot make (shapes of CLI values)

/** Why a decimal amount was refused, said for the currency. */
function amountHint(currency: string): string {
  const example = (minor: number) => (isCurrency(currency) ? ` (${minor} is ${formatMoney({ amount: minor, currency })})` : '');
  if (!isCurrency(currency)) return '';
  const decimals = currencyExponent(currency);
  if (decimals === 0 || HUNDREDS_ONLY_CURRENCIES.includes(currency)) {
    return `; ${currency} takes whole numbers only: give minor units${example(HUNDREDS_ONLY_CURRENCIES.includes(currency) ? 500 : 1000)}`;
  }
  return `; or ${currency} with exactly ${decimals} decimals, e.g. ${decimals === 2 ? '10.00' : '1.250'}`;
}

/** Fails the command with the refusal's code and message (from the error table), naming what was asked. */
function unwrap<T>(outcome: Result<T, BillingErrorCode>, ctx: BillingErrorContext): T {
  if (!outcome.ok) throw billingError(outcome, ctx);
  return outcome.value;
}

const isInvoiceStatus = (s: string): s is InvoiceStatus => (INVOICE_STATUSES as readonly string[]).includes(s);

/** The use cases list at most 500 records. */
const listLimit = (options: Options) => options.int('limit', 1, 500);

/** The next page of a list, as `user list` and `audit list` page. */
const CURSOR_OPTION = { arity: 1, placeholder: '<cursor>', description: 'the next page: the cursor the previous page printed' } as const;
const more = (what: string, nextCursor: string | null) => (nextCursor ? `\n\nMore ${what}: add --cursor ${nextCursor}` : '');

/** What a list printed when it found nothing, with the filters it was given. */
const noneFound = (
  what: string,
  filter: { projectId: string; status?: string | undefined; userId?: string | undefined; organizationId?: string | undefined; cursor?: string | undefined },
) =>
  `No ${what}${filter.status ? ` with status ${filter.status}` : ''}${filter.userId ? ` for user ${filter.userId}` : ''}` +
  `${filter.organizationId ? ` for organization ${filter.organizationId}` : ''} ` +
  `in project ${filter.projectId}${filter.cursor ? ' after this cursor' : ''}.`;

/** `--amount` and `--unit-amount` as they may be written: minor units, or a decimal the currency then checks. */
const isAmountText = (text: string) => /^\d{1,15}(\.\d{1,6})?$/.test(text);

/** The per-seat options of `price create`. */
const SEAT_COUNT_OPTIONS = ['included', 'minimum', 'maximum'] as const;

/**
 * `--per-seat` with its `--unit-amount` (as given: the currency reads it) and seat counts, or null
 * for a flat price. The counts are whole numbers; their bounds are the use case's (invalid_seat_pricing).
 */
function seatOptionsOf(options: Options): { unitAmount: string; counts: { included?: number; minimum?: number; maximum?: number } } | null {
  const unitAmount = options.string('unit-amount');
  if (!options.has('per-seat')) {
    const stray = [...(unitAmount !== undefined ? ['unit-amount'] : []), ...SEAT_COUNT_OPTIONS.filter((o) => options.has(o))][0];
    if (stray !== undefined) options.fail(`--${stray} is for a per-seat price: add --per-seat --unit-amount <minor units>.`);
    return null;
  }
  if (unitAmount === undefined) return options.fail('Missing --unit-amount <minor units>: what --per-seat charges for each seat beyond --included.');
  if (!isAmountText(unitAmount)) options.fail(`--unit-amount must be a whole number of minor units (800 for $8.00), got "${unitAmount}".`);
  const counts: { included?: number; minimum?: number; maximum?: number } = {};
  for (const name of SEAT_COUNT_OPTIONS) {
    const n = options.int(name, 0, Number.MAX_SAFE_INTEGER);
    if (n !== undefined) counts[name] = n;
  }
  return { unitAmount, counts };
}

/** The ids of the project's per-seat prices (archived ones too): their subscriptions show their seats. */
async function perSeatPrices(billing: OperatorUseCases, projectId: string): Promise<Set<string>> {
  const plans = unwrap(await billing.listPlans(projectId), { projectId });
  return new Set(plans.flatMap((plan) => plan.prices.filter((p) => p.seats !== null).map((p) => p.id)));
}

/** A per-seat price as it will be created, shown back in minor units and formatted: `2000 = $20.00 + 800 = $8.00/seat over 3 seats`. */
function seatEcho(p: { amount: number; unitAmount: number; included: number; currency: string }): string {
  const unit = `${echoAmount({ amount: p.unitAmount, currency: p.currency })}/seat`;
  return `${echoAmount({ amount: p.amount, currency: p.currency })} + ${unit}${p.included > 0 ? ` over ${seatCount(p.included)}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Commands

export const BILLING_COMMANDS: Command[] = [
  {
    path: ['billing', 'connect'],
    args: ['projectId'],
    summary: 'Connect a project to Stripe (keys checked with Stripe, stored encrypted) or to the sandbox processor',
    options: {
      processor: { arity: 1, required: true, placeholder: '<stripe|sandbox>', description: 'payment processor, required' },
      'secret-key': {
        arity: 1,
        placeholder: '<@file|@-|env:NAME>',
        description: `Stripe secret or restricted key (sk_test_, sk_live_, rk_...), read from ${SECRET_SOURCES}; default: $STRIPE_SECRET_KEY`,
      },
      'publishable-key': { arity: 1, placeholder: '<pk_...>', description: 'Stripe publishable key, same mode as the secret key' },
      'webhook-secret': {
        arity: 1,
        placeholder: '<@file|@-|env:NAME>',
        description: `signing secret of the Stripe webhook endpoint, read from ${SECRET_SOURCES}; default: $STRIPE_WEBHOOK_SECRET`,
      },
      currency: { arity: 1, placeholder: '<code>', description: 'default currency of the project’s prices (default usd)' },
    },
    plan(ctx) {
      const { args, options, env } = ctx;
      const secret = (flag: string) => {
        const given = options.string(flag);
        return given === undefined ? undefined : readSecret(ctx, `--${flag}`, given);
      };
      const processor = options.string('processor');
      const currency = options.string('currency');
      let input: ConnectInput;
      if (processor === 'sandbox') {
        for (const flag of ['secret-key', 'publishable-key', 'webhook-secret']) {
          if (options.has(flag)) options.fail(`--${flag} is for --processor stripe; the sandbox takes no keys.`);
        }
        input = { processor: 'sandbox', ...(currency !== undefined ? { currency } : {}) };
      } else if (processor === 'stripe') {
        const secretKey = secret('secret-key') ?? (env.STRIPE_SECRET_KEY?.trim() || undefined);
        const publishableKey = options.string('publishable-key');
        const webhookSecret = secret('webhook-secret') ?? (env.STRIPE_WEBHOOK_SECRET?.trim() || undefined);
        if (secretKey === undefined) return options.fail('Missing the Stripe secret key: --secret-key <sk_...>, or STRIPE_SECRET_KEY in the environment.');
        if (publishableKey === undefined) return options.fail('Missing --publishable-key <pk_...>.');
        if (webhookSecret === undefined) {
          return options.fail('Missing the webhook signing secret: --webhook-secret <whsec_...>, or STRIPE_WEBHOOK_SECRET in the environment.');
        }
        input = { processor: 'stripe', secretKey, publishableKey, webhookSecret, ...(currency !== undefined ? { currency } : {}) };
      } else {
        return options.fail(
          processor === undefined ? 'Missing --processor <stripe|sandbox>.' : `--processor must be "stripe" or "sandbox", got "${processor}".`,
        );
      }
      const projectId = args.projectId!;
      return async (_admin, billing) => {
        const view = connectionJson(unwrap(await billing.connectBilling(projectId, input), { projectId, currency }));
        const intro =
          view.processor === 'stripe'
            ? `Connected project ${projectId} to Stripe (${view.mode} mode). The keys are stored encrypted and never shown again.`
            : `Connected project ${projectId} to the sandbox processor: no real money moves.`;
        const outro =
          view.processor === 'stripe'
            ? 'In the Stripe dashboard (Developers > Webhooks), add an endpoint with the webhook URL above and enable the events listed in docs/billing.md.'
            : `Pay with Stripe's test cards (pm_card_visa, or 4242 4242 4242 4242 on the checkout page); move the sandbox clock with: tollgate ` +
              `billing sandbox advance ${projectId} --days 31`;
        return { json: { projectId, connection: view }, text: [intro, '', connectionText(view), '', outro].join('\n') };
      };
    },
  },
  {
    path: ['billing', 'status'],
    args: ['projectId'],
    summary: "Show a project's billing connection: processor, mode, key's last 4, connection date, webhook URL",
    options: {},
    plan:
      ({ args }) =>
      async (_admin, billing) => {
        const projectId = args.projectId!;
        const found = unwrap(await billing.billingStatus(projectId), { projectId });
        if (found === null) {
          return {
            json: { projectId, connection: null },
            text: `Billing is not set up for project ${projectId}. Connect it with: tollgate billing connect ${projectId} --processor sandbox (or stripe).`,
          };
        }
        const view = connectionJson(found);
        return { json: { projectId, connection: view }, text: `Billing of project ${projectId}:\n${connectionText(view)}` };
      },
  },
  {
    path: ['billing', 'disconnect'],
    args: ['projectId'],
    summary: 'Stop billing a project through its processor; plans, prices, subscriptions and invoices stay',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, billing) => {
        const projectId = args.projectId!;
        const { disconnected } = unwrap(await billing.disconnectBilling(projectId), { projectId });
        return {
          json: { projectId, disconnected },
          text: disconnected
            ? `Disconnected billing of project ${projectId}; its plans, prices, subscriptions and invoices are kept.`
            : `Project ${projectId} had no billing connection.`,
        };
      },
  },
  {
    path: ['billing', 'events'],
    args: ['projectId'],
    summary: 'List the billing events recorded for a project, newest first',
    options: {
      type: { arity: 1, placeholder: '<type>', description: `only this type: ${BILLING_EVENT_TYPES.join(', ')}` },
      limit: { arity: 1, placeholder: '<n>', description: 'at most n events (1 to 500, default 50)' },
    },
    plan({ args, options }) {
      const type = options.string('type');
      if (type !== undefined && !isBillingEventType(type)) return options.fail(`--type must be one of ${BILLING_EVENT_TYPES.join(', ')}, got "${type}".`);
      const limit = listLimit(options) ?? 50;
      const projectId = args.projectId!;
      return async (_admin, billing) => {
        const events = unwrap(await billing.listEvents(projectId, { ...(type !== undefined ? { type } : {}), limit }), { projectId }).map(eventJson);
        const text = events.length
          ? table(
              ['CREATED', 'TYPE', 'SUBSCRIPTION', 'AMOUNT', 'ID'],
              events.map((e) => [
                e.createdAt ?? '',
                e.type,
                e.subscriptionId ?? '-',
                e.amount !== null && e.currency ? money(e.amount, e.currency) : '-',
                e.id,
              ]),
            )
          : `No billing events${type ? ` of type ${type}` : ''} for project ${projectId}.`;
        return { json: { projectId, events }, text };
      };
    },
  },
  {
    path: ['billing', 'sandbox', 'advance'],
    args: ['projectId'],
    // Renewals record events, fanned out to the project's webhook endpoints.
    enqueues: true,
    summary: "Move a project's sandbox clock forward (like a Stripe test clock) and apply renewals, trial ends and cancellations due",
    options: { days: { arity: 1, required: true, placeholder: '<n>', description: 'days to move forward, e.g. 31 or 0.5 (at most 3660), required' } },
    plan({ args, options }) {
      const text = options.string('days');
      if (text === undefined) return options.fail('Missing --days <n>.');
      if (!/^\d{1,6}(\.\d{1,6})?$/.test(text)) return options.fail(`--days must be a number of days such as 31 or 0.5, got "${text}".`);
      const days = Number(text);
      const projectId = args.projectId!;
      return async (_admin, billing) => {
        const { now, changed } = unwrap(await billing.advanceSandbox(projectId, days), { projectId, days: text });
        return {
          json: { projectId, now: iso(now), changed },
          text: `Moved the sandbox clock of project ${projectId} forward ${text} day(s): it is now ${iso(now)}. ${changed} subscription(s) changed.`,
        };
      };
    },
  },
  {
    path: ['billing', 'sandbox', 'promo'],
    args: ['projectId', 'code'],
    summary: "Create a promotion code for a project's sandbox: a percentage off the first invoice",
    options: { 'percent-off': { arity: 1, required: true, placeholder: '<n>', description: 'percentage off (1 to 100), required' } },
    plan({ args, options }) {
      const percentOff = options.int('percent-off', 0, 999_999);
      if (percentOff === undefined) return options.fail('Missing --percent-off <n>.');
      const code = args.code!;
      const projectId = args.projectId!;
      return async (_admin, billing) => {
        const created = unwrap(await billing.createSandboxPromotionCode(projectId, code, percentOff), { projectId, code, percentOff: String(percentOff) });
        return {
          json: { projectId, code: created.code, percentOff: created.percentOff },
          text: `Created sandbox promotion code ${created.code} (${created.percentOff}% off the first invoice) for project ${projectId}.`,
        };
      };
    },
  },
  // plan create, update, list, reorder
  ...PLAN_COMMANDS,
  {
    path: ['price', 'create'],
    args: ['projectId', 'plan'],
    summary: 'Add a price to a plan (by id or name): amount in minor units, currency, month or year; flat or per seat',
    options: {
      name: { arity: 1, required: true, placeholder: '<name>', description: 'price name, e.g. Monthly (1 to 100 characters), required' },
      amount: {
        arity: 1,
        required: true,
        placeholder: '<minor units>',
        description:
          'amount in minor units (1000 = $10.00 in usd, ¥1000 in jpy), required; a decimal only with the currency’s exact decimals (10.00); ' +
          'per seat: the base, for the --included seats (0 for none)',
      },
      currency: { arity: 1, placeholder: '<code>', description: "ISO currency code (default: the billing connection's currency, else usd)" },
      interval: { arity: 1, required: true, placeholder: `<${BILLING_INTERVALS.join('|')}>`, description: 'billing interval, required' },
      'per-seat': { arity: 0, description: 'a per-seat price, sold to organizations: --amount + --unit-amount for each seat beyond --included' },
      'unit-amount': {
        arity: 1,
        placeholder: '<minor units>',
        description: 'per seat: the amount of each seat beyond --included, in minor units as --amount (above 0), required with --per-seat',
      },
      included: { arity: 1, placeholder: '<n>', description: 'per seat: the seats --amount covers (default 0)' },
      minimum: { arity: 1, placeholder: '<n>', description: 'per seat: the fewest seats sold (default 1)' },
      maximum: { arity: 1, placeholder: '<n>', description: 'per seat: the most seats sold, at least --minimum and --included (default: no limit)' },
    },
    plan({ args, options, progress }) {
      const name = options.string('name');
      const amountText = options.string('amount');
      const interval = options.string('interval');
      const givenCurrency = options.string('currency');
      if (name === undefined) return options.fail('Missing --name <name>.');
      if (amountText === undefined) return options.fail('Missing --amount <minor units>.');
      if (!isAmountText(amountText)) {
        options.fail(`--amount must be a whole number of minor units (1000 for $10.00), got "${amountText}".`);
      }
      if (interval === undefined) return options.fail(`Missing --interval <${BILLING_INTERVALS.join('|')}>.`);
      const seatOptions = seatOptionsOf(options);
      const projectId = args.projectId!;
      const ref = args.plan!;
      return async (_admin, billing) => {
        let currency = givenCurrency;
        if (currency === undefined) {
          const connection = await billing.billingStatus(projectId);
          currency = connection.ok && connection.value ? connection.value.currency : DEFAULT_CURRENCY;
        }
        const ctx: BillingErrorContext = { projectId, plan: ref, currency, interval, amount: amountText, priceName: name };
        const code = parseCurrency(currency);
        const amount = parseAmountInput(amountText, code ?? currency);
        if (amount === null)
          throw billingError({ ok: false, error: code ? 'invalid_amount' : 'invalid_currency' }, { ...ctx, amountHint: amountHint(code ?? currency) });
        let seats: (PriceInput['seats'] & { unitAmount: number }) | undefined;
        if (seatOptions !== null) {
          if (code === null) throw billingError({ ok: false, error: 'invalid_currency' }, ctx);
          const unitAmount = parseAmountInput(seatOptions.unitAmount, code);
          if (unitAmount === null) {
            throw billingError({ ok: false, error: 'invalid_seat_pricing', detail: `--unit-amount "${seatOptions.unitAmount}"${amountHint(code)}` }, ctx);
          }
          seats = { unitAmount, ...seatOptions.counts };
        }
        if (code) {
          const charged =
            seats === undefined
              ? echoAmount({ amount, currency: code })
              : seatEcho({ amount, unitAmount: seats.unitAmount, included: seatOptions?.counts.included ?? 0, currency: code });
          progress(`Creating price "${name}" on plan ${ref}: ${charged} / ${interval} (${code} minor units).`);
        }
        const price = priceJson(
          unwrap(await billing.createPrice(projectId, ref, { name, amount, currency, interval, ...(seats !== undefined ? { seats } : {}) }), {
            ...ctx,
            seatOptions: seats !== undefined,
          }),
        );
        const known = isCurrency(price.currency);
        const minor = (n: number) => `${known ? echoAmount({ amount: n, currency: price.currency }) : n} (${price.currency} minor units)`;
        return {
          json: { projectId, price },
          text: [
            `Created price "${price.name}" (${priceLine(price)}) on plan ${ref}.`,
            fields(
              [
                ['id', price.id],
                ['plan', price.planId],
                ['amount', price.seats ? `${minor(price.amount)} for ${seatCount(price.seats.included)}` : minor(price.amount)],
                ...(price.seats
                  ? ([
                      ['per seat', `${minor(price.seats.unitAmount)} for each seat beyond ${seatCount(price.seats.included)}`],
                      ['seats', seatRange(price.seats)],
                    ] as const)
                  : []),
                ['processor', price.processorPriceId ?? '(not pushed to a processor)'],
              ],
              12,
            ),
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['price', 'archive'],
    args: ['projectId', 'priceId'],
    summary: 'Archive a price: no new subscriptions on it; current subscribers keep it',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, billing) => {
        const projectId = args.projectId!;
        const priceId = args.priceId!;
        const price = priceJson(unwrap(await billing.archivePrice(projectId, priceId), { projectId, priceId }));
        return {
          json: { projectId, price },
          text: `Archived price "${price.name}" (${priceLine(price)}, ${price.id}); subscriptions on it keep it.`,
        };
      },
  },
  {
    path: ['subscription', 'list'],
    args: ['projectId'],
    summary: "List a project's subscriptions, newest first, with the seats of per-seat ones",
    options: {
      user: { arity: 1, placeholder: '<userId>', description: "only this end user's subscriptions" },
      organization: { arity: 1, placeholder: '<organizationId>', description: "only this organization's subscriptions" },
      status: {
        arity: 1,
        placeholder: '<status>',
        description: `only this status: ${[...SUBSCRIPTION_STATUSES, 'pending_cancellation'].join(', ')}`,
      },
      limit: { arity: 1, placeholder: '<n>', description: 'at most n subscriptions (1 to 500, default 50)' },
      cursor: CURSOR_OPTION,
    },
    plan({ args, options }) {
      const userId = options.string('user');
      const organizationId = options.string('organization');
      const status = options.string('status');
      const statuses: readonly string[] = [...SUBSCRIPTION_STATUSES, 'pending_cancellation'];
      if (status !== undefined && !statuses.includes(status)) options.fail(`--status must be one of ${statuses.join(', ')}, got "${status}".`);
      const limit = listLimit(options) ?? 50;
      const cursor = options.string('cursor');
      const projectId = args.projectId!;
      return async (_admin, billing) => {
        const filter = {
          ...(userId !== undefined ? { userId } : {}),
          ...(organizationId !== undefined ? { organizationId } : {}),
          ...(status !== undefined ? { status } : {}),
          limit,
          ...(cursor !== undefined ? { cursor } : {}),
        };
        const page = unwrap(await billing.listSubscriptions(projectId, filter), { projectId, userId });
        const subscriptions = page.items;
        const text = subscriptions.length
          ? subscriptionTable(subscriptions, await perSeatPrices(billing, projectId)) + more('subscriptions', page.nextCursor)
          : noneFound('subscriptions', { projectId, status, userId, organizationId, cursor });
        return { json: { projectId, subscriptions, nextCursor: page.nextCursor }, text };
      };
    },
  },
  {
    path: ['invoice', 'list'],
    args: ['projectId'],
    summary: "List a project's invoices of every user, newest first",
    options: {
      user: { arity: 1, placeholder: '<userId>', description: "only this end user's invoices" },
      organization: { arity: 1, placeholder: '<organizationId>', description: "only this organization's invoices" },
      status: { arity: 1, placeholder: '<status>', description: `only this status: ${INVOICE_STATUSES.join(', ')}` },
      limit: { arity: 1, placeholder: '<n>', description: 'at most n invoices (1 to 500, default 50)' },
      cursor: CURSOR_OPTION,
    },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const userId = options.string('user');
      const organizationId = options.string('organization');
      const status = options.string('status');
      if (status !== undefined && !isInvoiceStatus(status)) options.fail(`--status must be one of ${INVOICE_STATUSES.join(', ')}, got "${status}".`);
      const limit = listLimit(options) ?? 50;
      const cursor = options.string('cursor');
      return async (_admin, billing) => {
        const filter = {
          ...(userId !== undefined ? { userId } : {}),
          ...(organizationId !== undefined ? { organizationId } : {}),
          ...(status !== undefined && isInvoiceStatus(status) ? { status } : {}),
          limit,
          ...(cursor !== undefined ? { cursor } : {}),
        };
        const page = unwrap(await billing.listProjectInvoices(projectId, filter), { projectId, userId });
        const invoices = page.items;
        const text = invoices.length
          ? table(['CREATED', 'USER', 'EMAIL', 'STATUS', 'REASON', 'TOTAL', 'PERIOD', 'ID'], invoiceRows(invoices)) + more('invoices', page.nextCursor)
          : noneFound('invoices', { projectId, status, userId, organizationId, cursor });
        return { json: { projectId, invoices, nextCursor: page.nextCursor }, text };
      };
    },
  },
];
