import { useState } from 'react';
import { SECURITY_NOTICE_NAMES } from '../../../../../contract/admin';
import { ErrorNote } from '../../ui';
import type { Save } from './shared';

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

export function Notifications(props: { settings: Partial<Record<(typeof SECURITY_NOTICE_NAMES)[number], boolean>>; save: Save }) {
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
