import { useState, type FormEvent } from 'react';
import { OrganizationSettingsSchema } from '../../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Loading, PageTitle, ProjectNav, TableBox, useLoad } from '../../ui';
import { Confirm, OrganizationTabs, type OrganizationSettings, parsePermissions, type Role } from './shared';

type Loaded = { settings: OrganizationSettings; roles: Role[] };

/** The project's organization settings and its roles-and-permissions editor. */
export function OrganizationSettingsPage(props: { projectId: string }) {
  const projectId = props.projectId;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const { data, setData, error, reload } = useLoad(
    () => api.organizations.settings({ params: { projectId } }),
    (body) => body,
    [projectId],
  );

  /** Sends a change; on success keeps the answer and says what changed, else answers the API's message. */
  const change = async <R extends { status: number; body: unknown }>(
    run: () => Promise<R>,
    next: (body: Extract<R, { status: 200 }>['body'], before: Loaded) => Loaded,
    done: string,
  ): Promise<string | null> => {
    const r = await run().catch(() => null);
    if (r?.status !== 200) {
      setNotice(null);
      return r ? errorMessage(r.body) : UNREACHABLE;
    }
    setData((before) => (before ? next((r as Extract<R, { status: 200 }>).body, before) : before));
    setNotice(done);
    return null;
  };
  const withRoles = (body: { roles: Role[] }, before: Loaded): Loaded => ({ ...before, roles: body.roles });

  if (!data) {
    return (
      <section>
        <ProjectNav projectId={projectId} current="organizations" />
        <PageTitle>Roles &amp; settings</PageTitle>
        <OrganizationTabs projectId={projectId} current="roles" />
        <ErrorNote message={error} onRetry={reload} />
        {error ? null : <Loading what="the organization settings" />}
      </section>
    );
  }
  const editedRole = data.roles.find((r) => r.key === editing && r.key !== 'owner');
  return (
    <section>
      <ProjectNav projectId={projectId} current="organizations" />
      <PageTitle>Roles &amp; settings</PageTitle>
      <OrganizationTabs projectId={projectId} current="roles" />
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <Settings
        settings={data.settings}
        save={(body, done) =>
          change(
            () => api.organizations.updateSettings({ params: { projectId }, body }),
            (b) => b,
            done,
          )
        }
      />
      <RolesTable
        roles={data.roles}
        onEdit={(key) => setEditing(key)}
        remove={(role) => change(() => api.organizations.deleteRole({ params: { projectId, roleKey: role.key } }), withRoles, `Role ${role.name} deleted.`)}
      />
      {editedRole ? (
        <RoleForm
          key={editedRole.key}
          role={editedRole}
          onCancel={() => setEditing(null)}
          save={async (key, body) => {
            const failed = await change(() => api.organizations.putRole({ params: { projectId, roleKey: key }, body }), withRoles, `Role ${body.name} saved.`);
            if (!failed) setEditing(null);
            return failed;
          }}
        />
      ) : null}
      <RoleForm
        save={(key, body) =>
          change(() => api.organizations.putRole({ params: { projectId, roleKey: key }, body }), withRoles, `Role ${body.name} (${key}) added.`)
        }
      />
    </section>
  );
}

type SaveSettings = (body: Partial<OrganizationSettings>, done: string) => Promise<string | null>;

function Settings(props: { settings: OrganizationSettings; save: SaveSettings }) {
  const s = props.settings;
  const [error, setError] = useState<string | null>(null);
  const limit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const raw = String(new FormData(e.currentTarget).get('default_member_limit') ?? '').trim();
    const parsed = OrganizationSettingsSchema.partial().safeParse({ default_member_limit: raw === '' ? undefined : Number(raw) });
    if (!parsed.success || parsed.data.default_member_limit === undefined) return setError('The default member limit is a whole number from 1 to 100000.');
    setError(await props.save(parsed.data, `Default member limit: ${parsed.data.default_member_limit}.`));
  };
  const switches: Array<[keyof OrganizationSettings & ('allow_user_creation' | 'required'), string, string]> = [
    ['allow_user_creation', 'Users may create organizations', 'An end user creates an organization from your app and becomes its owner.'],
    ['required', 'Organizations are required', 'Every user must belong to an organization: your app asks them to create or join one.'],
  ];
  return (
    <section className="panel" aria-labelledby="org-settings">
      <h2 id="org-settings">Settings</h2>
      {switches.map(([field, title, what]) => (
        <label className="switch" key={field}>
          <input
            type="checkbox"
            role="switch"
            checked={s[field]}
            aria-describedby={`org-setting-${field}`}
            onChange={async () => setError(await props.save({ [field]: !s[field] }, `${title}: ${s[field] ? 'off' : 'on'}.`))}
          />
          <span>
            <strong>{title}</strong>{' '}
            <span id={`org-setting-${field}`} className="muted">
              {what}
            </span>
          </span>
        </label>
      ))}
      <form onSubmit={limit} noValidate className="inline">
        <label htmlFor="default-member-limit">Default member limit (for organizations without a limit of their own)</label>
        <input
          id="default-member-limit"
          name="default_member_limit"
          type="number"
          min={1}
          max={100000}
          defaultValue={s.default_member_limit}
          key={s.default_member_limit}
        />
        <button type="submit">Save member limit</button>
      </form>
      <ErrorNote message={error} />
    </section>
  );
}

