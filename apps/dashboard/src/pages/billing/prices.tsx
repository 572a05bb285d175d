import { useState, type FormEvent } from 'react';
import { BILLING_INTERVAL_NAMES, CreatePriceBodySchema } from '../../../../../contract/admin';
import { echoAmount, isCurrency, parseAmountInput } from '../../../../../domain/billing/money';
import { api, errorMessage } from '../../api';
import { ErrorNote } from '../../ui';
import { echoPrice, firstIssue, locale, money, type Plan } from './format';

type PriceDraft = { name: string; amount: number; currency: string; interval: (typeof BILLING_INTERVAL_NAMES)[number] };

export function Prices(props: { projectId: string; plan: Plan; currency: string; reload: () => Promise<void>; setNotice: (n: string) => void }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [amountText, setAmountText] = useState('');
  const [interval, setPriceInterval] = useState<string>('month');
  const [pending, setPending] = useState<PriceDraft | null>(null);
  const { plan, currency } = props;
  const prefix = `price-${plan.id}`;
  // One rule with the CLI's --amount: a whole number is minor units; a decimal needs the currency's exact decimals.
  const amount = isCurrency(currency) ? parseAmountInput(amountText, currency) : null;
  const example = isCurrency(currency) ? echoAmount({ amount: 1000, currency }, locale()) : '1000';
  const review = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    if (amount === null) return setFormError(`Enter the amount in ${currency.toUpperCase()} minor units, e.g. ${example}`);
    const parsed = CreatePriceBodySchema.safeParse({ name: String(data.get('name') ?? ''), amount, currency, interval });
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    setPending({ ...parsed.data, currency: parsed.data.currency ?? currency });
  };
  const create = async (draft: PriceDraft, form: HTMLFormElement | null) => {
    setPending(null);
    const r = await api.billing.createPrice({ params: { projectId: props.projectId, planId: plan.id }, body: draft });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form?.reset();
    setAmountText('');
    props.setNotice(`Price ${money(r.body.price.amount, r.body.price.currency)} / ${r.body.price.interval} added to ${plan.name}.`);
    await props.reload();
  };
  const archive = async (priceId: string) => {
    if (!window.confirm('Archive this price? Subscriptions on it keep renewing; nobody new can choose it.')) return;
    const r = await api.billing.archivePrice({ params: { projectId: props.projectId, priceId } });
    if (r.status !== 200) return setFormError(errorMessage(r.body));
    props.setNotice('Price archived.');
    await props.reload();
  };
  return (
    <div>
      {plan.prices.length === 0 ? <p className="small muted">No prices yet.</p> : null}
      <ul className="plain" aria-label={`Prices of ${plan.name}`}>
        {plan.prices.map((p) => (
          <li key={p.id}>
            <strong>{money(p.amount, p.currency)}</strong> / {p.interval} · {p.name} {p.active ? null : <span className="badge off">archived</span>}{' '}
            {p.active ? (
              <button type="button" className="secondary small" aria-label={`Archive ${p.name} of ${plan.name}`} onClick={() => archive(p.id)}>
                Archive
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <form id={`${prefix}-form`} onSubmit={review} noValidate className="grid" aria-label={`New price of ${plan.name}`}>
        <div>
          <label htmlFor={`${prefix}-name`}>Price name</label>
          <input id={`${prefix}-name`} name="name" maxLength={100} placeholder="Monthly" />
        </div>
        <div>
          <label htmlFor={`${prefix}-amount`}>Amount ({currency.toUpperCase()} minor units)</label>
          <input
            id={`${prefix}-amount`}
            name="amount"
            inputMode="numeric"
            placeholder="1000"
            aria-describedby={`${prefix}-echo`}
            value={amountText}
            onChange={(e) => {
              setAmountText(e.target.value);
              setPending(null);
            }}
          />
          <p id={`${prefix}-echo`} className="small muted" data-testid="amount-echo" aria-live="polite">
            {amountText.trim() === ''
              ? `Minor units: ${example}`
              : amount === null
                ? `Not an amount in ${currency.toUpperCase()} minor units (${example})`
                : echoPrice({ amount, currency, interval })}
          </p>
        </div>
        <div>
          <label htmlFor={`${prefix}-interval`}>Interval</label>
          <select
            id={`${prefix}-interval`}
            name="interval"
            value={interval}
            onChange={(e) => {
              setPriceInterval(e.target.value);
              setPending(null);
            }}
          >
            {BILLING_INTERVAL_NAMES.map((i) => (
              <option key={i} value={i}>
                {i === 'month' ? 'Monthly' : 'Yearly'}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Add price</button>
        </div>
      </form>
      {pending ? (
        <p role="group" aria-label={`Create ${pending.name} at ${echoPrice(pending)}?`} className="confirm">
          Create <strong>{pending.name}</strong> on {plan.name} at <strong>{echoPrice(pending)}</strong>?{' '}
          <button type="button" onClick={() => void create(pending, document.getElementById(`${prefix}-form`) as HTMLFormElement | null)}>
            Yes, create
          </button>{' '}
          <button type="button" className="secondary" onClick={() => setPending(null)}>
            Cancel
          </button>
        </p>
      ) : null}
      <ErrorNote message={formError} />
    </div>
  );
}
