import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTollgate } from '../../packages/sdk/src';
import { BrowserClient, TollgateError } from '../../packages/sdk/src/browser';
import { ceremonyError } from '../../packages/sdk/src/browser/passkeys';

/**
 * The browser client's passkeys without a browser: which project-server routes each call uses and
 * with what (the user's token for their passkeys, the session routes for sign-in, sign-up and the
 * MFA step), the browser's refusals as TollgateErrors, the autofill's challenge renewed before it
 * expires, stopped by its signal, and yielding to a button pressed while it waited for its options;
 * and the session routes' passkey routes (what they send Tollgate with the API key, the session
 * cookie of a sign-in or sign-up, which passkey paths they pass through with the user's token).
 * @simplewebauthn/browser is replaced by a fake whose ceremonies the test settles.
 * test/e2e/sdk-passkeys.test.ts runs the same client against a real Tollgate; test/e2e/sdk-packages.test.ts in Chromium.
 */

const webauthn = vi.hoisted(() => {
  type Pending = { kind: 'create' | 'get'; options: Record<string, unknown>; autofill: boolean; resolve(v: unknown): void; reject(e: unknown): void };
  const state = {
    supported: true,
    autofill: true,
    /** Each ceremony the page started, in order; the latest is the browser's current one. */
    ceremonies: [] as Pending[],
    /** How the next ceremony ends: answered at once (default), left pending, or refused with this error. */
    next: 'answer' as 'answer' | 'pending' | { error: unknown },
  };
  const abortError = () => Object.assign(new Error('Authentication ceremony was sent an abort signal'), { name: 'AbortError', code: 'ERROR_CEREMONY_ABORTED' });
  const start = (kind: 'create' | 'get', options: Record<string, unknown>, autofill: boolean) => {
    // As the library does: a new ceremony aborts the one under way.
    state.ceremonies.at(-1)?.reject(abortError());
    return new Promise((resolve, reject) => {
      const pending = { kind, options, autofill, resolve, reject };
      state.ceremonies.push(pending);
      const next = state.next;
      if (next === 'answer') resolve({ id: `cred-${kind}`, type: 'public-key', response: { challenge: options.challenge } });
      else if (next !== 'pending') reject(next.error);
    });
  };
  return {
    state,
    module: {
      browserSupportsWebAuthn: () => state.supported,
      browserSupportsWebAuthnAutofill: async () => state.supported && state.autofill,
      startRegistration: ({ optionsJSON }: { optionsJSON: Record<string, unknown> }) => start('create', optionsJSON, false),
      startAuthentication: ({ optionsJSON, useBrowserAutofill }: { optionsJSON: Record<string, unknown>; useBrowserAutofill?: boolean }) =>
        start('get', optionsJSON, useBrowserAutofill === true),
      WebAuthnAbortService: { cancelCeremony: () => state.ceremonies.at(-1)?.reject(abortError()) },
    },
  };
});
vi.mock('@simplewebauthn/browser', () => webauthn.module);

// --- the project server as the page sees it -------------------------------------------------

const user = { id: 'u1', email: 'ada@example.com', name: 'Ada', picture: null, provider: 'email', email_verified: true };
const passkey = {
  id: 'pk/1',
  name: 'Laptop',
  authenticator_name: null,
  device_type: 'multi_device',
  backed_up: true,
  transports: ['internal'],
  created_at: '2030-01-01T00:00:00.000Z',
  last_used_at: null,
};

interface Request {
  method: string;
  path: string;
  token: string | null;
  body: Record<string, unknown> | null;
}

