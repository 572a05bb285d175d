/**
 * The browser client: the session (restored, refreshed, shared with the other tabs), the
 * entitlements and usage cached for it, the billing routes, the user's organizations and passkeys. index.ts describes its use.
 */
import type { Entitlements } from '../entitlements';
import { satisfies } from '../entitlements';
import { TollgateError } from '../errors';
import { asksBilling, asksOrganization, billingPart, organizationOfToken, organizationSatisfies, type AccessCheck } from '../organizations';
import type {
  ActiveOrganization,
  BrowserSession,
  ChangePreview,
  CreditPack,
  Invoice,
  MfaChallenge,
  Plan,
  SubjectUsage,
  Subscription,
  TollgateUser,
} from '../types';
import { AccessTokenHolder, tokenExpiry } from './access-token';
import { EntitlementsReader } from './entitlements-reader';
import type {
  BillingTarget,
  BrowserClientOptions,
  CancelOptions,
  CheckoutInput,
  CreditPackCheckoutInput,
  InvoicesOptions,
  MfaInput,
  SignInInput,
  SignUpInput,
  SubscribeInput,
} from './options';
import { BrowserOrganizations, type MyOrganizations, OrganizationsReader } from './organizations';
import { BrowserPasskeys } from './passkeys';
import { isMfaChallenge, ProjectServer } from './project-server';
import { defaultChannel, defaultLocks, type LockManagerLike, singleFlight, type ChannelLike } from './single-flight';
import { type BrowserState, unreadBilling, unreadOrganizations, unreadUsage, type UsageRead } from './state';
import { listenToOtherTabs, type TabMessage, tellOtherTabs, watchVisibility } from './tab-events';
import { UsageReader, usageKey } from './usage-reader';

export class BrowserClient {
  private readonly fetchFn: typeof fetch;
  private readonly server: ProjectServer;
  private readonly channel: ChannelLike | null;
  private readonly accessToken: AccessTokenHolder;
  private readonly locks: LockManagerLike | null;
  private state: BrowserState = {
    status: 'loading',
    user: null,
    expiresAt: null,
    organization: null,
    billing: unreadBilling(),
    organizations: unreadOrganizations(),
    usage: {},
  };
  private readonly listeners = new Set<() => void>();
  private readonly cleanups: Array<() => void> = [];
  private readonly entitlementsReader = new EntitlementsReader(
    async (organizationId) => {
      const [entitled, products] = await Promise.all([this.contextEntitlements(organizationId), this.billing<{ products: Plan[] }>('GET', 'products')]);
      return { ...entitled, products };
    },
    (patch) => this.set({ billing: { ...this.state.billing, ...patch } }),
    // The active context: the organization the token held names, or the user.
    () => this.state.organization?.id ?? null,
  );
  private readonly organizationsReader = new OrganizationsReader(
    () =>
      Promise.all([
        this.proxy<MyOrganizations>('GET', '/api/proxy/organizations'),
        this.proxy<{ invitations: BrowserState['organizations']['invitations'] }>('GET', '/api/proxy/invitations'),
      ]),
    (patch) => this.set({ organizations: { ...this.state.organizations, ...patch } }),
  );
  private readonly usageReader = new UsageReader(
    (target) => this.proxy<SubjectUsage>('GET', `/api/proxy/usage?for=${target}`),
    (key, patch) => this.set({ usage: { ...this.state.usage, [key]: { ...(this.state.usage[key] ?? unreadUsage()), ...patch } } }),
  );
  private readonly refreshOnce: () => Promise<BrowserSession | null>;
  /**
   * The user's organizations: every end-user organization route (create, members, invitations,
   * roles, domains, accept...), and `refresh()` to read the list into `state.organizations`.
   */
  readonly organizations: BrowserOrganizations;
  /**
   * Passkeys: the signed-in user's (`register`, `list`, `rename`, `remove`), signing in with one
   * (`signIn`, also from an input's autofill), signing up with one, and `supported()`.
   */
  readonly passkeys: BrowserPasskeys;

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
    this.locks = locks;
    this.refreshOnce = singleFlight('tollgate:refresh', locks, () => this.refreshTask());
    this.organizations = new BrowserOrganizations(
      {
        call: (method, path, body) => this.proxy(method, path, body),
        state: () => this.state,
        changed: () => this.organizationsChanged(),
        reissue: async () => {
          this.accessToken.expire();
          await this.getToken();
        },
        setActive: (id) => this.setActiveOrganization(id),
      },
      this.organizationsReader,
    );
    this.passkeys = new BrowserPasskeys({
      call: (method, path, body) => this.proxy(method, path, body),
      post: async <T>(path: string, body: object) => (await this.server.postJson(path, body)) as T,
      signIn: (path, body) => this.signInWith(path, body),
    });

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

