import type { BillingDeps } from './deps';

/**
 * Tollgate's id for the subscription one request creates (subscribe, checkout), derived from the
 * request: the project, the user and the request's key (its Idempotency-Key, or a fresh one). The id
 * travels to the processor as metadata in an idempotent write, so a retried request must name the
 * same id: with a fresh one the repeated write carries other parameters, and Stripe refuses it
 * ("Keys for idempotent requests can only be used with the same parameters") instead of replaying
 * it. A UUID in the RFC 9562 version 8 layout, from SHA-256.
 */
export function requestScopedId(deps: Pick<BillingDeps, 'crypto'>, kind: string, projectId: string, userId: string, requestKey: string): string {
  const h = deps.crypto.hash(`tollgate:${kind}:${projectId}:${userId}:${requestKey}`);
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
