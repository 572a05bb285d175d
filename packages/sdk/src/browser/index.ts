/**
 * @tollgate/sdk/browser: the signed-in user's session in a page, and their billing.
 *
 *   import { createBrowserClient } from '@tollgate/sdk/browser';
 *   const tollgate = createBrowserClient({ baseUrl: '/tollgate' });   // where the server mounted sessionRoutes()
 *   await tollgate.start();                                           // restores the session from its cookie
 *   await tollgate.signIn({ email, password });
 *   const res = await tollgate.fetch('/api/reports');                 // Authorization: Bearer <fresh token>
 *   tollgate.has({ plan: 'pro' });                                    // from the entitlements cached for the session
 *
 * The access token lives in memory only; the refresh token in the HttpOnly cookie the project
 * server sets. The token is refreshed (rotated) a minute before it expires, once at a time across
 * tabs. Entitlements are cached for the session and read again when the subscription changes
 * through this client (checkout return, subscribe, change, cancel, pause, resume), when another tab
 * says it changed, and when the tab becomes visible again.
 */
import type { EntitlementCheck, Entitlements, RankedPlan } from '../entitlements';
import { satisfies } from '../entitlements';
import { errorOf, fetchOrThrow, TollgateError } from '../errors';
import type { BrowserSession, ChangePreview, Invoice, MfaChallenge, Plan, Subscription, TollgateUser } from '../types';
import { defaultChannel, defaultLocks, singleFlight, type ChannelLike, type LockManagerLike } from './single-flight';

export { satisfies, planAtLeast, type EntitlementCheck, type Entitlements, type RankedPlan } from '../entitlements';
export { TollgateError, isTollgateError, type TollgateErrorCode, type SdkErrorCode, type TollgateErrorBody } from '../errors';
export type { BrowserSession, ChangePreview, Invoice, MfaChallenge, Plan, Price, Subscription, TollgateUser } from '../types';
export { singleFlight, type LockManagerLike, type ChannelLike } from './single-flight';

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

export type SessionStatus = 'loading' | 'signed-in' | 'signed-out';
export type BillingStatus = 'idle' | 'loading' | 'ready' | 'error';

/** Everything a page shows of the client, replaced (never mutated) on every change. */
export interface BrowserState {
  status: SessionStatus;
  user: TollgateUser | null;
  /** When the access token expires (ISO 8601). */
  expiresAt: string | null;
  billing: {
    status: BillingStatus;
    /** The entitlements cached for the session (null: no entitled subscription). */
    entitlements: Entitlements | null;
    /** The plans in the project's order, hidden ones included: the ranking plan checks use. */
    plans: RankedPlan[];
    error: TollgateError | null;
    /** Whether they have been read once for this session (they stay readable while being read again). */
    loaded: boolean;
  };
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
export interface CheckoutInput {
  priceId: string;
  successUrl: string;
  cancelUrl: string;
  promotionCode?: string;
  trialDays?: number;
}

/** The part of `document` the client watches. */
interface VisibilityTarget {
  visibilityState: string;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

type Message = { type: 'session'; session: BrowserSession } | { type: 'signed-out' } | { type: 'billing-changed' };

const isMfaChallenge = (value: unknown): value is MfaChallenge => typeof value === 'object' && value !== null && (value as MfaChallenge).mfa_required === true;

/** Seconds of life the token was issued with (its exp - iat), read without trusting it: only to time the refresh. */
function tokenLifetimeMs(token: string): number | null {
  try {
    const part = token.split('.')[1];
    if (!part) return null;
    const claims = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number; iat?: number };
    return typeof claims.exp === 'number' && typeof claims.iat === 'number' ? (claims.exp - claims.iat) * 1000 : null;
  } catch {
    return null;
  }
}

const randomKey = () =>
  typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;

export class BrowserClient {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;
  private readonly channel: ChannelLike | null;
  private readonly margin: number;
  private readonly autoRefresh: boolean;
  private readonly now: () => number;
  private state: BrowserState = { status: 'loading', user: null, expiresAt: null, billing: { status: 'idle', entitlements: null, plans: [], error: null, loaded: false } };
  private token: string | null = null;
  /** Local time after which the token counts as expiring. */
  private refreshAt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly cleanups: Array<() => void> = [];
  private billingLoad: Promise<void> | null = null;
  private billingGeneration = 0;
  private readonly refreshOnce: () => Promise<BrowserSession | null>;

