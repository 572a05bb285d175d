/**
 * The browser client: the session (restored, refreshed, shared with the other tabs), the
 * entitlements cached for it, and the billing routes. index.ts describes its use.
 */
import type { EntitlementCheck, Entitlements } from '../entitlements';
import { satisfies } from '../entitlements';
import { TollgateError } from '../errors';
import type { BrowserSession, ChangePreview, Invoice, MfaChallenge, Plan, Subscription, TollgateUser } from '../types';
import { AccessTokenHolder } from './access-token';
import { EntitlementsReader } from './entitlements-reader';
import type { BrowserClientOptions, CheckoutInput, SignInInput, SignUpInput } from './options';
import { isMfaChallenge, ProjectServer } from './project-server';
import { defaultChannel, defaultLocks, singleFlight, type ChannelLike } from './single-flight';
import { type BrowserState, unreadBilling } from './state';
import { listenToOtherTabs, type TabMessage, tellOtherTabs, watchVisibility } from './tab-events';

export class BrowserClient {
  private readonly fetchFn: typeof fetch;
  private readonly server: ProjectServer;
  private readonly channel: ChannelLike | null;
  private readonly accessToken: AccessTokenHolder;
  private state: BrowserState = { status: 'loading', user: null, expiresAt: null, billing: unreadBilling() };
  private readonly listeners = new Set<() => void>();
  private readonly cleanups: Array<() => void> = [];
  private readonly entitlementsReader = new EntitlementsReader(
    () => Promise.all([this.billing<Entitlements | null>('GET', 'entitlements'), this.billing<{ products: Plan[] }>('GET', 'products')]),
    (patch) => this.set({ billing: { ...this.state.billing, ...patch } }),
  );
  private readonly refreshOnce: () => Promise<BrowserSession | null>;

  constructor(options: BrowserClientOptions = {}) {
    this.fetchFn = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
    this.server = new ProjectServer((options.baseUrl ?? '/tollgate').replace(/\/$/, ''), this.fetchFn);
    this.accessToken = new AccessTokenHolder(
      { marginMs: options.refreshMarginMs ?? 60_000, autoRefresh: options.autoRefresh ?? true, now: options.now ?? (() => Date.now()) },
      () => {
        if (this.state.status === 'signed-in') void this.refreshOnce().catch(() => undefined);
      },
    );
    this.channel = options.channel === undefined ? defaultChannel('tollgate') : options.channel;
    const locks = options.locks === undefined ? defaultLocks() : options.locks;
    this.refreshOnce = singleFlight('tollgate:refresh', locks, () => this.refreshTask());

    if (this.channel) this.cleanups.push(listenToOtherTabs(this.channel, (message) => this.onMessage(message)));
    if (options.watchVisibility ?? true) {
      const stop = watchVisibility(() => {
        if (this.state.status === 'signed-in') void this.refreshEntitlements().catch(() => undefined);
      });
      if (stop) this.cleanups.push(stop);
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
      await this.server.postJson('/session/signout', {});
    } finally {
      this.clearSession();
      tellOtherTabs(this.channel, { type: 'signed-out' });
    }
  }

  /** A valid access token: the one in memory, or a refreshed one when it expires within the margin. Throws `not_signed_in`. */
  async getToken(): Promise<string> {
    const fresh = this.accessToken.fresh();
    if (fresh) return fresh;
    const session = await this.refreshOnce();
    const token = this.accessToken.current();
    if (!session || !token) throw new TollgateError({ code: 'not_signed_in', message: 'Not signed in', status: 401 });
    return token;
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
    this.accessToken.expire();
    return send(await this.getToken());
  }

  private async signInWith(path: string, body: object): Promise<BrowserSession | MfaChallenge> {
    const answer = await this.server.postJson(path, body);
    if (isMfaChallenge(answer)) return answer;
    const session = answer as BrowserSession;
    this.adopt(session);
    tellOtherTabs(this.channel, { type: 'session', session });
    void this.refreshEntitlements().catch(() => undefined);
    return session;
  }

  /** The refresh itself, under the cross-tab lock. */
  private async refreshTask(): Promise<BrowserSession | null> {
    // Another tab may have refreshed while this one waited for the lock and sent the new session.
    const fresh = this.accessToken.fresh();
    if (fresh && this.state.user && this.state.expiresAt) {
      return { token: fresh, expiresAt: this.state.expiresAt, user: this.state.user };
    }
    let session: BrowserSession;
    try {
      session = (await this.server.postJson('/session/refresh', {})) as BrowserSession;
    } catch (error) {
      if (error instanceof TollgateError && error.status === 401) {
        const wasSignedIn = this.state.status === 'signed-in';
        this.clearSession();
        if (wasSignedIn) tellOtherTabs(this.channel, { type: 'signed-out' });
      }
      throw error;
    }
    this.adopt(session);
    tellOtherTabs(this.channel, { type: 'session', session });
    return session;
  }

  private adopt(session: BrowserSession): void {
    const signedInBefore = this.state.status === 'signed-in' ? this.state.user?.id : undefined;
    this.accessToken.hold(session.token, session.expiresAt);
    const userChanged = signedInBefore !== session.user.id;
    this.set({ status: 'signed-in', user: session.user, expiresAt: session.expiresAt, ...(userChanged ? { billing: unreadBilling() } : {}) });
    this.accessToken.schedule();
  }

  private clearSession(): void {
    this.accessToken.clear();
    this.entitlementsReader.forget();
    this.set({ status: 'signed-out', user: null, expiresAt: null, billing: unreadBilling() });
  }

  private onMessage(message: TabMessage): void {
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

  // --- entitlements --------------------------------------------------------------------------

  /** Reads the entitlements and the plan order again (one request of each at a time). */
  refreshEntitlements(): Promise<void> {
    return this.entitlementsReader.refresh();
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
    tellOtherTabs(this.channel, { type: 'billing-changed' });
    await this.refreshEntitlements().catch(() => undefined);
    return result;
  }

  /** A billing route with the user's token (optional for the catalog, which the server also answers with its key). */
  private async billing<T>(method: 'GET' | 'POST', route: string, body?: unknown, options: { optionalAuth?: boolean } = {}): Promise<T> {
    let token: string | undefined;
    if (!options.optionalAuth || this.state.status !== 'signed-out') {
      try {
        token = await this.getToken();
      } catch (error) {
        if (!options.optionalAuth) throw error;
      }
    }
    return this.server.billing<T>(method, route, body, token);
  }

  /** Stops timers and listeners (a page that drops the client). */
  destroy(): void {
    this.accessToken.stop();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.listeners.clear();
  }
}

/** The browser client; see the module's comment. */
export function createBrowserClient(options: BrowserClientOptions = {}): BrowserClient {
  return new BrowserClient(options);
}
