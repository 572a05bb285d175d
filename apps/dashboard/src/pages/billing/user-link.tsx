import { Link } from '../../ui';

/** A row's user: the email (the id when the user has none), linking to the user's page. */
export function UserLink(props: { projectId: string; id: string; email: string | null }) {
  return <Link to={`/projects/${props.projectId}/users/${props.id}`}>{props.email ?? <code>{props.id}</code>}</Link>;
}

/**
 * Whose a subscription or invoice is: its user (as {@link UserLink}), or its organization by name,
 * linking to the organization's page (the id, unlinked, once the organization was deleted).
 */
export function OwnerLink(props: {
  projectId: string;
  row: { user_id: string | null; user_email: string | null; organization_id: string | null; organization_name: string | null };
}) {
  const { row } = props;
  if (row.user_id !== null) return <UserLink projectId={props.projectId} id={row.user_id} email={row.user_email} />;
  if (row.organization_name === null) return <code>{row.organization_id}</code>;
  return (
    <>
      Team <Link to={`/projects/${props.projectId}/organizations/${row.organization_id}`}>{row.organization_name}</Link>
    </>
  );
}
