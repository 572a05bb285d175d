import { useState, type FormEvent } from 'react';
import { api } from '../api';
import { ErrorNote, Link, LoadMore, Loading, PageTitle, ProjectNav, TableBox, usePages, when } from '../ui';
import { OrganizationTabs } from './organizations/shared';

export { OrganizationPage } from './organizations/detail';
export { OrganizationSettingsPage } from './organizations/roles';

/** Organizations a page at a time. */
const PAGE_SIZE = 25;

/** The project's organizations: search by name or slug, newest first, "Load more" with the API's cursor. */
export function OrganizationsPage(props: { projectId: string }) {
  const [search, setSearch] = useState('');
  const organizations = usePages(
    (cursor) =>
      api.organizations.list({
        params: { projectId: props.projectId },
        query: { limit: PAGE_SIZE, ...(search ? { search } : {}), ...(cursor ? { cursor } : {}) },
      }),
    (b) => ({ rows: b.organizations, next: b.next_cursor }),
    [props.projectId, search],
  );

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const text = String(new FormData(e.currentTarget).get('search') ?? '').trim();
    if (text === search) void organizations.reload();
    else setSearch(text);
  };

  return (
    <section>
      <ProjectNav projectId={props.projectId} current="organizations" />
      <PageTitle>Organizations</PageTitle>
      <OrganizationTabs projectId={props.projectId} current="list" />
      <form onSubmit={submit} role="search" className="panel" noValidate>
        <label htmlFor="organization-search">Search by name or slug</label>
        <input id="organization-search" name="search" type="search" maxLength={100} placeholder="part of a name or slug, e.g. acme" />
        <button type="submit">Search</button>
      </form>
      <ErrorNote message={organizations.error} onRetry={organizations.reload} />
      {organizations.rows === null && !organizations.error ? <Loading what="organizations" /> : null}
      {organizations.rows && organizations.rows.length === 0 ? (
        <p className="muted">{search ? `No organization's name or slug contains “${search}”.` : 'This project has no organizations yet.'}</p>
      ) : null}
      {organizations.rows && organizations.rows.length > 0 ? (
        <TableBox caption="Organizations, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Slug</th>
              <th scope="col">Members</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {organizations.rows.map((o) => (
              <tr key={o.id}>
                <td>
                  <Link to={`/projects/${props.projectId}/organizations/${o.id}`}>{o.name}</Link>
                </td>
                <td>
                  <code>{o.slug}</code>
                </td>
                <td>{o.members_count}</td>
                <td>{when(o.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={organizations} what="organizations" />
    </section>
  );
}
