import { useCallback, useEffect, useState, type ReactNode } from 'react';
import {
  isTollgateError,
  type BrowserSession,
  type MfaChallenge,
  type Passkey,
  type PasskeySignInInput,
  type RegisterPasskeyInput,
  type TollgateError,
} from '@tollgate/sdk/browser';
import { useLocale, useTollgate, useTollgateState } from './context';
import { directionOf, MESSAGES, resolveLocale } from './messages';

const cx = (...names: Array<string | false | null | undefined>) => names.filter(Boolean).join(' ');
/** Refusals the user made themselves (dismissing the browser's dialog) or that another ceremony caused: nothing to show. */
const quiet = (e: unknown) => isTollgateError(e) && (e.code === 'passkey_cancelled' || e.code === 'passkey_aborted');

export interface UsePasskeys {
  /** Whether this browser can use passkeys (WebAuthn); false while rendering on a server. */
  isSupported: boolean;
  /** False until the signed-in user's passkeys have been read once (true when signed out: there are none to read). */
  isLoaded: boolean;
  /** The signed-in user's passkeys, newest first. */
  passkeys: Passkey[];
  /** The last read's error, or null. */
  error: TollgateError | null;
  /** The browser's dialog, then Tollgate stores the passkey; the list is read again. */
  register(input?: RegisterPasskeyInput): Promise<Passkey>;
  rename(passkeyId: string, name: string): Promise<Passkey>;
  /** Refused (409) when it is the account's only way to sign in; the list is read again. */
  remove(passkeyId: string): Promise<void>;
  /** Signs in with a passkey (signed out): a session, or an MFA challenge by the project's policy. */
  signIn(input?: PasskeySignInInput): Promise<BrowserSession | MfaChallenge>;
  /** Reads the list again. */
  reload(): Promise<void>;
}

/**
 * The signed-in user's passkeys, read when a component asks (and again after each change made
 * through the hook), with the actions that change them; and passkey sign-in for a signed-out page.
 *
 *   const { passkeys, register, remove } = usePasskeys();
 */
export function usePasskeys(): UsePasskeys {
  const client = useTollgate();
  const state = useTollgateState();
  const userId = state.status === 'signed-in' ? (state.user?.id ?? null) : null;
  const [read, setRead] = useState<{ userId: string | null; passkeys: Passkey[]; error: TollgateError | null } | null>(null);
  const [isSupported, setSupported] = useState(false);
  // After mounting: a page rendered on a server (no WebAuthn there) hydrates without a mismatch.
  useEffect(() => setSupported(client.passkeys.supported()), [client]);

  const reload = useCallback(async () => {
    if (client.getState().status !== 'signed-in') return;
    const reader = client.getState().user?.id ?? null;
    try {
      const passkeys = await client.passkeys.list();
      setRead({ userId: reader, passkeys, error: null });
    } catch (e) {
      setRead((previous) => ({ userId: reader, passkeys: previous?.userId === reader ? previous.passkeys : [], error: e as TollgateError }));
      throw e;
    }
  }, [client]);

  useEffect(() => {
    if (userId) void reload().catch(() => undefined);
  }, [userId, reload]);

  const current = read && read.userId === userId ? read : null;
  return {
    isSupported,
    isLoaded: state.status === 'signed-out' || (state.status === 'signed-in' && current !== null),
    passkeys: current?.passkeys ?? [],
    error: current?.error ?? null,
    register: useCallback(
      async (input?: RegisterPasskeyInput) => {
        const passkey = await client.passkeys.register(input);
        await reload().catch(() => undefined);
        return passkey;
      },
      [client, reload],
    ),
    rename: useCallback(
      async (passkeyId: string, name: string) => {
        const passkey = await client.passkeys.rename(passkeyId, name);
        await reload().catch(() => undefined);
        return passkey;
      },
      [client, reload],
    ),
    remove: useCallback(
      async (passkeyId: string) => {
        await client.passkeys.remove(passkeyId);
        await reload().catch(() => undefined);
      },
      [client, reload],
    ),
    signIn: useCallback((input?: PasskeySignInInput) => client.passkeys.signIn(input), [client]),
    reload,
  };
}

export interface PasskeyButtonProps {
  /** `sign-in`: a signed-out visitor signs in with a passkey. `register`: the signed-in user adds one. */
  mode: 'sign-in' | 'register';
  /** sign-in: offer that account's passkeys only (default: any the browser holds for the site). */
  email?: string;
  /** register: the new passkey's name (default: after its authenticator). */
  name?: string;
  /** sign-in: the session, or the MFA challenge to answer (`verifyMfa`) when the project's policy asks for one. */
  onSignedIn?(answer: BrowserSession | MfaChallenge): void;
  /** register: the new passkey. */
  onRegistered?(passkey: Passkey): void;
  /** Every refusal but the user's own cancel (which shows nothing); it is also shown under the button. */
  onError?(error: TollgateError): void;
  /** One of the 20 locales; the provider's by default. */
  locale?: string;
  className?: string;
  /** The label ("Sign in with a passkey", "Add a passkey" in the locale by default). */
  children?: ReactNode;
}

/**
 * A button that runs a passkey ceremony: signing in (signed out) or adding a passkey to the
 * signed-in user's account. Nothing when the browser has no WebAuthn, or in register mode when
 * nobody is signed in. Dismissing the browser's dialog shows nothing; Tollgate's refusals show
 * under the button (`role="alert"`). Class names `tg-passkey-button*`. A page that lists the
 * passkeys (`usePasskeys`) reads them again after `onRegistered`, or registers through the hook.
 */
export function PasskeyButton(props: PasskeyButtonProps) {
  const client = useTollgate();
  const state = useTollgateState();
  const providerLocale = useLocale();
  const locale = props.locale ? resolveLocale(props.locale) : providerLocale;
  const t = MESSAGES[locale];
  const [supported, setSupported] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // After mounting: a page rendered on a server (no WebAuthn there) hydrates without a mismatch.
  useEffect(() => setSupported(client.passkeys.supported()), [client]);

  if (!supported || (props.mode === 'register' && state.status !== 'signed-in')) return null;

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      if (props.mode === 'register') {
        const passkey = await client.passkeys.register(props.name !== undefined ? { name: props.name } : {});
        props.onRegistered?.(passkey);
      } else {
        const answer = await client.passkeys.signIn(props.email ? { email: props.email } : {});
        props.onSignedIn?.(answer);
      }
    } catch (e) {
      if (quiet(e)) return;
      if (isTollgateError(e)) props.onError?.(e);
      setError(isTollgateError(e) ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <span className={cx('tg-passkey-button', props.className)} lang={locale} dir={directionOf(locale)}>
      <button type="button" className="tg-passkey-button__button" disabled={busy} aria-busy={busy || undefined} onClick={() => void run()}>
        {props.children ?? (props.mode === 'register' ? t.addPasskey : t.signInWithPasskey)}
      </button>
      {error && (
        <span className="tg-passkey-button__error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
