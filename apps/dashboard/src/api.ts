import { initClient } from '@ts-rest/core';
import { adminContract } from '../../../contract/admin';

/** The console's CSRF token, from GET /api/admin/session (or a sign-in answer); sent on every state-changing call. */
let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};

/** The typed admin API client (the contract's own types end to end); the session cookie travels by itself. */
export const api = initClient(adminContract, {
  baseUrl: '',
  baseHeaders: {},
  throwOnUnknownStatus: false,
  api: async (args) => {
    const headers: Record<string, string> = { ...args.headers };
    if (args.method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
    const res = await fetch(args.path, { method: args.method, headers, body: args.body as BodyInit | undefined, credentials: 'same-origin' });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, headers: res.headers };
  },
});

/** What a page says when a call gets no answer at all. */
export const UNREACHABLE = 'The server cannot be reached.';

/** The API's own message of an error answer ({error, code}), or a generic one. */
export function errorMessage(body: unknown): string {
  if (body && typeof body === 'object' && 'error' in body && typeof (body as { error: unknown }).error === 'string') return (body as { error: string }).error;
  return 'Something went wrong; try again.';
}

/** The stable code of an error answer ({error, code}), or null. */
export function errorCode(body: unknown): string | null {
  if (body && typeof body === 'object' && 'code' in body && typeof (body as { code: unknown }).code === 'string') return (body as { code: string }).code;
  return null;
}
