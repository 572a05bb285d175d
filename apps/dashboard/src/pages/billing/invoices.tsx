import { api } from '../../api';
import { ErrorNote, LoadMore, Loading, TableBox, usePages, when } from '../../ui';
import { day, invoiceReason, money } from './format';
import { OwnerLink } from './user-link';

export function InvoicesList(props: { projectId: string }) {
  const params = { projectId: props.projectId };
  const invoicePages = usePages(
    (cursor) => api.billing.listInvoices({ params, query: cursor ? { cursor } : {} }),
    (b) => ({ rows: b.invoices, next: b.next_cursor }),
    [props.projectId],
  );
  return (
    <>
      <h2>Invoices</h2>
      <ErrorNote message={invoicePages.error} onRetry={invoicePages.reload} />
      {invoicePages.rows === null && !invoicePages.error ? <Loading what="invoices" /> : null}
      {invoicePages.rows && invoicePages.rows.length === 0 ? <p className="muted">No invoices yet.</p> : null}
      {invoicePages.rows && invoicePages.rows.length > 0 ? (
        <TableBox caption="Invoices">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">User</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Total</th>
              <th scope="col">Period</th>
            </tr>
          </thead>
          <tbody>
            {invoicePages.rows.map((i) => (
              <tr key={i.id}>
                <td>{when(i.created_at)}</td>
                <td>
                  <OwnerLink projectId={props.projectId} row={i} />
                </td>
                <td>{i.status}</td>
                <td>{invoiceReason(i.reason)}</td>
                <td>{money(i.amount_due, i.currency)}</td>
                <td>
                  {day(i.period_start)} – {day(i.period_end)}
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      ) : null}
      <LoadMore pages={invoicePages} what="invoices" />
    </>
  );
}