function RolesTable(props: { roles: Role[]; onEdit: (key: string) => void; remove: (role: Role) => Promise<string | null> }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="org-roles">
      <h2 id="org-roles">Roles</h2>
      <p className="muted">
        A member holds one role; a role is a set of permissions. The <code>org:</code> permissions are Tollgate's own (<code>org:settings:manage</code>,{' '}
        <code>org:members:manage</code>, <code>org:billing:manage</code>, <code>org:delete</code>); your app checks its own, such as <code>reports:read</code>.
        The owner holds every permission and cannot be changed.
      </p>
      <ErrorNote message={error} />
      <TableBox caption="Roles">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Permissions</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {props.roles.map((r) => (
            <tr key={r.key}>
              <td>
                <code>{r.key}</code>
                {r.built_in ? null : (
                  <>
                    {' '}
                    <span className="badge">custom</span>
                  </>
                )}
              </td>
              <td>{r.name}</td>
              <td>{r.description}</td>
              <td>
                {r.key === 'owner' ? <span className="muted">every permission: </span> : null}
                {r.permissions.length === 0 ? <span className="muted">none</span> : null}
                {r.permissions.map((p, i) => (
                  <span key={p}>
                    {i > 0 ? ', ' : ''}
                    <code>{p}</code>
                  </span>
                ))}
              </td>
              <td>
                {r.key === 'owner' ? (
                  <span className="muted">read-only</span>
                ) : (
                  <span className="actions">
                    <button type="button" className="secondary small" aria-label={`Edit role ${r.key}`} onClick={() => props.onEdit(r.key)}>
                      Edit
                    </button>
                    {r.built_in ? null : (
                      <Confirm
                        label={`Delete role ${r.key}`}
                        question="Only a role no member holds can be deleted."
                        yes="Yes, delete"
                        onYes={async () => setError(await props.remove(r))}
                      />
                    )}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </TableBox>
    </section>
  );
}

type RoleBody = { name: string; description: string; permissions: string[] };

/** Edits a role (`role` given) or adds a custom one: key, name, description, permissions separated by commas or new lines. */
function RoleForm(props: { role?: Role; save: (key: string, body: RoleBody) => Promise<string | null>; onCancel?: () => void }) {
  const r = props.role;
  const [error, setError] = useState<string | null>(null);
  const prefix = r ? 'edit-role' : 'new-role';
  const title = r ? `Edit role ${r.key}` : 'Add a custom role';
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const key = r ? r.key : String(data.get('key') ?? '').trim();
    const name = String(data.get('name') ?? '').trim();
    if (!key) return setError('Enter a key: a-z, 0-9, _ and -, starting with a letter.');
    if (!name) return setError('Enter a name.');
    const failed = await props.save(key, {
      name,
      description: String(data.get('description') ?? '').trim(),
      permissions: parsePermissions(String(data.get('permissions') ?? '')),
    });
    setError(failed);
    if (!failed && !r) form.reset();
  };
  return (
    <form onSubmit={submit} noValidate className="panel" aria-label={title}>
      <h3>{title}</h3>
      <div className="grid">
        {r ? null : (
          <div>
            <label htmlFor={`${prefix}-key`}>Key</label>
            <input id={`${prefix}-key`} name="key" maxLength={64} autoComplete="off" placeholder="billing-viewer" />
          </div>
        )}
        <div>
          <label htmlFor={`${prefix}-name`}>Name</label>
          <input id={`${prefix}-name`} name="name" maxLength={200} autoComplete="off" defaultValue={r?.name} />
        </div>
      </div>
      <label htmlFor={`${prefix}-description`}>Description</label>
      <input id={`${prefix}-description`} name="description" maxLength={1000} autoComplete="off" defaultValue={r?.description} />
      <label htmlFor={`${prefix}-permissions`}>Permissions (separated by commas or new lines)</label>
      <textarea
        id={`${prefix}-permissions`}
        name="permissions"
        rows={3}
        placeholder="org:members:manage, reports:read"
        defaultValue={r?.permissions.join('\n')}
      />
      <ErrorNote message={error} />
      <span className="actions">
        <button type="submit">{r ? 'Save role' : 'Add role'}</button>
        {props.onCancel ? (
          <button type="button" className="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </span>
    </form>
  );
}
