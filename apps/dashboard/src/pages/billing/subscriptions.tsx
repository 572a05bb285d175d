import { api } from '../../api';
import { ErrorNote, LoadMore, Loading, TableBox, usePages, when } from '../../ui';
import { money, type Plan, seatCount } from './format';
import { OwnerLink } from './user-link';

/**
 * The project's subscriptions, newest first; a per-seat one (its price per seat in the catalog, or
 * more than one seat billed) shows the seats billed.
 */
export function SubscriptionsList(props: { projectId: string; plans: Plan[] | null }) {
  const perSeat = new Set((props.plans ?? []).flatMap((p) => p.prices.filter((price) => price.seats !== null).map((price) => price.id)));
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
                  {perSeat.has(s.price.id) || s.quantity !== 1 ? <span data-testid="quantity"> · {seatCount(s.quantity)}</span> : null}
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
