import { createContext, useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from 'react';
import {
  createBrowserClient,
  organizationSatisfies,
  type AcceptInvitationInput,
  type AccessCheck,
  type ActiveOrganization,
  type BrowserClient,
  type BrowserClientOptions,
  type BrowserSession,
  type BrowserState,
  type CreateOrganizationInput,
  type Entitlements,
  type MfaChallenge,
  type MyInvitation,
  type MyOrganization,
  type OrganizationCheck,
  type OrganizationSuggestion,
  type SignInInput,
  type SignUpInput,
  type TollgateUser,
} from '@tollgate/sdk/browser';
import { resolveLocale, type Locale } from './messages';

interface TollgateContextValue {
  client: BrowserClient;
  locale: Locale;
}

const TollgateContext = createContext<TollgateContextValue | null>(null);

export interface TollgateProviderProps extends BrowserClientOptions {
  /** A client made with createBrowserClient (one is made from the other props otherwise). */
  client?: BrowserClient;
  /** One of the 20 locales (or a tag such as pt-BR); the browser's language by default. */
  locale?: string;
  children?: ReactNode;
}

/**
 * Holds the user's session for the components below it: restores it on mount (one refresh through
 * the project server's session routes) and loads the entitlements.
 *
 *   <TollgateProvider baseUrl="/tollgate"><App /></TollgateProvider>
 */
export function TollgateProvider({ client: given, locale, children, ...options }: TollgateProviderProps) {
  const [client] = useState(() => given ?? createBrowserClient(options));
  useEffect(() => {
    void client.start().catch(() => undefined);
    // A page restored from the back/forward cache (e.g. back from checkout) reads the entitlements again.
    const onPageShow = (event: PageTransitionEvent) => {
      if (event.persisted && client.getState().status === 'signed-in') void client.refreshEntitlements().catch(() => undefined);
    };
    window.addEventListener('pageshow', onPageShow);
    return () => {
      window.removeEventListener('pageshow', onPageShow);
      if (!given) client.destroy();
    };
  }, [client, given]);
  const value = useMemo(() => ({ client, locale: resolveLocale(locale ?? (typeof navigator !== 'undefined' ? navigator.language : 'en')) }), [client, locale]);
  return <TollgateContext.Provider value={value}>{children}</TollgateContext.Provider>;
}

function useTollgateContext(): TollgateContextValue {
  const value = useContext(TollgateContext);
  if (!value) throw new Error('Tollgate components and hooks must be inside <TollgateProvider>');
  return value;
}

/** The browser client of the nearest provider. */
export const useTollgate = (): BrowserClient => useTollgateContext().client;
/** The locale the components speak. */
export const useLocale = (): Locale => useTollgateContext().locale;

/** The client's state, re-rendering on every change. */
export function useTollgateState(): BrowserState {
  const client = useTollgate();
  return useSyncExternalStore(client.subscribe, client.getState, client.getState);
}

export interface UseUser {
  /** False until the session has been restored (or found missing). */
  isLoaded: boolean;
  isSignedIn: boolean;
  user: TollgateUser | null;
  signIn(input: SignInInput): Promise<BrowserSession | MfaChallenge>;
  signUp(input: SignUpInput): Promise<BrowserSession | MfaChallenge>;
  signOut(): Promise<void>;
  /** A fresh access token for your own API calls. */
  getToken(): Promise<string>;
}

/** The signed-in user and the session's actions. */
export function useUser(): UseUser {
  const client = useTollgate();
  const state = useTollgateState();
  return {
    isLoaded: state.status !== 'loading',
    isSignedIn: state.status === 'signed-in',
    user: state.user,
    signIn: useCallback((input: SignInInput) => client.signIn(input), [client]),
    signUp: useCallback((input: SignUpInput) => client.signUp(input), [client]),
    signOut: useCallback(() => client.signOut(), [client]),
    getToken: useCallback(() => client.getToken(), [client]),
  };
}

export interface UseOrganizationList {
  /** False until the session is known and, signed in, the list has been read once. */
  isLoaded: boolean;
  /** The user's organizations, each with their role and its permissions. */
  organizations: MyOrganization[];
  /** Invitations to the user's verified address that wait for an answer. */
  invitations: MyInvitation[];
  /** Organizations that verified the domain of the user's email and suggest joining. */
  suggestions: OrganizationSuggestion[];
  /** The project wants every user in an organization. */
  required: boolean;
  /** The user may create organizations. */
  canCreate: boolean;
  /** The id of the active organization of the token held, or null. */
  activeId: string | null;
  /** Makes an organization (null: none) active: a new access token that names it replaces the old one, for every later call. */
  setActive(organizationId: string | null): Promise<ActiveOrganization | null>;
  /** Creates an organization with the user as its owner (not active until `setActive`). */
  create(input: CreateOrganizationInput): Promise<MyOrganization>;
  /** Accepts an invitation by the token of its link (`?tollgate_invitation=`) or its id; not active until `setActive`. */
  acceptInvitation(input: AcceptInvitationInput): Promise<MyOrganization>;
  declineInvitation(invitationId: string): Promise<void>;
  /** Reads the list and the invitations again. */
  reload(): Promise<void>;
}

/** Reads the user's organizations into the client's state once a component asks for them. */
function useOrganizationsRead(client: BrowserClient, state: BrowserState): void {
  const signedIn = state.status === 'signed-in';
  const idle = state.organizations.status === 'idle';
  useEffect(() => {
    if (signedIn && idle) void client.organizations.refresh().catch(() => undefined);
  }, [client, signedIn, idle]);
}

/** The user's organizations and pending invitations, with the actions that change them. */
export function useOrganizationList(): UseOrganizationList {
  const client = useTollgate();
  const state = useTollgateState();
  useOrganizationsRead(client, state);
  const list = state.organizations;
  return {
    isLoaded: state.status === 'signed-out' || (state.status === 'signed-in' && (list.loaded || list.status === 'error')),
    organizations: list.list,
    invitations: list.invitations,
    suggestions: list.suggestions,
    required: list.required,
    canCreate: list.canCreate,
    activeId: state.organization?.id ?? null,
    setActive: useCallback((id: string | null) => client.organizations.setActive(id), [client]),
    create: useCallback((input: CreateOrganizationInput) => client.organizations.create(input), [client]),
    acceptInvitation: useCallback((input: AcceptInvitationInput) => client.organizations.accept(input), [client]),
    declineInvitation: useCallback((id: string) => client.organizations.decline(id), [client]),
    reload: useCallback(() => client.organizations.refresh(), [client]),
  };
}

export interface UseOrganization {
  /** False until the session is known and, with an active organization, its details have been read. */
  isLoaded: boolean;
  /**
   * The active organization as the access token names it (its `org` claim: id, slug, the user's
   * role and permissions when the token was issued), without a call; null: none.
   */
  active: ActiveOrganization | null;
  /** Its details (name, image, members_count, metadata, the user's role as it is now), or null: none or not read yet. */
  organization: MyOrganization | null;
  /** The user's role or permission in the active organization (the token's claim). For display: your server decides. */
  has(check: OrganizationCheck): boolean;
  /** Reads the details again. */
  reload(): Promise<void>;
}

/** The active organization: from the token at once, and its details from the user's organizations. */
export function useOrganization(): UseOrganization {
  const client = useTollgate();
  const state = useTollgateState();
  useOrganizationsRead(client, state);
  const active = state.organization;
  const organization = active ? (state.organizations.list.find((o) => o.id === active.id) ?? null) : null;
  const listRead = state.organizations.loaded || state.organizations.status === 'error';
  return {
    isLoaded: state.status === 'signed-out' || (state.status === 'signed-in' && (active === null || listRead)),
    active,
    organization,
    has: useCallback((check: OrganizationCheck) => organizationSatisfies(active, check), [active]),
    reload: useCallback(() => client.organizations.refresh(), [client]),
  };
}

export interface UseEntitlements {
  /** False while the session or the entitlements are loading. */
  isLoaded: boolean;
  /**
   * The entitlements cached for the session, of the active context: the active organization's plan
   * when the token names one (a member is entitled to it), else the user's own: `{plan, status,
   * features}`, or null (none, or signed out).
   */
  entitlements: Entitlements | null;
  /** Whose they are: the id of the organization they were read for, or null: the user's own. */
  organizationId: string | null;
  /**
   * The spec's check (plan or above, feature, both) on the cached entitlements, and the role or
   * permission in the active organization when given (every part must pass). For display: the server decides.
   */
  has(check: AccessCheck): boolean;
  /** Reads them again (done for you after a change through the client and when the tab becomes visible). */
  refresh(): Promise<void>;
}

export function useEntitlements(): UseEntitlements {
  const client = useTollgate();
  const state = useTollgateState();
  const loaded = state.status === 'signed-out' || (state.status === 'signed-in' && (state.billing.loaded || state.billing.status === 'error'));
  return {
    isLoaded: loaded,
    entitlements: state.billing.entitlements,
    organizationId: state.billing.organizationId,
    // A new function whenever the state changes, so that memoized children see new entitlements.
    has: useCallback((check: AccessCheck) => client.has(check), [client, state]),
    refresh: useCallback(() => client.refreshEntitlements(), [client]),
  };
}

export interface ProtectProps extends AccessCheck {
  /** Shown when the user does not have it (signed out included). Nothing by default. */
  fallback?: ReactNode;
  /** Shown while the session or the entitlements load. Nothing by default. */
  loading?: ReactNode;
  children?: ReactNode;
}

/**
 * Its children when the user has the plan (or one above it) and/or the feature, from the
 * entitlements cached for the session (the active organization's plan when one is active, else the
 * user's own), and the role and/or permission in the active organization, from the token's claim;
 * `fallback` otherwise. It hides; your server still checks
 * (`requireEntitlement`, `requireAccess`) before it serves anything.
 *
 *   <Protect plan="pro" fallback={<Upgrade />}><Reports /></Protect>
 *   <Protect permission="org:members:manage"><InviteForm /></Protect>
 */
export function Protect({ plan, feature, role, permission, fallback = null, loading = null, children }: ProtectProps) {
  const { isLoaded, has } = useEntitlements();
  const state = useTollgateState();
  const check: AccessCheck = {};
  if (plan !== undefined) check.plan = plan;
  if (feature !== undefined) check.feature = feature;
  if (role !== undefined) check.role = role;
  if (permission !== undefined) check.permission = permission;
  // A role or permission alone is in the token: it waits for the session only.
  const billing = plan !== undefined || feature !== undefined;
  if (billing ? !isLoaded : state.status === 'loading') return <>{loading}</>;
  return <>{has(check) ? children : fallback}</>;
}
