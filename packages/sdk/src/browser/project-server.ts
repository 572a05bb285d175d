/**
 * Requests to the routes the project server mounted (`tollgate.sessionRoutes()`): the session
 * routes, and the billing, organization and passkey routes it proxies to Tollgate. Cookies go along (same origin); answers
 * are JSON, and a refusal is thrown as the TollgateError it stands for.
 */
import { errorOf, fetchOrThrow, TollgateError } from '../errors';
import type { MfaChallenge } from '../types';

export const isMfaChallenge = (value: unknown): value is MfaChallenge =>
  typeof value === 'object' && value !== null && (value as MfaChallenge).mfa_required === true;

const randomKey = () =>
  typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;

export class ProjectServer {
  /** `base`: where the routes are mounted, without a trailing slash. */
  constructor(
    private readonly base: string,
    private readonly fetchFn: typeof fetch,
  ) {}

  /** A POST of a JSON body to a session route (`/session/...`), with the user's token for those that act on their account. */
  async postJson(path: string, body: object, token?: string): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await fetchOrThrow(this.fetchFn, `${this.base}${path}`, {
      method: 'POST',
      headers,
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
    return this.read(res);
  }

  /** A billing route, with the user's token when there is one and, for a POST, an Idempotency-Key. */
  billing<T>(method: 'GET' | 'POST', route: string, body: unknown, token: string | undefined): Promise<T> {
    return this.proxy<T>(method, `/api/proxy/billing/${route}`, body, token, { idempotent: method === 'POST' });
  }

  /** A Tollgate route the project server passes through (`/api/proxy/...`), with the user's token. */
  async proxy<T>(method: string, path: string, body: unknown, token: string | undefined, options: { idempotent?: boolean } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (options.idempotent) headers['idempotency-key'] = randomKey();
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetchOrThrow(this.fetchFn, `${this.base}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return this.read<T>(res);
  }

  private async read<T>(res: Response): Promise<T> {
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      throw new TollgateError({ code: 'unexpected_response', message: `Expected JSON, got ${res.status} ${text.slice(0, 80)}`, status: res.status });
    }
    if (!res.ok) throw errorOf(res.status, body);
    return body as T;
  }
}
