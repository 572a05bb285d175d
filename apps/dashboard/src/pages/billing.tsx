import { useCallback, useEffect, useState, type FormEvent } from 'react';
import {
  AdvanceSandboxBodySchema,
  BILLING_INTERVAL_NAMES,
  ConnectBillingBodySchema,
  CreatePlanBodySchema,
  CreatePriceBodySchema,
  UpdatePlanBodySchema,
} from '../../../../contract/admin';
import { echoAmount, formatMoney, isCurrency, parseAmountInput } from '../../../../domain/billing/money';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Link, LoadMore, Loading, PageTitle, ProjectNav, when, TableBox, useLoad, usePages } from '../ui';

type Ok<T> = Extract<Awaited<T>, { status: 200; body: unknown }>['body'];
type Connection = NonNullable<Ok<ReturnType<typeof api.billing.get>>['connection']>;
type Plan = Ok<ReturnType<typeof api.billing.listPlans>>['plans'][number];

const locale = () => navigator.language || 'en-US';
/** An amount in minor units, written in its currency with Intl.NumberFormat. */
export const money = (amount: number, currency: string) => (isCurrency(currency) ? formatMoney({ amount, currency }, locale()) : `${amount} ${currency}`);

/** A date without its time (an invoice's period bounds). */
const day = (iso: string) => new Date(iso).toLocaleDateString();

/** What an invoice was for, in words (the processor's billing reason otherwise). */
const INVOICE_REASONS: Record<string, string> = {
  subscription_create: 'New subscription',
  subscription_cycle: 'Renewal',
  subscription_update: 'Plan change',
  manual: 'Manual',
};
const invoiceReason = (reason: string) => INVOICE_REASONS[reason] ?? reason;

const firstIssue = (r: { success: false; error: { issues: Array<{ message: string }> } }) => r.error.issues[0]!.message;

export function BillingPage(props: { projectId: string }) {
  const projectId = props.projectId;
  const [connection, setConnection] = useState<Connection | null | undefined>(undefined);
  const [plans, setPlans] = useState<Plan[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    setError(null);
    try {
      const [c, p] = await Promise.all([api.billing.get({ params: { projectId } }), api.billing.listPlans({ params: { projectId } })]);
      if (c.status !== 200) return setError(errorMessage(c.body));
      if (p.status !== 200) return setError(errorMessage(p.body));
      setConnection(c.body.connection);
      setPlans(p.body.plans);
    } catch {
      setError(UNREACHABLE);
    }
  }, [projectId]);
  useEffect(() => {
    void load();
  }, [load]);

  const currency = connection?.currency ?? 'usd';
  return (
    <section>
      <ProjectNav projectId={projectId} current="billing" />
      <PageTitle>Billing</PageTitle>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={error} onRetry={load} />
      {connection === undefined && !error ? <Loading what="billing" /> : null}
      {connection !== undefined ? (
        <ConnectionPanel projectId={projectId} connection={connection} onChange={(c, done) => (setConnection(c), setNotice(done))} />
      ) : null}
      {connection?.processor === 'sandbox' ? <SandboxClock projectId={projectId} onDone={setNotice} /> : null}
      {plans ? <PlansEditor projectId={projectId} plans={plans} currency={currency} setPlans={setPlans} setNotice={setNotice} /> : null}
      {connection !== undefined ? <Records projectId={projectId} /> : null}
    </section>
  );
}