  /** The active organization of the access token held (its claim, for display), or null. */
  get organization(): ActiveOrganization | null {
    return this.state.organization;
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

  /**
   * The second step of a sign-in that answered an MFA challenge: a code, or `{ challenge, method:
   * 'passkey' }` (when `methods` lists it), which asks the browser for one of the user's passkeys.
   */
  async verifyMfa(input: MfaInput): Promise<BrowserSession> {
    const answer = input.method === 'passkey' ? await this.passkeys.verifyMfa(input.challenge) : await this.signInWith('/session/mfa', input);
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

  /**
   * Verifies the signed-in user's email address with the 6-digit code Tollgate emailed at sign-up
   * (an invitation can only be accepted by a verified address); the session is then refreshed so
   * that `user.email_verified` says so.
   */
  async verifyEmail(code: string): Promise<TollgateUser> {
    await this.server.postJson('/session/verify-email', { code }, await this.getToken());
    this.accessToken.expire();
    await this.getToken();
    return this.state.user!;
  }

  /** Emails the signed-in user a new verification code. */
  async resendVerification(): Promise<void> {
    await this.server.postJson('/session/resend-verification', {}, await this.getToken());
  }

  /**
   * Makes `organizationId` the session's active organization (null: none). Tollgate answers a new
   * access token naming it, which is held in place of the old one at once (the refresh token stays;
   * refreshes keep the organization), sent to the other tabs, and used by every later call; the
   * entitlements are read again, the organization's now (the user's own again after `null`).
   * Answers the organization with the user's role and permissions.
   */
  async setActiveOrganization(organizationId: string | null): Promise<ActiveOrganization | null> {
    const token = await this.getToken();
    // Under the refresh lock: a refresh answered after the switch would bring back the old organization.
    const task = async () => {
      const answer = await this.server.proxy<{ token: string; organization: ActiveOrganization | null }>(
        'POST',
        '/api/proxy/organizations/active',
        { organization_id: organizationId },
        token,
      );
      const user = this.state.user;
      if (!user) throw new TollgateError({ code: 'not_signed_in', message: 'Not signed in', status: 401 });
      const session: BrowserSession = { token: answer.token, expiresAt: tokenExpiry(answer.token) ?? this.state.expiresAt ?? new Date().toISOString(), user };
      this.adopt(session);
      tellOtherTabs(this.channel, { type: 'session', session });
      return answer.organization;
    };
    const organization = await (this.locks ? this.locks.request('tollgate:refresh', task) : task());
    void this.refreshEntitlements().catch(() => undefined);
    return organization;
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
    if (userChanged) {
      this.organizationsReader.forget();
      this.usageReader.forget();
    }
    const organization = organizationOfToken(session.token);
    // Another active organization (or none any more): the entitlements cached were the other context's.
    const contextChanged = !userChanged && (this.state.organization?.id ?? null) !== (organization?.id ?? null) && this.state.billing.status !== 'idle';
    this.set({
      status: 'signed-in',
      user: session.user,
      expiresAt: session.expiresAt,
      // The same object while the claim says the same, so that a refresh re-renders nothing that shows it.
      organization: sameOrganization(this.state.organization, organization) ? this.state.organization : organization,
      ...(userChanged ? { billing: unreadBilling(), organizations: unreadOrganizations(), usage: {} } : {}),
      ...(contextChanged ? { billing: { ...this.state.billing, entitlements: null, organizationId: null, loaded: false } } : {}),
    });
    this.accessToken.schedule();
    if (contextChanged) void this.refreshEntitlements().catch(() => undefined);
  }

  private clearSession(): void {
    this.accessToken.clear();
    this.entitlementsReader.forget();
    this.organizationsReader.forget();
    this.usageReader.forget();
    this.set({
      status: 'signed-out',
      user: null,
      expiresAt: null,
      organization: null,
      billing: unreadBilling(),
      organizations: unreadOrganizations(),
      usage: {},
    });
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
    } else if (message.type === 'organizations-changed') {
      if (this.state.status === 'signed-in' && this.state.organizations.status !== 'idle') void this.organizationsReader.reread().catch(() => undefined);
    }
  }

  // --- entitlements --------------------------------------------------------------------------

  /**
   * Reads the entitlements of the active context and the plan order again (one request of each at a
   * time): the active organization's (`GET billing/entitlements?for=organization`: a member is
   * entitled to its plan) when the token held names one, else the user's own. A token that still
   * names an organization the user is no longer a member of reads the user's, as Tollgate's token
   * verification does. The usage read so far for the user and the active organization is read again too.
   */
  refreshEntitlements(): Promise<void> {
    const organizationId = this.state.organization?.id ?? null;
    for (const target of ['user', 'organization'] as const) {
      const key = usageKey(target, organizationId);
      if (key !== null && this.state.usage[key]) void this.usageReader.refresh(key, target).catch(() => undefined);
    }
    return this.entitlementsReader.refresh();
  }

  // --- usage ---------------------------------------------------------------------------------
  // The active context's by default: the active organization's when the token names one, else the
  // user's own; `{ for: 'user' }` or `{ for: 'organization' }` names one.

  private usageTarget(options: BillingTarget): 'user' | 'organization' {
    return options.for ?? (this.state.organization ? 'organization' : 'user');
  }

  /** The usage of every metered feature (included, used, credits, remaining, overage, limit, resetsAt), read now, not cached. */
  usage(options: BillingTarget = {}): Promise<SubjectUsage> {
    return this.proxy('GET', `/api/proxy/usage?for=${this.usageTarget(options)}`);
  }

  /**
   * Reads the usage into the state (`state.usage`, `cachedUsage()`), one read at a time per
   * context; read again with the entitlements once read (tab visible again, a subscription change).
   * Nothing without a session, or for `{ for: 'organization' }` without an active organization.
   */
  refreshUsage(options: BillingTarget = {}): Promise<void> {
    const target = this.usageTarget(options);
    const key = this.state.status === 'signed-in' ? usageKey(target, this.state.organization?.id ?? null) : null;
    return key === null ? Promise.resolve() : this.usageReader.refresh(key, target);
  }

  /** The usage cached for the context (see `refreshUsage`), or null: not read yet, signed out, no active organization. */
  cachedUsage(options: BillingTarget = {}): UsageRead | null {
    const key = usageKey(this.usageTarget(options), this.state.organization?.id ?? null);
    return (key !== null && this.state.usage[key]) || null;
  }

  /** The entitlements of a context: the organization's, or the user's (none named, or no longer a member). */
  private async contextEntitlements(organizationId: string | null): Promise<{ entitlements: Entitlements | null; organizationId: string | null }> {
    if (organizationId !== null) {
      try {
        return { entitlements: await this.billing<Entitlements | null>('GET', 'entitlements?for=organization'), organizationId };
      } catch (error) {
        if (!(error instanceof TollgateError) || !LEFT_ORGANIZATION.includes(error.code)) throw error;
      }
    }
    return { entitlements: await this.billing<Entitlements | null>('GET', 'entitlements'), organizationId: null };
  }

  /**
   * The entitlements cached for the session, of the active context (the active organization's, else
   * the user's; null: none, or not loaded yet: see `state.billing.status`).
   */
  get entitlements(): Entitlements | null {
    return this.state.billing.entitlements;
  }

  /**
   * The spec's check against the cached entitlements of the active context (plan or above, feature:
   * the active organization's plan when the token names one, else the user's own) and the active
   * organization of the token held (role, permission); every part given must pass, so
   * `has({ plan: 'pro', permission: 'reports:read' })` asks for the team's plan and the member's
   * permission at once. For display; your server decides.
   */
  has(check: AccessCheck): boolean {
    if (asksOrganization(check)) {
      if (!organizationSatisfies(this.state.organization, check)) return false;
      if (!asksBilling(check)) return true;
    }
    return satisfies(this.state.billing.entitlements, billingPart(check), this.state.billing.plans);
  }

  // --- billing -------------------------------------------------------------------------------
  // Every call acts for the signed-in user, or with `{ for: 'organization' }` for the active
  // organization of the token held (reads need membership; changes a role with org:billing:manage).

  /**
   * Visible plans in hierarchy order, lowest tier first (signed out too: the server asks with its
   * key): those sold to users, or with `{ for: 'organization' }` those sold to organizations.
   */
  async plans(options: BillingTarget = {}): Promise<Plan[]> {
    return (await this.billing<{ plans: Plan[] }>('GET', `plans${forQuery(options)}`, undefined, { optionalAuth: true })).plans;
  }

  /** Every plan in hierarchy order, hidden ones included, whoever they are sold to. */
  async products(): Promise<Plan[]> {
    return (await this.billing<{ products: Plan[] }>('GET', 'products', undefined, { optionalAuth: true })).products;
  }

  /** The live subscription (the user's, or the active organization's), or null. */
  subscription(options: BillingTarget = {}): Promise<Subscription | null> {
    return this.billing('GET', `subscription${forQuery(options)}`);
  }

  /** Recent invoices, newest first: `invoices(20)` or `invoices({ limit: 20, for: 'organization' })`. */
  async invoices(options: number | InvoicesOptions = {}): Promise<Invoice[]> {
    const { limit, ...target } = typeof options === 'number' ? { limit: options } : options;
    const query = new URLSearchParams();
    if (limit) query.set('limit', String(limit));
    if (target.for === 'organization') query.set('for', 'organization');
    const search = query.toString();
    return (await this.billing<{ invoices: Invoice[] }>('GET', `invoices${search ? `?${search}` : ''}`)).invoices;
  }

  /**
   * The entitlements read now, not cached: the user's own, or with `{ for: 'organization' }` the
   * active organization's. What `has()` checks is the cached ones of the active context (`entitlements`).
   */
  readEntitlements(options: BillingTarget = {}): Promise<Entitlements | null> {
    return this.billing('GET', `entitlements${forQuery(options)}`);
  }

  /** Starts a hosted checkout: `{id, url}`; send the browser to `url` (or use `redirectToCheckout`). */
  checkout({ for: target, ...input }: CheckoutInput): Promise<{ id: string; url: string }> {
    return this.billing('POST', `checkout${forQuery({ for: target })}`, input);
  }

  /** Starts a checkout and sends the browser there. The entitlements are read again when it comes back (a new page load). */
  async redirectToCheckout(input: CheckoutInput): Promise<void> {
    const { url } = await this.checkout(input);
    (globalThis as unknown as { location: { assign(url: string): void } }).location.assign(url);
  }

  /** The credit packs for sale (the project's active ones, newest first): credits of a meter for a one-off amount. */
  async creditPacks(): Promise<CreditPack[]> {
    return (await this.billing<{ packs: CreditPack[] }>('GET', 'credit-packs')).packs;
  }

  /**
   * Starts the hosted checkout of a credit pack (a one-off payment): `{id, url}`; send the browser
   * to `url` (or use `redirectToCreditPackCheckout`). Once paid, the pack's credits are granted to the
   * user, or with `{ for: 'organization' }` to the active organization (org:billing:manage), once.
   */
  buyCreditPack(packId: string, { for: target, ...input }: CreditPackCheckoutInput): Promise<{ id: string; url: string }> {
    return this.billing('POST', `credit-packs/${encodeURIComponent(packId)}/checkout${forQuery({ for: target })}`, input);
  }

  /** Starts a credit pack's checkout and sends the browser there; the usage is read again when it comes back (a new page load). */
  async redirectToCreditPackCheckout(packId: string, input: CreditPackCheckoutInput): Promise<void> {
    const { url } = await this.buyCreditPack(packId, input);
    (globalThis as unknown as { location: { assign(url: string): void } }).location.assign(url);
  }

  /** What changing to `newPriceId` would charge now (the proration), changing nothing. */
  previewChange(newPriceId: string, options: BillingTarget = {}): Promise<ChangePreview> {
    return this.billing('POST', `subscription/change/preview${forQuery(options)}`, { new_price_id: newPriceId });
  }

  changePlan(newPriceId: string, options: BillingTarget = {}): Promise<Subscription> {
    return this.changing(this.billing('POST', `subscription/change${forQuery(options)}`, { new_price_id: newPriceId }));
  }

  /**
   * What setting the seats of the active organization's per-seat subscription to `quantity` would
   * charge now (added seats, prorated for the rest of the period) or credit, changing nothing:
   * `previewSeats(5, { for: 'organization' })`. Seats belong to organizations: without
   * `{ for: 'organization' }` Tollgate refuses (a user's subscription has none).
   */
  previewSeats(quantity: number, options: BillingTarget = {}): Promise<ChangePreview> {
    return this.billing('POST', `subscription/seats/preview${forQuery(options)}`, { quantity });
  }

  /**
   * Buys or releases seats of the active organization's per-seat subscription, on a plan whose seats
   * are bought (`plan.seatPolicy.mode === 'bought'`; automatic seats follow the members: 409
   * `seats_managed_automatically`): more seats are charged now, prorated; fewer are released as the
   * plan says, never below the seats in use. Needs org:billing:manage. The entitlements (whose
   * `seats` say used/total) are read again, here and in the other tabs.
   */
  setSeats(quantity: number, options: BillingTarget = {}): Promise<Subscription> {
    return this.changing(this.billing('POST', `subscription/seats${forQuery(options)}`, { quantity }));
  }

  /** Cancels at the end of the period (default) or now (`{ atPeriodEnd: false }`). */
  cancel(options: CancelOptions = {}): Promise<Subscription> {
    const body = options.atPeriodEnd === undefined ? {} : { at_period_end: options.atPeriodEnd };
    return this.changing(this.billing('POST', `subscription/cancel${forQuery(options)}`, body));
  }

  pause(options: BillingTarget = {}): Promise<Subscription> {
    return this.changing(this.billing('POST', `subscription/pause${forQuery(options)}`));
  }

  resume(options: BillingTarget = {}): Promise<Subscription> {
    return this.changing(this.billing('POST', `subscription/resume${forQuery(options)}`));
  }

  /** Subscribes with a confirmed payment method (pm_...). */
  subscribeWith({ for: target, ...input }: SubscribeInput): Promise<Subscription> {
    return this.changing(this.billing('POST', `subscribe${forQuery({ for: target })}`, input));
  }

  setupIntent(options: BillingTarget = {}): Promise<{ clientSecret: string; publishableKey: string }> {
    return this.billing('POST', `setup-intent${forQuery(options)}`);
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

  /** A passed-through Tollgate route with the user's token. */
  private async proxy<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.server.proxy<T>(method, path, body, await this.getToken());
  }

  /** After a change of the user's organizations: the list is read again if it was read, here and in the other tabs. */
  private async organizationsChanged(): Promise<void> {
    tellOtherTabs(this.channel, { type: 'organizations-changed' });
    if (this.state.organizations.status !== 'idle') await this.organizationsReader.reread().catch(() => undefined);
  }

  /** Stops timers and listeners (a page that drops the client). */
  destroy(): void {
    this.accessToken.stop();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.listeners.clear();
  }
}

/** `?for=organization` when the call acts for the active organization; nothing for the user (Tollgate's default). */
const forQuery = (target: BillingTarget): string => (target.for === 'organization' ? '?for=organization' : '');

/** Refusals of an organization's read that mean the token names one the user is no longer in: the user's own entitlements count. */
const LEFT_ORGANIZATION: readonly string[] = ['organization_not_found', 'no_active_organization'];

const sameOrganization = (a: ActiveOrganization | null, b: ActiveOrganization | null): boolean =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.id === b.id &&
    a.slug === b.slug &&
    a.role === b.role &&
    a.permissions.length === b.permissions.length &&
    a.permissions.every((p, i) => p === b.permissions[i]));

/** The browser client; see the module's comment. */
export function createBrowserClient(options: BrowserClientOptions = {}): BrowserClient {
  return new BrowserClient(options);
}
