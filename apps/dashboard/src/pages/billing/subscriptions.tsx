import { api } from '../../api';
import { ErrorNote, LoadMore, Loading, TableBox, usePages, when } from '../../ui';
import { money } from './format';
import { OwnerLink } from './user-link';

export function SubscriptionsList(props: { projectId: string }) {
  const params = { projectId: props.projectId };
  const subs = usePages(
    (cursor) => api.billing.listSubscriptions({ params, query: cursor ? { cursor } : {} }),
    (b) => ({ rows: b.subscriptions, next: b.next_cursor }),
    [props.projectId],
  );
  return (
    <>
      <h2>Subscriptions</h2>
      <ErrorNote message={subs.error} onRetry={subs.reload} />
      {subs.rows === null && !subs.error ? <Loading what="subscriptions" /> : null}
      {subs.rows && subs.rows.length === 0 ? <p className="muted">No subscriptions yet.</p> : null}
      {subs.rows && subs.rows.length > 0 ? (
        <TableBox caption="Subscriptions">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Plan</th>
              <th scope="col">Price</th>
              <th scope="col">Status</th>
              <th scope="col">Period ends</th>
            </tr>
          </thead>
          <tbody>
            {subs.rows.map((s) => (
              <tr key={s.id}>
                <td>
                  <OwnerLink projectId={props.projectId} row={s} />
                </td>
                <td>{s.plan.name}</td>
                <td>
                  {money(s.price.amount, s.price.currency)} / {s.price.interval}
                </td>
                <td>
                  {s.status}
                  {s.cancel_at_period_end ? ' (cancels at period end)' : ''}
                </td>
                <td>{when(s.current_period_end)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={subs} what="subscriptions" />
    </>
  );
}
