import type { BillingErrorCode } from '../../application/billing/errors';
import type { OperatorPlanView } from '../../application/billing/views';
import type { UsageUseCases } from '../../application/usage/use-cases';
import type { PlanInput } from '../../domain/billing/catalog';
import { DEFAULT_CURRENCY } from '../../domain/billing/money';
import { SEAT_MODES } from '../../domain/billing/seat-terms';
import { PLAN_AUDIENCES } from '../../domain/billing/subject';
import type { Result } from '../../domain/result';
import type { Options } from './args';
import { planJson, planListText, planText } from './billing-render';
import type { CliBilling, Command } from './command';
import { billingError, type BillingErrorContext } from './messages';
import { LIMIT_FORM, usageLimitError, usageLimitOption } from './usage-commands';
import { usageLimitsText, usageLimitText } from './usage-render';

/**
 * The plan commands: a project's plans (products) and their order, the plan hierarchy. Each calls
 * one of billing's operator use cases (application/billing/use-cases.ts `OperatorUseCases`), the
 * same the console calls. They are listed with the billing commands (billing-commands.ts), between
 * `billing` and `price`.
 */

/** Fails the command with the refusal's code and message (from the error table), naming what was asked. */
function unwrap<T>(outcome: Result<T, BillingErrorCode>, ctx: BillingErrorContext): T {
  if (!outcome.ok) throw billingError(outcome, ctx);
  return outcome.value;
}

/** The `--limit`s as given, and as the use case takes them. */
interface LimitsGiven {
  given: string[];
  limits: NonNullable<PlanInput['usageLimits']>;
}

/** `--limit` (repeatable) and, on update, `--no-limits`: the plan's whole list of usage limits, or undefined to keep it. */
function limitsOption(options: Options, mode: 'create' | 'update'): LimitsGiven | undefined {
  const given = options.list('limit');
  if (mode === 'update' && options.has('no-limits')) {
    if (given.length) options.fail('--no-limits removes every usage limit: give it without --limit.');
    return { given, limits: [] };
  }
  if (given.length === 0) return undefined;
  return { given, limits: given.map((g) => usageLimitOption(options, g)) };
}

/**
 * Creates or changes a plan, its refusal named from what was asked: a `--limit` on an unknown meter
 * or with bad values is named as given.
 */
async function savePlan(
  billing: CliBilling,
  usage: UsageUseCases,
  save: () => Promise<Result<OperatorPlanView, BillingErrorCode>>,
  ctx: BillingErrorContext & { projectId: string },
  limits: LimitsGiven | undefined,
): Promise<{ plan: OperatorPlanView; limitsText: string }> {
  const saved = await save();
  const meters = await usage.listMeters(ctx.projectId);
  if (!saved.ok && limits) {
    const refusal = usageLimitError(
      saved.error,
      limits.given,
      limits.limits,
      meters.map((m) => m.key),
    );
    if (refusal) throw refusal;
  }
  const plan = unwrap(saved, ctx);
  return { plan, limitsText: usageLimitsText(plan.usageLimits, meters, await currencyOf(billing, ctx.projectId)) };
}

/** The currency billed overage is shown in: the billing connection's (as the console shows it), else usd. */
async function currencyOf(billing: CliBilling, projectId: string): Promise<string> {
  const connection = await billing.billingStatus(projectId);
  return connection.ok && connection.value ? connection.value.currency : DEFAULT_CURRENCY;
}

