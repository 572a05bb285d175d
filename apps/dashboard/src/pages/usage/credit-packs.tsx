import { useState, type FormEvent } from 'react';
import { echoAmount, isCurrency, parseAmountInput } from '../../../../../domain/billing/money';
import { api, errorMessage, UNREACHABLE } from '../../api';
import { ErrorNote, Loading, TableBox, useLoad } from '../../ui';
import { locale, money } from '../billing/format';
import { Confirm } from '../organizations/shared';
import { type CreditPack, type Meter, packExpiry, units } from './format';

/**
 * The Meters page's *Credit packs*: credits of a meter sold for a one-off price (docs/usage.md,
 * "Credit packs"). The packs, newest first, archived ones too, each active one with *Archive* (after
 * a confirmation); and *New credit pack*: a meter of the project, a name, the units, the price typed
 * in minor units of the billing connection's currency like every amount of the console, and an
 * optional expiry in days after the purchase.
 */
export function CreditPacks(props: { projectId: string; meters: Meter[]; setNotice: (text: string) => void }) {
  const { projectId, meters } = props;
  const packs = useLoad(
    () => api.billing.listCreditPacks({ params: { projectId } }),
    (body) => body.packs,
    [projectId],
  );
  // Packs are priced in the connection's currency (the API's default), else USD.
  const connection = useLoad(
    () => api.billing.get({ params: { projectId } }),
    (body) => body.connection,
    [projectId],
  );
  const currency = connection.data?.currency ?? 'usd';
  const archive = async (pack: CreditPack) => {
    const r = await api.billing.archiveCreditPack({ params: { projectId, packId: pack.id } }).catch(() => null);
    if (r?.status !== 200) return packs.setError(r ? errorMessage(r.body) : UNREACHABLE);
    props.setNotice(`Credit pack ${r.body.pack.name} archived: it is no longer sold.`);
    await packs.reload();
  };
  const created = async (pack: CreditPack) => {
    const meter = meters.find((m) => m.key === pack.feature);
    props.setNotice(`Credit pack ${pack.name} created: ${units(pack.units, meter?.unit ?? '')} for ${money(pack.amount, pack.currency)}.`);
    await packs.reload();
  };
  return (
    <section aria-labelledby="credit-packs">
      <h2 id="credit-packs">Credit packs</h2>
      <p className="muted">
        A credit pack sells credits of a meter for a one-off price: a signed-in user buys one through the processor's checkout, and the credits are granted once
        it is paid.
      </p>
      <ErrorNote message={packs.error} onRetry={packs.reload} />
      {packs.data === null && !packs.error ? <Loading what="the credit packs" /> : null}
      {packs.data && packs.data.length === 0 ? <p className="muted">No credit packs yet.</p> : null}
      {packs.data && packs.data.length > 0 ? (
        <TableBox caption="Credit packs, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Meter</th>
              <th scope="col">Units</th>
              <th scope="col">Price</th>
              <th scope="col">Credits expire</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {packs.data.map((p) => {
              const meter = meters.find((m) => m.key === p.feature);
              return (
                <tr key={p.id} data-pack={p.name}>
                  <td>{p.name}</td>
                  <td>{meter ? meter.name : <code>{p.feature}</code>}</td>
                  <td>{units(p.units, meter?.unit ?? '')}</td>
                  <td>{money(p.amount, p.currency)}</td>
                  <td>{packExpiry(p.expires_in_days)}</td>
                  <td>{p.active ? <span className="badge">active</span> : <span className="badge off">archived</span>}</td>
                  <td>
                    {p.active ? (
                      <Confirm
                        label={`Archive credit pack ${p.name}`}
                        question="It is no longer sold; checkouts already open still grant their credits when paid."
                        yes="Yes, archive"
                        onYes={() => void archive(p)}
                      />
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </TableBox>
      ) : null}
      <NewCreditPack projectId={projectId} meters={meters} currency={currency} onCreated={created} />
    </section>
  );
}

function NewCreditPack(props: { projectId: string; meters: Meter[]; currency: string; onCreated: (pack: CreditPack) => Promise<void> }) {
  const { currency } = props;
  const [formError, setFormError] = useState<string | null>(null);
  const [priceText, setPriceText] = useState('');
  // One rule with every amount of the console: a whole number is minor units; a decimal needs the currency's exact decimals.
  const amount = isCurrency(currency) ? parseAmountInput(priceText, currency) : null;
  const example = isCurrency(currency) ? echoAmount({ amount: 900, currency }, locale()) : '900';
  const echo =
    priceText.trim() === ''
      ? `Minor units: ${example}`
      : amount === null
        ? `Not an amount in ${currency.toUpperCase()} minor units (${example})`
        : echoAmount({ amount, currency }, locale());
  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const feature = String(data.get('feature') ?? '');
    const unitsText = String(data.get('units') ?? '').trim();
    const daysText = String(data.get('expires_in_days') ?? '').trim();
    if (!feature) return setFormError('Choose a meter: create one above first.');
    if (!/^\d+$/.test(unitsText)) return setFormError('Enter the units as a whole number, e.g. 500.');
    if (amount === null) return setFormError(`Enter the price in ${currency.toUpperCase()} minor units, e.g. ${example}.`);
    if (daysText !== '' && !/^\d+$/.test(daysText)) return setFormError('Enter the expiry as a whole number of days, or leave it blank for none.');
    const r = await api.billing
      .createCreditPack({
        params: { projectId: props.projectId },
        body: {
          feature,
          name: String(data.get('name') ?? '').trim(),
          units: Number(unitsText),
          amount,
          currency,
          expires_in_days: daysText === '' ? null : Number(daysText),
        },
      })
      .catch(() => null);
    if (r?.status !== 201) return setFormError(r ? errorMessage(r.body) : UNREACHABLE);
    setFormError(null);
    form.reset();
    setPriceText('');
    await props.onCreated(r.body.pack);
  };
  return (
    <form onSubmit={create} noValidate className="panel" aria-labelledby="new-credit-pack">
      <h3 id="new-credit-pack">New credit pack</h3>
      <div className="grid">
        <div>
          <label htmlFor="pack-meter">Meter</label>
          <select id="pack-meter" name="feature" defaultValue={props.meters[0]?.key ?? ''}>
            {props.meters.map((m) => (
              <option key={m.key} value={m.key}>
                {m.name} ({m.key})
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="pack-name">Name</label>
          <input id="pack-name" name="name" maxLength={100} placeholder="500 calls" />
        </div>
        <div>
          <label htmlFor="pack-units">Units</label>
          <input id="pack-units" name="units" inputMode="numeric" placeholder="500" />
        </div>
        <div>
          <label htmlFor="pack-price">Price ({currency.toUpperCase()} minor units)</label>
          <input
            id="pack-price"
            name="amount"
            inputMode="numeric"
            placeholder="900"
            aria-describedby="pack-price-echo"
            value={priceText}
            onChange={(e) => setPriceText(e.target.value)}
          />
          <p id="pack-price-echo" className="small muted" data-testid="pack-price-echo" aria-live="polite">
            {echo}
          </p>
        </div>
        <div>
          <label htmlFor="pack-expiry">Expiry in days (optional)</label>
          <input id="pack-expiry" name="expires_in_days" inputMode="numeric" placeholder="30" aria-describedby="pack-expiry-help" />
        </div>
      </div>
      <p id="pack-expiry-help" className="small muted">
        The credits expire this many days after the purchase (1 to 3660); blank: they never expire.
      </p>
      {props.meters.length === 0 ? <p className="small muted">A credit pack sells credits of a meter: create a meter above first.</p> : null}
      <ErrorNote message={formError} />
      <button type="submit" disabled={props.meters.length === 0}>
        Create credit pack
      </button>
    </form>
  );
}
