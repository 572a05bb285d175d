import { useState, type FormEvent } from 'react';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Link, Loading, TableBox, useLoad } from '../../ui';
import { UsageChart } from './chart';
import { type CreditGrant, count, type Meter, type SubjectType, type UsageFeature, units, utc } from './format';

const LIMIT_WORDS: Record<UsageFeature['limit'], string> = {
  refuse: 'refused (hard limit)',
  bill: 'billed as overage',
  allow: 'allowed, not billed (soft limit)',
};

/**
 * A user's or an organization's usage on its page (GET /api/admin/projects/:p/usage/:type/:id):
 * for each metered feature a chart of the current window per day with the included amount, the
 * used, included, credits, remaining and overage figures and when the window resets; the credit
 * grants; and the *Grant credits* form (POST .../usage/credits).
 */
export function SubjectUsage(props: { projectId: string; subjectType: SubjectType; subjectId: string }) {
  const { projectId, subjectType, subjectId } = props;
  const [notice, setNotice] = useState<string | null>(null);
  const usage = useLoad(
    () => api.usage.subjectUsage({ params: { projectId, subjectType, subjectId } }),
    (body) => body,
    [projectId, subjectType, subjectId],
  );
  const { data: meters } = useLoad(
    () => api.usage.listMeters({ params: { projectId } }),
    (body) => body.meters,
    [projectId],
  );
  const aggregation = (key: string) => meters?.find((m) => m.key === key)?.aggregation;
  const data = usage.data;

  return (
    <section aria-labelledby="usage-title" className="usage">
      <h2 id="usage-title">Usage</h2>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={usage.error} onRetry={usage.reload} />
      {data === null && !usage.error ? <Loading what="the usage" /> : null}
      {data ? (
        <p className="small muted" data-testid="usage-plan">
          {data.plan ? `Limits of the plan ${data.plan}.` : 'No plan: without a plan limit only credits can be used.'}{' '}
          <Link to={`/projects/${projectId}/meters`}>Meters</Link>
        </p>
      ) : null}
      {data && data.features.length === 0 ? <p className="muted">No metered features: no plan limit and no credits.</p> : null}
      {data?.features.map((f) => (
        <FeatureUsage key={f.feature} feature={f} aggregation={aggregation(f.feature)} />
      ))}
      {data ? <Grants grants={data.grants} meters={meters} /> : null}
      <GrantCredits
        {...props}
        meters={meters}
        onGranted={async (done) => {
          setNotice(done);
          await usage.reload();
        }}
      />
    </section>
  );
}

function FeatureUsage(props: { feature: UsageFeature; aggregation: Meter['aggregation'] | undefined }) {
  const f = props.feature;
  const id = `usage-${f.feature}`;
  return (
    <article className="card column feature-usage" aria-labelledby={id} data-feature={f.feature}>
      <h3 id={id}>
        {f.name} <code className="small muted">{f.feature}</code>
      </h3>
      <UsageChart feature={f} aggregation={props.aggregation} />
      <dl className="facts">
        <dt>Used</dt>
        <dd data-testid="usage-used">
          {units(f.used, f.unit)} of {units(f.included, f.unit)} included
        </dd>
        <dt>Credits</dt>
        <dd data-testid="usage-credits">{units(f.credits, f.unit)}</dd>
        <dt>Remaining</dt>
        <dd data-testid="usage-remaining">{units(f.remaining, f.unit)}</dd>
        <dt>Overage</dt>
        <dd data-testid="usage-overage">{units(f.overage, f.unit)}</dd>
        <dt>Past the limit</dt>
        <dd>{LIMIT_WORDS[f.limit]}</dd>
        <dt>Resets at</dt>
        <dd data-testid="usage-resets">
          {utc(f.resets_at)} <span className="small muted">(window from {utc(f.window_start)})</span>
        </dd>
      </dl>
    </article>
  );
}

