/**
 * `Idempotency-Key` on billing POSTs (issue: "the same key and body return the stored answer for 24
 * hours; the same key with another body answers 422"), as Stripe's idempotent requests work
 * (https://docs.stripe.com/api/idempotent_requests): "Idempotency keys can be up to 255 characters
 * long"; keys are removed "after they're at least 24 hours old, and a new request is generated if a
 * key is reused after the original has been pruned"; "The idempotency layer compares incoming
 * parameters to those of the original request and errors unless they're the same"; a request that
 * "conflicted with another that was executing concurrently" is refused without storing anything.
 *
 * Two requests are "the same" when their fingerprints are equal: the method, the path and the body
 * in canonical JSON (RFC 8785 style: object members sorted by key in UTF-16 code unit order, no
 * whitespace, undefined members dropped), so key order and spacing in the client's JSON do not
 * matter but every value does. The application hashes the fingerprint with its crypto port and keys
 * the stored answer by (project, caller, key).
 */

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue | undefined };

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/**
 * A running request holds its key under a lease this long, renewed every
 * {@link IDEMPOTENCY_HEARTBEAT_SECONDS} while it runs. A holder that died (a crash, a kill -9)
 * renews nothing: its key can be taken over by a retry of the same request once the lease has run
 * out, seconds later rather than when the record expires.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 10;
export const IDEMPOTENCY_HEARTBEAT_SECONDS = 3;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** 1 to 255 printable ASCII characters, no spaces (a UUID fits; so does Stripe's own key format). */
export const isIdempotencyKey = (key: string): boolean => /^[\x21-\x7e]{1,255}$/.test(key);

/**
 * Canonical JSON: sorted object keys at every depth, arrays in order, strings and numbers as
 * `JSON.stringify` writes them (so 1.0 and 1 are equal, -0 is 0). Non-finite numbers, which JSON
 * cannot carry, are refused rather than silently written as null.
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError('JSON cannot carry a non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${(value as readonly JsonValue[]).map(canonicalJson).join(',')}]`;
  const object = value as { readonly [key: string]: JsonValue | undefined };
  const members = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key] as JsonValue)}`);
  return `{${members.join(',')}}`;
}

/** What identifies a request for idempotency: method (upper-cased), path and canonical body. */
export function requestFingerprint(request: { method: string; path: string; body: JsonValue | undefined }): string {
  return canonicalJson({ method: request.method.toUpperCase(), path: request.path, body: request.body ?? null });
}

export interface StoredIdempotentRequest {
  fingerprint: string;
  createdAt: Date;
  /** Null while the first request is still running. */
  completedAt: Date | null;
  /**
   * Until when the running request's holder holds the key (renewed while it runs); null when no
   * holder is known to be alive. Left out where a record is only written once complete.
   */
  leaseExpiresAt?: Date | null;
}

export type IdempotencyDecision = 'new' | 'replay' | 'mismatch' | 'in_progress';

/**
 * What to do with a request carrying a key: `new` (nothing stored, or stored 24 hours ago or more:
 * run it; or the same request, unanswered, whose holder's lease ran out: its holder died, run it
 * again), `replay` (same request, answered within 24 hours: return the stored answer), `mismatch`
 * (same key, another request: 422), or `in_progress` (same request still running under a live
 * lease: 409, retry later).
 */
export function idempotencyDecision(stored: StoredIdempotentRequest | null, fingerprint: string, now: Date): IdempotencyDecision {
  if (stored === null || now.getTime() - stored.createdAt.getTime() >= IDEMPOTENCY_TTL_SECONDS * 1000) return 'new';
  if (stored.fingerprint !== fingerprint) return 'mismatch';
  if (stored.completedAt !== null) return 'replay';
  const lease = stored.leaseExpiresAt;
  return lease === undefined || (lease !== null && lease.getTime() > now.getTime()) ? 'in_progress' : 'new';
}