  constructor(options: BrowserClientOptions = {}) {
    this.base = (options.baseUrl ?? '/tollgate').replace(/\/$/, '');
    this.fetchFn = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
    this.margin = options.refreshMarginMs ?? 60_000;
    this.autoRefresh = options.autoRefresh ?? true;
    this.now = options.now ?? (() => Date.now());
    this.channel = options.channel === undefined ? defaultChannel('tollgate') : options.channel;
    const locks = options.locks === undefined ? defaultLocks() : options.locks;
    this.refreshOnce = singleFlight('tollgate:refresh', locks, () => this.refreshTask());

    if (this.channel) {
      const onMessage = (event: { readonly type?: string; readonly data?: unknown }) => this.onMessage(event.data as Message);
      this.channel.addEventListener('message', onMessage);
      this.cleanups.push(() => {
        this.channel?.removeEventListener?.('message', onMessage);
        this.channel?.close?.();
      });
    }
    const doc = (globalThis as { document?: VisibilityTarget }).document;
    if ((options.watchVisibility ?? true) && doc && typeof doc.addEventListener === 'function') {
      const onVisible = () => {
        if (doc.visibilityState === 'visible' && this.state.status === 'signed-in') void this.refreshEntitlements().catch(() => undefined);
      };
      doc.addEventListener('visibilitychange', onVisible);
      this.cleanups.push(() => doc.removeEventListener('visibilitychange', onVisible));
    }
  }

  // --- state -------------------------------------------------------------------------------

  getState = (): BrowserState => this.state;

  /** Calls `listener` after every change of the state; answers the function that stops it. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(patch: Partial<BrowserState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of [...this.listeners]) listener();
  }

  private setBilling(patch: Partial<BrowserState['billing']>): void {
    this.set({ billing: { ...this.state.billing, ...patch } });
  }

  get user(): TollgateUser | null {
    return this.state.user;
  }

  // --- session -----------------------------------------------------------------------------

  /** Restores the session from the cookie (one refresh) and loads the entitlements; resolves signed in or out. */
  async start(): Promise<BrowserState> {
    if (this.state.status === 'loading') {
      try {
        await this.refreshOnce();
      } catch (error) {
        if (this.state.status === 'loading') this.set({ status: 'signed-out' });
        if (!(error instanceof TollgateError) || error.status !== 401) throw error;
      }
    }
    if (this.state.status === 'signed-in' && this.state.billing.status === 'idle') await this.refreshEntitlements().catch(() => undefined);
    return this.state;
  }

  signUp(input: SignUpInput): Promise<BrowserSession | MfaChallenge> {
    return this.signInWith('/session/signup', input);
  }

  signIn(input: SignInInput): Promise<BrowserSession | MfaChallenge> {
    return this.signInWith('/session/signin', input);
  }

  /** The second step of a sign-in that answered an MFA challenge. */
  async verifyMfa(input: { challenge: string; code: string; method: 'totp' | 'sms' | 'backup_codes' }): Promise<BrowserSession> {
    const answer = await this.signInWith('/session/mfa', input);
    if (isMfaChallenge(answer)) throw new TollgateError({ code: 'unexpected_response', message: 'Tollgate asked for another MFA step', status: 200 });
    return answer;
  }

  /** Ends the session (Tollgate revokes it) in this tab and the others. */
  async signOut(): Promise<void> {
    try {
      await this.postJson('/session/signout', {});
    } finally {
      this.clearSession();
      this.post({ type: 'signed-out' });
    }
  }

  /** A valid access token: the one in memory, or a refreshed one when it expires within the margin. Throws `not_signed_in`. */
  async getToken(): Promise<string> {
    if (this.token && this.now() < this.refreshAt) return this.token;
    const session = await this.refreshOnce();
    if (!session || !this.token) throw new TollgateError({ code: 'not_signed_in', message: 'Not signed in', status: 401 });
    return this.token;
  }

