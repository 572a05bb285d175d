import { SUPPORTED_LOCALES, isSupportedLocale } from '../../domain/locale';
import { MFA_METHODS, MFA_POLICIES, isMfaMethod } from '../../domain/mfa';
import { validateCallbackUrl } from '../../domain/project';
import { OAUTH_PROVIDERS, PROVIDERS, isOAuthProvider, isProvider } from '../../domain/providers';
import { SECURITY_NOTICE_KINDS, isSecurityNoticeKind } from '../../domain/security-notice';
import type { BillingErrorCode, BillingRefusal } from '../../application/billing/errors';
import type { WebhookErrorCode, WebhookRefusal } from '../../application/webhooks/errors';
import type { ProjectChanges } from '../../application/projects/update-project';
import { FEATURE_MAX_LENGTH, parseFeatureList, type PlanInput } from '../../domain/billing/catalog';
import { SEAT_MODES, type SeatPolicy } from '../../domain/billing/seat-terms';
import { messageWith, type ErrorCode } from '../../contract/errors';

/** A failed command: its stable code (a use-case error code, or `usage`) and a message for people. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const list = (values: readonly string[]) => values.join(', ');

/** What the caller asked for, used to name the offending value in a message. */
export interface ErrorContext {
  projectId?: string;
  keyId?: string;
  userId?: string;
  callbackUrls?: string[];
  changes?: ProjectChanges;
  /** The use case's own words for the value at fault (which credential field, and why). */
  detail?: string;
}

/** The value at fault, found in what the caller asked for: put into the message, then `tail` appended. */
interface Offending {
  detail?: string;
  tail?: string;
}
const quoted = (value: string) => `"${value}"`;

/**
 * For the codes whose message can name the offending value: where to find it. The wording itself
 * is the error table's (contract/errors), shared with the HTTP API and the console.
 */
