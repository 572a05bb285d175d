/**
 * Stored answers of requests sent with an `Idempotency-Key` (table idempotent_requests), keyed by
 * (scope, key): the scope names the caller (project and user), so two callers never share a key.
 * The rules (24 hours, same request or not, leases) are domain/billing/idempotency.ts's.
 */

/** Who runs a request under a key, and until when it holds it unless it renews. */
export interface IdempotencyLease {
  /** A fresh id per run: only this run completes, releases or renews the record. */
  holder: string;
  now: Date;
  expiresAt: Date;
}

/** What `begin` found: run the request, answer the stored answer again, or refuse. */
export type IdempotentBegin =
  /**
   * Nothing stored (or only an expired record, now replaced, or the same request unanswered by a
   * holder whose lease ran out, now taken over): this request runs and owns the key.
   */
  | { decision: 'new' }
  /** The same request, already answered within 24 hours: answer this again. */
  | { decision: 'replay'; status: number; body: unknown }
  /** The key was used with another request within 24 hours. */
  | { decision: 'mismatch' }
  /** The same request is still running (its holder's lease is live). */
  | { decision: 'in_progress' };

export interface IdempotentRequestStore {
  /**
   * Claims the key for a request with this fingerprint (a hash of method, path and body) under
   * `lease`, in one atomic step: of concurrent first requests with one key exactly one gets `new`.
   */
  begin(scope: string, key: string, fingerprint: string, lease: IdempotencyLease): Promise<IdempotentBegin>;
  /** Extends the lease of the holder still running the request; false when the record is no longer its own. */
  renew(scope: string, key: string, lease: IdempotencyLease): Promise<boolean>;
  /** Stores the answer of the request that got `new` (if `holder` still holds it). */
  complete(scope: string, key: string, holder: string, status: number, body: unknown, now: Date): Promise<void>;
  /**
   * Releases a key whose request ended without an answer worth keeping (a fault, a 5xx): a retry
   * runs again. Only `holder`'s own record: a run that lost its key to a takeover releases nothing.
   */
  abandon(scope: string, key: string, holder: string): Promise<void>;
  /** Drops records created before `before` (older than 24 hours); answers how many. */
  purgeExpired(before: Date): Promise<number>;
}
