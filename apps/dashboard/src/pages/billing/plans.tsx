import { useState, type FormEvent } from 'react';
import { CreatePlanBodySchema } from '../../../../../contract/admin';
import { api, errorMessage } from '../../api';
import { ErrorNote, useLoad } from '../../ui';
import { usageLimitText } from '../usage/format';
import { firstIssue, type Plan, seatPolicyText } from './format';
import { AUDIENCE_LABELS, PlanEdit, PlanFields, planBody, soldToOrganizations } from './plan-form';
import { Prices } from './prices';

export function PlansEditor(props: { projectId: string; plans: Plan[]; currency: string; setPlans: (p: Plan[]) => void; setNotice: (n: string) => void }) {
  const { projectId, plans } = props;
  const [error, setError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const [over, setOver] = useState<string | null>(null);
  // A new key after a plan is created: the form's fields start again (Sold to, the seat policy).
  const [newPlanKey, setNewPlanKey] = useState(0);
  // The project's meters: the usage limits' choices, and their names in the plan list.
  const { data: meters } = useLoad(
    () => api.usage.listMeters({ params: { projectId } }),
    (body) => body.meters,
    [projectId],
  );
  const context = { projectId, meters, currency: props.currency };

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
    ids.splice(
      plans.findIndex((p) => p.id === targetId),
      0,
      dragging,
    );
    const name = plans.find((p) => p.id === dragging)!.name;
    void reorder(ids, `${name} moved to tier ${ids.indexOf(dragging) + 1} of ${plans.length}.`);
  };

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const fields = planBody(new FormData(form), props.currency);
    if (fields.error !== undefined) return setFormError(fields.error);
    const parsed = CreatePlanBodySchema.safeParse(fields.body);
    if (!parsed.success) return setFormError(firstIssue(parsed));
    const r = await api.billing.createPlan({ params: { projectId }, body: parsed.data });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form.reset();
    setNewPlanKey((k) => k + 1);
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
            onDragEnd={() => {
              setDragging(null);
              setOver(null);
            }}
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
                {plan.name} {plan.hidden ? <span className="badge off">hidden</span> : null}{' '}
                {plan.recommended ? <span className="badge">recommended</span> : null}{' '}
                {plan.trials_enabled ? <span className="badge">trials{plan.default_trial_days ? `: ${plan.default_trial_days} days` : ''}</span> : null}
              </h3>
              <span className="actions">
                <button
                  type="button"
                  className="secondary small"
                  disabled={i === 0}
                  aria-label={`Move up ${plan.name} (to a lower tier)`}
                  onClick={() => move(i, -1)}
                >
                  Move up
                </button>
                <button
                  type="button"
                  className="secondary small"
                  disabled={i === plans.length - 1}
                  aria-label={`Move down ${plan.name} (to a higher tier)`}
                  onClick={() => move(i, 1)}
                >
                  Move down
                </button>
              </span>
            </div>
            {plan.description ? <p>{plan.description}</p> : null}
            <p className="small muted">
              Sold to: {AUDIENCE_LABELS[plan.audience]} · Features: {plan.features.length ? plan.features.join(', ') : 'none'}
              {soldToOrganizations(plan.audience) ? <span data-testid="seat-policy"> · Seats: {seatPolicyText(plan.seat_policy)}</span> : null}
            </p>
            {plan.usage_limits.length > 0 ? (
              <ul className="plain small" aria-label={`Usage limits of ${plan.name}`} data-testid="usage-limits">
                {plan.usage_limits.map((l) => (
                  <li key={l.meter}>{usageLimitText(l, meters, props.currency)}</li>
                ))}
              </ul>
            ) : null}
            <Prices projectId={projectId} plan={plan} currency={props.currency} reload={reload} setNotice={props.setNotice} />
            <PlanEdit projectId={projectId} plan={plan} context={context} reload={reload} setNotice={props.setNotice} />
          </li>
        ))}
      </ol>
      <form onSubmit={create} noValidate className="panel" aria-labelledby="new-plan">
        <h3 id="new-plan">New plan</h3>
        <PlanFields key={newPlanKey} idPrefix="new-plan" context={context} />
        <ErrorNote message={formError} />
        <button type="submit">Create plan</button>
      </form>
    </div>
  );
}
