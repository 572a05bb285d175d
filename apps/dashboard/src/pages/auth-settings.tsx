import { useEffect, useState, type FormEvent } from 'react';
import {
  CallbackUrlSchema,
  CONSOLE_LOCALES,
  MFA_METHOD_NAMES,
  MFA_POLICY_NAMES,
  SECURITY_NOTICE_NAMES,
  UpdateProjectBodySchema,
} from '../../../../contract/admin';
import { mfaPolicyChangeEffect } from '../../../../domain/console';
import { api, errorMessage } from '../api';
import { CopyButton, ErrorNote, Loading, PageTitle, ProjectNav, useLoad } from '../ui';

type Detail = Extract<Awaited<ReturnType<typeof api.projects.get>>, { status: 200 }>['body']['project'];
type Update = Parameters<typeof api.projects.update>[0]['body'];

const CREDENTIAL_FIELDS: Record<string, Array<[string, string]>> = {
  google: [
    ['clientId', 'Client ID'],
    ['clientSecret', 'Client secret'],
  ],
  github: [
    ['clientId', 'Client ID'],
    ['clientSecret', 'Client secret'],
  ],
  discord: [
    ['clientId', 'Client ID'],
    ['clientSecret', 'Client secret'],
  ],
  azure: [
    ['clientId', 'Application (client) ID'],
    ['clientSecret', 'Client secret'],
    ['tenant', 'Tenant (optional, common by default)'],
  ],
  apple: [
    ['clientId', 'Services ID'],
    ['teamId', 'Team ID'],
    ['keyId', 'Key ID'],
    ['privateKey', 'Private key (PEM)'],
  ],
};
const NAMES: Record<string, string> = {
  email: 'Email and password',
  'magic-link': 'Magic link',
  google: 'Google',
  github: 'GitHub',
  discord: 'Discord',
  azure: 'Microsoft Entra',
  apple: 'Apple',
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
      <h2>Sign-in providers</h2>
      <ul className="cards" aria-label="Providers">
        {project.providers.map((p) => (
          <ProviderCard key={p.provider} provider={p} save={save} />
        ))}
      </ul>
      <CallbackUrls urls={project.settings.callback_urls} save={save} />
      <Linking on={project.settings.allow_account_linking} save={save} />
      <Mfa policy={project.settings.mfa_policy} methods={project.settings.mfa_methods} save={save} />
      <Locale locale={project.settings.default_locale} save={save} />
      <Notifications settings={project.settings.security_notifications} save={save} />
    </section>
  );
}

type Save = (body: Update, done: string) => Promise<string | null>;

function ProviderCard(props: { provider: Detail['providers'][number]; save: Save }) {
  const p = props.provider;
  const [error, setError] = useState<string | null>(null);
  const name = NAMES[p.provider] ?? p.provider;
  const toggle = async () =>
    setError(await props.save(p.enabled ? { disable: [p.provider] } : { enable: [p.provider] }, `${name} ${p.enabled ? 'disabled' : 'enabled'}.`));
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const credentials: Record<string, string> = {};
    for (const [field] of CREDENTIAL_FIELDS[p.provider] ?? []) {
      const v = String(data.get(field) ?? '').trim();
      if (v) credentials[field] = v;
    }
    const err = await props.save({ provider_credentials: [{ provider: p.provider as 'google', credentials }] } as Update, `${name} credentials saved.`);
    setError(err);
    if (!err) e.currentTarget?.reset();
  };
  const id = `provider-${p.provider}`;
  return (
    <li className="card column" aria-labelledby={id}>
      <div className="row">
        <h3 id={id}>{name}</h3>
        <label className="switch">
          <input type="checkbox" role="switch" checked={p.enabled} onChange={toggle} aria-describedby={`${id}-state`} />
          <span id={`${id}-state`}>{p.enabled ? 'Enabled' : 'Disabled'}</span>
        </label>
      </div>
      {p.redirect_uri ? (
        <>
          <p className="small">
            Redirect URI to register at {name}: <code data-testid={`redirect-${p.provider}`}>{p.redirect_uri}</code>{' '}
            <CopyButton value={p.redirect_uri} label={`${name} redirect URI`} />
          </p>
          <p className="small muted">{p.credentials_configured ? 'Credentials are set (never shown again). Saving replaces them.' : 'No credentials yet.'}</p>
          <form onSubmit={submit} noValidate className="grid">
            {(CREDENTIAL_FIELDS[p.provider] ?? []).map(([field, label]) => (
              <div key={field}>
                <label htmlFor={`${id}-${field}`}>{label}</label>
                {field === 'privateKey' ? (
                  <textarea id={`${id}-${field}`} name={field} rows={4} autoComplete="off" />
                ) : (
                  <input id={`${id}-${field}`} name={field} autoComplete="off" type={field === 'clientSecret' ? 'password' : 'text'} />
                )}
              </div>
            ))}
            <ErrorNote message={error} />
            <button type="submit" className="small">
              Save {name} credentials
            </button>
          </form>
        </>
      ) : (
        <ErrorNote message={error} />
      )}
    </li>
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
            {m.replace('_', ' ')}
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

/** What each security notification tells the end user (docs/audit.md, "Security notifications"). */
const NOTICES: Record<(typeof SECURITY_NOTICE_NAMES)[number], [string, string]> = {
  password_changed: ['Password changed', 'The password was changed with a reset link (every session was ended).'],
  mfa_factor_added: ['MFA factor added', 'An authenticator app was enrolled, or SMS enabled.'],
  mfa_factor_removed: ['MFA factor removed', 'An authenticator app or SMS was removed (by the user or from this console).'],
  backup_codes_regenerated: ['Backup codes regenerated', 'New backup codes replaced the earlier ones.'],
  totp_replayed: ['Authenticator code reused', 'A code already used was entered again: refused, but a sign someone else saw it.'],
  new_device: [
    'Sign-in from a new device',
    'A sign-in came from a device new to the user (a browser family and network it has not signed in from before; the first device never sends ' +
      'it). Off by default: it sends a mail at every new browser or network, and while off nothing about devices is stored.',
  ],
  organization_role_changed: [
    'Organization role changed',
    "The user's role in one of their organizations was changed (it names the organization and the new role).",
  ],
  organization_removed: ['Removed from an organization', 'The user was removed from one of their organizations (it names the organization).'],
  passkey_added: ['Passkey added', 'A passkey was added to the account.'],
  passkey_removed: ['Passkey removed', 'A passkey was removed from the account.'],
};

function Notifications(props: { settings: Partial<Record<(typeof SECURITY_NOTICE_NAMES)[number], boolean>>; save: Save }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <section className="panel" aria-labelledby="notifications">
      <h2 id="notifications">Security notifications</h2>
      <p className="muted">
        Emails sent to an end user (in their language, through the mail queue) when something changes on their account. Users without an email address get none.
      </p>
      {SECURITY_NOTICE_NAMES.map((kind) => {
        const on = props.settings[kind] ?? kind !== 'new_device';
        const [title, what] = NOTICES[kind];
        return (
          <label className="switch" key={kind}>
            <input
              type="checkbox"
              role="switch"
              checked={on}
              aria-describedby={`notice-${kind}`}
              onChange={async () => setError(await props.save({ security_notifications: { [kind]: !on } }, `${title} notification ${on ? 'off' : 'on'}.`))}
            />
            <span>
              <strong>{title}</strong>{' '}
              <span id={`notice-${kind}`} className="muted">
                {what}
              </span>
            </span>
          </label>
        );
      })}
      <ErrorNote message={error} />
    </section>
  );
}
