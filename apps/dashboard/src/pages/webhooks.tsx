import { useCallback, useState, type FormEvent } from 'react';
import { BILLING_EVENT_NAMES, CreateWebhookBodySchema, WEBHOOK_EVENT_NAMES, type WEBHOOK_SELECTABLE_NAMES } from '../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, ShownOnce, when, useLoad } from '../ui';

type Ok<T> = Extract<Awaited<T>, { status: 200; body: unknown }>['body'];
type Endpoint = Ok<ReturnType<typeof api.webhooks.list>>['endpoints'][number];
type Delivery = Ok<ReturnType<typeof api.webhooks.deliveries>>['deliveries'][number];
type TestAnswer = Ok<ReturnType<typeof api.webhooks.test>>;

/** The audit log as events (docs/audit.md): selected only when named, never part of "every event". */
const AUDIT_EVENTS: (typeof WEBHOOK_SELECTABLE_NAMES)[number] = 'audit.*';

/** Every selectable event type but the audit log, by family: billing, organizations, then the rest (usage and credits). */
const isBilling = (type: string) => (BILLING_EVENT_NAMES as readonly string[]).includes(type);
const EVENT_GROUPS = [
  { title: 'Billing', types: WEBHOOK_EVENT_NAMES.filter(isBilling) },
  { title: 'Organizations', types: WEBHOOK_EVENT_NAMES.filter((t) => t.startsWith('organization.')) },
  { title: 'Usage and credits', types: WEBHOOK_EVENT_NAMES.filter((t) => !isBilling(t) && !t.startsWith('organization.')) },
];

/** The Test action's answer in words: "answered 200 in 42 ms", or what went wrong. */
export function testOutcome(r: TestAnswer): string {
  if (r.ok) return `answered ${r.status} in ${r.duration_ms} ms`;
  if (r.status !== null) return `failed: answered ${r.status} in ${r.duration_ms} ms (200 expected)`;
  return `failed: ${r.error ?? 'no answer'} after ${r.duration_ms} ms`;
}

export function WebhooksPage(props: { projectId: string }) {
  const projectId = props.projectId;
  const [formError, setFormError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);

  const {
    data: endpoints,
    error,
    reload: load,
  } = useLoad(
    () => api.webhooks.list({ params: { projectId } }),
    (body) => body.endpoints,
    [projectId],
  );

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const parsed = CreateWebhookBodySchema.safeParse({
      url: String(data.get('url') ?? ''),
      description: String(data.get('description') ?? ''),
      event_types: data.getAll('event_types').map(String),
    });
    if (!parsed.success) return setFormError(parsed.error.issues[0]!.message);
    const r = await api.webhooks.create({ params: { projectId }, body: parsed.data });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form.reset();
    setSecret({ title: 'Signing secret of the new endpoint', value: r.body.secret });
    void load();
  };

  return (
    <section>
      <ProjectNav projectId={projectId} current="webhooks" />
      <PageTitle>Webhooks</PageTitle>
      {secret ? <ShownOnce title={secret.title} value={secret.value} onDone={() => setSecret(null)} /> : null}
      <ErrorNote message={error} onRetry={load} />
      {endpoints === null && !error ? <Loading what="webhook endpoints" /> : null}
      {endpoints && endpoints.length === 0 ? <p className="muted">No endpoints yet: add one below to receive events.</p> : null}
      <ul className="cards" aria-label="Endpoints">
        {(endpoints ?? []).map((ep) => (
          <EndpointCard
            key={ep.id}
            projectId={projectId}
            endpoint={ep}
            reload={load}
            showSecret={(value) => setSecret({ title: `New signing secret of ${ep.url}`, value })}
          />
        ))}
      </ul>
      <form onSubmit={create} noValidate className="panel" aria-labelledby="new-endpoint">
        <h2 id="new-endpoint">New endpoint</h2>
        <label htmlFor="webhook-url">URL</label>
        <input id="webhook-url" name="url" type="url" placeholder="https://my.app/webhooks/tollgate" />
        <label htmlFor="webhook-description">Description (optional)</label>
        <input id="webhook-description" name="description" maxLength={500} />
        <fieldset>
          <legend>Events (none checked: every event but the audit log)</legend>
          {EVENT_GROUPS.map((group) => (
            <fieldset key={group.title} className="events">
              <legend className="small">{group.title}</legend>
              {group.types.map((type) => (
                <label key={type} className="choice">
                  <input type="checkbox" name="event_types" value={type} /> {type}
                </label>
              ))}
            </fieldset>
          ))}
        </fieldset>
        <label className="choice">
          <input type="checkbox" name="event_types" value={AUDIT_EVENTS} aria-describedby="webhook-audit-hint" /> Audit log ({AUDIT_EVENTS})
        </label>
        <p id="webhook-audit-hint" className="small muted">
          Streams every audit entry of the project as an audit.&lt;action&gt; event, for a SIEM. Not part of every event: checked alone, the endpoint receives
          the audit log only.
        </p>
        <ErrorNote message={formError} />
        <button type="submit">Add endpoint</button>
      </form>
    </section>
  );
}

