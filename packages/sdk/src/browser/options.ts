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
export interface CheckoutInput {
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCode?: string;
  trialDays?: number;
}
