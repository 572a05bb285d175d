import { useState } from 'react';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Link, Loading, PageTitle, ProjectNav, when, useLoad, TableBox } from '../../ui';
import { SubjectUsage } from '../usage/subject-usage';
import { UserPasskeys } from './passkeys';

const FACTOR_NAMES: Record<string, string> = { totp: 'Authenticator app (TOTP)', sms: 'SMS', backup_codes: 'Backup codes' };

/**
 * One user: identities, MFA factors, passkeys, sessions, subscription, usage and credits; disable or enable, sign out
 * everywhere, end a session, remove a factor or a passkey.
 */
export function UserPage(props: { projectId: string; userId: string }) {
  const [notice, setNotice] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const params = { projectId: props.projectId, userId: props.userId };

  const {
    data: detail,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.users.get({ params: { projectId: props.projectId, userId: props.userId } }),
    (body) => body,
    [props.projectId, props.userId],
  );

  /** Runs an action; says what it did, or the API's message. */
  const act = async <R extends { status: number; body: unknown }>(run: () => Promise<R>, done: (body: Extract<R, { status: 200 }>['body']) => string) => {
    setConfirming(null);
    const r = await run().catch(() => null);
    if (r?.status !== 200) return setError(r ? errorMessage(r.body) : UNREACHABLE);
    setError(null);
    setNotice(done((r as Extract<R, { status: 200 }>).body));
    await load();
  };

  const back = <Link to={`/projects/${props.projectId}/users`}>← Users</Link>;
  if (!detail) {
    return (
      <section>
        <ProjectNav projectId={props.projectId} current="users" />
        {back}
        <PageTitle>User</PageTitle>
        <ErrorNote message={error} onRetry={load} />
        {error ? null : <Loading what="the user" />}
      </section>
    );
  }
  const u = detail.user;
  const ended = (n: number | null) => (n === null ? '' : ` ${n} session${n === 1 ? '' : 's'} ended.`);
  return (
    <section>
      <ProjectNav projectId={props.projectId} current="users" />
      {back}
      <PageTitle>{u.email ?? u.id}</PageTitle>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={error} />
      <dl className="facts">
        <dt>Name</dt>
        <dd>{u.name ?? '—'}</dd>
        <dt>Email verified</dt>
        <dd>{u.email_verified ? 'yes' : 'no'}</dd>
        <dt>Latest provider</dt>
        <dd>{u.provider}</dd>
        <dt>Created</dt>
        <dd>{when(u.created_at)}</dd>
        <dt>Status</dt>
        <dd>{u.disabled ? <span className="badge off">disabled</span> : <span className="badge on">active</span>}</dd>
      </dl>
      <div className="actions">
        {u.disabled ? (
          <button
            type="button"
            onClick={() =>
              act(
                () => api.users.setDisabled({ params, body: { disabled: false } }),
                () => 'User enabled: they can sign in again.',
              )
            }
          >
            Enable user
          </button>
        ) : confirming === 'disable' ? (
          <span role="group" aria-label="Disable this user?">
            Sign-ins will be refused and every session ends.{' '}
            <button
              type="button"
              className="danger small"
              onClick={() =>
                act(
                  () => api.users.setDisabled({ params, body: { disabled: true } }),
                  () => 'User disabled; their sessions ended.',
                )
              }
            >
              Yes, disable
            </button>{' '}
            <button type="button" className="secondary small" onClick={() => setConfirming(null)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="button" className="danger" onClick={() => setConfirming('disable')}>
            Disable user
          </button>
        )}{' '}
        {confirming === 'sign-out' ? (
          <span role="group" aria-label="Sign this user out everywhere?">
            Every session ends; their apps must sign in again.{' '}
            <button
              type="button"
              className="danger small"
              onClick={() =>
                act(
                  () => api.users.signOutEverywhere({ params }),
                  (b) => `Signed out everywhere.${ended(b.sessions_ended)}`,
                )
              }
            >
              Yes, sign out everywhere
            </button>{' '}
            <button type="button" className="secondary small" onClick={() => setConfirming(null)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="button" className="secondary" onClick={() => setConfirming('sign-out')}>
            Sign out everywhere
          </button>
        )}
      </div>

      <h2>Identities</h2>
      {detail.identities.length === 0 ? (
        <p className="muted">No provider account linked (signs in with {u.provider}).</p>
      ) : (
        <ul aria-label="Identities">
          {detail.identities.map((i) => (
            <li key={i.provider + i.created_at}>
              {i.provider}
              {i.email ? ` (${i.email})` : ''}, linked {when(i.created_at)}
            </li>
          ))}
        </ul>
      )}

      <h2>MFA factors</h2>
      {detail.mfa_factors.length === 0 ? <p className="muted">No MFA factor enrolled.</p> : null}
      {detail.mfa_factors.length > 0 ? (
        <TableBox caption="MFA factors">
          <thead>
            <tr>
              <th scope="col">Factor</th>
              <th scope="col">Set up</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {detail.mfa_factors.map((f) => (
              <tr key={f.kind}>
                <td>
                  {FACTOR_NAMES[f.kind]}
                  {f.remaining !== null ? ` (${f.remaining} unused)` : ''}
                </td>
                <td>{when(f.created_at)}</td>
                <td>
                  {confirming === `factor:${f.kind}` ? (
                    <span role="group" aria-label={`Remove ${FACTOR_NAMES[f.kind]}?`}>
                      {f.kind === 'backup_codes'
                        ? 'Their unused backup codes stop working'
                        : 'They can no longer use it to sign in (and their backup codes stop working if no other factor remains)'}
                      ; unless the project's MFA policy is off, every session of the user ends. They are told by email when that notification is on.{' '}
                      <button
                        type="button"
                        className="danger small"
                        onClick={() =>
                          act(
                            () => api.users.removeMfaFactor({ params: { ...params, factor: f.kind } }),
                            (b) => `${FACTOR_NAMES[f.kind]} removed.${ended(b.sessions_ended)}`,
                          )
                        }
                      >
                        Yes, remove
                      </button>{' '}
                      <button type="button" className="secondary small" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </span>
                  ) : (
                    <button
                      type="button"
                      className="secondary small"
                      aria-label={`Remove ${FACTOR_NAMES[f.kind]}`}
                      onClick={() => setConfirming(`factor:${f.kind}`)}
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

      <UserPasskeys
        projectId={props.projectId}
        userId={props.userId}
        confirming={confirming}
        setConfirming={setConfirming}
        onDone={(done) => {
          setError(null);
          setNotice(done);
        }}
        onError={setError}
      />

      <h2>Sessions</h2>
      {detail.sessions.length === 0 ? <p className="muted">No live session.</p> : null}
      {detail.sessions.length > 0 ? (
        <TableBox caption="Live sessions, most recently used first">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Last used</th>
              <th scope="col">IP</th>
              <th scope="col">User agent</th>
              <th scope="col">Provider</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {detail.sessions.map((s) => (
              <tr key={s.id}>
                <td>{when(s.created_at)}</td>
                <td>{when(s.last_used_at)}</td>
                <td>{s.ip ?? 'unknown'}</td>
                <td>{s.user_agent ?? 'unknown'}</td>
                <td>{s.provider}</td>
                <td>
                  <button
                    type="button"
                    className="secondary small"
                    aria-label={`End the session started ${when(s.created_at)}`}
                    onClick={() =>
                      act(
                        () => api.users.endSession({ params: { ...params, sessionId: s.id } }),
                        () => 'Session ended.',
                      )
                    }
                  >
                    End
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}

      <h2>Subscription</h2>
      {detail.subscription ? (
        <p>
          {detail.subscription.plan.name} ({detail.subscription.price.name}), {detail.subscription.status.replace('_', ' ')}; the period ends{' '}
          {when(detail.subscription.current_period_end)}
          {detail.subscription.cancel_at_period_end ? ', and the subscription with it' : ''}.
        </p>
      ) : (
        <p className="muted">No live subscription.</p>
      )}

      <SubjectUsage projectId={props.projectId} subjectType="user" subjectId={props.userId} />
    </section>
  );
}
