/**
 * Passkeys in a page: the WebAuthn ceremonies run by @simplewebauthn/browser (which turns Tollgate's
 * JSON options into what navigator.credentials takes and the credential back into JSON, and knows
 * what the browser supports), their options and answers carried through the project server:
 * registering and managing the signed-in user's passkeys through the routes it passes through
 * with the user's access token, signing in and signing up through its session routes (they take
 * the project's API key), and the second factor of a sign-in.
 */
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
} from '@simplewebauthn/browser';
import { TollgateError } from '../errors';
import type { BrowserSession, MfaChallenge, Passkey } from '../types';

export interface RegisterPasskeyInput {
  /** 1 to 64 characters; Tollgate names it after its authenticator (or "Passkey") without one. */
  name?: string;
}

export interface PasskeySignInInput {
  /** Offer that account's passkeys only; without it the browser offers any passkey it holds for the site. */
  email?: string;
  /**
   * Conditional mediation: the browser offers the passkeys in the autofill of an input whose
   * `autocomplete` ends in `webauthn` (`<input autocomplete="username webauthn">`), and the promise
   * settles when the user picks one. Start it when the sign-in page shows; a button's
   * `signIn()` stops it (it then rejects with `passkey_aborted`). Its challenge is renewed before
   * it expires.
   */
  autofill?: boolean;
  /** Stops the ceremony (it rejects with `passkey_aborted`), e.g. when the sign-in page goes away. */
  signal?: AbortSignal;
}

export interface PasskeySignUpInput {
  email: string;
  /** The user's name. */
  name?: string | null;
  /** The language of the email with the code (default: the project's). */
  locale?: string;
}

export interface VerifyPasskeySignUpInput {
  email: string;
  /** The 6-digit code of the email `signUp` sent. */
  code: string;
  /** The passkey's name (default: after its authenticator). */
  passkeyName?: string;
}

/** What the passkeys need of the browser client. */
export interface PasskeysHost {
  /** A Tollgate route the project server passes through, with the user's access token. */
  call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A session route whose answer is only read (options, a sign-up's first step). */
  post<T>(path: string, body: object): Promise<T>;
  /** A session route that answers a session (held, like every sign-in's) or an MFA challenge. */
  signIn(path: string, body: object): Promise<BrowserSession | MfaChallenge>;
}

interface Options<T> {
  options: T;
}

/** How long a conditional request waits before asking for a new challenge (Tollgate's live 5 minutes). */
const AUTOFILL_RENEW_MS = 4 * 60_000;

const seg = encodeURIComponent;
const stopped = () => new TollgateError({ code: 'passkey_aborted', message: 'The passkey ceremony was stopped', status: 0 });
const failure = (code: 'passkeys_unsupported' | 'passkey_cancelled' | 'passkey_aborted' | 'passkey_ceremony_failed', message: string, cause?: unknown) =>
  new TollgateError({ code, message, status: 0, ...(cause === undefined ? {} : { cause }) });

/**
 * The browser's refusal of a ceremony as a TollgateError: the user dismissed it or it timed out
 * (`passkey_cancelled`), another ceremony or a signal stopped it (`passkey_aborted`), the
 * authenticator already holds a passkey of this account (`passkey_already_registered`, as Tollgate
 * says it), no WebAuthn (`passkeys_unsupported`), anything else (`passkey_ceremony_failed`).
 */
export function ceremonyError(error: unknown): TollgateError {
  if (error instanceof TollgateError) return error;
  const e = (error ?? {}) as { name?: string; code?: string; message?: string };
  const message = e.message ?? String(error);
  if (e.code === 'ERROR_CEREMONY_ABORTED' || e.name === 'AbortError') return failure('passkey_aborted', 'The passkey ceremony was stopped', error);
  if (e.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
    return new TollgateError({
      code: 'passkey_already_registered',
      message: 'This authenticator already holds a passkey of this account',
      status: 0,
      cause: error,
    });
  }
  if (e.name === 'NotAllowedError') return failure('passkey_cancelled', 'The passkey request was cancelled or timed out', error);
  if (/not supported in this browser|does not support WebAuthn/i.test(message)) return failure('passkeys_unsupported', message, error);
  return failure('passkey_ceremony_failed', message, error);
}

/**
 * The signed-in user's passkeys (`register`, `list`, `rename`, `remove`), signing in and signing up
 * with one, and the passkey step of an MFA challenge. The browser's dialogs are its own; a refusal
 * rejects with a TollgateError (`passkey_cancelled`, `passkey_aborted`, `passkeys_unsupported`...),
 * Tollgate's refusals with its codes.
 */
export class BrowserPasskeys {
  /** The ceremony started last: a signal stops only its own, and an autofill that waited for its options yields to a newer one. */
  private current = 0;

  constructor(private readonly host: PasskeysHost) {}

  /** Whether this browser can use passkeys at all (WebAuthn). */
  supported(): boolean {
    return browserSupportsWebAuthn();
  }

  /** Whether it can offer them in an input's autofill (`signIn({ autofill: true })`). */
  autofillSupported(): Promise<boolean> {
    return browserSupportsWebAuthnAutofill();
  }

  /**
   * Creates a passkey for the signed-in user: Tollgate's options (the project's relying party, the
   * user's passkeys to exclude), the browser's dialog, then Tollgate verifies and stores it. The user
   * gets a security notice by email.
   */
  async register(input: RegisterPasskeyInput = {}): Promise<Passkey> {
    this.requireSupport();
    const id = ++this.current;
    const { options } = await this.host.call<Options<PublicKeyCredentialCreationOptionsJSON>>('POST', '/api/proxy/passkeys/register/options');
    const response = await this.ceremony(id, () => startRegistration({ optionsJSON: options }));
    const answer = await this.host.call<{ passkey: Passkey }>('POST', '/api/proxy/passkeys/register/verify', {
      response,
      ...(input.name !== undefined ? { name: input.name } : {}),
    });
    return answer.passkey;
  }

