import { useState, type FormEvent } from 'react';
import { CreateProjectBodySchema } from '../../../../contract/admin';
import { api, errorMessage } from '../api';
import { ErrorNote, Link, Loading, PageTitle, ShownOnce, type Me, useLoad } from '../ui';

interface ProjectRow {
  id: string;
  name: string;
  active: boolean;
  settings: { enabled_providers: string[] };
}

export function ProjectsPage(props: { me: Me }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);

  const {
    data: projects,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.projects.list(),
    (body) => body.projects,
    [],
  );

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const callback = String(data.get('callback') ?? '').trim();
    const parsed = CreateProjectBodySchema.safeParse({ name: String(data.get('name') ?? ''), callback_urls: callback ? [callback] : undefined });
    if (!parsed.success) return setFormError(parsed.error.issues[0]!.message);
    setFormError(null);
    const r = await api.projects.create({ body: parsed.data });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    form.reset();
    setCreated({ name: r.body.project.name, key: r.body.api_key });
    void load();
  };

  const setActive = async (p: ProjectRow, active: boolean) => {
    if (!active && !window.confirm(`Deactivate "${p.name}"? Its API keys and its users' sign-ins stop working until it is activated again.`)) return;
    const r = await api.projects.update({ params: { projectId: p.id }, body: { active } });
    if (r.status !== 200) setError(errorMessage(r.body));
    void load();
  };

  return (
    <section>
      <PageTitle>Projects</PageTitle>
      {created ? <ShownOnce title={`API key of ${created.name}`} value={created.key} onDone={() => setCreated(null)} /> : null}
      <ErrorNote message={error} onRetry={load} />
      {projects === null && !error ? <Loading what="projects" /> : null}
      {projects && projects.length === 0 ? <p className="muted">No projects yet: create the first one below.</p> : null}
      {projects && projects.length > 0 ? (
        <ul className="cards" aria-label="Projects">
          {projects.map((p) => (
            <li key={p.id} className="card">
              <div>
                <Link to={`/projects/${p.id}`}>{p.name}</Link> {p.active ? null : <span className="badge off">inactive</span>}
                <div className="muted small">
                  {p.id} · {p.settings.enabled_providers.join(', ')}
                </div>
              </div>
              <div className="actions">
                <Link to={`/projects/${p.id}/api-keys`} className="button secondary small">
                  API keys
                </Link>
                <Link to={`/projects/${p.id}/billing`} className="button secondary small">
                  Billing
                </Link>
                <Link to={`/projects/${p.id}/webhooks`} className="button secondary small">
                  Webhooks
                </Link>
                <button type="button" className="secondary small" onClick={() => setActive(p, !p.active)}>
                  {p.active ? 'Deactivate' : 'Activate'}
                </button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      {props.me.role === 'operator' || projects !== null ? (
        <form onSubmit={create} noValidate className="panel" aria-labelledby="new-project">
          <h2 id="new-project">New project</h2>
          <label htmlFor="project-name">Name</label>
          <input id="project-name" name="name" maxLength={100} required />
          <label htmlFor="project-callback">Callback URL (optional)</label>
          <input id="project-callback" name="callback" type="url" placeholder="https://my.app/callback" />
          <ErrorNote message={formError} />
          <button type="submit">Create project</button>
        </form>
      ) : null}
    </section>
  );
}
