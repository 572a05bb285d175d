import { useState, type FormEvent } from 'react';
import { CopyButton, ErrorNote } from '../../ui';
import type { Detail, Save, Update } from './shared';

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
  passkey: 'Passkeys',
  google: 'Google',
  github: 'GitHub',
  discord: 'Discord',
  azure: 'Microsoft Entra',
  apple: 'Apple',
};
/** One sign-in provider: its switch and, for OAuth, the redirect URI to register and its client credentials. */
export function ProviderCard(props: { provider: Detail['providers'][number]; save: Save }) {
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
        <>
          {p.provider === 'passkey' ? (
            <p className="small muted">Users sign in with a passkey of their device or password manager; its relying party is set under Passkeys below.</p>
          ) : null}
          <ErrorNote message={error} />
        </>
      )}
    </li>
  );
}