/** The plan fields given as options; the use case checks their values (a bad --audience answers invalid_plan_audience). */
function planPatch(options: Options, mode: 'create' | 'update'): Partial<PlanInput> {
  const patch: Partial<PlanInput> = {};
  const name = options.string('name');
  if (name !== undefined) patch.name = name;
  const description = options.string('description');
  if (description !== undefined) patch.description = description;
  const features = options.string('features');
  if (features !== undefined) patch.features = features;
  if (mode === 'create') {
    if (options.has('hidden')) patch.hidden = true;
    if (options.has('recommended')) patch.recommended = true;
    if (options.has('trials')) patch.trialsEnabled = true;
  } else {
    const hidden = options.onOff('hidden');
    if (hidden !== undefined) patch.hidden = hidden;
    const recommended = options.onOff('recommended');
    if (recommended !== undefined) patch.recommended = recommended;
    const trials = options.onOff('trials');
    if (trials !== undefined) patch.trialsEnabled = trials;
  }
  const trialDays = options.string('trial-days');
  if (trialDays !== undefined) {
    patch.defaultTrialDays = mode === 'update' && trialDays === 'none' ? null : options.int('trial-days', 0, 99_999)!;
  }
  const audience = options.string('audience');
  if (audience !== undefined) patch.audience = audience;
  const seatMode = options.string('seat-mode');
  if (seatMode !== undefined) patch.seatMode = seatMode;
  const countInvitations = mode === 'create' ? (options.has('seat-count-invitations') ? true : undefined) : options.onOff('seat-count-invitations');
  if (countInvitations !== undefined) patch.seatCountInvitations = countInvitations;
  const seatRemoval = options.string('seat-removal');
  if (seatRemoval !== undefined) patch.seatRemoval = seatRemoval;
  return patch;
}

const FEATURES_HOW = { create: 'trimmed, duplicates dropped', update: 'replaces the list; "" clears it' } as const;

const planOptions = (mode: 'create' | 'update') => ({
  name: {
    arity: 1 as const,
    required: mode === 'create',
    placeholder: '<name>',
    description: mode === 'create' ? 'plan name, unique in the project (1 to 100 characters), required' : 'rename the plan',
  },
  description: { arity: 1 as const, placeholder: '<text>', description: 'description (up to 1000 characters; "" clears it)' },
  features: {
    arity: 1 as const,
    placeholder: '<"a, b">',
    description: `feature flags granted by the plan, comma-separated (${FEATURES_HOW[mode]})`,
  },
  ...(mode === 'create'
    ? {
        hidden: { arity: 0 as const, description: 'leave the plan out of GET plans (it keeps its tier)' },
        recommended: { arity: 0 as const, description: 'mark the plan as the recommended one' },
        trials: { arity: 0 as const, description: 'offer trials on this plan (checkout trialDays)' },
      }
    : {
        hidden: { arity: 1 as const, placeholder: '<on|off>', description: 'leave the plan out of GET plans (it keeps its tier)' },
        recommended: { arity: 1 as const, placeholder: '<on|off>', description: 'mark the plan as the recommended one' },
        trials: { arity: 1 as const, placeholder: '<on|off>', description: 'offer trials on this plan (off also clears --trial-days)' },
      }),
  'trial-days': {
    arity: 1 as const,
    placeholder: mode === 'create' ? '<days>' : '<days|none>',
    description: `trial length when a checkout asks for none (1 to 730; needs trials${mode === 'update' ? '; none removes it' : ''})`,
  },
  audience: {
    arity: 1 as const,
    placeholder: `<${PLAN_AUDIENCES.join('|')}>`,
    description: `whom the plan is sold to: end users, organizations (team plans) or both${mode === 'create' ? ' (default users)' : ''}`,
  },
  'seat-mode': {
    arity: 1 as const,
    placeholder: `<${SEAT_MODES.join('|')}>`,
    description:
      "how an organization's seats on the plan's per-seat prices move: following its members, or bought by it" +
      (mode === 'create' ? ' (default automatic)' : ''),
  },
  'seat-count-invitations':
    mode === 'create'
      ? { arity: 0 as const, description: 'automatic seats: pending invitations hold a seat too' }
      : { arity: 1 as const, placeholder: '<on|off>', description: 'automatic seats: pending invitations hold a seat too' },
  'seat-removal': {
    arity: 1 as const,
    placeholder: '<period_end|immediately>',
    description: `a freed seat is billed until the period ends, or credited at once (prorated)${mode === 'create' ? ' (default period_end)' : ''}`,
  },
  limit: {
    arity: 1 as const,
    repeatable: true,
    placeholder: LIMIT_FORM,
    description:
      'a usage limit on a meter: units included per window (reset period, day or month; default period), then refuse, bill or allow ' +
      '(default refuse); billed overage costs <unitAmount> minor units per started <packageSize> units (default 1), e.g. ' +
      `api_calls:5000:period:bill:200/1000${mode === 'update' ? "; the limits given replace all of the plan's" : ''}`,
  },
  ...(mode === 'update' ? { 'no-limits': { arity: 0 as const, description: 'remove every usage limit of the plan' } } : {}),
});

