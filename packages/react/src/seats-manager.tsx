import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import { isTollgateError, type ChangePreview, type Plan, type Price, type Subscription } from '@tollgate/sdk/browser';
import { useEntitlements, useLocale, useTollgate, useTollgateState } from './context';
import { directionOf, format, MESSAGES, resolveLocale, type Messages } from './messages';
import { PreviewDialog, seatTermsText } from './pricing-table';

export interface SeatsManagerProps {
  /** Called after the seats were bought or released (the entitlements are read again already). */
  onChanged?(subscription: Subscription): void;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

const cx = (...names: Array<string | false | null | undefined>) => names.filter(Boolean).join(' ');
const messageOf = (e: unknown) => (isTollgateError(e) ? e.message : String(e));

/** The active organization's per-seat subscription with its price's terms and its plan's seat policy. */
interface SeatSubscription {
  subscription: Subscription;
  plan: Plan | null;
  price: Price | null;
}

/**
 * The seats of the active organization's per-seat subscription, for its admins: the seats used of
 * those paid for (`entitlements.seats`), the price's terms, and
 * - on a plan whose seats are bought, for a role with org:billing:manage, a quantity to pay for, the
 *   prorated charge (or credit) it would make now (`previewSeats`), and a confirm that buys or
 *   releases them (`setSeats`);
 * - on a plan whose seats are automatic, that they follow the members (a member who joins is charged
 *   now, prorated), and whether pending invitations hold one.
 * Without org:billing:manage it is read-only (used of total, the terms). Nothing without an active
 * organization on a per-seat price. Tollgate checks the permission again on every call. Class names
 * `tg-seats*`.
 */
export function SeatsManager(props: SeatsManagerProps) {
  const client = useTollgate();
  const providerLocale = useLocale();
  const locale = props.locale ? resolveLocale(props.locale) : providerLocale;
  const t: Messages = MESSAGES[locale];
  const state = useTollgateState();
  const { entitlements, organizationId: entitledFor, has } = useEntitlements();
  const organizationId = state.organization?.id ?? null;
  const signedIn = state.status === 'signed-in';
  const seats = organizationId !== null && entitledFor === organizationId ? (entitlements?.seats ?? null) : null;
  // Primitives, so that reading the same entitlements again reads nothing more and keeps the quantity typed.
  const perSeat = seats !== null;
  const total = seats?.total ?? null;
  const canManage = has({ permission: 'org:billing:manage' });

  const [current, setCurrent] = useState<SeatSubscription | null>(null);
  const [quantity, setQuantity] = useState<string>('');
  const [pending, setPending] = useState<{ quantity: number; preview: ChangePreview } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const ids = { title: useId(), quantity: useId() };

  // The subscription, its plan and price (hidden plans too): read again when the entitlements change.
  useEffect(() => {
    if (!signedIn || organizationId === null || !perSeat) {
      setCurrent(null);
      return;
    }
    let live = true;
    Promise.all([client.subscription({ for: 'organization' }), client.products()]).then(
      ([subscription, products]) => {
        if (!live) return;
        if (!subscription) return setCurrent(null);
        const plan = products.find((p) => p.id === subscription.plan.id) ?? null;
        setCurrent({ subscription, plan, price: plan?.prices.find((p) => p.id === subscription.price.id) ?? null });
        setQuantity(String(subscription.quantity));
      },
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
    // `total`: the seats billed changed (bought here, or moved with the members): read the subscription again.
  }, [client, signedIn, organizationId, perSeat, total]);

  const preview = useCallback(
    async (event: FormEvent<HTMLFormElement>) => {
      event.preventDefault();
      const wanted = Number(quantity);
      setBusy(true);
      setError(null);
      setNotice(null);
      try {
        setPending({ quantity: wanted, preview: await client.previewSeats(wanted, { for: 'organization' }) });
      } catch (e) {
        setError(messageOf(e));
      } finally {
        setBusy(false);
      }
    },
    [client, quantity],
  );

  const confirm = useCallback(async () => {
    if (!pending) return;
    setBusy(true);
    setError(null);
    try {
      const changed = await client.setSeats(pending.quantity, { for: 'organization' });
      setPending(null);
      setNotice(t.saved);
      setCurrent((c) => (c ? { ...c, subscription: changed } : c));
      props.onChanged?.(changed);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }, [client, pending, props, t]);

  if (seats === null) return null;
  const policy = current?.plan?.seatPolicy ?? null;
  const price = current?.price ?? null;
  const bought = policy?.mode === 'bought';
  const terms = price ? seatTermsText(price, locale, t) : null;
  const minimum = Math.max(seats.used, price?.seats?.minimum ?? 1);
  const maximum = price?.seats?.maximum ?? undefined;

  return (
    <section className={cx('tg-seats', props.className)} lang={locale} dir={directionOf(locale)} aria-labelledby={ids.title}>
      <h3 className="tg-seats__title" id={ids.title}>
        {t.seats}
      </h3>
      <p className="tg-seats__usage">{format(t.seatsUsed, { used: seats.used, total: seats.total })}</p>
      {terms && <p className="tg-seats__terms">{terms}</p>}
      {policy && !bought && (
        <p className="tg-seats__automatic">{policy.countInvitations ? `${t.seatsAutomatic} ${t.seatsInvitationsCount}` : t.seatsAutomatic}</p>
      )}
      {bought && canManage && (
        <form className="tg-seats__form" onSubmit={(e) => void preview(e)}>
          <label htmlFor={ids.quantity}>{t.seatsQuantity}</label>
          <input
            id={ids.quantity}
            name="quantity"
            type="number"
            inputMode="numeric"
            required
            step={1}
            min={minimum}
            max={maximum}
            value={quantity}
            onChange={(event) => {
              setQuantity(event.target.value);
              setPending(null);
            }}
          />
          <button type="submit" className="tg-seats__preview-button" disabled={busy || Number(quantity) === current?.subscription.quantity}>
            {t.previewSeats}
          </button>
        </form>
      )}
      {error && (
        <p className="tg-seats__error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p className="tg-seats__notice" role="status">
          {notice}
        </p>
      )}
      {pending && (
        <PreviewDialog
          block="tg-seats"
          title={format(t.changeSeatsTitle, { count: pending.quantity })}
          preview={pending.preview}
          locale={locale}
          t={t}
          busy={busy}
          onConfirm={() => void confirm()}
          onCancel={() => setPending(null)}
        />
      )}
    </section>
  );
}