function EndpointCard(props: { projectId: string; endpoint: Endpoint; reload: () => Promise<void>; showSecret: (s: string) => void }) {
  const ep = props.endpoint;
  const params = { projectId: props.projectId, endpointId: ep.id };
  /** What the last action came to; a failed Test is shown as a failure, not in the success colour. */
  const [outcome, setOutcome] = useState<{ text: string; failed: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [log, setLog] = useState<Delivery[] | null>(null);
  const [showLog, setShowLog] = useState(false);

  const loadLog = useCallback(async () => {
    const r = await api.webhooks.deliveries({ params, query: {} }).catch(() => null);
    if (r?.status === 200) setLog(r.body.deliveries);
    else setError(r ? errorMessage(r.body) : UNREACHABLE);
  }, [ep.id]);

  const test = async () => {
    setBusy(true);
    setOutcome(null);
    const r = await api.webhooks.test({ params }).catch(() => null);
    setBusy(false);
    if (!r) return setError(UNREACHABLE);
    if (r.status !== 200) return setError(errorMessage(r.body));
    setError(null);
    setOutcome({ text: testOutcome(r.body), failed: !r.body.ok });
    if (showLog) void loadLog();
  };
  const toggle = async () => {
    const r = await api.webhooks.update({ params, body: { enabled: !ep.enabled } });
    if (r.status !== 200) return setError(errorMessage(r.body));
    await props.reload();
  };
  const roll = async () => {
    if (!window.confirm('Roll the signing secret? The old one keeps signing beside the new one for a day.')) return;
    const r = await api.webhooks.rollSecret({ params });
    if (r.status !== 200) return setError(errorMessage(r.body));
    props.showSecret(r.body.secret);
    await props.reload();
  };
  const remove = async () => {
    const r = await api.webhooks.remove({ params });
    setConfirming(false);
    if (r.status !== 200) return setError(errorMessage(r.body));
    await props.reload();
  };
  const resend = async (d: Delivery) => {
    const r = await api.webhooks.resend({ params: { projectId: props.projectId, deliveryId: d.id } });
    if (r.status !== 200) return setError(errorMessage(r.body));
    setOutcome({ text: r.body.queued ? 'Delivery queued again.' : 'The delivery is still being retried.', failed: false });
    void loadLog();
  };
  const retryNow = async (d: Delivery) => {
    const r = await api.webhooks.retryNow({ params: { projectId: props.projectId, deliveryId: d.id } }).catch(() => null);
    if (!r) return setError(UNREACHABLE);
    if (r.status !== 200) return setError(errorMessage(r.body));
    setError(null);
    setOutcome({ text: `Retrying now (the next attempt was due ${when(r.body.was_due_at)}).`, failed: false });
    void loadLog();
    // The attempt takes a moment: the log shows how it went.
    setTimeout(() => void loadLog(), 1_000);
  };

  return (
    <li className="card column" aria-label={ep.url}>
      <div className="row">
        <h3>
          <code>{ep.url}</code> {ep.enabled ? <span className="badge">enabled</span> : <span className="badge off">disabled</span>}
        </h3>
        <span className="actions">
          <button type="button" className="small" onClick={test} disabled={busy} aria-label={`Test ${ep.url}`}>
            {busy ? 'Testing…' : 'Test'}
          </button>
          <label className="switch">
            <input type="checkbox" role="switch" checked={ep.enabled} onChange={toggle} aria-label={`Enabled: ${ep.url}`} /> Enabled
          </label>
        </span>
      </div>
      <p className="small muted">
        {ep.description ? `${ep.description} · ` : ''}Events: {ep.event_types.length ? ep.event_types.join(', ') : 'all'} · secret{' '}
        <code>{ep.secret_prefix}…</code>
        {ep.disabled_reason ? ` · ${ep.disabled_reason}` : ''}
      </p>
      {/* The live region is always there (so that its news is read out) but takes no room while empty. */}
      <div role="status">
        {outcome ? (
          <p className={outcome.failed ? 'error' : 'notice'} data-testid="test-outcome">
            {outcome.text}
          </p>
        ) : null}
      </div>
      <ErrorNote message={error} />
      <span className="actions">
        <button
          type="button"
          className="secondary small"
          aria-expanded={showLog}
          onClick={() => {
            setShowLog(!showLog);
            if (!showLog) void loadLog();
          }}
        >
          {showLog ? 'Hide delivery log' : 'Delivery log'}
        </button>
        <button type="button" className="secondary small" onClick={roll}>
          Roll secret
        </button>
        {confirming ? (
          <span role="group" aria-label={`Delete ${ep.url}?`}>
            Its delivery log goes too.{' '}
            <button type="button" className="danger small" onClick={remove}>
              Yes, delete
            </button>{' '}
            <button type="button" className="secondary small" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="button" className="secondary small" onClick={() => setConfirming(true)}>
            Delete
          </button>
        )}
      </span>
      {showLog ? <DeliveryLog deliveries={log} resend={resend} retryNow={retryNow} /> : null}
    </li>
  );
}

function DeliveryLog(props: { deliveries: Delivery[] | null; resend: (d: Delivery) => void; retryNow: (d: Delivery) => void }) {
  if (props.deliveries === null) return <Loading what="deliveries" />;
  if (props.deliveries.length === 0) return <p className="muted">No deliveries yet.</p>;
  return (
    <ol className="plain" aria-label="Delivery log">
      {props.deliveries.map((d) => (
        <li key={d.id} className="panel">
          <div className="row">
            <span>
              <strong>{d.event_type}</strong> · {d.status} · {when(d.created_at)}
              {d.status === 'pending' && d.next_attempt_at ? ` · next attempt ${when(d.next_attempt_at)}` : ''}
            </span>
            {d.event_type !== 'test' && d.status === 'pending' && d.next_attempt_at ? (
              <button type="button" className="secondary small" onClick={() => props.retryNow(d)}>
                Retry now
              </button>
            ) : d.event_type !== 'test' ? (
              <button type="button" className="secondary small" onClick={() => props.resend(d)}>
                Resend
              </button>
            ) : null}
          </div>
          <ul className="plain small">
            {d.attempts.map((a) => (
              <li key={a.attempt}>
                Attempt {a.attempt} · {when(a.started_at)} · {a.status_code !== null ? `status ${a.status_code}` : 'no answer'}
                {a.duration_ms !== null ? ` · ${a.duration_ms} ms` : ''}
                {a.error ? ` · ${a.error}` : ''}
                {a.response_excerpt ? <pre className="excerpt">{a.response_excerpt}</pre> : null}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}