export const PLAN_COMMANDS: Command[] = [
  {
    path: ['plan', 'create'],
    args: ['projectId'],
    summary: 'Create a plan (a product); it becomes the top tier of the hierarchy',
    options: planOptions('create'),
    plan({ args, options }) {
      const patch = planPatch(options, 'create');
      if (patch.name === undefined) return options.fail('Missing --name <name>.');
      const limits = limitsOption(options, 'create');
      const input: PlanInput = { ...patch, name: patch.name, ...(limits ? { usageLimits: limits.limits } : {}) };
      const projectId = args.projectId!;
      return async (_admin, billing, _webhooks, _audit, _orgs, usage) => {
        const saved = await savePlan(billing, usage, () => billing.createPlan(projectId, input), { projectId, planInput: input }, limits);
        const plan = planJson(saved.plan);
        return { json: { projectId, plan }, text: `Created plan "${plan.name}" in project ${projectId}.\n${planText(plan)}\n${saved.limitsText}` };
      };
    },
  },
  {
    path: ['plan', 'update'],
    args: ['projectId', 'plan'],
    summary: 'Change a plan (by id or name): name, description, features, hidden, recommended, trials, audience, seat policy',
    options: planOptions('update'),
    plan({ args, options }) {
      const patch = planPatch(options, 'update');
      const limits = limitsOption(options, 'update');
      if (limits) patch.usageLimits = limits.limits;
      if (Object.keys(patch).length === 0) options.fail('Nothing to update: give at least one option.');
      const projectId = args.projectId!;
      const ref = args.plan!;
      return async (_admin, billing, _webhooks, _audit, _orgs, usage) => {
        const saved = await savePlan(billing, usage, () => billing.updatePlan(projectId, ref, patch), { projectId, plan: ref, planInput: patch }, limits);
        const plan = planJson(saved.plan);
        return { json: { projectId, plan }, text: `Updated plan "${plan.name}".\n${planText(plan)}\n${saved.limitsText}` };
      };
    },
  },
  {
    path: ['plan', 'list'],
    args: ['projectId'],
    summary: 'List every plan of a project (hidden ones too), lowest tier first, with prices, seat policies, usage limits and processor ids',
    options: {},
    plan:
      ({ args }) =>
      async (_admin, billing, _webhooks, _audit, _orgs, usage) => {
        const projectId = args.projectId!;
        const plans = unwrap(await billing.listPlans(projectId), { projectId }).map(planJson);
        const limited = plans.filter((p) => p.usageLimits.length > 0);
        let limits = '';
        if (limited.length) {
          const [meters, currency] = await Promise.all([usage.listMeters(projectId), currencyOf(billing, projectId)]);
          const lines = limited.flatMap((p) => [
            `  Tier ${p.position + 1}  ${p.name}:`,
            ...p.usageLimits.map((l) => `    ${usageLimitText(l, meters, currency)}`),
          ]);
          limits = `\n\nUsage limits:\n${lines.join('\n')}`;
        }
        return { json: { projectId, plans }, text: planListText(projectId, plans) + limits };
      },
  },
  {
    path: ['plan', 'reorder'],
    args: ['projectId'],
    rest: 'plan',
    summary: 'Set the plan hierarchy: every plan of the project (id or name) once, lowest tier first',
    options: {},
    plan:
      ({ args, rest }) =>
      async (_admin, billing) => {
        const projectId = args.projectId!;
        const plans = unwrap(await billing.reorderPlans(projectId, rest), { projectId, plans: rest }).map(planJson);
        return { json: { projectId, plans }, text: `Reordered the plans of project ${projectId}.\n\n${planListText(projectId, plans)}` };
      },
  },
];
