import { useEffect, useState, type FormEvent } from 'react';
import { ErrorNote } from '../../ui';
import type { Detail, Save } from './shared';

type Verification = Detail['settings']['passkeys']['user_verification'];

/**
 * The passkeys' relying party: its ID and origins (blank: derived from the callback URLs) and user
 * verification, saved together (PATCH with `passkeys`); the relying party the ceremonies are checked
 * against now, or why there is none.
 */
export function PasskeySettings(props: { settings: Detail['settings']; save: Save }) {
  const saved = props.settings.passkeys;
  const savedOrigins = (saved.origins ?? []).join('\n');
  const [rpId, setRpId] = useState(saved.rp_id ?? '');
  const [origins, setOrigins] = useState(savedOrigins);
  const [verification, setVerification] = useState<Verification>(saved.user_verification);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setRpId(saved.rp_id ?? '');
    setOrigins(savedOrigins);
    setVerification(saved.user_verification);
  }, [saved.rp_id, savedOrigins, saved.user_verification]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const lines = origins
      .split('\n')
      .map((o) => o.trim())
      .filter(Boolean);
    const passkeys = { rp_id: rpId.trim() || null, origins: lines.length > 0 ? lines : null, user_verification: verification };
    setError(await props.save({ passkeys }, 'Passkey settings saved.'));
  };

  const off = !props.settings.enabled_providers.includes('passkey') && !props.settings.mfa_methods.includes('passkey');
  const rp = saved.relying_party;
  return (
    <form className="panel" aria-labelledby="passkeys" onSubmit={submit} noValidate>
      <h2 id="passkeys">Passkeys</h2>
      {off ? <p className="muted small">Passkeys are off: turn on the Passkeys provider above, or allow Passkey as an MFA method.</p> : null}
      {rp ? (
        <p data-testid="relying-party">
          Passkeys are checked against the relying party <code>{rp.id}</code> and the origin{rp.origins.length === 1 ? '' : 's'}{' '}
          {rp.origins.map((o, i) => (
            <span key={o}>
              {i > 0 ? ', ' : ''}
              <code>{o}</code>
            </span>
          ))}
          .
        </p>
      ) : (
        <p className="warning" role="note" data-testid="relying-party">
          {props.settings.callback_urls.length === 0 && saved.origins === null
            ? 'Passkeys need a callback URL: add one above (its host name becomes the relying party ID, its origin the allowed origin), or set both here.'
            : `No origin is under the relying party ID ${saved.rp_id}: passkeys cannot be used until origins under it are set here, or the ID is cleared.`}
        </p>
      )}
      <label htmlFor="passkey-rp-id">Relying party ID</label>
      <input
        id="passkey-rp-id"
        name="rp_id"
        maxLength={253}
        autoComplete="off"
        placeholder="example.com"
        value={rpId}
        onChange={(e) => setRpId(e.target.value)}
        aria-describedby="passkey-rp-id-hint"
      />
      <p id="passkey-rp-id-hint" className="small muted">
        A host name; blank: the host of the first callback URL. Passkeys belong to it: after a change, those made before stop working.
      </p>
      <label htmlFor="passkey-origins">Origins, one per line</label>
      <textarea
        id="passkey-origins"
        name="origins"
        rows={3}
        placeholder="https://app.example.com"
        value={origins}
        onChange={(e) => setOrigins(e.target.value)}
        aria-describedby="passkey-origins-hint"
      />
      <p id="passkey-origins-hint" className="small muted">
        The pages that ask for passkeys (scheme, host and port), each under the relying party ID; blank: the origins of the callback URLs.
      </p>
      <label htmlFor="passkey-verification">User verification</label>
      <select id="passkey-verification" name="user_verification" value={verification} onChange={(e) => setVerification(e.target.value as Verification)}>
        <option value="required">Required: a passkey used without the device's PIN or biometric check is refused</option>
        <option value="preferred">Preferred: asked for; without it, a passkey counts as one factor only</option>
      </select>
      <ErrorNote message={error} />
      <button type="submit">Save passkey settings</button>
    </form>
  );
}
