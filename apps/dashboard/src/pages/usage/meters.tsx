import { useState, type FormEvent } from 'react';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Link, Loading, PageTitle, ProjectNav, TableBox, useLoad } from '../../ui';
import { BillingTabs } from '../billing/tabs';
import { CreditPacks } from './credit-packs';
import { AGGREGATION_LABELS, count, type Meter, subjectPath, units, utc } from './format';

const AGGREGATIONS = Object.keys(AGGREGATION_LABELS) as Array<Meter['aggregation']>;

/**
 * The Meters page (under Billing): the project's meters (key, name, unit, aggregation), a form to
 * create one, *Edit* to rename one or change its unit, the credit packs that sell credits of a meter,
 * and the top consumers of a meter this month.
 */
export function MetersPage(props: { projectId: string }) {
  const { projectId } = props;
  const [notice, setNotice] = useState<string | null>(null);
  const meters = useLoad(
    () => api.usage.listMeters({ params: { projectId } }),
    (body) => body.meters,
    [projectId],
  );
  const done = async (text: string) => {
    setNotice(text);
    await meters.reload();
  };
  return (
    <section>
      <ProjectNav projectId={projectId} current="billing" />
      <BillingTabs projectId={projectId} current="meters" />
      <PageTitle>Meters</PageTitle>
      <p className="muted">
        A meter counts one kind of usage your server reports (<code>POST /api/v1/usage/events</code>): API calls, tokens, reports. Plans include an amount of it
        on the <Link to={`/projects/${projectId}/billing`}>Plans</Link> page.
      </p>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={meters.error} onRetry={meters.reload} />
      {meters.data === null && !meters.error ? <Loading what="meters" /> : null}
      {meters.data && meters.data.length === 0 ? <p className="muted">No meters yet: create the first one below.</p> : null}
      {meters.data && meters.data.length > 0 ? <MeterTable projectId={projectId} meters={meters.data} onSaved={done} /> : null}
      <NewMeter projectId={projectId} onCreated={done} />
      {meters.data ? <CreditPacks projectId={projectId} meters={meters.data} setNotice={setNotice} /> : null}
      {meters.data && meters.data.length > 0 ? <TopConsumers projectId={projectId} meters={meters.data} /> : null}
    </section>
  );
}

function MeterTable(props: { projectId: string; meters: Meter[]; onSaved: (done: string) => Promise<void> }) {
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <TableBox caption="Meters, by key">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Name</th>
          <th scope="col">Unit</th>
          <th scope="col">Aggregation</th>
          <th scope="col">Action</th>
        </tr>
      </thead>
      <tbody>
        {props.meters.map((m) =>
          editing === m.key ? (
            <tr key={m.key}>
              <td colSpan={5}>
                <EditMeter
                  projectId={props.projectId}
                  meter={m}
                  onCancel={() => setEditing(null)}
                  onSaved={async (done) => {
                    setEditing(null);
                    await props.onSaved(done);
                  }}
                />
              </td>
            </tr>
          ) : (
            <tr key={m.key} data-meter={m.key}>
              <td>
                <code>{m.key}</code>
              </td>
              <td>{m.name}</td>
              <td>{m.unit || <span className="muted">—</span>}</td>
              <td>{m.aggregation}</td>
              <td>
                <button type="button" className="secondary small" aria-label={`Edit meter ${m.key}`} onClick={() => setEditing(m.key)}>
                  Edit
                </button>
              </td>
            </tr>
          ),
        )}
      </tbody>
    </TableBox>
  );
}

function EditMeter(props: { projectId: string; meter: Meter; onCancel: () => void; onSaved: (done: string) => Promise<void> }) {
  const [formError, setFormError] = useState<string | null>(null);
  const m = props.meter;
  const save = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const r = await api.usage
      .updateMeter({
        params: { projectId: props.projectId, meterKey: m.key },
        body: { name: String(data.get('name') ?? ''), unit: String(data.get('unit') ?? '') },
      })
      .catch(() => null);
    if (r?.status !== 200) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    await props.onSaved(`Meter ${r.body.meter.key} saved.`);
  };
  const id = (name: string) => `edit-meter-${m.key}-${name}`;
  return (
    <form onSubmit={save} noValidate aria-label={`Edit meter ${m.key}`}>
      <div className="grid">
        <div>
          <label htmlFor={id('name')}>Name</label>
          <input id={id('name')} name="name" maxLength={100} defaultValue={m.name} />
        </div>
        <div>
          <label htmlFor={id('unit')}>Unit</label>
          <input id={id('unit')} name="unit" maxLength={30} defaultValue={m.unit} />
        </div>
      </div>
      <p className="small muted">
        The key (<code>{m.key}</code>) and the aggregation ({m.aggregation}) never change: events and plan limits name the key.
      </p>
      <ErrorNote message={formError} />
      <span className="actions">
        <button type="submit">Save meter</button>
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </span>
    </form>
  );
}

