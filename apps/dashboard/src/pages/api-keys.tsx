import { useState, type FormEvent } from 'react';
import { CreateApiKeyBodySchema } from '../../../../contract/admin';
import { api, errorMessage } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, ShownOnce, useLoad, TableBox } from '../ui';

interface Key {
  id: string;
  prefix: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

export function ApiKeysPage(props: { projectId: string }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<Key | null>(null);

  const {
    data: keys,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.projects.listApiKeys({ params: { projectId: props.projectId } }),
    (body) => body.api_keys,
    [props.projectId],
  );

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const label = String(new FormData(form).get('label') ?? '').trim();
    const parsed = CreateApiKeyBodySchema.safeParse(label ? { label } : {});
    if (!parsed.success) return setFormError(parsed.error.issues[0]!.message);
    setFormError(null);
    const r = await api.projects.createApiKey({ params: { projectId: props.projectId }, body: parsed.data });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    form.reset();
    setCreated(r.body.api_key);
    void load();
  };

  const revoke = async (key: Key) => {
    const r = await api.projects.revokeApiKey({ params: { projectId: props.projectId, keyId: key.id } });
    setConfirming(null);
    if (r.status !== 200) setError(errorMessage(r.body));
    void load();
  };

  return (
    <section>
      <ProjectNav projectId={props.projectId} current="api-keys" />
      <PageTitle>API keys</PageTitle>
      {created ? <ShownOnce title="New API key" value={created} onDone={() => setCreated(null)} /> : null}
      <ErrorNote message={error} onRetry={load} />
      {keys === null && !error ? <Loading what="API keys" /> : null}
      {keys && keys.length === 0 ? <p className="muted">This project has no API keys.</p> : null}
      {keys && keys.length > 0 ? (
        <TableBox caption="API keys">
          <thead>
            <tr>
              <th scope="col">Prefix</th>
              <th scope="col">Label</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.label ?? ''}</td>
                <td>{when(k.created_at)}</td>
                <td>{when(k.last_used_at)}</td>
                <td>{k.revoked_at ? <span className="badge off">revoked {when(k.revoked_at)}</span> : <span className="badge">active</span>}</td>
                <td>
                  {k.revoked_at ? null : confirming?.id === k.id ? (
                    <span role="group" aria-label={`Revoke ${k.prefix}…?`}>
                      Requests with it will answer 401.{' '}
                      <button type="button" className="danger small" onClick={() => revoke(k)}>
                        Yes, revoke
                      </button>{' '}
                      <button type="button" className="secondary small" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <button type="button" className="secondary small" aria-label={`Revoke ${k.prefix}…`} onClick={() => setConfirming(k)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <form onSubmit={create} noValidate className="panel" aria-labelledby="new-key">
        <h2 id="new-key">New API key</h2>
        <label htmlFor="key-label">Label (optional)</label>
        <input id="key-label" name="label" maxLength={100} />
        <ErrorNote message={formError} />
        <button type="submit">Create API key</button>
      </form>
    </section>
  );
}
