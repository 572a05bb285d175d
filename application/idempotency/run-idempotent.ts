import {
  IDEMPOTENCY_HEARTBEAT_SECONDS,
  IDEMPOTENCY_LEASE_SECONDS,
  IDEMPOTENCY_TTL_SECONDS,
  isIdempotencyKey,
  requestFingerprint,
  type JsonValue,
} from '../../domain/billing/idempotency';
import { keepRenewing } from '../keep-renewing';
import type { Clock } from '../ports/clock';
import type { TokenCrypto } from '../ports/crypto';
import type { IdempotencyLease, IdempotentRequestStore } from './idempotent-request.store';

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
  /** How often a running request renews its lease (default IDEMPOTENCY_HEARTBEAT_SECONDS). */
  heartbeatMs?: number;
}

/**
 * Runs a request at most once per `Idempotency-Key` (Stripe's idempotent requests): the first
 * request with a key runs and its answer is kept for 24 hours; the same request again gets that
 * answer back, another request with the key is refused, and so is one that arrives while the first
 * is still running. An answer `keep` declines (a fault, a 5xx, a conflict with a concurrent request)
 * is not kept, and the key is released: a retry runs again. Without a key the request just runs,
 * under a fresh key (`work` receives it, so writes at the processor are idempotent too).
 *
 * A running request holds its key under a lease (IDEMPOTENCY_LEASE_SECONDS) that it renews every
 * few seconds while `work` runs. If its process dies, nothing renews it: a retry of the same request
 * takes the key over once the lease has run out and runs again, which is safe because `work`'s
 * writes at the processor carry keys derived from this key (the processor answers what it did the
 * first time). A run that lost its key that way (it stalled past its lease) neither stores its
 * answer nor releases the key: the run that took it over does.
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
    const holder = deps.crypto.uuid();
    const lease = (): IdempotencyLease => {
      const now = deps.clock.now();
      return { holder, now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_LEASE_SECONDS * 1000) };
    };
    const begun = await deps.store.begin(request.scope, key, fingerprint, lease());
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
    const heartbeat = keepRenewing(() => deps.store.renew(request.scope, key, lease()), deps.heartbeatMs ?? IDEMPOTENCY_HEARTBEAT_SECONDS * 1000);
    let answer: A;
    try {
      answer = await work(key);
    } catch (e) {
      await heartbeat.stop();
      // The fault is what the caller needs to see, not a second one from releasing the key.
      await deps.store.abandon(request.scope, key, holder).catch(() => undefined);
      throw e;
    }
    await heartbeat.stop();
    if (keep(answer)) await deps.store.complete(request.scope, key, holder, answer.status, answer.body, deps.clock.now());
    else await deps.store.abandon(request.scope, key, holder);
    return { kind: 'ran', answer, key };
  };
}

export type RunIdempotent = ReturnType<typeof makeRunIdempotent>;

/** Records older than this are expired: they neither replay nor refuse, and the purge drops them. */
export const idempotencyExpiry = (now: Date): Date => new Date(now.getTime() - IDEMPOTENCY_TTL_SECONDS * 1000);
