import { Link } from '../../ui';

/** A row's user: the email (the id when the user has none), linking to the user's page. */
export function UserLink(props: { projectId: string; id: string; email: string | null }) {
  return <Link to={`/projects/${props.projectId}/users/${props.id}`}>{props.email ?? <code>{props.id}</code>}</Link>;
}
