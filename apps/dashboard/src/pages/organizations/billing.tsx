import type { z } from 'zod';
import type { AdminOrganizationBillingSchema } from '../../../../../contract/admin';
import { api } from '../../api';
import { ErrorNote, Link, Loading, TableBox, useLoad, when } from '../../ui';
import { day, invoiceReason, money, type Price, priceAmount, seatCount } from '../billing/format';

/**
 * An organization's billing on its page: the live subscription (plan, price with its per-seat
 * terms, status, the seats billed, the next invoice), the seats used and billed, the latest
 * invoices with their seat lines, and a link to the members the seats follow. `version` changes
 * when the page reloads the organization (a member added or removed), so the seats are read again.
 */
export function OrganizationBilling(props: { projectId: string; orgId: string; version: unknown }) {
  const { data, error, reload } = useLoad(
    () => api.organizations.billing({ params: { projectId: props.projectId, orgId: props.orgId } }),
    (body) => body,
    [props.projectId, props.orgId, props.version],
  );
  // The catalog, for the terms of a per-seat price (the subscription names only the price).
  const { data: prices } = useLoad(
    () => api.billing.listPlans({ params: { projectId: props.projectId } }),
    (body) => new Map<string, Price>(body.plans.flatMap((p) => p.prices.map((price) => [price.id, price] as const))),
    [props.projectId],
  );

  return (
    <section aria-labelledby="org-billing">
      <h2 id="org-billing">Billing</h2>
      <ErrorNote message={error} onRetry={reload} />
      {data === null && !error ? <Loading what="the billing" /> : null}
      {data ? <Subscription billing={data} price={data.subscription ? (prices?.get(data.subscription.price.id) ?? null) : null} /> : null}
      {data ? (
        <p className="small">
          <a href="#members">Members ({data.members_count})</a> · <Link to={`/projects/${props.projectId}/billing`}>The project's billing</Link>
        </p>
      ) : null}
      {data ? <Invoices invoices={data.invoices} /> : null}
    </section>
  );
}

type Billing = z.infer<typeof AdminOrganizationBillingSchema>;

function Subscription(props: { billing: Billing; price: Price | null }) {
  const { subscription: s, seats } = props.billing;
  if (s === null) return <p className="muted">No subscription.</p>;
  // Per seat: the catalog says so, or seats are counted, or more than one is billed.
  const perSeat = props.price?.seats != null || seats !== null || s.quantity !== 1;
  // The subscription's amount is the price's for the seats billed; the catalog's terms explain it.
  const terms = props.price?.seats ? ` (${priceAmount(props.price)})` : '';
  return (
    <dl className="facts" data-testid="org-subscription">
      <dt>Plan</dt>
      <dd>{s.plan.name}</dd>
      <dt>Price</dt>
      <dd>
        {money(s.price.amount, s.price.currency)} / {s.price.interval}
        {perSeat ? ` for ${seatCount(s.quantity)}` : ''}
        {terms} · {s.price.name}
      </dd>
      <dt>Status</dt>
      <dd>
        {s.status}
        {s.cancel_at_period_end ? ' (cancels at period end)' : ''}
      </dd>
      {perSeat ? (
        <>
          <dt>Quantity</dt>
          <dd data-testid="org-quantity">{seatCount(s.quantity)}</dd>
        </>
      ) : null}
      {seats ? (
        <>
          <dt>Seats used</dt>
          <dd data-testid="org-seats">
            {seats.used} of {seats.total}
          </dd>
        </>
      ) : null}
      <dt>Next invoice</dt>
      <dd data-testid="org-next-invoice">
        {s.next_invoice ? `${money(s.next_invoice.amount, s.next_invoice.currency)} on ${day(s.next_invoice.date)}` : 'none'}
      </dd>
      <dt>Period ends</dt>
      <dd>{when(s.current_period_end)}</dd>
    </dl>
  );
}

function Invoices(props: { invoices: Billing['invoices'] }) {
  if (props.invoices.length === 0) return <p className="muted">No invoices.</p>;
  return (
    <TableBox caption="Invoices of the organization, newest first">
      <thead>
        <tr>
          <th scope="col">Date</th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Amount</th>
          <th scope="col">Seats</th>
        </tr>
      </thead>
      <tbody>
        {props.invoices.map((i) => {
          const seatLines = i.lines.filter((l) => l.quantity !== null);
          return (
            <tr key={i.id}>
              <td>{when(i.created_at)}</td>
              <td>{i.status}</td>
              <td>{invoiceReason(i.reason)}</td>
              <td>{money(i.amount_due, i.currency)}</td>
              <td>
                {seatLines.length === 0 ? (
                  <span className="muted">—</span>
                ) : (
                  <ul className="plain">
                    {seatLines.map((l, n) => (
                      <li key={n} title={l.description}>
                        {seatCount(l.quantity!)}: {money(l.amount, i.currency)}
                        {l.proration ? ' (prorated)' : ''}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </TableBox>
  );
}
