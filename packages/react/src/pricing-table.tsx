import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import {
  amountForSeats,
  isTollgateError,
  seatsAreBought,
  startingSeats,
  type BillingFor,
  type ChangePreview,
  type Plan,
  type Price,
  type Subscription,
} from '@tollgate/sdk/browser';
import { useLocale, useTollgate, useTollgateState } from './context';
import { directionOf, format, formatMoney, MESSAGES, resolveLocale, type Messages } from './messages';

export interface PricingTableProps {
  /**
   * Whom the table sells to: the signed-in user (the default: the plans sold to users), or
   * `"organization"`: the plans sold to organizations, the active organization's subscription
   * marked, and its checkout and plan changes made for the organization (a role with
   * org:billing:manage; Tollgate's refusal shows otherwise).
   */
  for?: BillingFor;
  /** Where the browser returns after paying; this page by default. Must be on the origin of a registered callback URL. */
  successUrl?: string;
  /** Where the checkout's cancel link goes; this page by default. */
  cancelUrl?: string;
  /** A promotion code to apply at checkout. */
  promotionCode?: string;
  /** Days of trial to ask for on plans with trials enabled (the plan's default trial otherwise). */
  trialDays?: number;
  /**
   * With `for="organization"`, on a plan whose seats are bought: the seats its checkout buys. By
   * default the organization's members (at least the price's minimum), or, when the plan also counts
   * pending invitations, the seats Tollgate finds in use. Automatic seats follow the members: no quantity is sent.
   */
  seats?: number;
  /** The interval shown first when plans have both. Default month. */
  defaultInterval?: 'month' | 'year';
  /** Called when a signed-out visitor picks a plan (the buttons are disabled without it). */
  onSignInRequired?(plan: Plan, price: Price): void;
  /** Called after the plan was changed (the entitlements are read again already). */
  onChanged?(subscription: Subscription): void;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

type Interval = 'month' | 'year';

interface PendingChange {
  plan: Plan;
  price: Price;
  preview: ChangePreview;
}

const cx = (...names: Array<string | false | null | undefined>) => names.filter(Boolean).join(' ');

function priceFor(plan: Plan, interval: Interval): Price | undefined {
  return plan.prices.find((p) => p.interval === interval);
}

/**
 * The project's visible plans in hierarchy order (those sold to users, or with `for="organization"`
 * those sold to organizations, bought for the active organization): a monthly/yearly switch when plans have both,
 * the recommended badge, the trial text when a plan has trials, the current plan marked, a per-seat
 * price's terms for an organization ("$8.00/seat/month, 3 seats included") with what its members (or,
 * on the current plan, its seats) come to, and a
 * button that starts the hosted checkout (or, for a subscriber, changes plan after showing the
 * proration preview). Unstyled: class names `tg-pricing*` and, with `@tollgate/react/styles.css`,
 * CSS variables `--tg-*` to theme.
 */
export function PricingTable(props: PricingTableProps) {
  const client = useTollgate();
  const providerLocale = useLocale();
  const locale = props.locale ? resolveLocale(props.locale) : providerLocale;
  const t: Messages = MESSAGES[locale];
  const state = useTollgateState();
  const signedIn = state.status === 'signed-in';
  const entitlementsStamp = state.billing.entitlements;
  const target: BillingFor = props.for ?? 'user';
  // Acting for an organization needs an active one; its id also says when to read the subscription again.
  const organizationId = target === 'organization' ? (state.organization?.id ?? null) : null;
  const hasSubject = target === 'user' || organizationId !== null;
  // The organization's members, from the user's organizations (read once, when this table is the organization's).
  const members = organizationId !== null ? (state.organizations.list.find((o) => o.id === organizationId)?.members_count ?? null) : null;
  const organizationsIdle = state.organizations.status === 'idle';

  const [plans, setPlans] = useState<Plan[] | null>(null);
  const [subscription, setSubscription] = useState<Subscription | null>(null);
  const [interval, setInterval] = useState<Interval>(props.defaultInterval ?? 'month');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<PendingChange | null>(null);
  const id = useId();

  useEffect(() => {
    let live = true;
    client.plans({ for: target }).then(
      (list) => live && setPlans(list),
      (e: unknown) => {
        if (!live) return;
        setPlans([]);
        setError(isTollgateError(e) ? e.message : String(e));
      },
    );
    return () => {
      live = false;
    };
  }, [client, state.status, target]);

  // The subscription (the user's, or the active organization's): read when signed in, and again
  // whenever the cached entitlements or the active organization change.
  useEffect(() => {
    if (!signedIn || !hasSubject) {
      setSubscription(null);
      return;
    }
    let live = true;
    client.subscription({ for: target }).then(
      (s) => live && setSubscription(s),
      () => live && setSubscription(null),
    );
    return () => {
      live = false;
    };
  }, [client, signedIn, hasSubject, target, organizationId, entitlementsStamp]);

  useEffect(() => {
    if (target === 'organization' && signedIn && organizationsIdle) void client.organizations.refresh().catch(() => undefined);
  }, [client, target, signedIn, organizationsIdle]);

  const intervals = plans ? (['month', 'year'] as const).filter((i) => plans.some((p) => priceFor(p, i))) : [];
  const shown: Interval = intervals.includes(interval) ? interval : (intervals[0] ?? 'month');
  const here = typeof window !== 'undefined' ? window.location.href : '';

  const choose = useCallback(
    async (plan: Plan, price: Price) => {
      setError(null);
      if (!signedIn) {
        props.onSignInRequired?.(plan, price);
        return;
      }
      setBusy(price.id);
      try {
        if (subscription) {
          const preview = await client.previewChange(price.id, { for: target });
          setPending({ plan, price, preview });
        } else {
          const trialDays = plan.trialsEnabled ? props.trialDays : undefined;
          // A quantity only for bought seats (automatic ones start at the seats in use; Tollgate refuses one there).
          const quantity = target === 'organization' && price.seats && seatsAreBought(plan) ? boughtSeats(plan, price, props.seats, members) : undefined;
          await client.redirectToCheckout({
            for: target,
            priceId: price.id,
            successUrl: props.successUrl ?? here,
            cancelUrl: props.cancelUrl ?? here,
            ...(props.promotionCode ? { promotionCode: props.promotionCode } : {}),
            ...(trialDays !== undefined ? { trialDays } : {}),
            ...(quantity !== undefined ? { quantity } : {}),
          });
        }
      } catch (e) {
        setError(isTollgateError(e) ? e.message : String(e));
      } finally {
        setBusy(null);
      }
    },
    [client, signedIn, subscription, props, here, target, members],
  );

  const confirm = useCallback(async () => {
    if (!pending) return;
    setBusy(pending.price.id);
    setError(null);
    try {
      const changed = await client.changePlan(pending.price.id, { for: target });
      setSubscription(changed);
      setPending(null);
      props.onChanged?.(changed);
    } catch (e) {
      setError(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  }, [client, pending, props, target]);

  if (plans === null) {
    return (
      <div
        className={cx('tg-pricing', target === 'organization' && 'tg-pricing--organization', props.className)}
        lang={locale}
        dir={directionOf(locale)}
        aria-busy="true"
      >
        <p className="tg-pricing__loading">{t.loading}</p>
      </div>
    );
  }

  return (
    <div className={cx('tg-pricing', target === 'organization' && 'tg-pricing--organization', props.className)} lang={locale} dir={directionOf(locale)}>
      {intervals.length > 1 && (
        <fieldset className="tg-pricing__intervals">
          <legend className="tg-pricing__legend">{t.billingPeriod}</legend>
          {intervals.map((i) => (
            <label key={i} className={cx('tg-pricing__interval-option', shown === i && 'tg-pricing__interval-option--selected')}>
              <input type="radio" name={`${id}-interval`} value={i} checked={shown === i} onChange={() => setInterval(i)} />
              {i === 'month' ? t.monthly : t.yearly}
            </label>
          ))}
        </fieldset>
      )}
      {error && (
        <p className="tg-pricing__error" role="alert">
          {error}
        </p>
      )}
      {plans.length === 0 && !error && <p className="tg-pricing__empty">{t.noPlans}</p>}
      {/* biome-ignore lint/a11y/noRedundantRoles: Safari drops a list's semantics when its style removes the markers; the role keeps them */}
      <ul className="tg-pricing__plans" role="list">
        {plans.map((plan) => {
          const price = priceFor(plan, shown) ?? plan.prices[0];
          const current = subscription?.plan.id === plan.id;
          const currentPrice = current && price !== undefined && subscription?.price.id === price.id;
          const trialDays = props.trialDays ?? plan.defaultTrialDays;
          const headingId = `${id}-plan-${plan.id}`;
          return (
            <li
              key={plan.id}
              className={cx('tg-pricing__plan', plan.recommended && 'tg-pricing__plan--recommended', current && 'tg-pricing__plan--current')}
              aria-labelledby={headingId}
              aria-current={current ? 'true' : undefined}
            >
              <h3 className="tg-pricing__name" id={headingId}>
                {plan.name}
              </h3>
              {plan.recommended && <span className="tg-pricing__badge">{t.recommended}</span>}
              {current && <span className="tg-pricing__current">{t.currentPlan}</span>}
              {plan.description && <p className="tg-pricing__description">{plan.description}</p>}
              {price && (
                <p className="tg-pricing__price">
                  <span className="tg-pricing__amount">
                    {formatMoney(target === 'user' ? amountForSeats(price, startingSeats(price, 1)) : price.amount, price.currency, locale)}
                  </span>{' '}
                  <span className="tg-pricing__per">{price.interval === 'year' ? t.perYear : t.perMonth}</span>
                </p>
              )}
              {price?.seats && target === 'organization' && (
                <SeatTerms
                  price={price}
                  locale={locale}
                  t={t}
                  // The current price: the seats the organization pays for; another: what its members would come to.
                  seats={
                    currentPrice && subscription
                      ? { kind: 'seats', count: subscription.quantity }
                      : members !== null
                        ? { kind: 'members', count: members }
                        : null
                  }
                />
              )}
              {/* Only a trial the button gives: its checkout asks for props.trialDays, else the plan's default; without either there is none. */}
              {plan.trialsEnabled && trialDays ? <p className="tg-pricing__trial">{format(t.trialDays, { days: trialDays })}</p> : null}
              {plan.features.length > 0 && (
                <ul className="tg-pricing__features">
                  {plan.features.map((f) => (
                    <li key={f}>{f}</li>
                  ))}
                </ul>
              )}
              {price && (
                <button
                  type="button"
                  className="tg-pricing__button"
                  disabled={currentPrice || busy !== null || (!signedIn && !props.onSignInRequired)}
                  aria-busy={busy === price.id ? 'true' : undefined}
                  onClick={() => void choose(plan, price)}
                >
                  {currentPrice
                    ? t.currentPlan
                    : !signedIn
                      ? props.onSignInRequired
                        ? t.subscribe
                        : t.signInToSubscribe
                      : subscription
                        ? format(t.switchTo, { plan: plan.name })
                        : t.subscribe}
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {pending && (
        <PreviewDialog
          block="tg-pricing"
          title={format(t.changeTitle, { plan: pending.plan.name })}
          preview={pending.preview}
          locale={locale}
          t={t}
          busy={busy !== null}
          onConfirm={() => void confirm()}
          onCancel={() => setPending(null)}
        />
      )}
    </div>
  );
}

/** A bought-seat checkout's quantity: the prop, else the members (unless invitations count too: then Tollgate's default, the seats in use). */
function boughtSeats(plan: Plan, price: Price, chosen: number | undefined, members: number | null): number | undefined {
  if (chosen !== undefined) return chosen;
  if (members === null || plan.seatPolicy.countInvitations) return undefined;
  return startingSeats(price, members);
}

/** The per-seat wording of a price (`{amount}/seat/month`, `{count} seats included`) in the locale's money format. */
export function seatTermsText(price: Price, locale: string, t: Messages): string | null {
  if (!price.seats) return null;
  const unit = formatMoney(price.seats.unitAmount, price.currency, locale);
  const per = format(price.interval === 'year' ? t.perSeatYear : t.perSeatMonth, { amount: unit });
  const included = price.seats.included;
  return included > 0 ? `${per}, ${format(included === 1 ? (t.seatIncluded ?? t.seatsIncluded) : t.seatsIncluded, { count: included })}` : per;
}

/** What `count` members (or seats) come to on a per-seat price, per interval: "Your 4 members: $68.00 per month". */
export function seatsAmountText(price: Price, seats: { kind: 'members' | 'seats'; count: number }, locale: string, t: Messages): string {
  const quantity = seats.kind === 'members' ? startingSeats(price, seats.count) : seats.count;
  const amount = `${formatMoney(amountForSeats(price, quantity), price.currency, locale)} ${price.interval === 'year' ? t.perYear : t.perMonth}`;
  const message =
    seats.kind === 'members'
      ? seats.count === 1
        ? (t.memberAmount ?? t.membersAmount)
        : t.membersAmount
      : seats.count === 1
        ? (t.seatAmount ?? t.seatsAmount)
        : t.seatsAmount;
  return format(message, { count: seats.count, amount });
}

function SeatTerms(props: { price: Price; locale: string; t: Messages; seats: { kind: 'members' | 'seats'; count: number } | null }) {
  const { price, locale, t } = props;
  return (
    <>
      <p className="tg-pricing__seats">{seatTermsText(price, locale, t)}</p>
      {props.seats && <p className="tg-pricing__seats-amount">{seatsAmountText(price, props.seats, locale, t)}</p>}
    </>
  );
}

/**
 * A change's proration preview with Confirm and Cancel: the table's plan change (`block` tg-pricing)
 * and the seats manager's seats (`tg-seats`), each with its own class names.
 */
export function PreviewDialog(props: {
  block: 'tg-pricing' | 'tg-seats';
  title: string;
  preview: ChangePreview;
  locale: string;
  t: Messages;
  busy: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  const { block, preview, locale, t } = props;
  const titleId = useId();
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => confirmRef.current?.focus(), []);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') props.onCancel();
  };
  const money = (amount: number) => formatMoney(amount, preview.currency, locale);
  return (
    <div className={`${block}__preview`} role="dialog" aria-modal="false" aria-labelledby={titleId} onKeyDown={onKeyDown}>
      <h3 className={`${block}__preview-title`} id={titleId}>
        {props.title}
      </h3>
      <ul className={`${block}__preview-lines`}>
        {preview.lines.map((line, i) => (
          <li key={i}>
            <span>{line.description}</span> <span className={`${block}__preview-amount`}>{money(line.amount)}</span>
          </li>
        ))}
      </ul>
      <p className={`${block}__due`}>
        {t.dueNow}: <strong>{money(preview.amountDue)}</strong>
      </p>
      <div className={`${block}__preview-actions`}>
        <button type="button" ref={confirmRef} className={`${block}__confirm`} disabled={props.busy} onClick={props.onConfirm}>
          {t.confirm}
        </button>
        <button type="button" className={`${block}__cancel`} onClick={props.onCancel}>
          {t.cancel}
        </button>
      </div>
    </div>
  );
}
