import { createContext, useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from 'react';
import {
  createBrowserClient,
  type BrowserClient,
  type BrowserClientOptions,
  type BrowserSession,
  type BrowserState,
  type EntitlementCheck,
  type Entitlements,
  type MfaChallenge,
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

export interface UseEntitlements {
  /** False while the session or the entitlements are loading. */
  isLoaded: boolean;
  /** The entitlements cached for the session: `{plan, status, features}`, or null (none, or signed out). */
  entitlements: Entitlements | null;
  /** The spec's check (plan or above, feature, both) on the cached entitlements. For display: the server decides. */
  has(check: EntitlementCheck): boolean;
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
    // A new function whenever the state changes, so that memoized children see new entitlements.
    has: useCallback((check: EntitlementCheck) => client.has(check), [client, state]),
    refresh: useCallback(() => client.refreshEntitlements(), [client]),
  };
}

export interface ProtectProps extends EntitlementCheck {
  /** Shown when the user does not have it (signed out included). Nothing by default. */
  fallback?: ReactNode;
  /** Shown while the session or the entitlements load. Nothing by default. */
  loading?: ReactNode;
  children?: ReactNode;
}

/**
 * Its children when the user has the plan (or one above it) and/or the feature, from the
 * entitlements cached for the session; `fallback` otherwise. It hides; your server still checks
 * (`requireEntitlement`) before it serves anything paid.
 *
 *   <Protect plan="pro" fallback={<Upgrade />}><Reports /></Protect>
 */
export function Protect({ plan, feature, fallback = null, loading = null, children }: ProtectProps) {
  const { isLoaded, has } = useEntitlements();
  if (!isLoaded) return <>{loading}</>;
  const check: EntitlementCheck = {};
  if (plan !== undefined) check.plan = plan;
  if (feature !== undefined) check.feature = feature;
  return <>{has(check) ? children : fallback}</>;
}
