import { Link } from '../../ui';

/** The two views of a project's billing: plans, subscriptions and invoices; and the meters of usage-based billing. */
export function BillingTabs(props: { projectId: string; current: 'billing' | 'meters' }) {
  const base = `/projects/${props.projectId}`;
  return (
    <nav aria-label="Billing" className="tabs">
      <Link to={`${base}/billing`} current={props.current === 'billing'}>
        Plans &amp; subscriptions
      </Link>
      <Link to={`${base}/meters`} current={props.current === 'meters'}>
        Meters &amp; usage
      </Link>
    </nav>
  );
}
