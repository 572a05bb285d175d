import { useState, type FormEvent } from 'react';
import type { z } from 'zod';
import { InviteMemberBodySchema, type ConsoleAccountListItemSchema } from '../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, ShownOnce, when, type Me, useLoad, TableBox } from '../ui';
import { TokenLinkPage } from './session';

interface Member {
  account_id: string;
  email: string;
  role: 'operator' | 'member';
  since: string;
}
interface Invitation {
  id: string;
  email: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
}

/** Two-step removal: the button, then "Yes, …" and Cancel, announced as a group. */
function Confirm(props: { label: string; question: string; yes: string; onYes: () => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="secondary small" aria-label={props.label} onClick={() => setAsking(true)}>
        {props.yes.replace(/^Yes, /, '').replace(/^./, (c) => c.toUpperCase())}
      </button>
    );
  return (
    <span role="group" aria-label={`${props.label}?`}>
      {props.question}{' '}
      <button
        type="button"
        className="danger small"
        onClick={() => {
          setAsking(false);
          props.onYes();
        }}
      >
        {props.yes}
      </button>{' '}
      <button type="button" className="secondary small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A project's members (and the operators, who see every project), its pending invitations, and the invite form. */
export function MembersPage(props: { projectId: string; me: Me }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);

  const {
    data,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.members.list({ params: { projectId: props.projectId } }),
    (body) => body,
    [props.projectId],
  );

  const invite = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const parsed = InviteMemberBodySchema.safeParse({ email: String(new FormData(form).get('email') ?? '') });
    setSent(null);
    if (!parsed.success) return setFormError(parsed.error.issues[0]!.message);
    setFormError(null);
    const r = await api.members.invite({ params: { projectId: props.projectId }, body: parsed.data }).catch(() => null);
    if (r?.status !== 201) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    form.reset();
    setSent(`Invitation sent to ${r.body.invitation.email}. The link works once, for 7 days.`);
    void load();
  };

  const remove = async (m: Member) => {
    const r = await api.members.remove({ params: { projectId: props.projectId, accountId: m.account_id } }).catch(() => null);
    if (r?.status !== 200) return setError(r ? errorMessage(r.body) : UNREACHABLE);
    if (m.account_id === props.me.id) window.location.assign('/dashboard/');
    else void load();
  };
  const revoke = async (i: Invitation) => {
    const r = await api.members.revokeInvitation({ params: { projectId: props.projectId, invitationId: i.id } }).catch(() => null);
    if (r?.status !== 200) setError(r ? errorMessage(r.body) : UNREACHABLE);
    void load();
  };

  const members = data?.members.filter((m) => m.role === 'member') ?? [];
  const operators = data?.members.filter((m) => m.role === 'operator') ?? [];
  return (
    <section>
      <ProjectNav projectId={props.projectId} current="members" />
      <PageTitle>Members</PageTitle>
      <ErrorNote message={error} onRetry={load} />
      {data === null && !error ? <Loading what="members" /> : null}
      {data ? (
        <>
          <h2>Who sees this project</h2>
          {members.length === 0 ? <p className="muted">No members yet: only operators see this project.</p> : null}
          <TableBox caption="Members">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {[...members, ...operators].map((m) => (
                <tr key={m.account_id}>
                  <td>
                    {m.email}
                    {m.account_id === props.me.id ? <span className="muted"> (you)</span> : null}
                  </td>
                  <td>
                    <span className="badge">{m.role}</span>
                  </td>
                  <td>{when(m.since)}</td>
                  <td>
                    {m.role === 'member' ? (
                      <Confirm
                        label={m.account_id === props.me.id ? 'Leave this project' : `Remove ${m.email}`}
                        question={m.account_id === props.me.id ? 'You will no longer see this project.' : 'They will no longer see this project.'}
                        yes={m.account_id === props.me.id ? 'Yes, leave' : 'Yes, remove'}
                        onYes={() => void remove(m)}
                      />
                    ) : (
                      <span className="muted">sees every project</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableBox>
          <h2>Pending invitations</h2>
          {data.invitations.length === 0 ? (
            <p className="muted">No pending invitations.</p>
          ) : (
            <TableBox caption="Pending invitations">
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Invited by</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {data.invitations.map((i) => (
                  <tr key={i.id}>
                    <td>{i.email}</td>
                    <td>{i.invited_by ?? <span className="muted">a removed account</span>}</td>
                    <td>{new Date(i.expires_at).getTime() <= Date.now() ? <span className="badge off">expired</span> : when(i.expires_at)}</td>
                    <td>
                      <Confirm
                        label={`Revoke the invitation of ${i.email}`}
                        question="Its link will stop working."
                        yes="Yes, revoke"
                        onYes={() => void revoke(i)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </TableBox>
          )}
        </>
      ) : null}
      <form onSubmit={invite} noValidate className="panel" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite a member</h2>
        <p className="muted">
          They receive an email with a link that works once, for 7 days, and then see this project only. Inviting the same address again replaces the pending
          invitation.
        </p>
        <label htmlFor="invite-email">Email</label>
        <input id="invite-email" name="email" type="email" autoComplete="off" maxLength={320} />
        <ErrorNote message={formError} />
        {sent ? <p role="status">{sent}</p> : null}
        <button type="submit">Send invitation</button>
      </form>
    </section>
  );
}

type AccountRow = z.infer<typeof ConsoleAccountListItemSchema>;

/** Every console account of the deployment (operators only), and a one-time sign-in link for one, shown once. */
export function AccountsPage() {
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const {
    data: accounts,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.members.listAccounts(),
    (body) => body.accounts,
    [],
  );
  const makeLink = async (a: AccountRow) => {
    const r = await api.members.accountSignInLink({ params: { accountId: a.id } }).catch(() => null);
    if (r?.status === 201) setLink({ email: a.email, url: r.body.url });
    else setError(r ? errorMessage(r.body) : UNREACHABLE);
  };
  return (
    <section>
      <PageTitle>Accounts</PageTitle>
      <p className="muted">
        Every console account of this deployment. A sign-in link works once, within an hour (as <code>npm run tollgate -- admin link --email …</code> makes in
        the Tollgate folder).
      </p>
      {link ? <ShownOnce title={`Sign-in link for ${link.email}`} value={link.url} onDone={() => setLink(null)} /> : null}
      <ErrorNote message={error} onRetry={load} />
      {accounts === null && !error ? <Loading what="accounts" /> : null}
      {accounts ? (
        <TableBox caption="Console accounts">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Projects</th>
              <th scope="col">Two-step sign-in</th>
              <th scope="col">Created</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((a) => (
              <tr key={a.id}>
                <td>{a.email}</td>
                <td>
                  <span className="badge">{a.role}</span>
                </td>
                <td>
                  {a.role === 'operator' ? (
                    <span className="muted">every project</span>
                  ) : (
                    a.projects.map((p) => p.name).join(', ') || <span className="muted">none</span>
                  )}
                </td>
                <td>{a.totp_enabled ? <span className="badge">authenticator app</span> : <span className="muted">off</span>}</td>
                <td>{when(a.created_at)}</td>
                <td>
                  <button type="button" className="secondary small" aria-label={`Make a sign-in link for ${a.email}`} onClick={() => void makeLink(a)}>
                    Sign-in link
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </section>
  );
}

/** The invitation link's landing page (see TokenLinkPage). */
export function InvitationPage(props: { onSignedIn: (account: Me, csrf: string) => void }) {
  return (
    <TokenLinkPage
      title="Accepting the invitation"
      what="your invitation"
      noToken="This invitation link has no token."
      redeem={(token, code) => api.members.acceptInvitation({ body: { token, code } })}
      onSignedIn={props.onSignedIn}
    />
  );
}
