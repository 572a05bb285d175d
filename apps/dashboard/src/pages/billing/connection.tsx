import { useState, type FormEvent } from 'react';
import { ConnectBillingBodySchema } from '../../../../../contract/admin';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, when } from '../../ui';
import { firstIssue, type Connection } from './format';

export function ConnectionPanel(props: { projectId: string; connection: Connection | null; onChange: (c: Connection | null, done: string) => void }) {
  const [processor, setProcessor] = useState<'sandbox' | 'stripe'>('sandbox');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const c = props.connection;

  const connect = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const field = (name: string) => String(data.get(name) ?? '');
    const currency = field('currency').trim().toLowerCase();
    const body =
      processor === 'sandbox'
        ? { processor, ...(currency ? { currency } : {}) }
        : {
            processor,
            secret_key: field('secret_key'),
            publishable_key: field('publishable_key'),
            webhook_secret: field('webhook_secret'),
            ...(currency ? { currency } : {}),
          };
    const parsed = ConnectBillingBodySchema.safeParse(body);
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    setBusy(true);
    const r = await api.billing.connect({ params: { projectId: props.projectId }, body: parsed.data }).catch(() => null);
    setBusy(false);
    if (!r) return setFormError(UNREACHABLE);
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.onChange(r.body.connection, r.body.connection.processor === 'stripe' ? 'Connected to Stripe.' : 'Connected to the sandbox.');
  };

  const disconnect = async () => {
    if (!window.confirm('Disconnect billing? The keys are forgotten; plans, prices, subscriptions and invoices stay.')) return;
    const r = await api.billing.disconnect({ params: { projectId: props.projectId } });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.onChange(null, 'Billing disconnected.');
  };

  if (c) {
    return (
      <div className="panel" role="region" aria-labelledby="connection">
        <h2 id="connection">Connection</h2>
        <p data-testid="connection-state">
          <span className="badge">connected</span> {c.processor === 'stripe' ? 'Stripe' : 'Sandbox (no real money moves)'} · mode {c.mode}
          {c.key_last4 ? <> · secret key …{c.key_last4}</> : null} · currency {c.currency.toUpperCase()} · since {when(c.connected_at)}
        </p>
        {c.webhook_url ? (
          <p className="small">
            Stripe webhook endpoint to register: <code>{c.webhook_url}</code>
          </p>
        ) : null}
        <ErrorNote message={formError} />
        <button type="button" className="secondary" onClick={disconnect}>
          Disconnect
        </button>
      </div>
    );
  }
  return (
    <form className="panel" onSubmit={connect} noValidate aria-labelledby="connection">
      <h2 id="connection">Connection</h2>
      <p className="muted">Not connected: checkout and subscriptions are unavailable until billing is connected.</p>
      <fieldset>
        <legend>Processor</legend>
        <label className="choice">
          <input type="radio" name="processor" value="sandbox" checked={processor === 'sandbox'} onChange={() => setProcessor('sandbox')} /> Sandbox (test
          cards, no real money)
        </label>
        <label className="choice">
          <input type="radio" name="processor" value="stripe" checked={processor === 'stripe'} onChange={() => setProcessor('stripe')} /> Stripe
        </label>
      </fieldset>
      {processor === 'stripe' ? (
        <div className="grid">
          <div>
            <label htmlFor="secret-key">Secret key</label>
            <input id="secret-key" name="secret_key" autoComplete="off" placeholder="sk_test_…" />
          </div>
          <div>
            <label htmlFor="publishable-key">Publishable key</label>
            <input id="publishable-key" name="publishable_key" autoComplete="off" placeholder="pk_test_…" />
          </div>
          <div>
            <label htmlFor="webhook-secret">Webhook signing secret</label>
            <input id="webhook-secret" name="webhook_secret" autoComplete="off" placeholder="whsec_…" />
          </div>
        </div>
      ) : null}
      <label htmlFor="currency">Currency (optional, USD by default)</label>
      <input id="currency" name="currency" maxLength={3} placeholder="usd" />
      <ErrorNote message={formError} />
      <button type="submit" disabled={busy}>
        {busy ? 'Checking…' : 'Connect'}
      </button>
    </form>
  );
}