function Grants(props: { grants: CreditGrant[]; meters: Meter[] | null }) {
  const name = (key: string) => props.meters?.find((m) => m.key === key)?.name ?? key;
  const unit = (key: string) => props.meters?.find((m) => m.key === key)?.unit ?? '';
  return (
    <>
      <h3>Credit grants</h3>
      {props.grants.length === 0 ? <p className="muted">No credit grants.</p> : null}
      {props.grants.length > 0 ? (
        <TableBox caption="Credit grants, newest first">
          <thead>
            <tr>
              <th scope="col">Feature</th>
              <th scope="col">Amount</th>
              <th scope="col">Remaining</th>
              <th scope="col">Expires</th>
              <th scope="col">Reason</th>
              <th scope="col">Source</th>
              <th scope="col">Granted</th>
            </tr>
          </thead>
          <tbody>
            {props.grants.map((g) => (
              <tr key={g.id}>
                <td>{name(g.feature)}</td>
                <td>{units(g.amount, unit(g.feature))}</td>
                <td>{count(g.remaining)}</td>
                <td>
                  {g.expires_at ? utc(g.expires_at) : 'never'} {g.expired ? <span className="badge off">expired</span> : null}
                </td>
                <td>{g.reason || <span className="muted">—</span>}</td>
                <td>{g.source}</td>
                <td>{utc(g.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </>
  );
}

/** A time typed in a datetime-local field (the reader's time zone) as ISO 8601 in UTC; null when blank, undefined when not a time. */
function expiryOf(text: string): string | null | undefined {
  if (text.trim() === '') return null;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

function GrantCredits(props: {
  projectId: string;
  subjectType: SubjectType;
  subjectId: string;
  meters: Meter[] | null;
  onGranted: (done: string) => Promise<void>;
}) {
  const [formError, setFormError] = useState<string | null>(null);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const feature = String(data.get('feature') ?? '');
    const amountText = String(data.get('amount') ?? '').trim();
    const expires = expiryOf(String(data.get('expires_at') ?? ''));
    if (!feature) return setFormError('Choose a meter: create one on the Meters page first.');
    if (!/^\d+$/.test(amountText)) return setFormError('Enter the credits as a whole number of units, e.g. 500.');
    if (expires === undefined) return setFormError('Enter the expiry as a date and time, or leave it blank for none.');
    const r = await api.usage
      .grantCredits({
        params: { projectId: props.projectId },
        body: {
          subject_type: props.subjectType,
          subject_id: props.subjectId,
          feature,
          amount: Number(amountText),
          expires_at: expires,
          reason: String(data.get('reason') ?? '').trim(),
        },
      })
      .catch(() => null);
    if (r?.status !== 201) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    setFormError(null);
    form.reset();
    const meter = props.meters?.find((m) => m.key === r.body.grant.feature);
    await props.onGranted(
      `Granted ${units(r.body.grant.amount, meter?.unit ?? '')} of ${meter?.name ?? r.body.grant.feature}` +
        `${r.body.grant.expires_at ? `, expiring ${utc(r.body.grant.expires_at)}` : ''}.`,
    );
  };
  return (
    <form onSubmit={submit} noValidate className="panel" aria-labelledby="grant-credits-title">
      <h3 id="grant-credits-title">Grant credits</h3>
      <p className="small muted">
        Credits are used after the plan's included amount and before any overage, soonest expiring first. The grant is recorded in the audit log.
      </p>
      <div className="grid">
        <div>
          <label htmlFor="grant-feature">Feature</label>
          <select id="grant-feature" name="feature" key={props.meters ? 'meters' : 'none'} defaultValue={props.meters?.[0]?.key ?? ''}>
            {(props.meters ?? []).map((m) => (
              <option key={m.key} value={m.key}>
                {m.name} ({m.key})
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="grant-amount">Amount (units)</label>
          <input id="grant-amount" name="amount" inputMode="numeric" placeholder="500" />
        </div>
        <div>
          <label htmlFor="grant-expires">Expires (optional, your time)</label>
          <input id="grant-expires" name="expires_at" type="datetime-local" />
        </div>
        <div>
          <label htmlFor="grant-reason">Reason (optional)</label>
          <input id="grant-reason" name="reason" maxLength={200} placeholder="Goodwill after the outage" />
        </div>
      </div>
      <ErrorNote message={formError} />
      <button type="submit" disabled={props.meters !== null && props.meters.length === 0}>
        Grant credits
      </button>
    </form>
  );
}
