import { useCallback, useEffect, useState } from 'react';
import { api, errorMessage, UNREACHABLE } from '../api';
import { ErrorNote, Loading, PageTitle, ProjectNav } from '../ui';
import { ConnectionPanel } from './billing/connection';
import { BillingEvents } from './billing/events';
import type { Connection, Plan } from './billing/format';
import { InvoicesList } from './billing/invoices';
import { PlansEditor } from './billing/plans';
import { SandboxClock } from './billing/sandbox-clock';
import { SubscriptionsList } from './billing/subscriptions';
import { BillingTabs } from './billing/tabs';

export { money } from './billing/format';

export function BillingPage(props: { projectId: string }) {
  const projectId = props.projectId;
  const [connection, setConnection] = useState<Connection | null | undefined>(undefined);
  const [plans, setPlans] = useState<Plan[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    setError(null);
    try {
      const [c, p] = await Promise.all([api.billing.get({ params: { projectId } }), api.billing.listPlans({ params: { projectId } })]);
      if (c.status !== 200) return setError(errorMessage(c.body));
      if (p.status !== 200) return setError(errorMessage(p.body));
      setConnection(c.body.connection);
      setPlans(p.body.plans);
    } catch {
      setError(UNREACHABLE);
    }
  }, [projectId]);
  useEffect(() => {
    void load();
  }, [load]);

  const currency = connection?.currency ?? 'usd';
  return (
    <section>
      <ProjectNav projectId={projectId} current="billing" />
      <BillingTabs projectId={projectId} current="billing" />
      <PageTitle>Billing</PageTitle>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote message={error} onRetry={load} />
      {connection === undefined && !error ? <Loading what="billing" /> : null}
      {connection !== undefined ? (
        <ConnectionPanel
          projectId={projectId}
          connection={connection}
          onChange={(c, done) => {
            setConnection(c);
            setNotice(done);
          }}
        />
      ) : null}
      {connection?.processor === 'sandbox' ? <SandboxClock projectId={projectId} onDone={setNotice} /> : null}
      {plans ? <PlansEditor projectId={projectId} plans={plans} currency={currency} setPlans={setPlans} setNotice={setNotice} /> : null}
      {connection !== undefined ? (
        <>
          <SubscriptionsList projectId={projectId} plans={plans} />
          <InvoicesList projectId={projectId} />
          <BillingEvents projectId={projectId} />
        </>
      ) : null}
    </section>
  );
}
