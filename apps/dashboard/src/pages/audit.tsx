import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { ListAuditQuerySchema } from '../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, when, type Me, TableBox } from '../ui';

type Entry = Extract<Awaited<ReturnType<typeof api.audit.list>>, { status: 200 }>['body']['entries'][number];
type Filter = { user?: string; action?: string; outcome?: 'success' | 'failure'; since?: string; until?: string };

/** A datetime-local value (the reader's time) as ISO 8601, or undefined. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** The Audit log page: filters (user, action prefix, outcome, time range), newest first, "Load more". */
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

  const who = (a: Entry['actor']) => {
    if (a.kind === 'admin' && a.id === props.me.id) return `${props.me.email} (console)`;
    if (a.kind === 'admin') return a.id === 'cli' ? 'CLI' : `admin ${a.id ?? ''}`.trim();
    return a.id ? `${a.kind} ${a.id}` : a.kind;
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
      <ErrorNote message={error} onRetry={() => load(filter, null)} />
      {entries === null && !error ? <Loading what="the audit log" /> : null}
      {entries && entries.length === 0 ? <p className="muted">No entry matches.</p> : null}
      {entries && entries.length > 0 ? (
        <TableBox caption="Audit entries, newest first">
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
                  <code>{e.action}</code>
                </td>
                <td>{e.outcome === 'failure' ? <span className="badge off">failure{e.reason ? ` (${e.reason})` : ''}</span> : 'success'}</td>
                <td>{who(e.actor)}</td>
                <td>{e.target ? `${e.target.kind} ${e.target.id}` : '—'}</td>
                <td>{e.ip ?? '—'}</td>
                <td>
                  {Object.entries(e.details)
                    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
                    .join('; ')}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      {cursor ? (
        <button type="button" className="secondary" disabled={busy} onClick={() => load(filter, cursor)}>
          {busy ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}
