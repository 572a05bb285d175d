import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTollgate } from '../../packages/sdk/src';
import { createBrowserClient, type BrowserClient, type BrowserSession, type MfaChallenge } from '../../packages/sdk/src/browser';
import { startTestApp, type TestApp } from '../support/app';
import { codeOf, startTestSmtp, type TestSmtp } from '../support/smtp';
import { SoftAuthenticator } from '../support/webauthn-authenticator';

/**
 * The browser client's passkeys against a real Tollgate, through the session routes of a real
 * project server (Express): sign-up with a passkey (the emailed code, then the first passkey, no
 * password), sign-in with it (discoverable and for an email), registering, listing, renaming and
 * removing with the user's token (Tollgate's refusals passed through as they are), and the passkey
 * step of an MFA challenge. The browser's ceremonies are the test's software authenticator
 * (@simplewebauthn/browser is replaced by it, answering for the page's origin); Tollgate verifies
 * every signature. test/e2e/sdk-packages.test.ts walks the same in Chromium's virtual authenticator.
 */

/** The page's origin: the callback URL's, from which Tollgate derives the relying party (localhost) and the allowed origin. */
const ORIGIN = 'http://localhost:5173';
const CALLBACK = `${ORIGIN}/callback`;

const browser = vi.hoisted(() => ({
  authenticator: null as SoftAuthenticator | null,
  ceremonies: [] as Array<'create' | 'get'>,
}));
vi.mock('@simplewebauthn/browser', () => ({
  browserSupportsWebAuthn: () => true,
  browserSupportsWebAuthnAutofill: async () => true,
  startRegistration: async ({ optionsJSON }: { optionsJSON: Parameters<SoftAuthenticator['createCredential']>[0] }) => {
    browser.ceremonies.push('create');
    return browser.authenticator!.createCredential(optionsJSON, { origin: ORIGIN });
  },
  startAuthentication: async ({ optionsJSON }: { optionsJSON: Parameters<SoftAuthenticator['getAssertion']>[0] }) => {
    browser.ceremonies.push('get');
    return browser.authenticator!.getAssertion(optionsJSON, { origin: ORIGIN });
  },
  WebAuthnAbortService: { cancelCeremony: () => undefined, createNewAbortSignal: () => new AbortController().signal },
}));

let t: TestApp;
let smtp: TestSmtp;
let projectId: string;
let server: Server;
let base: string;

const ok = <T>(outcome: { ok: true; value: T } | { ok: false; error: string }): T => {
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
};

beforeAll(async () => {
  smtp = await startTestSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  const created = await t.createProject({ callbackUrls: [CALLBACK] });
  projectId = created.id;
  ok(await t.inContext(() => t.tollgate.admin.updateProject(projectId, { enable: ['passkey'] })));
  const tollgate = createTollgate({ baseUrl: t.baseUrl, apiKey: created.apiKey });
  const app = express();
  app.use('/tollgate', tollgate.sessionRoutes({ callbackUrl: CALLBACK }).express);
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
  await smtp?.close();
});
beforeEach(() => {
  browser.authenticator = new SoftAuthenticator();
  browser.ceremonies = [];
});

/** A page's browser client: one cookie jar (the refresh cookie), no tabs, no timers. */
function page(): BrowserClient {
  const jar = new Map<string, string>();
  const fetchWithCookies: typeof fetch = async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(input, { ...init, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/Max-Age=0\b/.test(line)) jar.delete(name!);
      else jar.set(name!, value.join('='));
    }
    return res;
  };
  return createBrowserClient({ baseUrl: `${base}/tollgate`, fetch: fetchWithCookies, channel: null, locks: null, autoRefresh: false, watchVisibility: false });
}

const session = (answer: BrowserSession | MfaChallenge): BrowserSession => {
  if ('mfa_required' in answer) throw new Error(`expected a session, got an MFA challenge (${answer.methods.join(', ')})`);
  return answer;
};

