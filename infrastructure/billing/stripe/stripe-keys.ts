import { createHash, randomUUID } from 'node:crypto';

/**
 * The `Idempotency-Key` of every write Tollgate sends to Stripe. Calls that carry the caller's key
 * (derived from Tollgate's ids) send it with a suffix per step (`<key>:attach-payment-method`,
 * `<key>:create-subscription`, ...), so a retried Tollgate request replays each step instead of
 * repeating it, and stripe-node's own network retries reuse the same key. Catalog creations derive
 * theirs from the plan or price id and the content sent. Catalog updates (rename a product, archive
 * a price) set absolute values, so repeating them is harmless; they get a key of their own per call,
 * because a content-derived key would make Stripe replay a stale answer when a value is set back to
 * an earlier one within the key's 24 hours.
 */

/** Stripe's limit on an Idempotency-Key. */
const MAX_KEY_LENGTH = 255;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The caller's key for one step of a call; hashed when it would exceed Stripe's 255 characters. */
export function stepKey(base: string, step: string): string {
  const key = `${base}:${step}`;
  return key.length <= MAX_KEY_LENGTH ? key : `tollgate:${step}:${sha256(key)}`;
}

/** A creation's key: Tollgate's id of the thing and a digest of what is sent. */
export function contentKey(kind: string, id: string, params: object): string {
  return stepKey(`tollgate:${kind}:${id}`, `create:${sha256(JSON.stringify(params)).slice(0, 32)}`);
}

/** A key for one update call (see above). */
export const callKey = (kind: string, id: string): string => stepKey(`tollgate:${kind}:${id}`, randomUUID());

/** Whether Stripe answered a replay of an earlier request with the same key (`Idempotent-Replayed`). */
export const replayed = (response: { lastResponse?: { headers?: Record<string, string> } }): boolean =>
  response.lastResponse?.headers?.['idempotent-replayed'] === 'true';