function NewMeter(props: { projectId: string; onCreated: (done: string) => Promise<void> }) {
  const [formError, setFormError] = useState<string | null>(null);
  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    const r = await api.usage
      .createMeter({
        params: { projectId: props.projectId },
        body: {
          key: String(data.get('key') ?? '').trim(),
          ...(name ? { name } : {}),
          unit: String(data.get('unit') ?? '').trim(),
          aggregation: String(data.get('aggregation') ?? 'sum'),
        },
      })
      .catch(() => null);
    if (r?.status !== 201) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    setFormError(null);
    form.reset();
    await props.onCreated(`Meter ${r.body.meter.key} created.`);
  };
  return (
    <form onSubmit={create} noValidate className="panel" aria-labelledby="new-meter">
      <h2 id="new-meter">New meter</h2>
      <div className="grid">
        <div>
          <label htmlFor="meter-key">Key</label>
          <input id="meter-key" name="key" maxLength={64} placeholder="api_calls" aria-describedby="meter-key-help" autoComplete="off" />
        </div>
        <div>
          <label htmlFor="meter-name">Name</label>
          <input id="meter-name" name="name" maxLength={100} placeholder="API calls" />
        </div>
        <div>
          <label htmlFor="meter-unit">Unit</label>
          <input id="meter-unit" name="unit" maxLength={30} placeholder="calls" />
        </div>
        <div>
          <label htmlFor="meter-aggregation">Aggregation</label>
          <select id="meter-aggregation" name="aggregation" defaultValue="sum">
            {AGGREGATIONS.map((a) => (
              <option key={a} value={a}>
                {a}: {AGGREGATION_LABELS[a]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p id="meter-key-help" className="small muted">
        The key is what your server reports usage under: a lower-case letter, then lower-case letters, digits or _ (at most 64). The name defaults to the key.
      </p>
      <ErrorNote message={formError} />
      <button type="submit">Create meter</button>
    </form>
  );
}

/** The subjects that used a meter most this calendar month (GET .../usage/top), each linking to its page. */
function TopConsumers(props: { projectId: string; meters: Meter[] }) {
  const [feature, setFeature] = useState(props.meters[0]!.key);
  const meter = props.meters.find((m) => m.key === feature) ?? props.meters[0]!;
  const top = useLoad(
    () => api.usage.topConsumers({ params: { projectId: props.projectId }, query: { feature: meter.key, limit: 10 } }),
    (body) => body,
    [props.projectId, meter.key],
  );
  return (
    <section aria-labelledby="top-consumers">
      <h2 id="top-consumers">Top consumers</h2>
      <label htmlFor="top-meter">Meter</label>
      <select id="top-meter" value={meter.key} onChange={(e) => setFeature(e.target.value)}>
        {props.meters.map((m) => (
          <option key={m.key} value={m.key}>
            {m.name} ({m.key})
          </option>
        ))}
      </select>
      <ErrorNote message={top.error} onRetry={top.reload} />
      {top.data === null && !top.error ? <Loading what="the top consumers" /> : null}
      {top.data ? <p className="small muted">Usage since {utc(top.data.since)} (this calendar month).</p> : null}
      {top.data && top.data.consumers.length === 0 ? <p className="muted">No usage of {meter.name} this month.</p> : null}
      {top.data && top.data.consumers.length > 0 ? (
        <TableBox caption={`Top consumers of ${meter.name} this month`}>
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Kind</th>
              <th scope="col">Used</th>
              <th scope="col">Overage</th>
            </tr>
          </thead>
          <tbody>
            {top.data.consumers.map((c) => (
              <tr key={`${c.subject_type}:${c.subject_id}`}>
                <td>
                  <Link to={subjectPath(props.projectId, c.subject_type, c.subject_id)}>{c.label ?? c.subject_id}</Link>
                </td>
                <td>{c.subject_type === 'user' ? 'User' : 'Organization'}</td>
                <td>{units(c.used, meter.unit)}</td>
                <td>{c.overage > 0 ? units(c.overage, meter.unit) : count(0)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </section>
  );
}
