import { useState, type FormEvent } from 'react';
import { BILLING_INTERVAL_NAMES, CreatePriceBodySchema } from '../../../../../contract/admin';
import { echoAmount, isCurrency, parseAmountInput } from '../../../../../domain/billing/money';
import { api, errorMessage } from '../../api';
import { ErrorNote } from '../../ui';
import { echoPrice, firstIssue, locale, type Plan, priceAmount, seatRange } from './format';
import { soldToOrganizations } from './plan-form';

type SeatsDraft = { unit_amount: number; included: number; minimum: number; maximum: number | null };
type PriceDraft = { name: string; amount: number; currency: string; interval: (typeof BILLING_INTERVAL_NAMES)[number]; seats?: SeatsDraft };

/** A price as it will be created, in words: `$20.00 + $8.00/seat over 3 seats / month, 1 to 50 seats`. */
const draftText = (d: PriceDraft) => (d.seats ? `${priceAmount({ ...d, seats: d.seats })} / ${d.interval}, ${seatRange(d.seats)}` : echoPrice(d));

/** A count of seats typed in a field: blank is `fallback`, otherwise the number typed (the schema says what is wrong with it). */
const seatsField = (data: FormData, name: string, fallback: number | null) => {
  const text = String(data.get(name) ?? '').trim();
  return text === '' ? fallback : Number(text);
};

export function Prices(props: { projectId: string; plan: Plan; currency: string; reload: () => Promise<void>; setNotice: (n: string) => void }) {
  const [formError, setFormError] = useState<string | null>(null);
  const [amountText, setAmountText] = useState('');
  const [interval, setPriceInterval] = useState<string>('month');
  const [pending, setPending] = useState<PriceDraft | null>(null);
  const [perSeat, setPerSeat] = useState(false);
  const [unitText, setUnitText] = useState('');
  const { plan, currency } = props;
  const prefix = `price-${plan.id}`;
  // One rule with the CLI's --amount: a whole number is minor units; a decimal needs the currency's exact decimals.
  const amount = isCurrency(currency) ? parseAmountInput(amountText, currency) : null;
  // The amount per seat follows the same rule as the amount.
  const unitAmount = isCurrency(currency) ? parseAmountInput(unitText, currency) : null;
  const example = isCurrency(currency) ? echoAmount({ amount: 1000, currency }, locale()) : '1000';
  const seatsOn = perSeat;
  const review = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    if (amount === null) return setFormError(`Enter the amount in ${currency.toUpperCase()} minor units, e.g. ${example}`);
    if (seatsOn && unitAmount === null) return setFormError(`Enter the amount per seat in ${currency.toUpperCase()} minor units, e.g. ${example}`);
    const seats = seatsOn
      ? {
          unit_amount: unitAmount,
          included: seatsField(data, 'included', 0),
          minimum: seatsField(data, 'minimum', 1),
          maximum: seatsField(data, 'maximum', null),
        }
      : undefined;
    const parsed = CreatePriceBodySchema.safeParse({ name: String(data.get('name') ?? ''), amount, currency, interval, ...(seats ? { seats } : {}) });
    if (!parsed.success) return setFormError(firstIssue(parsed));
    setFormError(null);
    const s = parsed.data.seats;
    setPending({
      name: parsed.data.name,
      amount: parsed.data.amount,
      interval: parsed.data.interval,
      currency: parsed.data.currency ?? currency,
      ...(s ? { seats: { unit_amount: s.unit_amount, included: s.included ?? 0, minimum: s.minimum ?? 1, maximum: s.maximum ?? null } } : {}),
    });
  };
  const create = async (draft: PriceDraft, form: HTMLFormElement | null) => {
    setPending(null);
    const r = await api.billing.createPrice({ params: { projectId: props.projectId, planId: plan.id }, body: draft });
    if (r.status !== 201) return setFormError(errorMessage(r.body));
    setFormError(null);
    form?.reset();
    setAmountText('');
    setUnitText('');
    setPerSeat(false);
    props.setNotice(`Price ${priceAmount(r.body.price)} / ${r.body.price.interval} added to ${plan.name}.`);
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
            <strong>{priceAmount(p)}</strong> / {p.interval} · {p.name}
            {p.seats ? <span className="small muted"> ({seatRange(p.seats)})</span> : null} {p.active ? null : <span className="badge off">archived</span>}{' '}
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
          <label className="choice">
            <input
              type="checkbox"
              name="per_seat"
              checked={perSeat}
              onChange={(e) => {
                setPerSeat(e.target.checked);
                setPending(null);
              }}
            />{' '}
            Per seat
          </label>
          {soldToOrganizations(plan.audience) ? null : <p className="small muted">For plans sold to organizations.</p>}
        </div>
        {seatsOn ? (
          <fieldset className="grid seats" aria-describedby={`${prefix}-seats-help`}>
            <legend>Seats</legend>
            <p id={`${prefix}-seats-help`} className="small muted">
              The amount covers the included seats; each seat beyond costs the amount per seat.
            </p>
            <div>
              <label htmlFor={`${prefix}-unit`}>Amount per seat ({currency.toUpperCase()} minor units)</label>
              <input
                id={`${prefix}-unit`}
                name="unit_amount"
                inputMode="numeric"
                placeholder="800"
                aria-describedby={`${prefix}-unit-echo`}
                value={unitText}
                onChange={(e) => {
                  setUnitText(e.target.value);
                  setPending(null);
                }}
              />
              <p id={`${prefix}-unit-echo`} className="small muted" data-testid="unit-amount-echo" aria-live="polite">
                {unitText.trim() === ''
                  ? `Minor units: ${example}`
                  : unitAmount === null
                    ? `Not an amount in ${currency.toUpperCase()} minor units (${example})`
                    : `${echoAmount({ amount: unitAmount, currency }, locale())} per seat`}
              </p>
            </div>
            <div>
              <label htmlFor={`${prefix}-included`}>Included seats</label>
              <input id={`${prefix}-included`} name="included" type="number" min={0} placeholder="0" onChange={() => setPending(null)} />
            </div>
            <div>
              <label htmlFor={`${prefix}-minimum`}>Minimum seats</label>
              <input id={`${prefix}-minimum`} name="minimum" type="number" min={1} placeholder="1" onChange={() => setPending(null)} />
            </div>
            <div>
              <label htmlFor={`${prefix}-maximum`}>Maximum seats (optional)</label>
              <input id={`${prefix}-maximum`} name="maximum" type="number" min={1} placeholder="no limit" onChange={() => setPending(null)} />
            </div>
          </fieldset>
        ) : null}
        <div>
          <button type="submit">Add price</button>
        </div>
      </form>
      {pending ? (
        <p role="group" aria-label={`Create ${pending.name} at ${draftText(pending)}?`} className="confirm">
          Create <strong>{pending.name}</strong> on {plan.name} at <strong>{draftText(pending)}</strong>?{' '}
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