function ConnectionPanel(props: { projectId: string; connection: Connection | null; onChange: (c: Connection | null, done: string) => void }) {
  const [processor, setProcessor] = useState<'sandbox' | 'stripe'>('sandbox');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const c = props.connection;

  const connect = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const field = (name: string) => String(data.get(name) ?? '');
    const currency = field('currency').trim().toLowerCase();
    const body =
      processor === 'sandbox'
        ? { processor, ...(currency ? { currency } : {}) }
        : { processor, secret_key: field('secret_key'), publishable_key: field('publishable_key'), webhook_secret: field('webhook_secret'), ...(currency ? { currency } : {}) };
    const parsed = ConnectBillingBodySchema.safeParse(body);
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    setBusy(true);
    const r = await api.billing.connect({ params: { projectId: props.projectId }, body: parsed.data }).catch(() => null);
    setBusy(false);
    if (!r) return setFormError(UNREACHABLE);
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.onChange(r.body.connection, r.body.connection.processor === 'stripe' ? 'Connected to Stripe.' : 'Connected to the sandbox.');
  };

  const disconnect = async () => {
    if (!window.confirm('Disconnect billing? The keys are forgotten; plans, prices, subscriptions and invoices stay.')) return;
    const r = await api.billing.disconnect({ params: { projectId: props.projectId } });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.onChange(null, 'Billing disconnected.');
  };

  if (c) {
    return (
      <div className="panel" role="region" aria-labelledby="connection">
        <h2 id="connection">Connection</h2>
        <p data-testid="connection-state">
          <span className="badge">connected</span> {c.processor === 'stripe' ? 'Stripe' : 'Sandbox (no real money moves)'} · mode {c.mode}
          {c.key_last4 ? <> · secret key …{c.key_last4}</> : null} · currency {c.currency.toUpperCase()} · since {when(c.connected_at)}
        </p>
        {c.webhook_url ? (
          <p className="small">
            Stripe webhook endpoint to register: <code>{c.webhook_url}</code>
          </p>
        ) : null}
        <ErrorNote message={formError} />
        <button type="button" className="secondary" onClick={disconnect}>
          Disconnect
        </button>
      </div>
    );
  }
  return (
    <form className="panel" onSubmit={connect} noValidate aria-labelledby="connection">
      <h2 id="connection">Connection</h2>
      <p className="muted">Not connected: checkout and subscriptions are unavailable until billing is connected.</p>
      <fieldset>
        <legend>Processor</legend>
        <label className="choice">
          <input type="radio" name="processor" value="sandbox" checked={processor === 'sandbox'} onChange={() => setProcessor('sandbox')} /> Sandbox (test cards, no real money)
        </label>
        <label className="choice">
          <input type="radio" name="processor" value="stripe" checked={processor === 'stripe'} onChange={() => setProcessor('stripe')} /> Stripe
        </label>
      </fieldset>
      {processor === 'stripe' ? (
        <div className="grid">
          <div>
            <label htmlFor="secret-key">Secret key</label>
            <input id="secret-key" name="secret_key" autoComplete="off" placeholder="sk_test_…" />
          </div>
          <div>
            <label htmlFor="publishable-key">Publishable key</label>
            <input id="publishable-key" name="publishable_key" autoComplete="off" placeholder="pk_test_…" />
          </div>
          <div>
            <label htmlFor="webhook-secret">Webhook signing secret</label>
            <input id="webhook-secret" name="webhook_secret" autoComplete="off" placeholder="whsec_…" />
          </div>
        </div>
      ) : null}
      <label htmlFor="currency">Currency (optional, USD by default)</label>
      <input id="currency" name="currency" maxLength={3} placeholder="usd" />
      <ErrorNote message={formError} />
      <button type="submit" disabled={busy}>
        {busy ? 'Checking…' : 'Connect'}
      </button>
    </form>
  );
}

/** A time in UTC to the minute: 2027-01-12 10:00 UTC (the sandbox's dates are compared with invoices, which name a day). */
const utcMinute = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** How far the sandbox is ahead of real time, in days (hours under a day). */
function ahead(seconds: number): string {
  if (seconds < 60) return 'the same as real time';
  const days = seconds / 86_400;
  if (days < 1) return `${Math.max(1, Math.round(seconds / 3600))} hour(s) ahead of real time`;
  const shown = Number.isInteger(Math.round(days * 10) / 10) ? String(Math.round(days)) : days.toFixed(1);
  return `${shown} day${shown === '1' ? '' : 's'} ahead of real time`;
}