const OFFENDING: { readonly [C in ErrorCode]?: (ctx: ErrorContext) => Offending } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId ?? '(no id)'}` }),
  api_key_not_found: (ctx) => ({ detail: `${ctx.keyId ?? ''} in project ${ctx.projectId ?? ''}` }),
  user_not_found: (ctx) => ({ detail: `${ctx.userId ?? ''} in project ${ctx.projectId ?? ''}` }),
  invalid_callback_url: (ctx) => {
    const bad = [...(ctx.callbackUrls ?? []), ...(ctx.changes?.addCallbackUrls ?? [])].find((u) => !validateCallbackUrl(u));
    return { detail: bad === undefined ? undefined : quoted(bad) };
  },
  unknown_provider: (ctx) => {
    const c = ctx.changes ?? {};
    const toggle = [...(c.enable ?? []), ...(c.disable ?? [])].find((p) => !isProvider(p));
    if (toggle !== undefined) return { detail: quoted(toggle), tail: `: expected one of ${list(PROVIDERS)}` };
    const cred = (c.providerCredentials ?? []).find((p) => !isOAuthProvider(p.provider));
    return { detail: `${cred ? `${quoted(cred.provider)} ` : ''}for --provider-credentials`, tail: `: expected one of ${list(OAUTH_PROVIDERS)}` };
  },
  invalid_mfa_policy: (ctx) => ({ detail: quoted(ctx.changes?.mfaPolicy ?? ''), tail: `: expected one of ${list(MFA_POLICIES)}` }),
  invalid_mfa_method: (ctx) => {
    const bad = (ctx.changes?.mfaMethods ?? []).find((m) => !isMfaMethod(m));
    return bad === undefined
      ? { tail: `: --mfa-methods needs at least one, as a comma-separated list of ${list(MFA_METHODS)}` }
      : { detail: quoted(bad), tail: `: expected a comma-separated list of ${list(MFA_METHODS)}` };
  },
  unsupported_locale: (ctx) => {
    const value = ctx.changes?.defaultLocale ?? '';
    return { detail: quoted(value), tail: isSupportedLocale(value) ? '' : `: expected one of ${list(SUPPORTED_LOCALES)}` };
  },
  unknown_notification_kind: (ctx) => {
    const bad = Object.keys(ctx.changes?.securityNotifications ?? {}).find((k) => !isSecurityNoticeKind(k));
    return { detail: bad === undefined ? undefined : quoted(bad), tail: `: expected one of ${list(SECURITY_NOTICE_KINDS)}` };
  },
};

/** Turns an error code returned by a use case into its message from the error table, naming the offending value. */
export function useCaseError(code: ErrorCode, ctx: ErrorContext = {}): CommandError {
  const { detail, tail } = ctx.detail !== undefined ? { detail: ctx.detail, tail: '' } : (OFFENDING[code]?.(ctx) ?? {});
  return new CommandError(code, `${messageWith(code, detail, tail)}.`);
}

/** What a billing command asked for, used to name the offending value in a message. */
export interface BillingErrorContext {
  projectId?: string;
  /** A plan as the operator named it (id or name). */
  plan?: string;
  /** `plan reorder`'s list. */
  plans?: string[];
  priceId?: string;
  planInput?: Partial<PlanInput>;
  priceName?: string;
  /** `--amount` as given. */
  amount?: string;
  /** Appended to an invalid amount's message: what the currency accepts. */
  amountHint?: string;
  currency?: string;
  interval?: string;
  userId?: string;
  /** `billing sandbox advance --days` as given. */
  days?: string;
  /** `billing sandbox promo`'s code and `--percent-off`. */
  code?: string;
  percentOff?: string;
  /** `org seats`'s quantity as given. */
  quantity?: string;
  /** `price create --per-seat`: a per-seat price's refusal names the CLI's options. */
  seatOptions?: boolean;
}

/** When a freed seat stops being billed (domain/billing/seat-terms.ts `SeatPolicy.removal`). */
const SEAT_REMOVALS: readonly SeatPolicy['removal'][] = ['period_end', 'immediately'];

/** The first feature flag that `normalizeFeatures` would refuse, for the message. */
function badFeature(features: PlanInput['features']): string | undefined {
  if (features === undefined || features === null) return undefined;
  const list = typeof features === 'string' ? parseFeatureList(features) : features.map((f) => f.trim());
  return list.find((f) => f.length === 0 || f.length > FEATURE_MAX_LENGTH || f.includes(',') || /[\u0000-\u001f\u007f]/.test(f));
}

const BILLING_OFFENDING: { readonly [C in BillingErrorCode]?: (ctx: BillingErrorContext) => Offending } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId ?? '(no id)'}` }),
  user_not_found: (ctx) => ({ detail: `${ctx.userId ?? ''} in project ${ctx.projectId ?? ''}` }),
  plan_not_found: (ctx) => ({
    tail: ctx.plan !== undefined ? `: ${quoted(ctx.plan)} in project ${ctx.projectId ?? ''}` : ` in project ${ctx.projectId ?? ''}`,
  }),
  plan_name_taken: (ctx) => ({ tail: ctx.planInput?.name !== undefined ? `: ${quoted(ctx.planInput.name.trim())}` : '' }),
  price_not_found: (ctx) => ({ tail: ctx.priceId !== undefined ? `: ${ctx.priceId} in project ${ctx.projectId ?? ''}` : '' }),
  invalid_plan_name: (ctx) => ({ detail: ctx.planInput?.name !== undefined ? quoted(ctx.planInput.name) : undefined }),
  invalid_feature: (ctx) => {
    const bad = badFeature(ctx.planInput?.features);
    return { detail: bad === undefined ? undefined : quoted(bad.length > 40 ? `${bad.slice(0, 40)}…` : bad) };
  },
  trials_not_enabled: (ctx) => ({
    tail: ctx.planInput ? ': --trial-days needs trials turned on (--trials, or --trials on for plan update)' : '',
  }),
  invalid_price_name: (ctx) => ({ detail: ctx.priceName !== undefined ? quoted(ctx.priceName) : undefined }),
  invalid_amount: (ctx) => ({ detail: ctx.amount !== undefined ? quoted(ctx.amount) : undefined, tail: ctx.amountHint }),
  invalid_currency: (ctx) => ({ detail: ctx.currency !== undefined ? quoted(ctx.currency) : undefined }),
  invalid_interval: (ctx) => ({ detail: ctx.interval !== undefined ? quoted(ctx.interval) : undefined }),
  invalid_quantity: (ctx) => ({ tail: ctx.quantity !== undefined ? `, got ${quoted(ctx.quantity)}` : '' }),
  invalid_seat_policy: (ctx) => {
    const given = ctx.planInput;
    const modeBad = given?.seatMode !== undefined && !(SEAT_MODES as readonly string[]).includes(given.seatMode);
    const removalBad = given?.seatRemoval !== undefined && !(SEAT_REMOVALS as readonly string[]).includes(given.seatRemoval);
    const bad = modeBad ? given?.seatMode : removalBad ? given?.seatRemoval : undefined;
    return { detail: bad !== undefined ? quoted(bad) : undefined };
  },
  seats_not_for_users: (ctx) => ({
    tail:
      ctx.seatOptions && ctx.plan !== undefined
        ? ` (tollgate plan update ${ctx.projectId ?? '<project>'} ${quoted(ctx.plan)} --audience organizations)`
        : ctx.planInput?.audience !== undefined && ctx.plan !== undefined
          ? ` (plan ${quoted(ctx.plan)} has a per-seat price)`
          : '',
  }),
  invalid_sandbox_days: (ctx) => ({ detail: ctx.days !== undefined ? quoted(ctx.days) : undefined }),
  invalid_promotion_code: (ctx) => ({ detail: ctx.code !== undefined ? quoted(ctx.code) : undefined }),
  invalid_percent_off: (ctx) => ({ detail: ctx.percentOff !== undefined ? quoted(ctx.percentOff) : undefined }),
};

