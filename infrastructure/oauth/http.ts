import { ProviderExchangeError } from '../../application/oauth/oauth-provider';

export interface ProviderHttpOptions {
  timeoutMs: number;
}

const USER_AGENT = 'Tollgate';

async function readJson(res: Response, what: string): Promise<Record<string, unknown>> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ProviderExchangeError(`${what} answered ${res.status} with a non-JSON body`);
  }
  if (!res.ok) {
    const error = typeof (body as { error?: unknown })?.error === 'string' ? (body as { error: string }).error : 'unknown';
    throw new ProviderExchangeError(`${what} answered ${res.status} (${error})`);
  }
  if (typeof body !== 'object' || body === null) throw new ProviderExchangeError(`${what} answered an unexpected body`);
  return body as Record<string, unknown>;
}

/** POSTs a form to a provider's token endpoint and returns its JSON answer; OAuth errors throw. */
export async function postTokenRequest(url: string, form: Record<string, string>, options: ProviderHttpOptions): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': USER_AGENT },
      body: new URLSearchParams(form).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (e) {
    throw new ProviderExchangeError(`token endpoint unreachable: ${(e as Error).message}`, { cause: e });
  }
  const body = await readJson(res, 'token endpoint');
  // GitHub answers OAuth errors with status 200.
  if (typeof body.error === 'string') throw new ProviderExchangeError(`token endpoint refused the code (${body.error})`);
  return body;
}

/** GETs a provider API resource with the user's access token. */
export async function getWithAccessToken(
  url: string,
  accessToken: string,
  options: ProviderHttpOptions,
  headers: Record<string, string> = {},
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': USER_AGENT, ...headers },
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (e) {
    throw new ProviderExchangeError(`${url} unreachable: ${(e as Error).message}`, { cause: e });
  }
  const text = await res.text();
  if (!res.ok) throw new ProviderExchangeError(`${new URL(url).pathname} answered ${res.status}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderExchangeError(`${new URL(url).pathname} answered a non-JSON body`);
  }
}

export function accessTokenOf(body: Record<string, unknown>): string {
  if (typeof body.access_token !== 'string' || !body.access_token) throw new ProviderExchangeError('token endpoint returned no access_token');
  return body.access_token;
}

/** Builds an authorization URL, keeping any query the configured endpoint already has. */
export function buildUrl(base: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}