function projectServer() {
  let n = 0;
  const requests: Request[] = [];
  /** Options requests held until the test releases them (autofill races). */
  const held: Array<() => void> = [];
  let holdOptions = false;
  const session = () => ({ token: `a.${++n}.c`, expiresAt: new Date(Date.now() + 300_000).toISOString(), user });
  const options = () => ({ options: { challenge: `challenge-${++n}`, rpId: 'app.test' } });
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const path = String(input);
    const method = init.method ?? 'GET';
    const token = new Headers(init.headers).get('authorization')?.replace(/^Bearer /, '') ?? null;
    const body = typeof init.body === 'string' && init.body ? (JSON.parse(init.body) as Record<string, unknown>) : null;
    requests.push({ method, path, token, body });
    if (path === '/tollgate/session/refresh' || path === '/tollgate/session/passkey' || path === '/tollgate/session/mfa') return Response.json(session());
    if (path === '/tollgate/session/passkey-signup-verify') return Response.json(session());
    if (path === '/tollgate/session/passkey-options' && holdOptions) {
      await new Promise<void>((resolve) => held.push(resolve));
      return Response.json(options());
    }
    if (/options$/.test(path)) return Response.json(options());
    if (path === '/tollgate/session/passkey-signup') return Response.json({ success: true });
    if (path === '/tollgate/api/proxy/passkeys/register/verify') return Response.json({ passkey }, { status: 201 });
    if (path === '/tollgate/api/proxy/passkeys' && method === 'GET') return Response.json({ passkeys: [passkey] });
    if (path === '/tollgate/api/proxy/passkeys/pk%2F1' && method === 'PATCH') return Response.json({ ...passkey, name: body?.name });
    if (path === '/tollgate/api/proxy/passkeys/pk%2F1' && method === 'DELETE') {
      return Response.json({ error: 'This passkey is the only way to sign in', code: 'passkey_last_sign_in_method' }, { status: 409 });
    }
    if (path.startsWith('/tollgate/api/proxy/billing/')) return Response.json(path.endsWith('products') ? { products: [] } : null);
    return Response.json({ error: 'Not found', code: 'not_found' }, { status: 404 });
  };
  return {
    fetch: fetch as typeof globalThis.fetch,
    requests,
    paths: () => requests.filter((r) => !r.path.includes('/billing/')).map((r) => `${r.method} ${r.path}`),
    hold: (on: boolean) => {
      holdOptions = on;
    },
    release: () => {
      for (const go of held.splice(0)) go();
    },
  };
}

const clients: BrowserClient[] = [];
const page = (server: ReturnType<typeof projectServer>) => {
  const client = new BrowserClient({ baseUrl: '/tollgate', fetch: server.fetch, locks: null, channel: null, autoRefresh: false, watchVisibility: false });
  clients.push(client);
  return client;
};
beforeEach(() => {
  webauthn.state.supported = true;
  webauthn.state.autofill = true;
  webauthn.state.ceremonies = [];
  webauthn.state.next = 'answer';
});
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
  vi.useRealTimers();
});