/** A processor's or validator's reason added to the table's message, which stays the stable wording. */
function withReason(message: string, reason: string | undefined): string {
  const said = reason?.trim().replace(/\.$/, '');
  if (!said || message.includes(said)) return message;
  if (said.startsWith(message)) return said;
  return message.includes(': ') ? `${message} (${said})` : `${message}: ${said}`;
}

/**
 * Turns a billing use case's refusal into its message from the error table, naming the offending
 * value, plus the processor's own reason when it gave one (e.g. why Stripe refused a key).
 */
export function billingError(refusal: BillingRefusal, ctx: BillingErrorContext = {}): CommandError {
  const code = refusal.error;
  const { detail, tail } = BILLING_OFFENDING[code]?.(ctx) ?? {};
  const reason = ctx.seatOptions && code === 'invalid_seat_pricing' ? seatOptionReason(refusal.detail) : refusal.detail;
  return new CommandError(code, `${withReason(messageWith(code, detail, tail), reason)}.`);
}

/** A per-seat price's fields as `price create` names them. */
const SEAT_OPTION_NAMES: Record<string, string> = { unitAmount: '--unit-amount', included: '--included', minimum: '--minimum', maximum: '--maximum' };

/** The use case's reason for a bad per-seat price (`minimum: a whole number ...`), naming the option instead of the field. */
const seatOptionReason = (reason: string | undefined): string | undefined =>
  reason?.replace(/^(unitAmount|included|minimum|maximum):/, (_, field: string) => `${SEAT_OPTION_NAMES[field]}:`);

/** What a webhook command asked for, used to name the offending value in a message. */
export interface WebhookErrorContext {
  projectId?: string;
  endpointId?: string;
  deliveryId?: string;
  url?: string;
  events?: string;
  since?: string;
}

const WEBHOOK_OFFENDING: { readonly [C in WebhookErrorCode]?: (ctx: WebhookErrorContext) => Offending } = {
  project_not_found: (ctx) => ({ tail: `: ${ctx.projectId ?? '(no id)'}` }),
  webhook_endpoint_not_found: (ctx) => ({ tail: `: ${ctx.endpointId ?? ''} in project ${ctx.projectId ?? ''}` }),
  webhook_delivery_not_found: (ctx) => ({ tail: `: ${ctx.deliveryId ?? ''} in project ${ctx.projectId ?? ''}` }),
  invalid_webhook_url: (ctx) => ({ detail: ctx.url !== undefined ? quoted(ctx.url) : undefined }),
  webhook_url_not_https: (ctx) => ({ detail: ctx.url !== undefined ? quoted(ctx.url) : undefined }),
  webhook_url_private: (ctx) => ({ detail: ctx.url !== undefined ? quoted(ctx.url) : undefined }),
  webhook_url_unresolvable: (ctx) => ({ detail: ctx.url !== undefined ? quoted(ctx.url) : undefined }),
  invalid_webhook_events: (ctx) => ({ detail: ctx.events !== undefined ? quoted(ctx.events) : undefined }),
  invalid_replay_since: (ctx) => ({ detail: ctx.since !== undefined ? quoted(ctx.since) : undefined }),
};

/** Turns a webhook use case's refusal into its message from the error table, naming the offending value and why (which address). */
export function webhookError(refusal: WebhookRefusal, ctx: WebhookErrorContext = {}): CommandError {
  const code = refusal.error;
  const { detail, tail } = WEBHOOK_OFFENDING[code]?.(ctx) ?? {};
  return new CommandError(code, `${withReason(messageWith(code, detail, tail), refusal.detail)}.`);
}

/** Explains faults that have a likely cause (no database, no schema) without leaking connection strings. */
export function describeFault(e: unknown): CommandError {
  const error = e as { code?: string; message?: string; address?: string; port?: number };
  if (error?.code === '42P01') {
    return new CommandError('not_migrated', 'The database has no Tollgate tables yet: run `tollgate migrate` first.');
  }
  if (error?.code === 'ECONNREFUSED' || error?.code === 'ENOTFOUND' || error?.code === 'ETIMEDOUT') {
    const where = error.address ? ` at ${error.address}${error.port ? `:${error.port}` : ''}` : '';
    return new CommandError('database_unavailable', `Could not connect to PostgreSQL${where} (${error.code}). Check DATABASE_URL.`);
  }
  if (error?.code === '3D000' || error?.code === '28P01' || error?.code === '28000') {
    return new CommandError('database_unavailable', `PostgreSQL refused the connection: ${error.message ?? error.code}. Check DATABASE_URL.`);
  }
  const message = error instanceof Error ? error.message : String(e);
  return new CommandError('internal_error', `Unexpected error: ${message}`);
}
