import { useState } from 'react';
import { echoAmount, isCurrency, parseAmountInput } from '../../../../../domain/billing/money';
import { Link } from '../../ui';
import { count, type Meter, OVERAGE_LABELS, RESET_LABELS, type UsageLimit } from '../usage/format';
import { locale } from './format';

const RESETS = Object.keys(RESET_LABELS) as Array<UsageLimit['reset']>;
const OVERAGES = Object.keys(OVERAGE_LABELS) as Array<UsageLimit['overage']>;

/** A limit as the plan's body carries it (`usage_limits`, the whole list). */
export type UsageLimitBody = UsageLimit;

const field = (k: number, name: string) => `usage_limits.${k}.${name}`;

/**
 * The limits typed in the plan form, in their order, as the API takes them; or what is wrong with
 * the first one that is not a limit. The price per package is typed like every amount of the
 * console (whole minor units, or a decimal with exactly the currency's decimals).
 */
export function usageLimitsFrom(data: FormData, currency: string): UsageLimitBody[] | string {
  const rows = [...data.keys()].flatMap((name) => {
    const m = /^usage_limits\.(\d+)\.meter$/.exec(name);
    return m ? [Number(m[1])] : [];
  });
  const limits: UsageLimitBody[] = [];
  for (const [i, k] of rows.entries()) {
    const text = (name: string) => String(data.get(field(k, name)) ?? '').trim();
    const which = `Usage limit ${i + 1}`;
    const meter = text('meter');
    if (!meter) return `${which}: choose a meter (create one on the Meters page first).`;
    const included = text('included') === '' ? 0 : Number(text('included'));
    if (!Number.isSafeInteger(included) || included < 0) return `${which}: the included amount is a whole number of units from 0.`;
    const reset = text('reset') as UsageLimit['reset'];
    const overage = text('overage') as UsageLimit['overage'];
    let price: UsageLimit['price'] = null;
    if (overage === 'bill') {
      const unitAmount = isCurrency(currency) ? parseAmountInput(text('unit_amount'), currency) : null;
      if (unitAmount === null || unitAmount < 1) return `${which}: enter the price per package in ${currency.toUpperCase()} minor units, e.g. 200.`;
      const size = text('package_size') === '' ? 1 : Number(text('package_size'));
      if (!Number.isSafeInteger(size) || size < 1) return `${which}: the package size is a whole number of units from 1.`;
      price = { unit_amount: unitAmount, package_size: size };
    }
    limits.push({ meter, included, reset, overage, price });
  }
  return limits;
}

type Row = { k: number; limit: UsageLimit | null };

/**
 * The plan form's *Usage limits*: one row per metered feature (a meter of the project, the amount
 * included, the window, what happens past the limit and, when overage is billed, its price per
 * package and the package size). Saved with the plan as its `usage_limits`, the whole list.
 */
export function UsageLimitsFields(props: { idPrefix: string; limits: UsageLimit[]; meters: Meter[] | null; currency: string; projectId: string }) {
  const [rows, setRows] = useState<Row[]>(() => props.limits.map((limit, k) => ({ k, limit })));
  const [next, setNext] = useState(props.limits.length);
  const meters = props.meters ?? [];
  return (
    <fieldset className="usage-limits" aria-describedby={`${props.idPrefix}-limits-help`}>
      <legend>Usage limits</legend>
      <p id={`${props.idPrefix}-limits-help`} className="small muted">
        How much of each meter the plan includes per window, and what happens past it and the subscriber's credits.
      </p>
      {rows.length === 0 ? <p className="small muted">No usage limits.</p> : null}
      {rows.map((row, i) => (
        <LimitRow
          key={row.k}
          id={`${props.idPrefix}-limit-${row.k}`}
          k={row.k}
          n={i + 1}
          limit={row.limit}
          meters={meters}
          currency={props.currency}
          onRemove={() => setRows(rows.filter((r) => r.k !== row.k))}
        />
      ))}
      {props.meters !== null && meters.length === 0 ? (
        <p className="small muted">
          The project has no meters yet: create one on the <Link to={`/projects/${props.projectId}/meters`}>Meters</Link> page.
        </p>
      ) : null}
      <button
        type="button"
        className="secondary small"
        disabled={meters.length === 0}
        onClick={() => {
          setRows([...rows, { k: next, limit: null }]);
          setNext(next + 1);
        }}
      >
        Add usage limit
      </button>
    </fieldset>
  );
}