/** Resolves once `check` holds (the client's steps are a few promises apart). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
  expect(check()).toBe(true);
}

describe("the signed-in user's passkeys", () => {
  it("register: the options and the browser's answer through the routes passed through, with the user's token", async () => {
    const server = projectServer();
    const client = page(server);
    await client.start();
    const token = await client.getToken();
    expect(await client.passkeys.register({ name: 'Laptop' })).toEqual(passkey);
    const [options, verify] = server.requests.filter((r) => r.path.includes('/passkeys/'));
    expect(options).toMatchObject({ method: 'POST', path: '/tollgate/api/proxy/passkeys/register/options', token, body: null });
    expect(verify).toMatchObject({ method: 'POST', path: '/tollgate/api/proxy/passkeys/register/verify', token });
    // The browser's answer to those very options, as it is.
    expect(verify!.body).toEqual({ name: 'Laptop', response: { id: 'cred-create', type: 'public-key', response: { challenge: 'challenge-2' } } });
    expect(webauthn.state.ceremonies.map((c) => c.options.challenge)).toEqual(['challenge-2']);
  });

  it('list, rename and remove: their routes (the id encoded); a refusal is the TollgateError Tollgate answered', async () => {
    const server = projectServer();
    const client = page(server);
    await client.start();
    expect(await client.passkeys.list()).toEqual([passkey]);
    expect(await client.passkeys.rename('pk/1', 'Work laptop')).toMatchObject({ name: 'Work laptop' });
    await expect(client.passkeys.remove('pk/1')).rejects.toMatchObject({ name: 'TollgateError', code: 'passkey_last_sign_in_method', status: 409 });
    expect(server.paths().slice(1)).toEqual([
      'GET /tollgate/api/proxy/passkeys',
      'PATCH /tollgate/api/proxy/passkeys/pk%2F1',
      'DELETE /tollgate/api/proxy/passkeys/pk%2F1',
    ]);
    expect(server.requests.find((r) => r.method === 'PATCH')!.body).toEqual({ name: 'Work laptop' });
  });

  it('without WebAuthn, refuses with passkeys_unsupported before asking anything', async () => {
    webauthn.state.supported = false;
    const server = projectServer();
    const client = page(server);
    expect(client.passkeys.supported()).toBe(false);
    await expect(client.passkeys.register()).rejects.toMatchObject({ code: 'passkeys_unsupported', status: 0 });
    await expect(client.passkeys.signIn()).rejects.toMatchObject({ code: 'passkeys_unsupported' });
    webauthn.state.supported = true;
    webauthn.state.autofill = false;
    await expect(client.passkeys.signIn({ autofill: true })).rejects.toMatchObject({ code: 'passkeys_unsupported' });
    expect(server.requests).toEqual([]);
  });

  it("the browser's refusals: dismissed, stopped, already registered, anything else (its error kept as cause)", async () => {
    const notAllowed = Object.assign(new Error('The operation either timed out or was not allowed.'), { name: 'NotAllowedError' });
    expect(ceremonyError(notAllowed)).toMatchObject({ name: 'TollgateError', code: 'passkey_cancelled', status: 0, cause: notAllowed });
    expect(ceremonyError(Object.assign(new Error('x'), { name: 'AbortError', code: 'ERROR_CEREMONY_ABORTED' }))).toMatchObject({ code: 'passkey_aborted' });
    expect(ceremonyError(Object.assign(new Error('x'), { name: 'InvalidStateError', code: 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED' }))).toMatchObject({
      code: 'passkey_already_registered',
    });
    expect(ceremonyError(new Error('WebAuthn is not supported in this browser'))).toMatchObject({ code: 'passkeys_unsupported' });
    expect(ceremonyError(new Error('Browser does not support WebAuthn autofill'))).toMatchObject({ code: 'passkeys_unsupported' });
    const odd = Object.assign(new Error('The RP ID "x" is invalid for this domain'), { name: 'SecurityError', code: 'ERROR_INVALID_RP_ID' });
    expect(ceremonyError(odd)).toMatchObject({ code: 'passkey_ceremony_failed', message: odd.message, cause: odd });

    // Through the client: the user dismisses the dialog; nothing is verified.
    const server = projectServer();
    const client = page(server);
    await client.start();
    webauthn.state.next = { error: notAllowed };
    await expect(client.passkeys.register()).rejects.toMatchObject({ code: 'passkey_cancelled' });
    expect(server.paths().at(-1)).toBe('POST /tollgate/api/proxy/passkeys/register/options');
  });
});

describe('signing in and up with a passkey', () => {
  it('signIn: options and verify through the session routes (no token), and the session is held like a password sign-in', async () => {
    const server = projectServer();
    const client = page(server);
    const signedIn = await client.passkeys.signIn();
    expect(client.getState()).toMatchObject({ status: 'signed-in', user: { id: 'u1' } });
    expect(await client.getToken()).toBe((signedIn as { token: string }).token);
    await client.passkeys.signIn({ email: 'ada@example.com' });
    const signIns = server.requests.filter((r) => r.path.startsWith('/tollgate/session/passkey'));
    expect(signIns.map((r) => [r.path, r.token, r.body])).toEqual([
      ['/tollgate/session/passkey-options', null, {}],
      ['/tollgate/session/passkey', null, { response: { id: 'cred-get', type: 'public-key', response: { challenge: 'challenge-1' } } }],
      ['/tollgate/session/passkey-options', null, { email: 'ada@example.com' }],
      ['/tollgate/session/passkey', null, { response: { id: 'cred-get', type: 'public-key', response: { challenge: 'challenge-3' } } }],
    ]);
    expect(webauthn.state.ceremonies.map((c) => c.autofill)).toEqual([false, false]);
  });

  it('signUp emails the code; verifySignUp registers the first passkey with it and holds the session', async () => {
    const server = projectServer();
    const client = page(server);
    await client.passkeys.signUp({ email: 'ada@example.com', name: 'Ada', locale: 'fr' });
    await client.passkeys.verifySignUp({ email: 'ada@example.com', code: '123456', passkeyName: 'Laptop' });
    expect(client.getState().status).toBe('signed-in');
    // (After them, the new session's entitlements are read.)
    expect(server.requests.filter((r) => r.path.startsWith('/tollgate/session/')).map((r) => [r.path, r.body])).toEqual([
      ['/tollgate/session/passkey-signup', { email: 'ada@example.com', name: 'Ada', locale: 'fr' }],
      ['/tollgate/session/passkey-signup-options', { email: 'ada@example.com', code: '123456' }],
      [
        '/tollgate/session/passkey-signup-verify',
        { response: { id: 'cred-create', type: 'public-key', response: { challenge: 'challenge-1' } }, name: 'Laptop' },
      ],
    ]);
    expect(webauthn.state.ceremonies.map((c) => c.kind)).toEqual(['create']);
  });

  it("verifyMfa({ method: 'passkey' }): the challenge's options, the assertion, then mfa with it instead of a code", async () => {
    const server = projectServer();
    const client = page(server);
    const signedIn = await client.verifyMfa({ challenge: 'mfa_1', method: 'passkey' });
    expect(signedIn.user.id).toBe('u1');
    expect(server.requests.slice(0, 2).map((r) => [r.path, r.body])).toEqual([
      ['/tollgate/session/mfa-passkey-options', { challenge: 'mfa_1' }],
      [
        '/tollgate/session/mfa',
        { challenge: 'mfa_1', method: 'passkey', assertion: { id: 'cred-get', type: 'public-key', response: { challenge: 'challenge-1' } } },
      ],
    ]);
    // A code method is sent as before.
    await client.verifyMfa({ challenge: 'mfa_2', code: '123456', method: 'totp' });
    expect(server.requests.find((r) => r.body?.challenge === 'mfa_2')!.body).toEqual({ challenge: 'mfa_2', code: '123456', method: 'totp' });
  });
});

describe('the autofill (conditional mediation)', () => {
  it('asks for a new challenge before the one it waits with expires, until the user picks a passkey', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    webauthn.state.next = 'pending';
    const server = projectServer();
    const client = page(server);
    const signIn = client.passkeys.signIn({ autofill: true });
    await vi.waitFor(() => expect(webauthn.state.ceremonies).toHaveLength(1));
    expect(webauthn.state.ceremonies[0]).toMatchObject({ autofill: true, options: { challenge: 'challenge-1' } });
    await vi.advanceTimersByTimeAsync(4 * 60_000);
    await vi.waitFor(() => expect(webauthn.state.ceremonies).toHaveLength(2));
    expect(webauthn.state.ceremonies[1]).toMatchObject({ autofill: true, options: { challenge: 'challenge-2' } });
    // The user picks the passkey: signed in with the second challenge's answer.
    webauthn.state.ceremonies[1]!.resolve({ id: 'cred-get', type: 'public-key', response: { challenge: 'challenge-2' } });
    await signIn;
    expect(client.getState().status).toBe('signed-in');
    expect(server.paths()).toEqual(['POST /tollgate/session/passkey-options', 'POST /tollgate/session/passkey-options', 'POST /tollgate/session/passkey']);
  });

  it('stops with its signal (passkey_aborted) and asks nothing more', async () => {
    webauthn.state.next = 'pending';
    const server = projectServer();
    const client = page(server);
    const stop = new AbortController();
    const signIn = client.passkeys.signIn({ autofill: true, signal: stop.signal });
    await until(() => webauthn.state.ceremonies.length === 1);
    stop.abort();
    await expect(signIn).rejects.toMatchObject({ name: 'TollgateError', code: 'passkey_aborted' });
    expect(server.paths()).toEqual(['POST /tollgate/session/passkey-options']);
    await expect(client.passkeys.signIn({ autofill: true, signal: stop.signal })).rejects.toMatchObject({ code: 'passkey_aborted' });
    expect(server.paths()).toHaveLength(1);
  });

  it("a button's sign-in stops it; one whose options come after the button was pressed starts nothing", async () => {
    const server = projectServer();
    const client = page(server);
    // The autofill waits for the browser; the button's ceremony aborts it and signs in.
    webauthn.state.next = 'pending';
    const autofill = client.passkeys.signIn({ autofill: true });
    await until(() => webauthn.state.ceremonies.length === 1);
    webauthn.state.next = 'answer';
    await client.passkeys.signIn();
    await expect(autofill).rejects.toMatchObject({ code: 'passkey_aborted' });
    expect(client.getState().status).toBe('signed-in');

    // The autofill's options are slow; the button is pressed meanwhile and its dialog is open.
    server.hold(true);
    webauthn.state.ceremonies = [];
    const late = client.passkeys.signIn({ autofill: true });
    await until(() => server.requests.filter((r) => r.path.endsWith('/passkey-options')).length === 2);
    server.hold(false);
    webauthn.state.next = 'pending';
    const button = client.passkeys.signIn();
    await until(() => webauthn.state.ceremonies.length === 1);
    server.release();
    await expect(late).rejects.toMatchObject({ code: 'passkey_aborted' });
    // The button's dialog is still the browser's one: the autofill did not start over it.
    expect(webauthn.state.ceremonies).toHaveLength(1);
    expect(webauthn.state.ceremonies[0]!.autofill).toBe(false);
    webauthn.state.ceremonies[0]!.resolve({ id: 'cred-get', type: 'public-key', response: {} });
    await expect(button).resolves.toMatchObject({ user: { id: 'u1' } });
  });
});

// --- the session routes (the project server) -------------------------------------------------

describe('the session routes for passkeys', () => {
  let calls: Array<{ method: string; path: string; authorization: string | null; body: unknown }>;
  const tollgateAnswers: Record<string, { status: number; body: unknown }> = {};
  beforeEach(() => {
    calls = [];
    const fake = async (input: string | URL | Request, init: RequestInit = {}) => {
      const url = new URL(String(input));
      const body = typeof init.body === 'string' && init.body ? JSON.parse(init.body) : null;
      calls.push({ method: init.method ?? 'GET', path: url.pathname, authorization: new Headers(init.headers).get('authorization'), body });
      if (url.pathname === '/api/v1/token/verify') {
        return Response.json({ valid: true, user, expiresAt: '2030-01-01T00:00:00.000Z', organization: null });
      }
      const answer = tollgateAnswers[url.pathname] ?? { status: 200, body: { passed: url.pathname } };
      return Response.json(answer.body, { status: answer.status });
    };
    vi.stubGlobal('fetch', vi.fn(fake));
  });
  afterEach(() => vi.unstubAllGlobals());

  const routes = () =>
    createTollgate({ baseUrl: 'http://tollgate.test', apiKey: 'tg_key', fetch: (...args) => fetch(...args) }).sessionRoutes({
      callbackUrl: 'https://app.test/callback',
    });
  const post = (path: string, body: object, headers: Record<string, string> = {}) =>
    routes().fetch(
      new Request(`https://app.test/tollgate${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
      '/tollgate',
    );
  const sessionBody = { token: 'a.b.c', refresh_token: 'rt_1', user };

  it('sign-in: options (for an email or any passkey) and verify with the API key; a session answer sets the cookie', async () => {
    const response = { id: 'cred', rawId: 'cred', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } };
    expect((await post('/session/passkey-options', {}))!.status).toBe(200);
    await post('/session/passkey-options', { email: 'ada@example.com' });
    tollgateAnswers['/api/proxy/passkeys/sign-in/verify'] = { status: 200, body: sessionBody };
    const signedIn = await post('/session/passkey', { response });
    expect(signedIn!.status).toBe(200);
    expect(await signedIn!.json()).toMatchObject({ token: 'a.b.c', user: { id: 'u1' } });
    expect(signedIn!.headers.get('set-cookie')).toMatch(/^tollgate_session=rt_1; Path=\/tollgate\/session; .*HttpOnly; SameSite=Lax/);
    const toTollgate = calls.filter((c) => c.path !== '/api/v1/token/verify');
    expect(toTollgate.map((c) => [c.path, c.authorization, c.body])).toEqual([
      ['/api/proxy/passkeys/sign-in/options', 'Bearer tg_key', {}],
      ['/api/proxy/passkeys/sign-in/options', 'Bearer tg_key', { email: 'ada@example.com' }],
      ['/api/proxy/passkeys/sign-in/verify', 'Bearer tg_key', { response }],
    ]);
    // An MFA challenge is answered as it is, without a cookie; a refusal too.
    tollgateAnswers['/api/proxy/passkeys/sign-in/verify'] = { status: 200, body: { mfa_required: true, challenge: 'mfa_1', methods: ['totp'] } };
    const mfa = await post('/session/passkey', { response });
    expect(mfa!.headers.get('set-cookie')).toBeNull();
    expect(await mfa!.json()).toEqual({ mfa_required: true, challenge: 'mfa_1', methods: ['totp'] });
    tollgateAnswers['/api/proxy/passkeys/sign-in/verify'] = { status: 401, body: { error: 'Unknown', code: 'passkey_unknown_credential' } };
    const refused = await post('/session/passkey', { response });
    expect([refused!.status, await refused!.json()]).toEqual([401, { error: 'Unknown', code: 'passkey_unknown_credential' }]);
    delete tollgateAnswers['/api/proxy/passkeys/sign-in/verify'];
  });

  it("sign-up: the code's email with callbackUrl, the options with the code, and verify's 201 as a session", async () => {
    await post('/session/passkey-signup', { email: 'ada@example.com', name: 'Ada', locale: 'fr', callback_url: 'https://evil.test/' });
    await post('/session/passkey-signup-options', { email: 'ada@example.com', code: '123456' });
    tollgateAnswers['/api/proxy/passkeys/sign-up/verify'] = { status: 201, body: sessionBody };
    const signedUp = await post('/session/passkey-signup-verify', { response: { id: 'cred' }, name: 'Laptop' });
    delete tollgateAnswers['/api/proxy/passkeys/sign-up/verify'];
    expect(signedUp!.status).toBe(200);
    expect(signedUp!.headers.get('set-cookie')).toMatch(/^tollgate_session=rt_1;/);
    expect(calls.filter((c) => c.path !== '/api/v1/token/verify').map((c) => [c.path, c.authorization, c.body])).toEqual([
      ['/api/proxy/passkeys/sign-up', 'Bearer tg_key', { email: 'ada@example.com', name: 'Ada', callback_url: 'https://app.test/callback', locale: 'fr' }],
      ['/api/proxy/passkeys/sign-up/options', 'Bearer tg_key', { email: 'ada@example.com', code: '123456' }],
      ['/api/proxy/passkeys/sign-up/verify', 'Bearer tg_key', { response: { id: 'cred' }, name: 'Laptop' }],
    ]);
  });

  it('the MFA step: the options of the challenge, and mfa with the assertion instead of a code', async () => {
    await post('/session/mfa-passkey-options', { challenge: 'mfa_1' });
    tollgateAnswers['/api/proxy/mfa/verify'] = { status: 200, body: sessionBody };
    await post('/session/mfa', { challenge: 'mfa_1', method: 'passkey', assertion: { id: 'cred' }, code: 'ignored' });
    await post('/session/mfa', { challenge: 'mfa_2', method: 'totp', code: '123456' });
    delete tollgateAnswers['/api/proxy/mfa/verify'];
    expect(calls.filter((c) => c.path !== '/api/v1/token/verify').map((c) => [c.path, c.body])).toEqual([
      ['/api/proxy/mfa/passkey/options', { challenge: 'mfa_1' }],
      ['/api/proxy/mfa/verify', { challenge: 'mfa_1', method: 'passkey', assertion: { id: 'cred' } }],
      ['/api/proxy/mfa/verify', { challenge: 'mfa_2', code: '123456', method: 'totp' }],
    ]);
  });

  it("passes the user's passkey routes through with their token, and not sign-in or sign-up (those take the API key)", async () => {
    const send = (method: string, path: string) =>
      routes().fetch(
        new Request(`https://app.test/tollgate${path}`, {
          method,
          headers: { authorization: 'Bearer t-user', 'content-type': 'application/json' },
          ...(method === 'GET' ? {} : { body: '{}' }),
        }),
        '/tollgate',
      );
    for (const [method, path] of [
      ['POST', '/api/proxy/passkeys/register/options'],
      ['POST', '/api/proxy/passkeys/register/verify'],
      ['GET', '/api/proxy/passkeys'],
      ['PATCH', '/api/proxy/passkeys/pk_1'],
      ['DELETE', '/api/proxy/passkeys/pk_1'],
    ] as const) {
      calls = [];
      expect((await send(method, path))?.status, `${method} ${path}`).toBe(200);
      expect(calls).toEqual([{ method, path, authorization: 'Bearer t-user', body: method === 'GET' ? null : {} }]);
    }
    calls = [];
    for (const path of [
      '/api/proxy/passkeys/sign-in/options',
      '/api/proxy/passkeys/sign-in/verify',
      '/api/proxy/passkeys/sign-up',
      '/api/proxy/passkeys/sign-up/options',
      '/api/proxy/passkeysX',
      '/api/proxy/passkeys/pk_1/extra',
    ]) {
      expect(await send('POST', path), path).toBeNull();
    }
    expect(calls).toEqual([]);
  });
});

it('TollgateError keeps the cause it is given', () => {
  const cause = new Error('browser');
  expect(new TollgateError({ code: 'passkey_cancelled', message: 'x', status: 0, cause }).cause).toBe(cause);
});
