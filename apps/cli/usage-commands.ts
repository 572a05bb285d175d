import { SYSTEM_ORIGIN } from '../../application/ports/request-origin';
import { messageWith, type ErrorCode } from '../../contract/errors';
import { CLI_ADMIN } from '../../domain/audit';
import { DEFAULT_CURRENCY, parseAmountInput, parseCurrency } from '../../domain/billing/money';
import type { BillingSubject } from '../../domain/billing/subject';
import { type CreditPackInput, validateCreditPack } from '../../domain/usage/credit-pack';
import { OVERAGE_MODES, USAGE_RESETS, type UsageLimitInput, validateUsageLimits } from '../../domain/usage/limits';
import { METER_AGGREGATIONS } from '../../domain/usage/meter';
import type { Admin } from '../server/features/admin';
import type { Options } from './args';
import type { Command } from './command';
import { CommandError } from './messages';
import { table } from './render';
import {
  count,
  featureJson,
  featuresTable,
  grantJson,
  grantsTable,
  grantText,
  meterJson,
  meterListText,
  meterText,
  minorAmount,
  packJson,
  packsTable,
  packText,
  subjectJson,
  subjectText,
  units,
} from './usage-render';

/**
 * The usage-based billing commands (docs/usage.md): a project's meters, credits granted to a user
 * or an organization, credit packs sold to them, a subject's usage and a meter's top consumers.
 * Each calls one of the usage use cases (application/usage/use-cases.ts), or for credit packs one
 * of billing's operator use cases, the same the console calls; changes to meters and credits are
 * audited as made by the operator `cli` (the pack use cases take no actor, as plans and prices).
 * The plan commands' `--limit` is parsed here too (`usageLimitOption`).
 */

export const USAGE_GROUPS: Record<string, string> = {
  meter: "a project's meters: what usage-based billing measures (API calls, tokens, reports)",
  credits: 'credits of a meter granted to an end user or an organization, drawn after the plan includes',
  'credits pack': 'credit packs: credits of a meter sold to end users and organizations for a one-off amount',
  usage: "an end user's or an organization's usage of each metered feature, and a meter's top consumers",
};

/** Who changes meters and grants credits: the operator `cli`, as the other commands are audited. */
const BY_CLI = { actor: CLI_ADMIN, origin: SYSTEM_ORIGIN } as const;

/** What a command asked for, used to name the offending value in a message. */
interface UsageErrorContext {
  projectId: string;
  key?: string;
  name?: string;
  unit?: string;
  aggregation?: string;
  /** The subject as given (`user:<id>`). */
  subject?: string;
  amount?: string;
  expires?: string;
  packId?: string;
  /** The credit pack's term at fault, as the command line gave it (`--units "0"`). */
  packTerm?: string;
}

const quoted = (value: string) => `"${value}"`;
const named = (value: string | undefined) => ({ detail: value !== undefined ? quoted(value) : undefined });

