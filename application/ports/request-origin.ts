/**
 * Where a request came from, as the HTTP edge saw it: what sessions remember, what the audit log
 * records and what security notifications tell the user. Never holds a secret.
 */
export interface RequestOrigin {
  /** The client IP (X-Forwarded-For only when TRUST_PROXY says which proxies to believe). */
  ip: string;
  /** The User-Agent header, cut to 512 characters; null when absent. */
  userAgent: string | null;
  /** The request id (x-request-id), the same one the log lines carry. */
  requestId: string | null;
}

/** The origin of work that no request started (jobs, the CLI). */
export const SYSTEM_ORIGIN: RequestOrigin = { ip: 'system', userAgent: null, requestId: null };