function SandboxClock(props: { projectId: string; onDone: (notice: string) => void }) {
  const [formError, setFormError] = useState<string | null>(null);
  const clock = useLoad(() => api.billing.sandboxClock({ params: { projectId: props.projectId } }), (b) => b, [props.projectId]);
  const advance = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const parsed = AdvanceSandboxBodySchema.safeParse({ days: Number(new FormData(e.currentTarget).get('days')) });
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    const r = await api.billing.advanceSandbox({ params: { projectId: props.projectId }, body: parsed.data });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    await clock.reload();
    props.onDone(`Sandbox clock now ${when(r.body.now)}; ${r.body.changed} subscription(s) changed.`);
  };
  return (
    <form className="panel" onSubmit={advance} noValidate aria-labelledby="sandbox-clock">
      <h2 id="sandbox-clock">Sandbox clock</h2>
      <p data-testid="sandbox-time">
        {clock.data ? (
          <>
            Sandbox time: <time dateTime={clock.data.now}>{utcMinute(clock.data.now)}</time>, {ahead(clock.data.ahead_seconds)}.
          </>
        ) : clock.error ? null : (
          'Reading the sandbox time…'
        )}
      </p>
      <ErrorNote message={clock.error} onRetry={clock.reload} />
      <p className="muted">Move the sandbox's time forward: renewals, trial ends and scheduled cancellations that fall due are applied, and invoices are dated by the sandbox time.</p>
      <label htmlFor="advance-days">Days</label>
      <input id="advance-days" name="days" type="number" min={1} defaultValue={31} />
      <ErrorNote message={formError} />
      <button type="submit">Advance time</button>
    </form>
  );
}

function PlansEditor(props: { projectId: string; plans: Plan[]; currency: string; setPlans: (p: Plan[]) => void; setNotice: (n: string) => void }) {
  const { projectId, plans } = props;
  const [error, setError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const [over, setOver] = useState<string | null>(null);

  const reload = async () => {
    const r = await api.billing.listPlans({ params: { projectId } });
    if (r.status === 200) props.setPlans(r.body.plans);
  };

  const reorder = async (ids: string[], done: string) => {
    const r = await api.billing.reorderPlans({ params: { projectId }, body: { plans: ids } });
    if (r.status !== 200) return setError(errorMessage(r.body));
    setError(null);
    props.setPlans(r.body.plans);
    props.setNotice(done);
  };
  const move = (index: number, by: -1 | 1) => {
    const ids = plans.map((p) => p.id);
    const [id] = ids.splice(index, 1);
    ids.splice(index + by, 0, id!);
    void reorder(ids, `${plans[index]!.name} moved to tier ${index + by + 1} of ${plans.length}.`);
  };
  const drop = (targetId: string) => {
    if (!dragging || dragging === targetId) return;
    const ids = plans.map((p) => p.id).filter((id) => id !== dragging);
    ids.splice(plans.findIndex((p) => p.id === targetId), 0, dragging);
    const name = plans.find((p) => p.id === dragging)!.name;
    void reorder(ids, `${name} moved to tier ${ids.indexOf(dragging) + 1} of ${plans.length}.`);
  };

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const parsed = CreatePlanBodySchema.safeParse(planFields(new FormData(form)));
    if (!parsed.success) return setFormError(firstIssue(parsed));
    const r = await api.billing.createPlan({ params: { projectId }, body: parsed.data });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form.reset();
    props.setNotice(`Plan ${r.body.plan.name} created as the top tier.`);
    await reload();
  };

  return (
    <div role="region" aria-labelledby="plans">
      <h2 id="plans">Plans and prices</h2>
      <p className="muted" id="hierarchy-help">
        The order is the plan hierarchy, <strong>lowest tier first</strong>: drag a plan, or use its Move up and Move down buttons.
      </p>
      <ErrorNote message={error} />
      {plans.length === 0 ? <p className="muted">No plans yet: create the first one below.</p> : null}
      <ol className="hierarchy" aria-label="Plan hierarchy, lowest tier first" aria-describedby="hierarchy-help">
        {plans.map((plan, i) => (
          <li
            key={plan.id}
            className={`card column${dragging === plan.id ? ' dragging' : ''}${over === plan.id ? ' drop-target' : ''}`}
            draggable
            data-plan={plan.name}
            onDragStart={(e) => {
              e.dataTransfer.effectAllowed = 'move';
              e.dataTransfer.setData('text/plain', plan.id);
              setDragging(plan.id);
            }}
            onDragEnd={() => (setDragging(null), setOver(null))}
            onDragOver={(e) => {
              e.preventDefault();
              setOver(plan.id);
            }}
            onDragLeave={() => setOver(null)}
            onDrop={(e) => {
              e.preventDefault();
              setOver(null);
              drop(plan.id);
            }}
          >
            <div className="row">
              <h3>
                <span className="tier">Tier {i + 1}</span>
                {plan.name} {plan.hidden ? <span className="badge off">hidden</span> : null} {plan.recommended ? <span className="badge">recommended</span> : null}{' '}
                {plan.trials_enabled ? <span className="badge">trials{plan.default_trial_days ? `: ${plan.default_trial_days} days` : ''}</span> : null}
              </h3>
              <span className="actions">
                <button type="button" className="secondary small" disabled={i === 0} aria-label={`Move up ${plan.name} (to a lower tier)`} onClick={() => move(i, -1)}>
                  Move up
                </button>
                <button type="button" className="secondary small" disabled={i === plans.length - 1} aria-label={`Move down ${plan.name} (to a higher tier)`} onClick={() => move(i, 1)}>
                  Move down
                </button>
              </span>
            </div>
            {plan.description ? <p>{plan.description}</p> : null}
            <p className="small muted">Features: {plan.features.length ? plan.features.join(', ') : 'none'}</p>
            <Prices projectId={projectId} plan={plan} currency={props.currency} reload={reload} setNotice={props.setNotice} />
            <PlanEdit projectId={projectId} plan={plan} reload={reload} setNotice={props.setNotice} />
          </li>
        ))}
      </ol>
      <form onSubmit={create} noValidate className="panel" aria-labelledby="new-plan">
        <h3 id="new-plan">New plan</h3>
        <PlanFields idPrefix="new-plan" />
        <ErrorNote message={formError} />
        <button type="submit">Create plan</button>
      </form>
    </div>
  );
}

