import type { ChannelLike, LockManagerLike } from './single-flight';

/** What `createBrowserClient` takes. */
export interface BrowserClientOptions {
  /** Where the project server mounted `tollgate.sessionRoutes()`: a path (`/tollgate`, the default) or an absolute URL. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Cross-tab lock for refreshes; `navigator.locks` by default, null for none. */
  locks?: LockManagerLike | null;
  /** Channel the tabs share sessions and billing changes on; a BroadcastChannel by default, null for none. */
  channel?: ChannelLike | null;
  /** Refresh this long before the access token expires. Default 60 s. */
  refreshMarginMs?: number;
  /** Refresh on a timer before expiry (default true); without it, `getToken()` refreshes when needed. */
  autoRefresh?: boolean;
  /** Read the entitlements again when the tab becomes visible (default true in a browser). */
  watchVisibility?: boolean;
  /** Milliseconds since the epoch (tests). */
  now?: () => number;
}

export interface SignUpInput {
  email: string;
  password: string;
  name?: string | null;
  locale?: string;
}
export interface SignInInput {
  email: string;
  password: string;
  locale?: string;
}
/** The second step of a sign-in (`verifyMfa`): a code of a method the challenge lists, or a passkey. */
export type MfaInput = { challenge: string; code: string; method: 'totp' | 'sms' | 'backup_codes' } | { challenge: string; method: 'passkey' };
/**
 * Whom a billing call acts for: the signed-in user (the default), or the active organization of the
 * access token held (`?for=organization`: reads need membership, changes a role with org:billing:manage).
 */
export type BillingFor = 'user' | 'organization';
/** The option every billing call takes: `{ for: 'organization' }` acts for the active organization. */
export interface BillingTarget {
  for?: BillingFor;
}
export interface CheckoutInput extends BillingTarget {
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCode?: string;
  trialDays?: number;
  /**
   * A per-seat price on a plan whose seats are bought (`plan.seatPolicy.mode === 'bought'`): the seats
   * to buy (default: the seats in use, at least the price's minimum). Leave it out otherwise: automatic
   * seats follow the members, and Tollgate refuses a quantity for them.
   */
  quantity?: number;
}
/** `buyCreditPack`: where the hosted checkout returns; `{ for: 'organization' }` buys for the active organization (org:billing:manage). */
export interface CreditPackCheckoutInput extends BillingTarget {
  /** Where the browser goes once paid: a registered callback URL or on its origin. */
  successUrl: string;
  /** Where the checkout's cancel link goes: a registered callback URL or on its origin. */
  cancelUrl: string;
}
/** `subscribeWith`: a confirmed payment method (pm_...) and the price. */
export interface SubscribeInput extends BillingTarget {
  priceId: string;
  paymentMethodId: string;
  /** As `CheckoutInput.quantity`: bought seats only. */
  quantity?: number;
}
export interface CancelOptions extends BillingTarget {
  /** True (the default): at the end of the period; false: now, nothing refunded. */
  atPeriodEnd?: boolean;
}
export interface InvoicesOptions extends BillingTarget {
  /** 1 to 100; 10 by default. */
  limit?: number;
}
