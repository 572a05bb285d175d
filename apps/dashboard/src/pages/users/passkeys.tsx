import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Loading, TableBox, useLoad, when } from '../../ui';

/**
 * The user's passkeys on their page (GET .../users/:userId/passkeys): name, authenticator, synced or
 * bound to one device, created and last used, and Remove after a confirmation. The page's own
 * confirmation (one open at a time), notice and error line are passed in.
 */
export function UserPasskeys(props: {
  projectId: string;
  userId: string;
  confirming: string | null;
  setConfirming: (what: string | null) => void;
  /** Says what was done (the page's notice). */
  onDone: (notice: string) => void;
  /** The API's message of a refusal (the page's error). */
  onError: (message: string) => void;
}) {
  const params = { projectId: props.projectId, userId: props.userId };
  const passkeys = useLoad(
    () => api.users.listPasskeys({ params }),
    (body) => body.passkeys,
    [props.projectId, props.userId],
  );

  const remove = async (passkeyId: string, name: string) => {
    props.setConfirming(null);
    const r = await api.users.removePasskey({ params: { ...params, passkeyId } }).catch(() => null);
    if (r?.status !== 200) return props.onError(r ? errorMessage(r.body) : UNREACHABLE);
    props.onDone(`Passkey “${name}” removed.`);
    await passkeys.reload();
  };

  const rows = passkeys.data;
  return (
    <>
      <h2>Passkeys</h2>
      <ErrorNote message={passkeys.error} onRetry={passkeys.reload} />
      {rows === null && !passkeys.error ? <Loading what="passkeys" /> : null}
      {rows && rows.length === 0 ? <p className="muted">No passkey registered.</p> : null}
      {rows && rows.length > 0 ? (
        <TableBox caption="Passkeys, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Authenticator</th>
              <th scope="col">Kind</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td>{p.authenticator_name ?? 'Unknown authenticator'}</td>
                <td>{p.device_type === 'multi_device' ? 'Synced' : 'Device-bound'}</td>
                <td>{when(p.created_at)}</td>
                <td>{when(p.last_used_at)}</td>
                <td>
                  {props.confirming === `passkey:${p.id}` ? (
                    <span role="group" aria-label={`Remove the passkey ${p.name}?`}>
                      They can no longer sign in with it, nor use it as a second factor; if it was their only way in, they sign in again by another way the
                      project offers. Their sessions stay. They are told by email when that notification is on.{' '}
                      <button type="button" className="danger small" onClick={() => remove(p.id, p.name)}>
                        Yes, remove
                      </button>{' '}
                      <button type="button" className="secondary small" onClick={() => props.setConfirming(null)}>
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <button
                      type="button"
                      className="secondary small"
                      aria-label={`Remove the passkey ${p.name}`}
                      onClick={() => props.setConfirming(`passkey:${p.id}`)}
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </>
  );
}