/** The plan form's fields as the API takes them (features stay comma-separated: the server splits them). */
function planFields(data: FormData) {
  const trialDays = String(data.get('default_trial_days') ?? '').trim();
  return {
    name: String(data.get('name') ?? ''),
    description: String(data.get('description') ?? ''),
    features: String(data.get('features') ?? ''),
    hidden: data.get('hidden') === 'on',
    recommended: data.get('recommended') === 'on',
    trials_enabled: data.get('trials_enabled') === 'on',
    default_trial_days: trialDays ? Number(trialDays) : null,
  };
}

function PlanFields(props: { idPrefix: string; plan?: Plan }) {
  const id = (name: string) => `${props.idPrefix}-${name}`;
  const p = props.plan;
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
    </>
  );
}

function PlanEdit(props: { projectId: string; plan: Plan; reload: () => Promise<void>; setNotice: (n: string) => void }) {
  const [open, setOpen] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  const save = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const parsed = UpdatePlanBodySchema.safeParse(planFields(new FormData(e.currentTarget)));
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
      <PlanFields idPrefix={`edit-${props.plan.id}`} plan={props.plan} />
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

type PriceDraft = { name: string; amount: number; currency: string; interval: (typeof BILLING_INTERVAL_NAMES)[number] };

/** A price as it will be created, shown back before it is: `490 = $4.90 / month`. */
const echoPrice = (p: { amount: number; currency: string; interval: string }) => `${echoAmount({ amount: p.amount, currency: p.currency }, locale())} / ${p.interval}`;

function Prices(props: { projectId: string; plan: Plan; currency: string; reload: () => Promise<void>; setNotice: (n: string) => void }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [amountText, setAmountText] = useState('');
  const [interval, setPriceInterval] = useState<string>('month');
  const [pending, setPending] = useState<PriceDraft | null>(null);
  const { plan, currency } = props;
  const prefix = `price-${plan.id}`;
  // One rule with the CLI's --amount: a whole number is minor units; a decimal needs the currency's exact decimals.
  const amount = isCurrency(currency) ? parseAmountInput(amountText, currency) : null;
  const example = isCurrency(currency) ? echoAmount({ amount: 1000, currency }, locale()) : '1000';
  const review = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    if (amount === null) return setFormError(`Enter the amount in ${currency.toUpperCase()} minor units, e.g. ${example}`);
    const parsed = CreatePriceBodySchema.safeParse({ name: String(data.get('name') ?? ''), amount, currency, interval });
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    setPending({ ...parsed.data, currency: parsed.data.currency ?? currency });
  };
  const create = async (draft: PriceDraft, form: HTMLFormElement | null) => {
    setPending(null);
    const r = await api.billing.createPrice({ params: { projectId: props.projectId, planId: plan.id }, body: draft });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form?.reset();
    setAmountText('');
    props.setNotice(`Price ${money(r.body.price.amount, r.body.price.currency)} / ${r.body.price.interval} added to ${plan.name}.`);
    await props.reload();
  };
  const archive = async (priceId: string) => {
    if (!window.confirm('Archive this price? Subscriptions on it keep renewing; nobody new can choose it.')) return;
    const r = await api.billing.archivePrice({ params: { projectId: props.projectId, priceId } });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.setNotice('Price archived.');
    await props.reload();
  };
  return (
    <div>
      {plan.prices.length === 0 ? <p className="small muted">No prices yet.</p> : null}
      <ul className="plain" aria-label={`Prices of ${plan.name}`}>
        {plan.prices.map((p) => (
          <li key={p.id}>
            <strong>{money(p.amount, p.currency)}</strong> / {p.interval} · {p.name} {p.active ? null : <span className="badge off">archived</span>}{' '}
            {p.active ? (
              <button type="button" className="secondary small" aria-label={`Archive ${p.name} of ${plan.name}`} onClick={() => archive(p.id)}>
                Archive
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <form id={`${prefix}-form`} onSubmit={review} noValidate className="grid" aria-label={`New price of ${plan.name}`}>
        <div>
          <label htmlFor={`${prefix}-name`}>Price name</label>
          <input id={`${prefix}-name`} name="name" maxLength={100} placeholder="Monthly" />
        </div>
        <div>
          <label htmlFor={`${prefix}-amount`}>Amount ({currency.toUpperCase()} minor units)</label>
          <input
            id={`${prefix}-amount`}
            name="amount"
            inputMode="numeric"
            placeholder="1000"
            aria-describedby={`${prefix}-echo`}
            value={amountText}
            onChange={(e) => {
              setAmountText(e.target.value);
              setPending(null);
            }}
          />
          <p id={`${prefix}-echo`} className="small muted" data-testid="amount-echo" aria-live="polite">
            {amountText.trim() === '' ? `Minor units: ${example}` : amount === null ? `Not an amount in ${currency.toUpperCase()} minor units (${example})` : echoPrice({ amount, currency, interval })}
          </p>
        </div>
        <div>
          <label htmlFor={`${prefix}-interval`}>Interval</label>
          <select
            id={`${prefix}-interval`}
            name="interval"
            value={interval}
            onChange={(e) => {
              setPriceInterval(e.target.value);
              setPending(null);
            }}
          >
            {BILLING_INTERVAL_NAMES.map((i) => (
              <option key={i} value={i}>
                {i === 'month' ? 'Monthly' : 'Yearly'}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Add price</button>
        </div>
      </form>
      {pending ? (
        <p role="group" aria-label={`Create ${pending.name} at ${echoPrice(pending)}?`} className="confirm">
          Create <strong>{pending.name}</strong> on {plan.name} at <strong>{echoPrice(pending)}</strong>?{' '}
          <button type="button" onClick={() => void create(pending, document.getElementById(`${prefix}-form`) as HTMLFormElement | null)}>
            Yes, create
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setPending(null)}>
            Cancel
          </button>
        </p>
      ) : null}
      <ErrorNote message={formError} />
    </div>
  );
}

function Records(props: { projectId: string }) {
  const params = { projectId: props.projectId };
  const subs = usePages(
    (cursor) => api.billing.listSubscriptions({ params, query: cursor ? { cursor } : {} }),
    (b) => ({ rows: b.subscriptions, next: b.next_cursor }),
    [props.projectId],
  );
  const invoicePages = usePages(
    (cursor) => api.billing.listInvoices({ params, query: cursor ? { cursor } : {} }),
    (b) => ({ rows: b.invoices, next: b.next_cursor }),
    [props.projectId],
  );
  const events = useLoad(() => api.billing.listEvents({ params, query: {} }), (b) => b.events, [props.projectId]);
  return (
    <>
      <h2>Subscriptions</h2>
      <ErrorNote message={subs.error} onRetry={subs.reload} />
      {subs.rows === null && !subs.error ? <Loading what="subscriptions" /> : null}
      {subs.rows && subs.rows.length === 0 ? <p className="muted">No subscriptions yet.</p> : null}
      {subs.rows && subs.rows.length > 0 ? (
        <TableBox caption="Subscriptions">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Plan</th>
              <th scope="col">Price</th>
              <th scope="col">Status</th>
              <th scope="col">Period ends</th>
            </tr>
          </thead>
          <tbody>
            {subs.rows.map((s) => (
              <tr key={s.id}>
                <td>
                  <UserLink projectId={props.projectId} id={s.user_id} email={s.user_email} />
                </td>
                <td>{s.plan.name}</td>
                <td>
                  {money(s.price.amount, s.price.currency)} / {s.price.interval}
                </td>
                <td>{s.status}{s.cancel_at_period_end ? ' (cancels at period end)' : ''}</td>
                <td>{when(s.current_period_end)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={subs} what="subscriptions" />
      <h2>Invoices</h2>
      <ErrorNote message={invoicePages.error} onRetry={invoicePages.reload} />
      {invoicePages.rows === null && !invoicePages.error ? <Loading what="invoices" /> : null}
      {invoicePages.rows && invoicePages.rows.length === 0 ? <p className="muted">No invoices yet.</p> : null}
      {invoicePages.rows && invoicePages.rows.length > 0 ? (
        <TableBox caption="Invoices">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">User</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Total</th>
              <th scope="col">Period</th>
            </tr>
          </thead>
          <tbody>
            {invoicePages.rows.map((i) => (
              <tr key={i.id}>
                <td>{when(i.created_at)}</td>
                <td>
                  <UserLink projectId={props.projectId} id={i.user_id} email={i.user_email} />
                </td>
                <td>{i.status}</td>
                <td>{invoiceReason(i.reason)}</td>
                <td>{money(i.amount_due, i.currency)}</td>
                <td>
                  {day(i.period_start)} – {day(i.period_end)}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={invoicePages} what="invoices" />
      <h2>Billing events</h2>
      <ErrorNote message={events.error} onRetry={events.reload} />
      {events.data === null && !events.error ? <Loading what="billing events" /> : null}
      {events.data && events.data.length === 0 ? <p className="muted">No billing events yet.</p> : null}
      {events.data && events.data.length > 0 ? (
        <TableBox caption="Billing events">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Subscription</th>
              <th scope="col">Amount</th>
            </tr>
          </thead>
          <tbody>
            {events.data.map((e) => (
              <tr key={e.id}>
                <td>{when(e.created_at)}</td>
                <td>{e.type}</td>
                <td>{e.subscription_id ? <code>{e.subscription_id}</code> : '—'}</td>
                <td>{e.amount !== null && e.currency ? money(e.amount, e.currency) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </>
  );
}

/** A row's user: the email (the id when the user has none), linking to the user's page. */
function UserLink(props: { projectId: string; id: string; email: string | null }) {
  return (
    <Link to={`/projects/${props.projectId}/users/${props.id}`}>
      {props.email ?? <code>{props.id}</code>}
    </Link>
  );
}
