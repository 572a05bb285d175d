import { useState, type FormEvent } from 'react';
import { PLAN_AUDIENCE_NAMES, UpdatePlanBodySchema } from '../../../../../contract/admin';
import { api, errorMessage } from '../../api';
import { ErrorNote } from '../../ui';
import type { Meter } from '../usage/format';
import { firstIssue, type Plan } from './format';
import { UsageLimitsFields, usageLimitsFrom } from './usage-limits';

/** Whom a plan is sold to, in the console's words (the form's choices and the plan list). */
export const AUDIENCE_LABELS: Record<Plan['audience'], string> = {
  users: 'Users',
  organizations: 'Organizations',
  both: 'Users and organizations',
};

/** Whether a plan sold to this audience has seats to manage (its per-seat prices). */
export const soldToOrganizations = (audience: string) => audience === 'organizations' || audience === 'both';

/** The seat policy fields, present only while the plan is sold to organizations. */
function seatPolicyFields(data: FormData) {
  const mode = data.get('seat_mode');
  if (mode === null) return {};
  return {
    seat_policy: {
      mode: String(mode),
      count_invitations: data.get('seat_count_invitations') === 'on',
      removal: String(data.get('seat_removal') ?? 'period_end'),
    },
  };
}

/**
 * The plan form's fields as the API takes them (features stay comma-separated: the server splits
 * them), with its usage limits; or what is wrong with a usage limit.
 */
export function planBody(data: FormData, currency: string) {
  const usageLimits = usageLimitsFrom(data, currency);
  if (typeof usageLimits === 'string') return { error: usageLimits } as const;
  return { body: { ...planFields(data), usage_limits: usageLimits } } as const;
}

/** The plan form's fields as the API takes them, but for the usage limits. */
export function planFields(data: FormData) {
  const trialDays = String(data.get('default_trial_days') ?? '').trim();
  return {
    ...seatPolicyFields(data),
    name: String(data.get('name') ?? ''),
    description: String(data.get('description') ?? ''),
    features: String(data.get('features') ?? ''),
    hidden: data.get('hidden') === 'on',
    recommended: data.get('recommended') === 'on',
    trials_enabled: data.get('trials_enabled') === 'on',
    default_trial_days: trialDays ? Number(trialDays) : null,
    audience: String(data.get('audience') ?? 'users'),
  };
}

/** What the plan form needs of the project: its meters (null while loading) and the billing currency. */
export type PlanContext = { projectId: string; meters: Meter[] | null; currency: string };

export function PlanFields(props: { idPrefix: string; plan?: Plan; context: PlanContext }) {
  const id = (name: string) => `${props.idPrefix}-${name}`;
  const p = props.plan;
  const [audience, setAudience] = useState<string>(p?.audience ?? 'users');
  return (
    <>
      <div className="grid">
        <div>
          <label htmlFor={id('name')}>Name</label>
          <input id={id('name')} name="name" maxLength={100} defaultValue={p?.name} />
        </div>
        <div>
          <label htmlFor={id('features')}>Features (comma-separated)</label>
          <input id={id('features')} name="features" placeholder="sso, audit-log" defaultValue={p?.features.join(', ')} />
        </div>
      </div>
      <label htmlFor={id('description')}>Description</label>
      <textarea id={id('description')} name="description" maxLength={1000} rows={2} defaultValue={p?.description} />
      <label htmlFor={id('audience')}>Sold to</label>
      <select id={id('audience')} name="audience" value={audience} onChange={(e) => setAudience(e.target.value)}>
        {PLAN_AUDIENCE_NAMES.map((a) => (
          <option key={a} value={a}>
            {AUDIENCE_LABELS[a]}
          </option>
        ))}
      </select>
      {soldToOrganizations(audience) ? <SeatPolicyFields idPrefix={props.idPrefix} policy={p?.seat_policy} /> : null}
      <div className="events">
        <label className="choice">
          <input type="checkbox" name="hidden" defaultChecked={p?.hidden} /> Hidden (left out of the public plan list)
        </label>
        <label className="choice">
          <input type="checkbox" name="recommended" defaultChecked={p?.recommended} /> Recommended
        </label>
        <label className="choice">
          <input type="checkbox" name="trials_enabled" defaultChecked={p?.trials_enabled} /> Trials
        </label>
      </div>
      <label htmlFor={id('trial-days')}>Default trial days (with trials; optional)</label>
      <input id={id('trial-days')} name="default_trial_days" type="number" min={1} max={730} defaultValue={p?.default_trial_days ?? ''} />
      <UsageLimitsFields
        idPrefix={props.idPrefix}
        limits={p?.usage_limits ?? []}
        meters={props.context.meters}
        currency={props.context.currency}
        projectId={props.context.projectId}
      />
    </>
  );
}

