import { useState, type FormEvent } from 'react';
import { ListUsersQuerySchema } from '../../../../contract/admin';
import { api } from '../api';
import { ErrorNote, Link, LoadMore, Loading, PageTitle, ProjectNav, when, usePages, TableBox } from '../ui';

export { UserPage } from './users/detail';

/** The Users page: search by email, newest first, "Load more" with the API's cursor. */
export function UsersPage(props: { projectId: string }) {
  const [search, setSearch] = useState('');
  // The query is checked with the API's own schema before it is sent; its message is the page's error.
  const users = usePages(
    (cursor): Promise<Awaited<ReturnType<typeof api.users.list>> | { status: 400; body: { error: string } }> => {
      const parsed = ListUsersQuerySchema.safeParse({ ...(search ? { search } : {}), ...(cursor ? { cursor } : {}) });
      return parsed.success
        ? api.users.list({ params: { projectId: props.projectId }, query: parsed.data })
        : Promise.resolve({ status: 400 as const, body: { error: parsed.error.issues[0]!.message } });
    },
    (b) => ({ rows: b.users, next: b.next_cursor }),
    [props.projectId, search],
  );

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const text = String(new FormData(e.currentTarget).get('search') ?? '').trim();
    if (text === search) void users.reload();
    else setSearch(text);
  };

  return (
    <section>
      <ProjectNav projectId={props.projectId} current="users" />
      <PageTitle>Users</PageTitle>
      <form onSubmit={submit} role="search" className="panel" noValidate>
        <label htmlFor="user-search">Search by email</label>
        <input id="user-search" name="search" type="search" maxLength={320} placeholder="part of an address, e.g. @example.com" />
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={users.error} onRetry={users.reload} />
      {users.rows === null && !users.error ? <Loading what="users" /> : null}
      {users.rows && users.rows.length === 0 ? (
        <p className="muted">{search ? `No user's email contains “${search}”.` : 'This project has no users yet.'}</p>
      ) : null}
      {users.rows && users.rows.length > 0 ? (
        <TableBox caption="Users, newest first">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Provider</th>
              <th scope="col">Verified</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {users.rows.map((u) => (
              <tr key={u.id}>
                <td>
                  <Link to={`/projects/${props.projectId}/users/${u.id}`}>{u.email ?? '(no email)'}</Link>
                </td>
                <td>{u.name ?? ''}</td>
                <td>{u.provider}</td>
                <td>{u.email_verified ? 'yes' : 'no'}</td>
                <td>{u.disabled ? <span className="badge off">disabled</span> : <span className="badge on">active</span>}</td>
                <td>{when(u.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={users} what="users" />
    </section>
  );
}
