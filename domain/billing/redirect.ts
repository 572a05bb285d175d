import { type Result, err, ok } from '../result';

/**
 * Checkout's successUrl and cancelUrl (issue: "must match the project's registered callback URLs or
 * their origins (no open redirect)"). A URL is allowed when it is an absolute http(s) URL without
 * credentials and either equals a registered callback URL exactly or has the same origin (scheme,
 * host and port, as the WHATWG URL parser normalizes them) as one. So
 * `https://app.example/billing/done?session={CHECKOUT_SESSION_ID}` passes when
 * `https://app.example/auth/callback` is registered, and `https://app.example.evil.test/`,
 * `https://app.example@evil.test/`, `http://app.example/` (another scheme) or
 * `javascript:...` do not. A fragment is allowed (single-page apps route with it).
 */
export const REDIRECT_URL_MAX_LENGTH = 2048;

export type RedirectUrlError = 'invalid_redirect_url' | 'redirect_url_not_allowed';

function parseHttpUrl(url: string): URL | null {
  if (url.length === 0 || url.length > REDIRECT_URL_MAX_LENGTH) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  if (parsed.username || parsed.password) return null;
  return parsed;
}

export function checkRedirectUrl(url: string, callbackUrls: readonly string[]): Result<string, RedirectUrlError> {
  const parsed = parseHttpUrl(url);
  if (parsed === null) return err('invalid_redirect_url');
  if (callbackUrls.includes(url)) return ok(url);
  for (const registered of callbackUrls) {
    const allowed = parseHttpUrl(registered);
    if (allowed !== null && allowed.origin === parsed.origin) return ok(url);
  }
  return err('redirect_url_not_allowed');
}
