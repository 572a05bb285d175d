/**
 * Stored answers of requests sent with an `Idempotency-Key` (table idempotent_requests), keyed by
 * (scope, key): the scope names the caller (project and user), so two callers never share a key.
 * The rules (24 hours, same request or not) are domain/billing/idempotency.ts's.
 */

/** What `begin` found: run the request, answer the stored answer again, or refuse. */
export type IdempotentBegin =
  /** Nothing stored (or only an expired record, now replaced): this request runs and owns the key. */
  | { decision: 'new' }
  /** The same request, already answered within 24 hours: answer this again. */
  | { decision: 'replay'; status: number; body: unknown }
  /** The key was used with another request within 24 hours. */
  | { decision: 'mismatch' }
  /** The same request is still running. */
  | { decision: 'in_progress' };

export interface IdempotentRequestStore {
  /**
   * Claims the key for a request with this fingerprint (a hash of method, path and body), in one
   * atomic step: of concurrent first requests with one key exactly one gets `new`.
   */
  begin(scope: string, key: string, fingerprint: string, now: Date): Promise<IdempotentBegin>;
  /** Stores the answer of the request that got `new`. */
  complete(scope: string, key: string, status: number, body: unknown, now: Date): Promise<void>;
  /** Releases a key whose request ended without an answer worth keeping (a fault, a 5xx): a retry runs again. */
  abandon(scope: string, key: string): Promise<void>;
  /** Drops records created before `before` (older than 24 hours); answers how many. */
  purgeExpired(before: Date): Promise<number>;
}
