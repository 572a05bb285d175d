import type { RetryPolicy } from '../../application/ports/outbox';

/** No retry waits longer than a day, however many attempts failed before. */
export const MAX_RETRY_DELAY_SECONDS = 24 * 3600;

/**
 * Seconds between the end of the `failedAttempts`-th failed attempt and the next attempt, or null
 * when the policy gives up. Pure: the adapter adds it to the injected clock's time.
 */
export function retryDelaySeconds(policy: RetryPolicy, failedAttempts: number): number | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) throw new Error(`failedAttempts must be a positive integer, got ${failedAttempts}`);
  if (policy.kind === 'exponential') {
    if (failedAttempts > policy.limit) return null;
    return Math.min(MAX_RETRY_DELAY_SECONDS, Math.max(1, policy.firstDelaySeconds) * 2 ** (failedAttempts - 1));
  }
  return policy.delaysSeconds[failedAttempts - 1] ?? null;
}

/**
 * When each attempt starts if every attempt fails at once: the first at `firstAttemptAt`, then one
 * per retry the policy allows.
 */
export function plannedAttemptTimes(policy: RetryPolicy, firstAttemptAt: Date): Date[] {
  const times = [firstAttemptAt];
  for (let failed = 1; ; failed++) {
    const delay = retryDelaySeconds(policy, failed);
    if (delay === null) return times;
    times.push(new Date(times[times.length - 1]!.getTime() + delay * 1000));
  }
}

/** Throws unless `policy` is a well-formed policy (it may come from a caller or from a stored row). */
export function assertRetryPolicy(policy: unknown): asserts policy is RetryPolicy {
  const ok = (n: unknown, max: number) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= max;
  const p = policy as Partial<{ kind: string; limit: unknown; firstDelaySeconds: unknown; delaysSeconds: unknown }> | null;
  if (p?.kind === 'exponential' && ok(p.limit, 1000) && Number.isInteger(p.limit) && ok(p.firstDelaySeconds, MAX_RETRY_DELAY_SECONDS)) return;
  if (p?.kind === 'schedule' && Array.isArray(p.delaysSeconds) && p.delaysSeconds.length <= 1000 && p.delaysSeconds.every((d) => ok(d, 30 * 24 * 3600))) return;
  throw new Error(`invalid retry policy: ${JSON.stringify(policy)}`);
}
