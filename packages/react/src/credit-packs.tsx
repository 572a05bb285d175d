import { useEffect, useId, useState } from 'react';
import { isTollgateError, type BillingFor, type CreditPack } from '@tollgate/sdk/browser';
import { useLocale, useTollgate, useTollgateState } from './context';
import { directionOf, format, formatMoney, MESSAGES, resolveLocale, type Messages } from './messages';
import { useUsageRead } from './usage';

export interface CreditPacksProps {
  /** Only the packs of this meter key; every pack for sale by default. */
  feature?: string;
  /** Where the browser returns once paid. Must be a registered callback URL or on its origin. */
  successUrl: string;
  /** Where the checkout's cancel link goes. */
  cancelUrl: string;
  /**
   * Whom the credits are for: the signed-in user (the default), or `"organization"`: the active
   * organization (a role with org:billing:manage; Tollgate's refusal shows otherwise).
   */
  for?: BillingFor;
  /** The packs already read (`client.creditPacks()`, a server render); read on mount otherwise. */
  packs?: CreditPack[];
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

/** A pack's terms: "500 calls · $9.00 · expires 30 days after purchase" (`unit`: the meter's, when the usage read names it). */
export function creditPackText(pack: CreditPack, unit: string | null, locale: string, t: Messages): string {
  const count = new Intl.NumberFormat(locale).format(pack.units);
  const days = pack.expiresInDays;
  const expiry = days === null ? t.creditPackNoExpiry : format(days === 1 ? (t.creditPackExpiryDay ?? t.creditPackExpiry) : t.creditPackExpiry, { days });
  return [unit ? `${count} ${unit}` : format(t.creditPackCredits, { count }), formatMoney(pack.amount, pack.currency, locale), expiry].join(' · ');
}

/**
 * The credit packs for sale (GET billing/credit-packs), each with its name, its terms ("500 calls ·
 * $9.00 · expires 30 days after purchase": the meter's unit from the usage read, else "500
 * credits") and a Buy button that starts the pack's hosted checkout (`redirectToCreditPackCheckout`)
 * for the user or, with `for="organization"`, the active organization. Nothing signed out (or for an
 * organization without an active one). Class names `tg-credit-packs*`.
 *
 *   <CreditPacks feature="api_calls" successUrl={here} cancelUrl={here} />
 */
export function CreditPacks(props: CreditPacksProps) {
  const client = useTollgate();
  const state = useTollgateState();
  const providerLocale = useLocale();
  const locale = props.locale ? resolveLocale(props.locale) : providerLocale;
  const t = MESSAGES[locale];
  const target: BillingFor = props.for ?? 'user';
  const { read, readable } = useUsageRead(target);
  const [packs, setPacks] = useState<CreditPack[] | null>(props.packs ?? null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const given = props.packs !== undefined;
  const signedIn = state.status === 'signed-in';

  useEffect(() => {
    if (given || !signedIn) return;
    let live = true;
    client.creditPacks().then(
      (list) => live && setPacks(list),
      (e: unknown) => {
        if (!live) return;
        setPacks([]);
        setError(isTollgateError(e) ? e.message : String(e));
      },
    );
    return () => {
      live = false;
    };
  }, [client, given, signedIn]);

  if (!readable) return null;
  const shown = (props.packs ?? packs)?.filter((p) => props.feature === undefined || p.feature === props.feature) ?? null;
  const buy = async (pack: CreditPack) => {
    setBusy(pack.id);
    setError(null);
    try {
      await client.redirectToCreditPackCheckout(pack.id, { for: target, successUrl: props.successUrl, cancelUrl: props.cancelUrl });
    } catch (e) {
      setError(isTollgateError(e) ? e.message : String(e));
      setBusy(null);
    }
  };

  return (
    <div
      className={['tg-credit-packs', props.className].filter(Boolean).join(' ')}
      lang={locale}
      dir={directionOf(locale)}
      aria-busy={shown === null ? 'true' : undefined}
    >
      {shown === null && <p className="tg-credit-packs__loading">{t.loading}</p>}
      {error && (
        <p className="tg-credit-packs__error" role="alert">
          {error}
        </p>
      )}
      {shown?.length === 0 && !error && <p className="tg-credit-packs__empty">{t.noCreditPacks}</p>}
      {shown && shown.length > 0 && (
        // biome-ignore lint/a11y/noRedundantRoles: Safari drops a list's semantics when its style removes the markers; the role keeps them
        <ul className="tg-credit-packs__list" role="list">
          {shown.map((pack) => {
            const nameId = `${id}-${pack.id}`;
            const unit = read?.features.find((f) => f.feature === pack.feature)?.unit ?? null;
            return (
              <li key={pack.id} className="tg-credit-packs__pack" aria-labelledby={nameId}>
                <span className="tg-credit-packs__name" id={nameId}>
                  {pack.name}
                </span>
                <span className="tg-credit-packs__terms" id={`${nameId}-terms`}>
                  {creditPackText(pack, unit, locale, t)}
                </span>
                <button
                  type="button"
                  className="tg-credit-packs__button"
                  aria-describedby={`${nameId} ${nameId}-terms`}
                  disabled={busy !== null}
                  aria-busy={busy === pack.id ? 'true' : undefined}
                  onClick={() => void buy(pack)}
                >
                  {t.buy}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
