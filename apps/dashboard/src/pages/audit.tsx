import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { ListAuditQuerySchema } from '../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, when, type Me, TableBox } from '../ui';

type Entry = Extract<Awaited<ReturnType<typeof api.audit.list>>, { status: 200 }>['body']['entries'][number];
type Filter = { user?: string; action?: string; outcome?: 'success' | 'failure'; since?: string; until?: string };

/** A datetime-local value (the reader's time) as ISO 8601, or undefined. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** A record's id shortened for a cell (a uuid to its first 8 characters); the whole id is in the title. */
const shortId = (id: string) => (/^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(id) ? `${id.slice(0, 8)}…` : id);

/** What each kind of target is called before its name or short id (an end user or a console account with an email is named by it alone). */
const KIND_WORDS: Record<string, string> = {
  user: 'user',
  console_account: 'console account',
  api_key: 'API key',
  project: 'project',
  session: 'session',
  subscription: 'subscription',
  email: 'email',
  console_invitation: 'invitation of',
};

/** A name (or a short id) with the raw id on hover. */
function Named(props: { text: string; id: string | null }) {
  return props.id ? <span title={props.id}>{props.text}</span> : <span>{props.text}</span>;
}

/** Who acted: an end user or a console account by email, an API key by its label and prefix, the CLI, or Tollgate itself. */
function Actor(props: { entry: Entry; me: Me }) {
  const { actor, actor_name: name } = props.entry;
  if (actor.kind === 'system') return <>Tollgate</>;
  if (actor.kind === 'admin' && actor.id === 'cli') return <>CLI</>;
  if (actor.id === null) return <>{actor.kind === 'admin' ? 'an operator' : 'unknown user'}</>;
  const apiKey = actor.id.startsWith('api_key:') ? actor.id.slice('api_key:'.length) : null;
  if (apiKey !== null) return <Named id={actor.id} text={`API key ${name ?? shortId(apiKey)}`} />;
  if (actor.kind === 'admin') return <Named id={actor.id} text={`${name ?? (actor.id === props.me.id ? props.me.email : shortId(actor.id))} (console)`} />;
  return <Named id={actor.id} text={name ?? `user ${shortId(actor.id)}`} />;
}

/** What the action was done to, named as the actor is. */
function Target(props: { entry: Entry }) {
  const { target, target_name: name } = props.entry;
  if (!target) return <>—</>;
  if (name && (target.kind === 'user' || target.kind === 'console_account')) return <Named id={target.id} text={name} />;
  return <Named id={target.id} text={`${KIND_WORDS[target.kind] ?? target.kind} ${name ?? shortId(target.id)}`} />;
}

/** The details as `name: value` pairs; a long list is cut to a few lines, the whole of it on hover. */
function Details(props: { details: Entry['details'] }) {
  const text = Object.entries(props.details)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ');
  return text ? (
    <span className="clamp" title={text}>
      {text}
    </span>
  ) : (
    <>—</>
  );
}

/** A dotted action that may wrap at its dots (billing.subscription.|created), never inside a word. */
const Action = (props: { name: string }) => (
  <code>
    {props.name.split('.').map((part, i) => (
      <span key={i}>
        {i > 0 ? '.' : ''}
        {i > 0 ? <wbr /> : null}
        {part}
      </span>
    ))}
  </code>
);

/** A date input's value (YYYY-MM-DD), `days` before today (UTC). */
const dayBefore = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

/**
 * Download: the export route as a link (the browser fetches it with the console's session cookie
 * and saves the file as it arrives; nothing is read into the page). From and To are UTC dates, To
 * included; the action of the applied filter narrows it too.
 */
function Download(props: { projectId: string; action: string | undefined }) {
  const [from, setFrom] = useState(() => dayBefore(30));
  const [to, setTo] = useState(() => dayBefore(0));
  const [format, setFormat] = useState<'csv' | 'ndjson'>('csv');
  // To is a whole day: the export runs to the next midnight (exclusive).
  const end = to ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : '';
  const query = new URLSearchParams({ ...(from ? { from } : {}), ...(end ? { to: end } : {}), format, ...(props.action ? { action: props.action } : {}) });
  const href = `/api/admin/projects/${encodeURIComponent(props.projectId)}/audit/export?${query.toString()}`;
  return (
    <form className="panel" aria-labelledby="audit-download" onSubmit={(e) => e.preventDefault()}>
      <h2 id="audit-download">Download</h2>
      <div className="grid">
        <div>
          <label htmlFor="download-from">From (UTC date)</label>
          <input id="download-from" type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div>
          <label htmlFor="download-to">To (UTC date, included)</label>
          <input id="download-to" type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </div>
        <div>
          <label htmlFor="download-format">Format</label>
          <select id="download-format" value={format} onChange={(e) => setFormat(e.target.value as 'csv' | 'ndjson')}>
            <option value="csv">CSV</option>
            <option value="ndjson">NDJSON (one JSON entry a line)</option>
          </select>
        </div>
        <a className="button" href={href} download>
          Download {format === 'csv' ? 'CSV' : 'NDJSON'}
        </a>
      </div>
      <p className="muted">
        Every entry of the range{props.action ? ` with the action ${props.action}` : ''}, oldest first (at most 366 days). The download is recorded in the audit
        log.
      </p>
    </form>
  );
}

