import { useCallback, useEffect, useId } from 'react';
import type { BillingFor, TollgateError, UsageFeature } from '@tollgate/sdk/browser';
import { useLocale, useTollgate, useTollgateState } from './context';
import { directionOf, format, MESSAGES, resolveLocale } from './messages';

export interface UseUsageOptions {
  /** Whose usage: the user's own or the active organization's; the active context's by default (the organization's when one is active). */
  for?: BillingFor;
}

export interface UseUsage {
  /** The feature's standing now (included, used, credits, remaining, overage, limit, resetsAt), or null: not read yet, or not metered for the subject. */
  usage: UsageFeature | null;
  /** True until the context's usage has been read once (signed in). */
  loading: boolean;
  /** The last read's refusal, or null. */
  error: TollgateError | null;
  /** Reads the usage again (after your server consumed some, for instance). */
  refresh(): Promise<void>;
}

/**
 * The context's usage as read into the client's state (`read`: null until read), read on mount and
 * for each new context (components showing the same context share the read); `readable`: signed
 * in, and for an organization's usage with an active organization.
 */
export function useUsageRead(target: BillingFor | undefined) {
  const client = useTollgate();
  const state = useTollgateState();
  const readable = state.status === 'signed-in' && (target !== 'organization' || state.organization !== null);
  const context = readable ? `${target ?? ''}:${state.organization?.id ?? ''}` : null;
  useEffect(() => {
    if (context !== null) void client.refreshUsage({ for: target }).catch(() => undefined);
  }, [client, context, target]);
  return { read: client.cachedUsage({ for: target }), readable };
}

/**
 * A metered feature's usage for the signed-in user or the active organization, read when a
 * component asks (once per context for every component that shows it) and again with the
 * entitlements (the tab visible again, a change of the subscription) or on `refresh()`.
 *
 *   const { usage, refresh } = useUsage('api_calls');
 */
export function useUsage(feature: string, options: UseUsageOptions = {}): UseUsage {
  const client = useTollgate();
  const state = useTollgateState();
  const target = options.for;
  const { read, readable } = useUsageRead(target);
  return {
    usage: read?.features.find((f) => f.feature === feature) ?? null,
    loading: state.status === 'loading' || (readable && !read?.loaded && read?.status !== 'error'),
    error: read?.error ?? null,
    refresh: useCallback(() => client.refreshUsage({ for: target }), [client, target]),
  };
}

export interface UsageBarProps extends UseUsageOptions {
  /** The meter key. */
  feature: string;
  /** The label above the bar; the meter's name by default. */
  label?: string;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
}

/** Where a feature's usage stands: under 80% of what can be used, near the limit, at it, or past it. */
export type UsageLevel = 'ok' | 'warning' | 'full' | 'over';

/**
 * What can be used in the window before the limit: what was used within it (the included amount
 * and the credits drawn) plus what remains.
 */
const capacityOf = (u: UsageFeature) => Math.max(0, u.used - u.overage) + u.remaining;

export function usageLevel(u: UsageFeature): UsageLevel {
  const capacity = capacityOf(u);
  if (u.overage > 0) return 'over';
  if (u.remaining <= 0) return 'full';
  return u.used * 100 >= capacity * 80 ? 'warning' : 'ok';
}

/**
 * A metered feature's usage as a labelled progress bar: "1,234 of 5,000 API calls used · resets
 * Dec 1", the credits left when there are any, and past 80% of what can be used a note: nearly at
 * the limit, the limit reached (100%), or the units past it (billed at the period's end when the
 * plan bills overage). The bar is a `role="progressbar"` with `aria-valuenow` of `aria-valuemax`
 * (what can be used in the window: the included amount and the credits). Nothing while it loads,
 * signed out, or when the feature is not metered for the subject. Class names `tg-usage*`, with
 * `tg-usage--warning`, `--full` and `--over`.
 *
 *   <UsageBar feature="api_calls" />
 */
export function UsageBar(props: UsageBarProps) {
  const providerLocale = useLocale();
  const locale = props.locale ? resolveLocale(props.locale) : providerLocale;
  const t = MESSAGES[locale];
  const { usage } = useUsage(props.feature, props.for ? { for: props.for } : {});
  const labelId = useId();
  if (!usage) return null;
  const number = new Intl.NumberFormat(locale);
  const capacity = capacityOf(usage);
  const level = usageLevel(usage);
  const now = Math.min(usage.used, capacity);
  const used = format(t.usageUsed, {
    used: number.format(usage.used),
    included: number.format(usage.included > 0 ? usage.included : capacity),
    unit: usage.unit,
  });
  const resets = format(t.usageResets, { date: new Date(usage.resetsAt).toLocaleDateString(locale, { month: 'short', day: 'numeric' }) });
  const text = `${used} · ${resets}`;
  const note: string | null =
    level === 'over'
      ? format(usage.limit === 'bill' ? t.usageOverBilled : t.usageOver, { count: number.format(usage.overage) })
      : level === 'full'
        ? t.usageLimitReached
        : level === 'warning'
          ? t.usageNearLimit
          : null;
  return (
    <div className={['tg-usage', level !== 'ok' && `tg-usage--${level}`, props.className].filter(Boolean).join(' ')} lang={locale} dir={directionOf(locale)}>
      <span className="tg-usage__label" id={labelId}>
        {props.label ?? usage.name}
      </span>
      <div
        className="tg-usage__track"
        role="progressbar"
        aria-labelledby={labelId}
        aria-valuemin={0}
        aria-valuemax={capacity}
        aria-valuenow={now}
        aria-valuetext={note ? `${text} · ${note}` : text}
      >
        <div className="tg-usage__fill" style={{ width: `${capacity > 0 ? (now * 100) / capacity : 100}%` }} />
      </div>
      <span className="tg-usage__text">{text}</span>
      {usage.credits > 0 && <span className="tg-usage__credits">{format(t.usageCredits, { count: number.format(usage.credits) })}</span>}
      {note && <span className="tg-usage__note">{note}</span>}
    </div>
  );
}
