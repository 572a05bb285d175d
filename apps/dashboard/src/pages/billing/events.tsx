import { api } from '../../api';
import { ErrorNote, Loading, TableBox, useLoad, when } from '../../ui';
import { money } from './format';

export function BillingEvents(props: { projectId: string }) {
  const params = { projectId: props.projectId };
  const events = useLoad(
    () => api.billing.listEvents({ params, query: {} }),
    (b) => b.events,
    [props.projectId],
  );
  return (
    <>
      <h2>Billing events</h2>
      <ErrorNote message={events.error} onRetry={events.reload} />
      {events.data === null && !events.error ? <Loading what="billing events" /> : null}
      {events.data && events.data.length === 0 ? <p className="muted">No billing events yet.</p> : null}
      {events.data && events.data.length > 0 ? (
        <TableBox caption="Billing events">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Subscription</th>
              <th scope="col">Amount</th>
            </tr>
          </thead>
          <tbody>
            {events.data.map((e) => (
              <tr key={e.id}>
                <td>{when(e.created_at)}</td>
                <td>{e.type}</td>
                <td>{e.subscription_id ? <code>{e.subscription_id}</code> : '—'}</td>
                <td>{e.amount !== null && e.currency ? money(e.amount, e.currency) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
    </>
  );
}
