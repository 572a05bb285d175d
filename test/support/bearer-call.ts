/** An answer of Tollgate's JSON API: its status and parsed body (null when empty); refusals carry `code` and `error`. */
export type Answer<T> = { status: number; body: T & { code?: string; error?: string } };

/**
 * A JSON call to a Tollgate under test with a bearer (an access token or an API key), for tests
 * that drive the API over HTTP: `const call = bearerCall(() => t.baseUrl)` (the base URL is read at
 * each call, so the app may be started in `beforeAll`).
 */
export function bearerCall(baseUrl: () => string) {
  return async function call<T = Record<string, unknown>>(method: string, path: string, bearer: string, body?: unknown): Promise<Answer<T>> {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T & { code?: string; error?: string } };
  };
}