const USAGE_OFFENDING: { readonly [C in ErrorCode]?: (ctx: UsageErrorContext) => { detail?: string; tail?: string } } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId}` }),
  meter_not_found: (ctx) => ({ tail: `: ${ctx.key ?? ''} in project ${ctx.projectId}` }),
  meter_key_taken: (ctx) => ({ tail: ctx.key !== undefined ? `: ${quoted(ctx.key)}` : '' }),
  invalid_meter_key: (ctx) => named(ctx.key),
  invalid_meter_name: (ctx) => named(ctx.name),
  invalid_meter_unit: (ctx) => named(ctx.unit),
  invalid_meter_aggregation: (ctx) => named(ctx.aggregation),
  unknown_meter: (ctx) => named(ctx.key),
  unknown_subject: (ctx) => named(ctx.subject),
  invalid_credit_amount: (ctx) => named(ctx.amount),
  invalid_credit_expiry: (ctx) => named(ctx.expires),
  invalid_credit_pack: (ctx) => ({ detail: ctx.packTerm }),
  credit_pack_not_found: (ctx) => ({ tail: `: ${ctx.packId ?? ''} in project ${ctx.projectId}` }),
};

/** A refusal worded from the error table (contract/errors/usage.errors.ts), naming the offending value. */
function usageError(code: ErrorCode, ctx: UsageErrorContext): CommandError {
  const { detail, tail } = USAGE_OFFENDING[code]?.(ctx) ?? {};
  return new CommandError(code, `${messageWith(code, detail, tail)}.`);
}

/** Fails the command with the refusal, or answers the value. */
function unwrap<T>(outcome: { ok: true; value: T } | { ok: false; error: ErrorCode }, ctx: UsageErrorContext): T {
  if (!outcome.ok) throw usageError(outcome.error, ctx);
  return outcome.value;
}

async function findProject(admin: Admin, projectId: string): Promise<void> {
  if (!(await admin.getProject(projectId))) throw usageError('project_not_found', { projectId });
}

// ---------------------------------------------------------------------------------------------
// Argument checks the use cases cannot make (shapes of CLI values)

const SUBJECT_FORM = '<user|organization>:<id>';

/** `user:<userId>` or `organization:<organizationId>` (`org:` too, as `subscription list` prints one). */
function subjectArg(options: Options, given: string): BillingSubject {
  const match = /^(user|organization|org):(.+)$/.exec(given);
  if (!match) return options.fail(`<subject> must be user:<userId> or organization:<organizationId>, got "${given}".`);
  return { kind: match[1] === 'user' ? 'user' : 'organization', id: match[2]! };
}

/** The use cases take a subject as the API names it. */
const subjectInput = (subject: BillingSubject) => ({ type: subject.kind, id: subject.id });

/** An ISO 8601 time as `audit list --since` takes one: `2027-01-01`, `2027-01-01T00:00:00Z`. */
function isoOption(options: Options, name: string): Date | undefined {
  const value = options.string(name);
  if (value === undefined) return undefined;
  const parsed = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? new Date(value) : null;
  if (!parsed || Number.isNaN(parsed.getTime())) {
    return options.fail(`--${name} must be an ISO 8601 time, e.g. 2027-01-01 or 2027-01-01T00:00:00Z, got "${value}".`);
  }
  return parsed;
}

/** A whole number as given, or the text itself: the use case refuses what is not one, naming it. */
const wholeOrText = (text: string): unknown => (/^\d{1,15}$/.test(text) ? Number(text) : text);

/** A whole number option as given (its bounds are the use case's), or undefined when absent. */
function wholeOption(options: Options, name: string, what: string, example: string): number | undefined {
  const value = options.string(name);
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) return options.fail(`--${name} must be a whole number of ${what}, e.g. ${example}, got "${value}".`);
  return Number(value);
}

/** A pack's terms with values `validateCreditPack` accepts, in the order it checks them. */
const ACCEPTED_PACK: Required<CreditPackInput> = { name: 'Pack', meter: 'a', units: 1, currency: 'usd', amount: 100, expiresInDays: null };

/**
 * The term of a refused pack at fault, as the command line names it: the first one the domain's
 * check refuses with the terms after it replaced by accepted values.
 */
function packTermAtFault(input: Required<CreditPackInput>, named: Record<keyof CreditPackInput, string>): string | undefined {
  const terms = Object.keys(ACCEPTED_PACK) as (keyof CreditPackInput)[];
  const fault = terms.find((_, k) => {
    const accepted = Object.fromEntries(terms.slice(k + 1).map((t) => [t, ACCEPTED_PACK[t]]));
    return !validateCreditPack({ ...input, ...accepted }).ok;
  });
  return fault === undefined ? undefined : named[fault];
}

/** `--limit`'s form, for its help and its messages. */
export const LIMIT_FORM = '<meter>:<included>[:<reset>[:<overage>[:<unitAmount>[/<packageSize>]]]]';
const LIMIT_EXAMPLE = 'api_calls:5000:period:bill:200/1000';

/**
 * One `--limit <meter>:<included>[:<reset>[:<overage>[:<unitAmount>[/<packageSize>]]]]` of `plan
 * create` / `plan update`: the included units, the window (period by default) and what happens past
 * it (refuse by default); billed overage takes a price in whole minor units per started package
 * (`200/1000`: 200 minor units for each 1,000 units begun; `5`: per unit). Its shape is checked
 * here (a usage error); the values' bounds and the meter are the use case's (invalid_usage_limit,
 * unknown_meter).
 */
export function usageLimitOption(options: Options, given: string): UsageLimitInput {
  const bad = (why: string): never => options.fail(`--limit ${given}: ${why}; the form is ${LIMIT_FORM}, e.g. ${LIMIT_EXAMPLE}.`);
  const parts = given.split(':');
  if (parts.length < 2 || parts.length > 5) bad('give the meter and the included amount at least, and at most a reset, an overage and a price');
  const [meter, included, reset, overage, price] = parts as [string, string, string?, string?, string?];
  if (meter === '') bad('the meter key is missing');
  if (!/^\d{1,15}$/.test(included)) bad(`the included amount must be a whole number of units, got "${included}"`);
  if (reset !== undefined && !(USAGE_RESETS as readonly string[]).includes(reset)) bad(`the reset must be one of ${USAGE_RESETS.join(', ')}, got "${reset}"`);
  if (overage !== undefined && !(OVERAGE_MODES as readonly string[]).includes(overage)) {
    bad(`the overage must be one of ${OVERAGE_MODES.join(', ')}, got "${overage}"`);
  }
  const input: UsageLimitInput = {
    meter,
    included: Number(included),
    ...(reset !== undefined ? { reset } : {}),
    ...(overage !== undefined ? { overage } : {}),
  };
  if (overage === 'bill') {
    if (price === undefined) bad('billed overage needs a price: <unitAmount>[/<packageSize>] in whole minor units, after :bill');
    const m = /^(\d{1,15})(?:\/(\d{1,15}))?$/.exec(price!);
    if (!m) bad(`the price must be <unitAmount>[/<packageSize>], whole minor units per started package (200/1000: 200 for each 1,000 begun), got "${price}"`);
    input.price = { unitAmount: Number(m![1]), packageSize: m![2] === undefined ? 1 : Number(m![2]) };
  } else if (price !== undefined) {
    bad(`a price is only for billed overage (:bill:${price}), not for ${overage}`);
  }
  return input;
}

/**
 * Why the use case refused a plan's limits (invalid_usage_limit, unknown_meter), naming the
 * `--limit` at fault as given; null for another refusal.
 */
export function usageLimitError(code: string, given: readonly string[], limits: readonly UsageLimitInput[], meterKeys: readonly string[]): CommandError | null {
  if (code === 'unknown_meter') {
    const i = limits.findIndex((l) => !meterKeys.includes(l.meter));
    const detail = i < 0 ? undefined : `${quoted(limits[i]!.meter)} (--limit ${given[i]})`;
    return new CommandError(code, `${messageWith(code, detail)}.`);
  }
  if (code === 'invalid_usage_limit') {
    const i = limits.findIndex((l, k) => !validateUsageLimits([l]).ok || limits.findIndex((o) => o.meter === l.meter) !== k);
    return new CommandError(code, `${messageWith(code, i < 0 ? undefined : quoted(given[i]!))}.`);
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Commands

const TOP_MAX = 100;

export const USAGE_COMMANDS: Command[] = [
  {
    path: ['meter', 'create'],
    args: ['projectId', 'key'],
    summary: 'Create a meter: the key usage is reported under, a name and a unit for people, how events add up',
    options: {
      name: { arity: 1, placeholder: '<name>', description: 'name shown to people, 1 to 100 characters (default: the key)' },
      unit: { arity: 1, placeholder: '<unit>', description: 'unit label, e.g. calls or tokens, up to 30 characters (default: none)' },
      aggregation: {
        arity: 1,
        placeholder: `<${METER_AGGREGATIONS.join('|')}>`,
        description: "how a window's events add up: their values' sum, their count, or the highest value (a level) (default sum)",
      },
    },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const key = args.key!;
      const name = options.string('name');
      const unit = options.string('unit');
      const aggregation = options.string('aggregation');
      return async (admin, _billing, _webhooks, _audit, _orgs, usage) => {
        await findProject(admin, projectId);
        const created = await usage.createMeter(
          projectId,
          { key, ...(name !== undefined ? { name } : {}), ...(unit !== undefined ? { unit } : {}), ...(aggregation !== undefined ? { aggregation } : {}) },
          BY_CLI,
        );
        const meter = meterJson(unwrap(created, { projectId, key, name, unit, aggregation }));
        return {
          json: { projectId, meter },
          text: [
            `Created meter ${meter.key} in project ${projectId}.`,
            meterText(meter),
            '',
            `Set how much a plan includes with: tollgate plan update ${projectId} <plan> --limit ${meter.key}:<included>`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['meter', 'list'],
    args: ['projectId'],
    summary: "List a project's meters",
    options: {},
    plan:
      ({ args }) =>
      async (admin, _billing, _webhooks, _audit, _orgs, usage) => {
        const projectId = args.projectId!;
        await findProject(admin, projectId);
        const meters = (await usage.listMeters(projectId)).map(meterJson);
        return { json: { projectId, meters }, text: meterListText(projectId, meters) };
      },
  },
  {
    path: ['meter', 'update'],
    args: ['projectId', 'key'],
    summary: 'Rename a meter or change its unit label (its key and aggregation never change)',
    options: {
      name: { arity: 1, placeholder: '<name>', description: 'new name, 1 to 100 characters' },
      unit: { arity: 1, placeholder: '<unit>', description: 'new unit label, up to 30 characters ("" removes it)' },
    },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const key = args.key!;
      const name = options.string('name');
      const unit = options.string('unit');
      if (name === undefined && unit === undefined) options.fail('Nothing to update: give at least one option.');
      return async (admin, _billing, _webhooks, _audit, _orgs, usage) => {
        await findProject(admin, projectId);
        const updated = await usage.updateMeter(projectId, key, { ...(name !== undefined ? { name } : {}), ...(unit !== undefined ? { unit } : {}) }, BY_CLI);
        const meter = meterJson(unwrap(updated, { projectId, key, name, unit }));
        return { json: { projectId, meter }, text: `Updated meter ${meter.key} of project ${projectId}.\n${meterText(meter)}` };
      };
    },
  },
  {
    path: ['credits', 'grant'],
    args: ['projectId', 'subject', 'meter', 'amount'],
    summary: `Grant credits of a meter to an end user or an organization (${SUBJECT_FORM}), drawn after the plan's included amount`,
    options: {
      expires: { arity: 1, placeholder: '<ISO time>', description: 'when what is left of them expires, e.g. 2027-01-01 (default: never)' },
      reason: { arity: 1, placeholder: '<text>', description: 'why they were granted, up to 200 characters (the audit log and the grant keep it)' },
    },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const given = args.subject!;
      const subject = subjectArg(options, given);
      const key = args.meter!;
      const amountText = args.amount!;
      const expiresAt = isoOption(options, 'expires');
      const reason = options.string('reason');
      return async (admin, _billing, _webhooks, _audit, orgs, usage) => {
        await findProject(admin, projectId);
        const granted = await usage.grantCredits(
          projectId,
          {
            subject: subjectInput(subject),
            feature: key,
            amount: wholeOrText(amountText),
            expiresAt: expiresAt ?? null,
            reason: reason ?? null,
          },
          'operator',
          BY_CLI,
        );
        const ctx = { projectId, key, subject: given, amount: amountText, expires: options.string('expires') };
        const { grant, meterKey } = unwrap(granted, ctx);
        const view = grantJson({ ...grant, meterKey }, orgs.now());
        const expiry = view.expiresAt ? `, expiring ${view.expiresAt}` : '';
        return {
          json: { projectId, subject: subjectJson(subject), grant: view },
          text: `Granted ${count(view.amount)} ${view.feature} credits to ${subjectText(subject)}${expiry}.\n${grantText(view)}`,
        };
      };
    },
  },
  {
    path: ['credits', 'list'],
    args: ['projectId', 'subject'],
    summary: `List the credit grants of an end user or an organization (${SUBJECT_FORM}), newest first, with what is left of each`,
    options: { meter: { arity: 1, placeholder: '<meter>', description: "only this meter's grants (its key)" } },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const given = args.subject!;
      const subject = subjectArg(options, given);
      const key = options.string('meter');
      return async (admin, _billing, _webhooks, _audit, orgs, usage) => {
        await findProject(admin, projectId);
        const listed = await usage.listCredits(projectId, { subject: subjectInput(subject), ...(key !== undefined ? { feature: key } : {}) });
        const now = orgs.now();
        const grants = unwrap(listed, { projectId, key, subject: given }).map((g) => grantJson(g, now));
        const text = grants.length
          ? grantsTable(grants)
          : `${subjectText(subject)} has no credit grants${key !== undefined ? ` of ${key}` : ''} in project ${projectId}.`;
        return { json: { projectId, subject: subjectJson(subject), grants }, text };
      };
    },
  },
  {
    path: ['credits', 'pack', 'create'],
    args: ['projectId', 'meter'],
    summary: 'Create a credit pack: credits of a meter that end users and organizations buy for a one-off amount',
    options: {
      name: { arity: 1, required: true, placeholder: '<name>', description: 'name shown to buyers, 1 to 100 characters, required' },
      units: { arity: 1, required: true, placeholder: '<n>', description: 'credits granted on payment, 1 to 10^12 units of the meter, required' },
      amount: {
        arity: 1,
        required: true,
        placeholder: '<minor units>',
        description: 'price in minor units (900 = $9.00 in usd), at least 1, required; a decimal only with the currency’s exact decimals (9.00)',
      },
      currency: { arity: 1, placeholder: '<code>', description: "ISO currency code (default: the billing connection's currency, else usd)" },
      'expires-in-days': {
        arity: 1,
        placeholder: '<n>',
        description: 'the credits expire this many days after the purchase, 1 to 3660 (default: never)',
      },
    },
    plan({ args, options, progress }) {
      const projectId = args.projectId!;
      const key = args.meter!;
      const name = options.string('name');
      const amountText = options.string('amount');
      const givenCurrency = options.string('currency');
      if (name === undefined) return options.fail('Missing --name <name>.');
      if (!options.has('units')) return options.fail('Missing --units <n>.');
      const unitsText = options.string('units')!;
      const unitCount = wholeOption(options, 'units', 'units', '500')!;
      if (amountText === undefined) return options.fail('Missing --amount <minor units>.');
      if (!/^\d{1,15}(\.\d{1,6})?$/.test(amountText)) {
        options.fail(`--amount must be a whole number of minor units (900 for $9.00), got "${amountText}".`);
      }
      const expiresInDays = wholeOption(options, 'expires-in-days', 'days', '30') ?? null;
      return async (admin, billing, _webhooks, _audit, _orgs, usage) => {
        await findProject(admin, projectId);
        let currency = givenCurrency;
        if (currency === undefined) {
          const connection = await billing.billingStatus(projectId);
          currency = connection.ok && connection.value ? connection.value.currency : DEFAULT_CURRENCY;
        }
        const named: Record<keyof CreditPackInput, string> = {
          name: `--name ${quoted(name)}`,
          meter: `<meter> ${quoted(key)}`,
          units: `--units ${quoted(unitsText)}`,
          currency: `--currency ${quoted(currency)}`,
          amount: `--amount ${quoted(amountText)}`,
          expiresInDays: `--expires-in-days ${quoted(options.string('expires-in-days') ?? '')}`,
        };
        const code = parseCurrency(currency);
        const amount = code === null ? null : parseAmountInput(amountText, code);
        // A decimal is read in the currency: one that does not fit it (or a currency not known) is refused as the use case refuses a bad term.
        if (amount === null) throw usageError('invalid_credit_pack', { projectId, packTerm: code === null ? named.currency : named.amount });
        if (code !== null) {
          progress(`Creating credit pack "${name}": ${count(unitCount)} ${key} credits for ${minorAmount(amount, code)} (${code} minor units).`);
        }
        const input = { meter: key, name, units: unitCount, amount, currency, expiresInDays };
        const created = await billing.createCreditPack(projectId, input);
        const ctx = { projectId, key, packTerm: created.ok ? undefined : packTermAtFault(input, named) };
        const pack = packJson(unwrap(created, ctx));
        const meters = await usage.listMeters(projectId);
        return {
          json: { projectId, pack },
          text: [
            `Created credit pack "${pack.name}" in project ${projectId}: ${count(pack.units)} ${pack.feature} credits ` +
              `for ${minorAmount(pack.amount, pack.currency)}.`,
            packText(pack, meters),
            '',
            `Signed-in users buy it with POST /api/proxy/billing/credit-packs/${pack.id}/checkout (docs/usage.md, "Credit packs").`,
          ].join('\n'),
        };
      };
    },
  },
  {
    path: ['credits', 'pack', 'list'],
    args: ['projectId'],
    summary: "List a project's credit packs, newest first, archived ones too",
    options: {},
    plan:
      ({ args }) =>
      async (admin, billing, _webhooks, _audit, _orgs, usage) => {
        const projectId = args.projectId!;
        await findProject(admin, projectId);
        const packs = (await billing.listCreditPacks(projectId, { activeOnly: false })).map(packJson);
        const text = packs.length
          ? packsTable(packs, await usage.listMeters(projectId))
          : `Project ${projectId} has no credit packs yet. Create one with: tollgate credits pack create ${projectId} <meter> --name <name> ` +
            '--units <n> --amount <minor units>';
        return { json: { projectId, packs }, text };
      },
  },
  {
    path: ['credits', 'pack', 'archive'],
    args: ['projectId', 'packId'],
    summary: 'Archive a credit pack: it is no longer sold; checkouts already open still grant their credits when paid',
    options: {},
    plan:
      ({ args }) =>
      async (admin, billing) => {
        const projectId = args.projectId!;
        const packId = args.packId!;
        await findProject(admin, projectId);
        const pack = packJson(unwrap(await billing.archiveCreditPack(projectId, packId), { projectId, packId }));
        return {
          json: { projectId, pack },
          text:
            `Archived credit pack "${pack.name}" (${pack.id}) of project ${projectId}: it is no longer sold; ` +
            'checkouts already open still grant their credits when paid.',
        };
      },
  },
  {
    path: ['usage', 'show'],
    args: ['projectId', 'subject'],
    summary: `Show the usage of an end user or an organization (${SUBJECT_FORM}): each metered feature this window, and the credit grants`,
    options: {},
    plan({ args, options }) {
      const projectId = args.projectId!;
      const given = args.subject!;
      const subject = subjectArg(options, given);
      return async (admin, _billing, _webhooks, _audit, orgs, usage) => {
        await findProject(admin, projectId);
        const detail = unwrap(await usage.subjectUsageDetail(projectId, subjectInput(subject)), { projectId, subject: given });
        const now = orgs.now();
        const features = detail.features.map(featureJson);
        const grants = detail.grants.map((g) => grantJson(g, now));
        const who = `${subjectText(subject)}${detail.label ? ` (${detail.label})` : ''}`;
        const text = [
          `Usage of ${who} in project ${projectId}, ${detail.plan ? `plan ${detail.plan}` : 'no plan'}:`,
          '',
          features.length ? featuresTable(features) : 'No metered features: its plan limits no meter and it holds no credits.',
          '',
          grants.length ? `Credit grants:\n${grantsTable(grants)}` : 'No credit grants.',
        ].join('\n');
        return {
          json: { projectId, subject: { ...subjectJson(subject), label: detail.label }, plan: detail.plan, features, grants },
          text,
        };
      };
    },
  },
  {
    path: ['usage', 'top'],
    args: ['projectId', 'meter'],
    summary: 'List the end users and organizations that used a meter most this calendar month (UTC)',
    options: { limit: { arity: 1, placeholder: '<n>', description: `at most n subjects (1 to ${TOP_MAX}, default 10)` } },
    plan({ args, options }) {
      const projectId = args.projectId!;
      const key = args.meter!;
      const limit = options.int('limit', 1, TOP_MAX) ?? 10;
      return async (admin, _billing, _webhooks, _audit, _orgs, usage) => {
        await findProject(admin, projectId);
        const top = unwrap(await usage.topConsumers(projectId, key, limit), { projectId, key });
        const since = top.since.toISOString();
        const meter = (await usage.listMeters(projectId)).find((m) => m.key === top.feature);
        const consumers = top.consumers.map((c) => ({ subject: subjectJson(c.subject), label: c.label, used: c.used, overage: c.overage }));
        const text = consumers.length
          ? [
              `Top consumers of ${top.feature} in project ${projectId} since ${since}:`,
              table(
                ['#', 'SUBJECT', 'USED', 'OVERAGE', 'NAME'],
                top.consumers.map((c, i) => [String(i + 1), subjectText(c.subject), units(c.used, meter?.unit ?? ''), count(c.overage), c.label ?? '-']),
              ),
            ].join('\n')
          : `No usage of ${top.feature} in project ${projectId} since ${since}.`;
        return { json: { projectId, feature: top.feature, since, consumers }, text };
      };
    },
  },
];