  /**
   * `fetch` to your own API with `Authorization: Bearer <access token>`; a 401 is retried once
   * after a refresh (the token may have just been revoked or expired).
   */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const send = async (token: string) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return this.fetchFn(input, { ...init, headers });
    };
    const first = await send(await this.getToken());
    if (first.status !== 401) return first;
    this.refreshAt = 0;
    return send(await this.getToken());
  }

  private async signInWith(path: string, body: object): Promise<BrowserSession | MfaChallenge> {
    const answer = await this.postJson(path, body);
    if (isMfaChallenge(answer)) return answer;
    const session = answer as BrowserSession;
    this.adopt(session);
    this.post({ type: 'session', session });
    void this.refreshEntitlements().catch(() => undefined);
    return session;
  }

  /** The refresh itself, under the cross-tab lock. */
  private async refreshTask(): Promise<BrowserSession | null> {
    // Another tab may have refreshed while this one waited for the lock and sent the new session.
    if (this.token && this.now() < this.refreshAt && this.state.user && this.state.expiresAt) {
      return { token: this.token, expiresAt: this.state.expiresAt, user: this.state.user };
    }
    let session: BrowserSession;
    try {
      session = (await this.postJson('/session/refresh', {})) as BrowserSession;
    } catch (error) {
      if (error instanceof TollgateError && error.status === 401) {
        const wasSignedIn = this.state.status === 'signed-in';
        this.clearSession();
        if (wasSignedIn) this.post({ type: 'signed-out' });
      }
      throw error;
    }
    this.adopt(session);
    this.post({ type: 'session', session });
    return session;
  }

  private adopt(session: BrowserSession): void {
    const signedInBefore = this.state.status === 'signed-in' ? this.state.user?.id : undefined;
    this.token = session.token;
    const lifetime = tokenLifetimeMs(session.token) ?? Date.parse(session.expiresAt) - this.now();
    this.refreshAt = this.now() + Math.max(lifetime - this.margin, Math.min(lifetime / 2, 5_000));
    const userChanged = signedInBefore !== session.user.id;
    this.set({
      status: 'signed-in',
      user: session.user,
      expiresAt: session.expiresAt,
      ...(userChanged ? { billing: { status: 'idle', entitlements: null, plans: [], error: null, loaded: false } } : {}),
    });
    this.schedule();
  }

  private clearSession(): void {
    this.token = null;
    this.refreshAt = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.billingGeneration++;
    this.set({ status: 'signed-out', user: null, expiresAt: null, billing: { status: 'idle', entitlements: null, plans: [], error: null, loaded: false } });
  }

  private schedule(): void {
    if (!this.autoRefresh) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(this.refreshAt - this.now(), 1_000);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.state.status === 'signed-in') void this.refreshOnce().catch(() => undefined);
    }, delay);
  }

  private onMessage(message: Message): void {
    if (!message || typeof message !== 'object') return;
    if (message.type === 'session') {
      const sameUser = this.state.user?.id === message.session.user.id;
      this.adopt(message.session);
      if (!sameUser) void this.refreshEntitlements().catch(() => undefined);
    } else if (message.type === 'signed-out') {
      if (this.state.status !== 'signed-out') this.clearSession();
    } else if (message.type === 'billing-changed') {
      if (this.state.status === 'signed-in') void this.refreshEntitlements().catch(() => undefined);
    }
  }

  private post(message: Message): void {
    try {
      this.channel?.postMessage(message);
    } catch {
      // A closed channel: the other tabs learn on their next refresh.
    }
  }

  // --- entitlements --------------------------------------------------------------------------

  /** Reads the entitlements and the plan order again (one request of each at a time). */
  refreshEntitlements(): Promise<void> {
    if (this.billingLoad) return this.billingLoad;
    const generation = ++this.billingGeneration;
    this.setBilling({ status: 'loading' });
    this.billingLoad = (async () => {
      try {
        const [entitlements, products] = await Promise.all([
          this.billing<Entitlements | null>('GET', 'entitlements'),
          this.billing<{ products: Plan[] }>('GET', 'products'),
        ]);
        if (generation !== this.billingGeneration) return;
        this.setBilling({
          status: 'ready',
          entitlements,
          plans: products.products.map((p) => ({ id: p.id, name: p.name, position: p.position })),
          error: null,
          loaded: true,
        });
      } catch (error) {
        if (generation === this.billingGeneration) this.setBilling({ status: 'error', error: error as TollgateError });
        throw error;
      } finally {
        this.billingLoad = null;
      }
    })();
    return this.billingLoad;
  }

  /** The entitlements cached for the session (null: none, or not loaded yet: see `state.billing.status`). */
  get entitlements(): Entitlements | null {
    return this.state.billing.entitlements;
  }

  /** The spec's check against the cached entitlements: plan or above, feature, or both. For display; your server decides. */
  has(check: EntitlementCheck): boolean {
    return satisfies(this.state.billing.entitlements, check, this.state.billing.plans);
  }

  // --- billing -------------------------------------------------------------------------------

  /** Visible plans in hierarchy order, lowest tier first (signed out too: the server asks with its key). */
  async plans(): Promise<Plan[]> {
    return (await this.billing<{ plans: Plan[] }>('GET', 'plans', undefined, { optionalAuth: true })).plans;
  }

  /** Every plan in hierarchy order, hidden ones included. */
  async products(): Promise<Plan[]> {
    return (await this.billing<{ products: Plan[] }>('GET', 'products', undefined, { optionalAuth: true })).products;
  }

  subscription(): Promise<Subscription | null> {
    return this.billing('GET', 'subscription');
  }

  async invoices(limit?: number): Promise<Invoice[]> {
    return (await this.billing<{ invoices: Invoice[] }>('GET', `invoices${limit ? `?limit=${limit}` : ''}`)).invoices;
  }

  /** Starts a hosted checkout: `{id, url}`; send the browser to `url` (or use `redirectToCheckout`). */
  checkout(input: CheckoutInput): Promise<{ id: string; url: string }> {
    return this.billing('POST', 'checkout', input);
  }

  /** Starts a checkout and sends the browser there. The entitlements are read again when it comes back (a new page load). */
  async redirectToCheckout(input: CheckoutInput): Promise<void> {
    const { url } = await this.checkout(input);
    (globalThis as unknown as { location: { assign(url: string): void } }).location.assign(url);
  }

  /** What changing to `newPriceId` would charge now (the proration), changing nothing. */
  previewChange(newPriceId: string): Promise<ChangePreview> {
    return this.billing('POST', 'subscription/change/preview', { new_price_id: newPriceId });
  }

  changePlan(newPriceId: string): Promise<Subscription> {
    return this.changing(this.billing('POST', 'subscription/change', { new_price_id: newPriceId }));
  }

  /** Cancels at the end of the period (default) or now (`{ atPeriodEnd: false }`). */
  cancel(options: { atPeriodEnd?: boolean } = {}): Promise<Subscription> {
    return this.changing(this.billing('POST', 'subscription/cancel', options.atPeriodEnd === undefined ? {} : { at_period_end: options.atPeriodEnd }));
  }

  pause(): Promise<Subscription> {
    return this.changing(this.billing('POST', 'subscription/pause'));
  }

  resume(): Promise<Subscription> {
    return this.changing(this.billing('POST', 'subscription/resume'));
  }

  /** Subscribes with a confirmed payment method (pm_...). */
  subscribeWith(input: { priceId: string; paymentMethodId: string }): Promise<Subscription> {
    return this.changing(this.billing('POST', 'subscribe', input));
  }

  setupIntent(): Promise<{ clientSecret: string; publishableKey: string }> {
    return this.billing('POST', 'setup-intent');
  }

  /** After a change of the subscription: the entitlements are read again, here and in the other tabs. */
  private async changing<T>(call: Promise<T>): Promise<T> {
    const result = await call;
    this.post({ type: 'billing-changed' });
    await this.refreshEntitlements().catch(() => undefined);
    return result;
  }

  /** A billing route through the project server, with the user's token and, for a POST, an Idempotency-Key. */
  private async billing<T>(method: 'GET' | 'POST', route: string, body?: unknown, options: { optionalAuth?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (!options.optionalAuth || this.state.status !== 'signed-out') {
      try {
        headers.authorization = `Bearer ${await this.getToken()}`;
      } catch (error) {
        if (!options.optionalAuth) throw error;
      }
    }
    if (method === 'POST') {
      headers['idempotency-key'] = randomKey();
      if (body !== undefined) headers['content-type'] = 'application/json';
    }
    const res = await fetchOrThrow(this.fetchFn, `${this.base}/api/proxy/billing/${route}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return this.read<T>(res);
  }

  private async postJson(path: string, body: object): Promise<unknown> {
    const res = await fetchOrThrow(this.fetchFn, `${this.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
    return this.read(res);
  }

  private async read<T>(res: Response): Promise<T> {
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      throw new TollgateError({ code: 'unexpected_response', message: `Expected JSON, got ${res.status} ${text.slice(0, 80)}`, status: res.status });
    }
    if (!res.ok) throw errorOf(res.status, body);
    return body as T;
  }

  /** Stops timers and listeners (a page that drops the client). */
  destroy(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.listeners.clear();
  }
}

/** The browser client; see the module's comment. */
export function createBrowserClient(options: BrowserClientOptions = {}): BrowserClient {
  return new BrowserClient(options);
}
