import { useEffect, useState, type FormEvent } from 'react';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Link, Loading, PageTitle, ProjectNav, TableBox, useLoad, when } from '../../ui';
import { SubjectUsage } from '../usage/subject-usage';
import { OrganizationBilling } from './billing';
import { Confirm, formatJson, type Member, OrganizationTabs, type Role, roleName } from './shared';

type Answer = { status: number; body: unknown };

/**
 * One organization: its facts, its billing (subscription, seats, invoices), its usage and credits, its metadata, its members (a role
 * selector and Remove each), the "Add member" form, its invitations (Revoke while pending) and its domains.
 */
export function OrganizationPage(props: { projectId: string; orgId: string }) {
  const [notice, setNotice] = useState<string | null>(null);
  const params = { projectId: props.projectId, orgId: props.orgId };

  const {
    data: detail,
    error,
    setError,
    reload: load,
  } = useLoad(
    () => api.organizations.get({ params: { projectId: props.projectId, orgId: props.orgId } }),
    (body) => body,
    [props.projectId, props.orgId],
  );
  // The project's roles (for the selectors) and its default member limit.
  const { data: shared } = useLoad(
    () => api.organizations.settings({ params: { projectId: props.projectId } }),
    (body) => body,
    [props.projectId],
  );
  const roles = shared?.roles ?? null;

  /** Runs an action; says what it did, or shows the API's message. Answers whether it succeeded. */
  const act = async <R extends Answer>(run: () => Promise<R>, done: (body: Extract<R, { status: 200 }>['body']) => string): Promise<boolean> => {
    const r = await run().catch(() => null);
    if (r?.status !== 200) {
      setNotice(null);
      setError(r ? errorMessage(r.body) : UNREACHABLE);
      return false;
    }
    setError(null);
    setNotice(done((r as Extract<R, { status: 200 }>).body));
    await load();
    return true;
  };

  const back = <Link to={`/projects/${props.projectId}/organizations`}>← Organizations</Link>;
  if (!detail) {
    return (
      <section>
        <ProjectNav projectId={props.projectId} current="organizations" />
        {back}
        <PageTitle>Organization</PageTitle>
        <ErrorNote message={error} onRetry={load} />
        {error ? null : <Loading what="the organization" />}
      </section>
    );
  }
  const o = detail.organization;
  const who = (m: Member) => m.email ?? m.name ?? m.user_id;
  return (
    <section>
      <ProjectNav projectId={props.projectId} current="organizations" />
      <OrganizationTabs projectId={props.projectId} current="list" />
      {back}
      <PageTitle>{o.name}</PageTitle>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={error} />
      <dl className="facts">
        <dt>Slug</dt>
        <dd>
          <code>{o.slug}</code>
        </dd>
        <dt>Id</dt>
        <dd>
          <code>{o.id}</code>
        </dd>
        <dt>Members</dt>
        <dd>{o.members_count}</dd>
        <dt>Member limit</dt>
        <dd data-testid="member-limit">
          {o.max_members !== null ? o.max_members : `${shared ? `${shared.settings.default_member_limit} ` : ''}(the project's default)`}
        </dd>
        <dt>MFA required</dt>
        <dd>{o.require_mfa ? 'yes: members need a second factor to activate it' : 'no'}</dd>
        <dt>Created</dt>
        <dd>{when(o.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{when(o.updated_at)}</dd>
      </dl>

      <OrganizationBilling projectId={props.projectId} orgId={props.orgId} version={detail} />

      <SubjectUsage projectId={props.projectId} subjectType="organization" subjectId={props.orgId} />

      <h2>Metadata</h2>
      <div>
        <section aria-labelledby="public-metadata">
          <h3 id="public-metadata">Public metadata</h3>
          <p className="small muted">Members see it, and it is in the verify answer.</p>
          <pre className="json" data-testid="public-metadata">
            {formatJson(o.public_metadata)}
          </pre>
        </section>
        <section aria-labelledby="private-metadata">
          <h3 id="private-metadata">Private metadata</h3>
          <p className="small muted">Only the project server and this console see it.</p>
          <pre className="json" data-testid="private-metadata">
            {formatJson(o.private_metadata)}
          </pre>
        </section>
      </div>

      <h2 id="members">Members</h2>
      {detail.members.length === 0 ? <p className="muted">No members.</p> : null}
      {detail.members.length > 0 ? (
        <TableBox caption="Members, oldest first">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {detail.members.map((m) => (
              <tr key={m.user_id}>
                <td>{m.email ?? <span className="muted">(no email)</span>}</td>
                <td>{m.name ?? ''}</td>
                <td>
                  <MemberRole
                    member={m}
                    label={`Role of ${who(m)}`}
                    roles={roles}
                    change={(role) =>
                      act(
                        () => api.organizations.setRole({ params: { ...params, userId: m.user_id }, body: { role } }),
                        (b) => `${who(m)} is now ${roleName(roles, b.role)}.`,
                      )
                    }
                  />
                </td>
                <td>{when(m.joined_at)}</td>
                <td>
                  <Confirm
                    label={`Remove ${who(m)}`}
                    question="They no longer belong to this organization."
                    yes="Yes, remove"
                    onYes={() =>
                      void act(
                        () => api.organizations.removeMember({ params: { ...params, userId: m.user_id } }),
                        () => `${who(m)} removed.`,
                      )
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      {detail.members.length < o.members_count ? (
        <p className="small muted">
          The first {detail.members.length} of {o.members_count} members.
        </p>
      ) : null}
      <AddMember
        projectId={props.projectId}
        orgId={props.orgId}
        roles={roles}
        onAdded={async (done) => {
          setError(null);
          setNotice(done);
          await load();
        }}
      />

      <h2>Invitations</h2>
      {detail.invitations.length === 0 ? <p className="muted">No invitations.</p> : null}
      {detail.invitations.length > 0 ? (
        <TableBox caption="Invitations, newest first">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Expires</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {detail.invitations.map((i) => (
              <tr key={i.id}>
                <td>{i.email}</td>
                <td>{roleName(roles, i.role)}</td>
                <td>
                  <span className={i.status === 'pending' ? 'badge' : 'badge off'}>{i.status}</span>
                </td>
                <td>{when(i.expires_at)}</td>
                <td>
                  {i.status === 'pending' ? (
                    <Confirm
                      label={`Revoke the invitation of ${i.email}`}
                      question="Its link will stop working."
                      yes="Yes, revoke"
                      onYes={() =>
                        void act(
                          () => api.organizations.revokeInvitation({ params: { ...params, invitationId: i.id } }),
                          () => `The invitation of ${i.email} is revoked.`,
                        )
                      }
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}

      <h2>Domains</h2>
      {detail.domains.length === 0 ? <p className="muted">No domains.</p> : null}
      {detail.domains.length > 0 ? (
        <TableBox caption="Domains">
          <thead>
            <tr>
              <th scope="col">Domain</th>
              <th scope="col">Verified</th>
              <th scope="col">Enrollment</th>
              <th scope="col">Default role</th>
            </tr>
          </thead>
          <tbody>
            {detail.domains.map((d) => (
              <tr key={d.id}>
                <td>{d.domain}</td>
                <td>{d.verified ? `yes, ${when(d.verified_at)}` : <span className="badge off">not verified</span>}</td>
                <td>{d.enrollment}</td>
                <td>{roleName(roles, d.default_role)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </section>
  );
}

/** A member's role as a selector: choosing another one changes it at once (back to the role held when refused). */
function MemberRole(props: { member: Member; label: string; roles: Role[] | null; change: (role: string) => Promise<boolean> }) {
  const held = props.member.role;
  const [value, setValue] = useState(held);
  const [busy, setBusy] = useState(false);
  useEffect(() => setValue(held), [held]);
  const keys = props.roles?.map((r) => r.key) ?? [];
  // A role the project has since deleted still shows as held.
  const options = keys.includes(held) ? (props.roles ?? []) : [{ key: held, name: held }, ...(props.roles ?? [])];
  return (
    <select
      aria-label={props.label}
      value={value}
      disabled={busy || !props.roles}
      onChange={async (e) => {
        const role = e.target.value;
        setValue(role);
        setBusy(true);
        const ok = await props.change(role);
        setBusy(false);
        if (!ok) setValue(held);
      }}
    >
      {options.map((r) => (
        <option key={r.key} value={r.key}>
          {r.name}
        </option>
      ))}
    </select>
  );
}

/** Adds an end user of the project, found by email, with a role. */
function AddMember(props: { projectId: string; orgId: string; roles: Role[] | null; onAdded: (done: string) => Promise<void> }) {
  const [formError, setFormError] = useState<string | null>(null);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const email = String(data.get('email') ?? '').trim();
    const role = String(data.get('role') ?? 'member');
    if (!email) return setFormError("Enter the email address of one of the project's users.");
    const r = await api.organizations.addMember({ params: { projectId: props.projectId, orgId: props.orgId }, body: { email, role } }).catch(() => null);
    if (r?.status !== 201) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    setFormError(null);
    form.reset();
    await props.onAdded(`${r.body.email ?? email} added as ${roleName(props.roles, r.body.role)}.`);
  };
  return (
    <form onSubmit={submit} noValidate className="panel" aria-labelledby="add-member-title">
      <h3 id="add-member-title">Add member</h3>
      <p className="muted small">An end user of this project, by the email address they sign in with; no invitation is sent.</p>
      <div className="grid">
        <div>
          <label htmlFor="add-member-email">Email</label>
          <input id="add-member-email" name="email" type="email" autoComplete="off" maxLength={320} />
        </div>
        <div>
          <label htmlFor="add-member-role">Role</label>
          <select id="add-member-role" name="role" defaultValue="member" key={props.roles ? 'roles' : 'none'}>
            {(props.roles ?? [{ key: 'member', name: 'Member' }]).map((r) => (
              <option key={r.key} value={r.key}>
                {r.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorNote message={formError} />
      <button type="submit">Add member</button>
    </form>
  );
}