describe('passkeys in the browser client, through the session routes, against Tollgate', () => {
  it('signs up with a passkey (code, then the first passkey), signs in with it, manages it', async () => {
    const email = `ada.passkey+${Date.now()}@example.com`;
    const ada = page();
    await ada.start();

    // The code by email, then the browser creates the first passkey; the new user is signed in.
    await ada.passkeys.signUp({ email, name: 'Ada' });
    const code = codeOf(await smtp.waitFor(email, 1, 20_000));
    const signedUp = session(await ada.passkeys.verifySignUp({ email, code, passkeyName: 'Laptop' }));
    expect(signedUp.user).toMatchObject({ email, name: 'Ada', provider: 'passkey', email_verified: true });
    expect(ada.getState()).toMatchObject({ status: 'signed-in', user: { email } });
    expect(browser.ceremonies).toEqual(['create']);

    const [laptop] = await ada.passkeys.list();
    expect(laptop).toMatchObject({ name: 'Laptop', last_used_at: null });
    expect(await ada.passkeys.rename(laptop!.id, 'Work laptop')).toMatchObject({ id: laptop!.id, name: 'Work laptop' });
    // Its only way to sign in: Tollgate refuses, and the refusal reaches the page as it is.
    await expect(ada.passkeys.remove(laptop!.id)).rejects.toMatchObject({ name: 'TollgateError', code: 'passkey_last_sign_in_method', status: 409 });

    // Signed out, a new page signs in with the passkey alone (discoverable), then for the email.
    await ada.signOut();
    const again = page();
    await again.start();
    expect(again.getState().status).toBe('signed-out');
    expect(session(await again.passkeys.signIn()).user.email).toBe(email);
    await again.signOut();
    expect(session(await again.passkeys.signIn({ email })).user.email).toBe(email);
    // The refresh cookie is the passkey session's: a refresh keeps the user.
    await expect(again.getToken()).resolves.toMatch(/\./);
    expect((await again.passkeys.list())[0]!.last_used_at).not.toBeNull();

    // A second passkey (another authenticator); then the first can go.
    const first = browser.authenticator!;
    browser.authenticator = new SoftAuthenticator();
    t.clock.advanceSeconds(1); // the list is newest first (the test's clock stands still otherwise)
    const phone = await again.passkeys.register({ name: 'Phone' });
    expect((await again.passkeys.list()).map((p) => p.name)).toEqual(['Phone', 'Work laptop']);
    await again.passkeys.remove(laptop!.id);
    expect((await again.passkeys.list()).map((p) => p.id)).toEqual([phone.id]);

    // The removed passkey's authenticator is refused; the page stays signed out.
    await again.signOut();
    browser.authenticator = first;
    await expect(again.passkeys.signIn()).rejects.toMatchObject({ code: 'passkey_unknown_credential', status: 401 });
    expect(again.getState().status).toBe('signed-out');
  });

  it('answers an MFA challenge with a passkey (verifyMfa({ method: "passkey" }))', async () => {
    const email = `grace.mfa+${Date.now()}@example.com`;
    const grace = page();
    await grace.start();
    session(await grace.signUp({ email, password: 'correct horse 1', name: 'Grace' }));
    await grace.passkeys.register();
    await grace.signOut();

    // The project now requires a second factor, a passkey among them: the password sign-in asks for one.
    ok(await t.inContext(() => t.tollgate.admin.updateProject(projectId, { mfaPolicy: 'required', mfaMethods: ['totp', 'passkey'] })));
    try {
      const challenge = await grace.signIn({ email, password: 'correct horse 1' });
      expect(challenge).toMatchObject({ mfa_required: true, methods: ['passkey'] });
      if (!('mfa_required' in challenge)) throw new Error('expected an MFA challenge');
      browser.ceremonies = [];
      const signedIn = await grace.verifyMfa({ challenge: challenge.challenge, method: 'passkey' });
      expect(signedIn.user.email).toBe(email);
      expect(grace.getState().status).toBe('signed-in');
      expect(browser.ceremonies).toEqual(['get']);
      // A used challenge is refused as Tollgate says.
      await expect(grace.verifyMfa({ challenge: challenge.challenge, method: 'passkey' })).rejects.toMatchObject({ name: 'TollgateError', status: 400 });
    } finally {
      ok(await t.inContext(() => t.tollgate.admin.updateProject(projectId, { mfaPolicy: 'off' })));
    }
  });
});