/** The Audit log page: filters (user, action prefix, outcome, time range), newest first, "Load more"; a range downloaded as CSV or NDJSON. */
export function AuditPage(props: { projectId: string; me: Me }) {
  const [filter, setFilter] = useState<Filter>({});
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(
    async (f: Filter, after: string | null) => {
      const parsed = ListAuditQuerySchema.safeParse({ ...f, ...(after ? { cursor: after } : {}) });
      if (!parsed.success) return setError(parsed.error.issues[0]!.message);
      setError(null);
      setBusy(true);
      const r = await api.audit.list({ params: { projectId: props.projectId }, query: parsed.data }).catch(() => null);
      setBusy(false);
      if (r?.status !== 200) return setError(r ? errorMessage(r.body) : UNREACHABLE);
      setEntries((before) => (after && before ? [...before, ...r.body.entries] : r.body.entries));
      setCursor(r.body.next_cursor);
    },
    [props.projectId],
  );
  useEffect(() => {
    void load({}, null);
  }, [load]);

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const text = (name: string) => String(data.get(name) ?? '').trim() || undefined;
    const outcome = text('outcome') as Filter['outcome'];
    const f: Filter = { user: text('user'), action: text('action'), outcome, since: iso(text('since') ?? ''), until: iso(text('until') ?? '') };
    for (const k of Object.keys(f) as Array<keyof Filter>) if (f[k] === undefined) delete f[k];
    setFilter(f);
    void load(f, null);
  };

  return (
    <section>
      <ProjectNav projectId={props.projectId} current="audit" />
      <PageTitle>Audit log</PageTitle>
      <form onSubmit={submit} className="panel grid" aria-label="Filters" noValidate>
        <div>
          <label htmlFor="audit-user">User id</label>
          <input id="audit-user" name="user" maxLength={100} />
        </div>
        <div>
          <label htmlFor="audit-action">Action (or its prefix)</label>
          <input id="audit-action" name="action" maxLength={100} placeholder="e.g. user, mfa, user.sign_in" />
        </div>
        <div>
          <label htmlFor="audit-outcome">Outcome</label>
          <select id="audit-outcome" name="outcome" defaultValue="">
            <option value="">any</option>
            <option value="success">success</option>
            <option value="failure">failure</option>
          </select>
        </div>
        <div>
          <label htmlFor="audit-since">From</label>
          <input id="audit-since" name="since" type="datetime-local" />
        </div>
        <div>
          <label htmlFor="audit-until">Until</label>
          <input id="audit-until" name="until" type="datetime-local" />
        </div>
        <button type="submit">Apply filters</button>
      </form>
      <Download projectId={props.projectId} action={filter.action} />
      <ErrorNote message={error} onRetry={() => load(filter, null)} />
      {entries === null && !error ? <Loading what="the audit log" /> : null}
      {entries && entries.length === 0 ? <p className="muted">No entry matches.</p> : null}
      {entries && entries.length > 0 ? (
        <div className="audit-log">
          <TableBox caption="Audit entries, newest first">
            <colgroup>
              <col className="at" />
              <col className="action" />
              <col className="outcome" />
              <col className="party" />
              <col className="party" />
              <col className="ip" />
              <col className="details" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Outcome</th>
                <th scope="col">Actor</th>
                <th scope="col">Target</th>
                <th scope="col">IP</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.at)}</td>
                  <td>
                    <Action name={e.action} />
                  </td>
                  <td>{e.outcome === 'failure' ? <span className="badge off">failure{e.reason ? ` (${e.reason})` : ''}</span> : 'success'}</td>
                  <td>
                    <Actor entry={e} me={props.me} />
                  </td>
                  <td>
                    <Target entry={e} />
                  </td>
                  <td>{e.ip ?? '—'}</td>
                  <td>
                    <Details details={e.details} />
                  </td>
                </tr>
              ))}
            </tbody>
          </TableBox>
        </div>
      ) : null}
      {cursor ? (
        <button type="button" className="secondary" disabled={busy} onClick={() => load(filter, cursor)}>
          {busy ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}