  /** The user's passkeys, newest first. */
  async list(): Promise<Passkey[]> {
    return (await this.host.call<{ passkeys: Passkey[] }>('GET', '/api/proxy/passkeys')).passkeys;
  }

  rename(passkeyId: string, name: string): Promise<Passkey> {
    return this.host.call<Passkey>('PATCH', `/api/proxy/passkeys/${seg(passkeyId)}`, { name });
  }

  /**
   * Deletes a passkey (the user gets a notice). Refused with `passkey_last_sign_in_method` when it
   * is the account's only way to sign in, `mfa_last_method` when the project requires MFA and it is
   * the last method. The browser may still offer the passkey in its dialogs; Tollgate refuses it.
   */
  async remove(passkeyId: string): Promise<void> {
    await this.host.call('DELETE', `/api/proxy/passkeys/${seg(passkeyId)}`);
  }

  /**
   * Signs in with a passkey (through the session routes, which hold the API key): a session, held
   * like a password sign-in's, or an MFA challenge when the project's policy asks for a second step
   * (a passkey used with user verification, PIN or biometrics, counts as both factors).
   */
  async signIn(input: PasskeySignInInput = {}): Promise<BrowserSession | MfaChallenge> {
    if (input.autofill && !(await this.autofillSupported())) throw failure('passkeys_unsupported', 'This browser does not offer passkeys in autofill');
    this.requireSupport();
    const id = ++this.current;
    const body = input.email ? { email: input.email } : {};
    for (;;) {
      if (input.signal?.aborted) throw stopped();
      const { options } = await this.host.post<Options<PublicKeyCredentialRequestOptionsJSON>>('/session/passkey-options', body);
      let renewing = false;
      const renew = input.autofill
        ? setTimeout(() => {
            renewing = true;
            WebAuthnAbortService.cancelCeremony();
          }, AUTOFILL_RENEW_MS)
        : undefined;
      try {
        const autofill = input.autofill === true;
        const response = await this.ceremony(id, () => startAuthentication({ optionsJSON: options, useBrowserAutofill: autofill }), {
          conditional: autofill,
          ...(input.signal ? { signal: input.signal } : {}),
        });
        clearTimeout(renew);
        return await this.host.signIn('/session/passkey', { response });
      } catch (error) {
        // The autofill's challenge was about to expire: ask for a new one and wait again.
        if (renewing && error instanceof TollgateError && error.code === 'passkey_aborted' && !input.signal?.aborted) continue;
        throw error;
      } finally {
        clearTimeout(renew);
      }
    }
  }

  /**
   * Starts signing up with a passkey and no password: Tollgate emails a 6-digit code to the
   * address (`email_already_registered` when it already has an account that signs in).
   * `verifySignUp` follows.
   */
  async signUp(input: PasskeySignUpInput): Promise<void> {
    this.requireSupport();
    await this.host.post('/session/passkey-signup', {
      email: input.email,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.locale !== undefined ? { locale: input.locale } : {}),
    });
  }

  /** The code verifies the address; the browser then creates the account's first passkey, and the new user is signed in. */
  async verifySignUp(input: VerifyPasskeySignUpInput): Promise<BrowserSession | MfaChallenge> {
    this.requireSupport();
    const id = ++this.current;
    const { options } = await this.host.post<Options<PublicKeyCredentialCreationOptionsJSON>>('/session/passkey-signup-options', {
      email: input.email,
      code: input.code,
    });
    const response = await this.ceremony(id, () => startRegistration({ optionsJSON: options }));
    return this.host.signIn('/session/passkey-signup-verify', { response, ...(input.passkeyName !== undefined ? { name: input.passkeyName } : {}) });
  }

  /** The passkey step of an MFA challenge whose `methods` list `passkey`: a session, or Tollgate's refusal. */
  async verifyMfa(challenge: string): Promise<BrowserSession | MfaChallenge> {
    this.requireSupport();
    const id = ++this.current;
    const { options } = await this.host.post<Options<PublicKeyCredentialRequestOptionsJSON>>('/session/mfa-passkey-options', { challenge });
    const assertion = await this.ceremony(id, () => startAuthentication({ optionsJSON: options }));
    return this.host.signIn('/session/mfa', { challenge, method: 'passkey', assertion });
  }

  /** Stops the ceremony under way, if any (its promise rejects with `passkey_aborted`). */
  cancel(): void {
    WebAuthnAbortService.cancelCeremony();
  }

  private requireSupport(): void {
    if (!this.supported()) throw failure('passkeys_unsupported', 'This browser does not support passkeys (WebAuthn)');
  }

  /**
   * One browser ceremony (`id`: its call's): its refusal as a TollgateError; `signal` stops it while
   * it is the latest one. A conditional one (autofill) does not start once a newer call began:
   * starting would stop that call's dialog.
   */
  private async ceremony<T>(id: number, run: () => Promise<T>, options: { signal?: AbortSignal; conditional?: boolean } = {}): Promise<T> {
    const { signal } = options;
    if (signal?.aborted || (options.conditional && this.current !== id)) throw stopped();
    const stop = () => {
      if (this.current === id) WebAuthnAbortService.cancelCeremony();
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      return await run();
    } catch (error) {
      throw ceremonyError(error);
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }
}
