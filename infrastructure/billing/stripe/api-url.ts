/**
 * stripe-node has no "base URL" option: it takes `host`, `port` and `protocol` and always requests
 * `/v1/...` on that origin (its base path is fixed). A `STRIPE_API_URL` such as
 * `http://127.0.0.1:12111` (a self-hoster's proxy, stripe-mock, or the tests' Stripe-shaped server)
 * therefore becomes `{ host: '127.0.0.1', port: 12111, protocol: 'http' }`; the port defaults to 443
 * for https and 80 for http. A URL with a path, query or credentials cannot be honoured and is
 * refused rather than silently truncated.
 */
export interface StripeHostOptions {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

export const STRIPE_API_URL_DEFAULT = 'https://api.stripe.com';

/** The stripe-node options for an API base URL, or the reason it cannot be one. */
export function parseStripeApiUrl(apiUrl: string): { ok: true; value: StripeHostOptions } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(apiUrl.trim());
  } catch {
    return { ok: false, error: `Not a URL: ${apiUrl}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: 'A Stripe API URL must be http or https' };
  if (url.pathname !== '/' && url.pathname !== '') {
    return { ok: false, error: 'A Stripe API URL cannot have a path: stripe-node always calls /v1/... on the host' };
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return { ok: false, error: 'A Stripe API URL is an origin only (no query, fragment or credentials)' };
  }
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  // Node's http.request wants an IPv6 literal without the brackets a URL writes around it.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { ok: true, value: { host, port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80, protocol } };
}

/** As {@link parseStripeApiUrl}, for configuration already validated: throws on a bad URL. */
export function stripeHostOptions(apiUrl: string): StripeHostOptions {
  const parsed = parseStripeApiUrl(apiUrl);
  if (!parsed.ok) throw new Error(`Invalid STRIPE_API_URL: ${parsed.error}`);
  return parsed.value;
}
