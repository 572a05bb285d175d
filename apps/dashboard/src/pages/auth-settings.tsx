import { useEffect, useState, type FormEvent } from 'react';
import { CallbackUrlSchema, CONSOLE_LOCALES, MFA_METHOD_NAMES, MFA_POLICY_NAMES, UpdateProjectBodySchema } from '../../../../contract/admin';
import { mfaPolicyChangeEffect } from '../../../../domain/console';
import { api, errorMessage } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, useLoad } from '../ui';
import { Notifications } from './auth-settings/notifications';
import { ProjectOverview } from './overview/overview';
import { PasskeySettings } from './auth-settings/passkeys';
import { ProviderCard } from './auth-settings/providers';
import type { Save, Update } from './auth-settings/shared';

/** The second factors users may enroll, as the page names them. */
const METHOD_NAMES: Record<(typeof MFA_METHOD_NAMES)[number], string> = {
  totp: 'Authenticator app (TOTP)',
  sms: 'SMS',
  backup_codes: 'Backup codes',
  passkey: 'Passkey',
};

export function AuthSettingsPage(props: { projectId: string }) {
  const [notice, setNotice] = useState<string | null>(null);

  const {
    data: project,
    setData: setProject,
    error,
    reload: load,
  } = useLoad(
    () => api.projects.get({ params: { projectId: props.projectId } }),
    (body) => body.project,
    [props.projectId],
  );

  /** Validates with the API's schema, saves, and answers the API's message on failure (null on success). */
  const save = async (body: Update, done: string): Promise<string | null> => {
    const parsed = UpdateProjectBodySchema.safeParse(body);
    if (!parsed.success) return parsed.error.issues[0]!.message;
    const r = await api.projects.update({ params: { projectId: props.projectId }, body: parsed.data });
    if (r.status !== 200) return errorMessage(r.body);
    setProject(r.body.project);
    setNotice(done);
    return null;
  };

  if (!project) {
    return (
      <section>
        <PageTitle>Authentication</PageTitle>
        <ErrorNote message={error} onRetry={load} />
        {error ? null : <Loading what="the project" />}
      </section>
    );
  }
  return (
    <section>
      <ProjectNav projectId={project.id} current="auth" />
      <PageTitle>{project.name}: authentication</PageTitle>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ProjectOverview projectId={project.id} />
      <h2>Sign-in providers</h2>
      <ul className="cards" aria-label="Providers">
        {project.providers.map((p) => (
          <ProviderCard key={p.provider} provider={p} save={save} />
        ))}
      </ul>
      <CallbackUrls urls={project.settings.callback_urls} save={save} />
      <PasskeySettings settings={project.settings} save={save} />
      <Linking on={project.settings.allow_account_linking} save={save} />
      <Mfa policy={project.settings.mfa_policy} methods={project.settings.mfa_methods} save={save} />
      <Locale locale={project.settings.default_locale} save={save} />
      <Notifications settings={project.settings.security_notifications} save={save} />
    </section>
  );
}

function CallbackUrls(props: { urls: string[]; save: Save }) {
  const [error, setError] = useState<string | null>(null);
  const add = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const url = String(new FormData(form).get('url') ?? '').trim();
    const parsed = CallbackUrlSchema.safeParse(url);
    if (!parsed.success) return setError(parsed.error.issues[0]!.message);
    const err = await props.save({ add_callback_urls: [url] }, 'Callback URL added.');
    setError(err);
    if (!err) form.reset();
  };
  return (
    <section className="panel" aria-labelledby="callbacks">
      <h2 id="callbacks">Callback URLs</h2>
      <p className="muted small">Where sign-ins may return to; compared as exact strings.</p>
      {props.urls.length === 0 ? <p className="muted">None registered.</p> : null}
      <ul aria-label="Registered callback URLs" className="plain">
        {props.urls.map((u) => (
          <li key={u}>
            <code>{u}</code>{' '}
            <button
              type="button"
              className="secondary small"
              aria-label={`Remove ${u}`}
              onClick={async () => setError(await props.save({ remove_callback_urls: [u] }, 'Callback URL removed.'))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form onSubmit={add} noValidate className="inline">
        <label htmlFor="callback-url">Add a callback URL</label>
        <input id="callback-url" name="url" type="url" placeholder="https://my.app/callback" />
        <button type="submit">Add</button>
      </form>
      <ErrorNote message={error} />
    </section>
  );
}

function Linking(props: { on: boolean; save: Save }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <section className="panel" aria-labelledby="linking">
      <h2 id="linking">Account linking</h2>
      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={props.on}
          onChange={async () => setError(await props.save({ allow_account_linking: !props.on }, `Account linking ${props.on ? 'off' : 'on'}.`))}
        />
        <span>Link sign-ins with several providers to one user when the verified email matches</span>
      </label>
      <ErrorNote message={error} />
    </section>
  );
}

function Mfa(props: { policy: (typeof MFA_POLICY_NAMES)[number]; methods: string[]; save: Save }) {
  const [policy, setPolicy] = useState(props.policy);
  const [methods, setMethods] = useState<string[]>(props.methods);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setPolicy(props.policy);
    setMethods(props.methods);
  }, [props.policy, props.methods]);
  const effect = mfaPolicyChangeEffect(props.policy, policy);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(await props.save({ mfa_policy: policy, mfa_methods: methods as Array<(typeof MFA_METHOD_NAMES)[number]> }, 'MFA settings saved.'));
  };
  return (
    <form className="panel" aria-labelledby="mfa" onSubmit={submit} noValidate>
      <h2 id="mfa">Multi-factor authentication</h2>
      <fieldset>
        <legend>Policy</legend>
        {MFA_POLICY_NAMES.map((p) => (
          <label key={p} className="choice">
            <input type="radio" name="mfa-policy" value={p} checked={policy === p} onChange={() => setPolicy(p)} /> {p}
          </label>
        ))}
      </fieldset>
      {effect ? (
        <p className="warning" role="note" data-testid="mfa-effect">
          Changing from {props.policy} to {policy}: {effect}
        </p>
      ) : null}
      <fieldset>
        <legend>Methods users may enroll</legend>
        {MFA_METHOD_NAMES.map((m) => (
          <label key={m} className="choice">
            <input
              type="checkbox"
              checked={methods.includes(m)}
              onChange={() => setMethods(methods.includes(m) ? methods.filter((x) => x !== m) : [...methods, m])}
            />{' '}
            {METHOD_NAMES[m]}
          </label>
        ))}
      </fieldset>
      <ErrorNote message={error} />
      <button type="submit">Save MFA settings</button>
    </form>
  );
}

function Locale(props: { locale: string; save: Save }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="panel inline"
      aria-labelledby="locale"
      onSubmit={async (e) => {
        e.preventDefault();
        const locale = String(new FormData(e.currentTarget).get('locale'));
        setError(await props.save({ default_locale: locale as (typeof CONSOLE_LOCALES)[number] }, 'Default locale saved.'));
      }}
    >
      <h2 id="locale">Default locale</h2>
      <label htmlFor="default-locale">Locale of emails when the user has none</label>
      <select id="default-locale" name="locale" defaultValue={props.locale} key={props.locale}>
        {CONSOLE_LOCALES.map((l) => (
          <option key={l} value={l}>
            {l}
          </option>
        ))}
      </select>
      <button type="submit">Save locale</button>
      <ErrorNote message={error} />
    </form>
  );
}