/**
 * How the seats of the plan's per-seat prices move: automatic (following the members, and the
 * pending invitations when they count) or bought by the organization; a freed seat billed until the
 * period ends or credited at once.
 */
function SeatPolicyFields(props: { idPrefix: string; policy: Plan['seat_policy'] | undefined }) {
  const id = (name: string) => `${props.idPrefix}-${name}`;
  const policy = props.policy ?? { mode: 'automatic', count_invitations: false, removal: 'period_end' };
  const [mode, setMode] = useState<string>(policy.mode);
  return (
    <fieldset className="seat-policy" aria-describedby={id('seats-help')}>
      <legend>Seats (per-seat prices)</legend>
      <p id={id('seats-help')} className="small muted">
        How an organization's seats move on this plan's per-seat prices.
      </p>
      <div className="events" role="radiogroup" aria-label="Seat mode">
        <label className="choice">
          <input type="radio" name="seat_mode" value="automatic" checked={mode === 'automatic'} onChange={() => setMode('automatic')} /> Automatic: the seats
          follow the members
        </label>
        <label className="choice">
          <input type="radio" name="seat_mode" value="bought" checked={mode === 'bought'} onChange={() => setMode('bought')} /> Bought: an admin of the
          organization buys them
        </label>
      </div>
      {mode === 'automatic' ? (
        <label className="choice">
          <input type="checkbox" name="seat_count_invitations" defaultChecked={policy.count_invitations} /> Pending invitations hold a seat
        </label>
      ) : null}
      <label htmlFor={id('seat-removal')}>A freed seat</label>
      <select id={id('seat-removal')} name="seat_removal" defaultValue={policy.removal}>
        <option value="period_end">Billed until the period ends (no credit)</option>
        <option value="immediately">Credited at once, prorated</option>
      </select>
    </fieldset>
  );
}

export function PlanEdit(props: { projectId: string; plan: Plan; context: PlanContext; reload: () => Promise<void>; setNotice: (n: string) => void }) {
  const [open, setOpen] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  const save = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const fields = planBody(new FormData(e.currentTarget), props.context.currency);
    if (fields.error !== undefined) return setFormError(fields.error);
    const parsed = UpdatePlanBodySchema.safeParse(fields.body);
    if (!parsed.success) return setFormError(firstIssue(parsed));
    const r = await api.billing.updatePlan({ params: { projectId: props.projectId, planId: props.plan.id }, body: parsed.data });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    setFormError(null);
    setOpen(false);
    props.setNotice(`Plan ${r.body.plan.name} saved.`);
    await props.reload();
  };
  if (!open) {
    return (
      <p>
        <button type="button" className="secondary small" aria-label={`Edit plan ${props.plan.name}`} onClick={() => setOpen(true)}>
          Edit plan
        </button>
      </p>
    );
  }
  return (
    <form onSubmit={save} noValidate aria-label={`Edit ${props.plan.name}`}>
      <PlanFields idPrefix={`edit-${props.plan.id}`} plan={props.plan} context={props.context} />
      <ErrorNote message={formError} />
      <span className="actions">
        <button type="submit">Save plan</button>
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </span>
    </form>
  );
}
