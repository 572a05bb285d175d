import { IDEMPOTENCY_TTL_SECONDS, isIdempotencyKey, requestFingerprint, type JsonValue } from '../../domain/billing/idempotency';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { IdempotentRequestStore } from './idempotent-request.store';

/** An answer of a request: its status and its JSON body. */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  /** Whose keys these are: e.g. `<project id>:<user id>`. */
  scope: string;
  /** The `Idempotency-Key` header as sent, or null without one. */
  key: string | null;
  method: string;
  path: string;
  body: JsonValue | undefined;
}

export type IdempotentOutcome<A extends IdempotentAnswer> =
  /** The request ran (`key` is the key it ran under: the client's, or a fresh one without). */
  | { kind: 'ran'; answer: A; key: string }
  /** The stored answer of an earlier run with this key. */
  | { kind: 'replayed'; answer: IdempotentAnswer }
  | { kind: 'refused'; error: 'invalid_idempotency_key' | 'idempotency_key_reused' | 'idempotency_key_in_progress' };

export interface RunIdempotentDeps {
  store: IdempotentRequestStore;
  crypto: Pick<TokenCrypto, 'hash' | 'uuid'>;
  clock: Clock;
}

/**
 * Runs a request at most once per `Idempotency-Key` (Stripe's idempotent requests): the first
 * request with a key runs and its answer is kept for 24 hours; the same request again gets that
 * answer back, another request with the key is refused, and so is one that arrives while the first
 * is still running. An answer `keep` declines (a fault, a 5xx, a conflict with a concurrent request)
 * is not kept, and the key is released: a retry runs again. Without a key the request just runs,
 * under a fresh key (`work` receives it, so writes at the processor are idempotent too).
 */
export function makeRunIdempotent(deps: RunIdempotentDeps) {
  return async function runIdempotent<A extends IdempotentAnswer>(
    request: IdempotentRequest,
    work: (key: string) => Promise<A>,
    keep: (answer: A) => boolean,
  ): Promise<IdempotentOutcome<A>> {
    if (request.key === null) {
      const key = deps.crypto.uuid();
      return { kind: 'ran', answer: await work(key), key };
    }
    const key = request.key;
    if (!isIdempotencyKey(key)) return { kind: 'refused', error: 'invalid_idempotency_key' };
    const fingerprint = deps.crypto.hash(requestFingerprint({ method: request.method, path: request.path, body: request.body }));
    const begun = await deps.store.begin(request.scope, key, fingerprint, deps.clock.now());
    switch (begun.decision) {
      case 'replay':
        return { kind: 'replayed', answer: { status: begun.status, body: begun.body } };
      case 'mismatch':
        return { kind: 'refused', error: 'idempotency_key_reused' };
      case 'in_progress':
        return { kind: 'refused', error: 'idempotency_key_in_progress' };
      case 'new':
        break;
    }
    let answer: A;
    try {
      answer = await work(key);
    } catch (e) {
      // The fault is what the caller needs to see, not a second one from releasing the key.
      await deps.store.abandon(request.scope, key).catch(() => undefined);
      throw e;
    }
    if (keep(answer)) await deps.store.complete(request.scope, key, answer.status, answer.body, deps.clock.now());
    else await deps.store.abandon(request.scope, key);
    return { kind: 'ran', answer, key };
  };
}

export type RunIdempotent = ReturnType<typeof makeRunIdempotent>;

/** Records older than this are expired: they neither replay nor refuse, and the purge drops them. */
export const idempotencyExpiry = (now: Date): Date => new Date(now.getTime() - IDEMPOTENCY_TTL_SECONDS * 1000);