function LimitRow(props: { id: string; k: number; n: number; limit: UsageLimit | null; meters: Meter[]; currency: string; onRemove: () => void }) {
  const l = props.limit;
  const [meterKey, setMeterKey] = useState(l?.meter ?? props.meters[0]?.key ?? '');
  const [overage, setOverage] = useState<string>(l?.overage ?? 'refuse');
  const [priceText, setPriceText] = useState(l?.price ? String(l.price.unit_amount) : '');
  const [sizeText, setSizeText] = useState(l?.price ? String(l.price.package_size) : '1');
  const id = (name: string) => `${props.id}-${name}`;
  const name = (n: string) => field(props.k, n);
  // A limit on a meter the project no longer has still shows, so saving the plan keeps it (or the API says why not).
  const options = props.meters.some((m) => m.key === meterKey) || !meterKey ? props.meters : [{ key: meterKey, name: meterKey, unit: '' }, ...props.meters];
  const unit = props.meters.find((m) => m.key === meterKey)?.unit || 'units';
  const { currency } = props;
  const amount = isCurrency(currency) ? parseAmountInput(priceText, currency) : null;
  const size = sizeText.trim() === '' ? 1 : Number(sizeText);
  const example = isCurrency(currency) ? echoAmount({ amount: 200, currency }, locale()) : '200';
  const echo =
    priceText.trim() === ''
      ? `Minor units: ${example}`
      : amount === null
        ? `Not an amount in ${currency.toUpperCase()} minor units (${example})`
        : `${echoAmount({ amount, currency }, locale())} ${Number.isSafeInteger(size) && size > 1 ? `per ${count(size)} ${unit}` : 'each'}`;
  return (
    <fieldset className="grid usage-limit" data-testid="usage-limit">
      <legend>Usage limit {props.n}</legend>
      <div>
        <label htmlFor={id('meter')}>Meter</label>
        <select id={id('meter')} name={name('meter')} value={meterKey} onChange={(e) => setMeterKey(e.target.value)}>
          {options.map((m) => (
            <option key={m.key} value={m.key}>
              {m.name} ({m.key})
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={id('included')}>Included</label>
        <input id={id('included')} name={name('included')} type="number" min={0} step={1} placeholder="0" defaultValue={l?.included ?? ''} />
      </div>
      <div>
        <label htmlFor={id('reset')}>Resets</label>
        <select id={id('reset')} name={name('reset')} defaultValue={l?.reset ?? 'period'}>
          {RESETS.map((r) => (
            <option key={r} value={r}>
              {RESET_LABELS[r]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={id('overage')}>Past the limit</label>
        <select id={id('overage')} name={name('overage')} value={overage} onChange={(e) => setOverage(e.target.value)}>
          {OVERAGES.map((o) => (
            <option key={o} value={o}>
              {OVERAGE_LABELS[o]}
            </option>
          ))}
        </select>
      </div>
      {overage === 'bill' ? (
        <>
          <div>
            <label htmlFor={id('unit-amount')}>Price per package ({currency.toUpperCase()} minor units)</label>
            <input
              id={id('unit-amount')}
              name={name('unit_amount')}
              inputMode="numeric"
              placeholder="200"
              aria-describedby={id('echo')}
              value={priceText}
              onChange={(e) => setPriceText(e.target.value)}
            />
          </div>
          <div>
            <label htmlFor={id('package-size')}>Package size (units)</label>
            <input
              id={id('package-size')}
              name={name('package_size')}
              type="number"
              min={1}
              step={1}
              aria-describedby={id('echo')}
              value={sizeText}
              onChange={(e) => setSizeText(e.target.value)}
            />
          </div>
          <p id={id('echo')} className="small muted" data-testid="overage-price-echo" aria-live="polite">
            {echo}
          </p>
        </>
      ) : null}
      <div>
        <button type="button" className="secondary small" aria-label={`Remove usage limit ${props.n}`} onClick={props.onRemove}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}
