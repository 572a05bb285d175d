import { type Result, err } from '../../domain/result';
import { keepRenewing } from '../keep-renewing';
import type { BillingDeps } from './deps';

/** The user's billing lease lasts this long unless renewed, every LOCK_HEARTBEAT_MS while its work runs. */
export const LOCK_TTL_SECONDS = 10;
const LOCK_HEARTBEAT_MS = 3_000;

/** How long a request waits for the subject's lease held by another one before it gives up. */
export const LOCK_WAIT_MS = 5_000;
const LOCK_POLL_MS = 25;

/**
 * Runs `work` holding the subject's billing lease, or answers null when another holder kept it for
 * {@link LOCK_WAIT_MS}. Every path that changes or records a user's subscription takes it: the
 * user's own actions, and the re-reading of the processor's state that a webhook or a sandbox
 * renewal causes. So a state read from the processor is recorded before anyone changes it again,
 * and a webhook's re-read never writes back a state older than one already recorded. The lease is
 * renewed while `work` runs and expires on its own within LOCK_TTL_SECONDS if this process dies
 * (a retry after a crash waits seconds, not a minute).
 */
export async function underSubjectLock<T>(
  deps: Pick<BillingDeps, 'locks' | 'crypto' | 'clock'>,
  projectId: string,
  subjectId: string,
  work: () => Promise<T>,
): Promise<{ value: T } | null> {
  const holder = deps.crypto.uuid();
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  while (!(await deps.locks.acquire(projectId, subjectId, holder, LOCK_TTL_SECONDS, deps.clock.now()))) {
    if (Date.now() >= giveUpAt) return null;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS + Math.floor(Math.random() * LOCK_POLL_MS)));
  }
  const heartbeat = keepRenewing(() => deps.locks.renew(projectId, subjectId, holder, LOCK_TTL_SECONDS, deps.clock.now()), LOCK_HEARTBEAT_MS);
  try {
    return { value: await work() };
  } finally {
    await heartbeat.stop();
    await deps.locks.release(projectId, subjectId, holder);
  }
}

/**
 * A user action on billing under the subject's lease (see {@link underSubjectLock}): concurrent changes
 * to one user's subscription (20 parallel subscribes) run one after the other, so the later ones
 * see the first one's subscription instead of making a second charge; `subscription_busy` when the
 * lease stayed taken.
 */
export async function withSubjectLock<T, E extends string>(
  deps: Pick<BillingDeps, 'locks' | 'crypto' | 'clock'>,
  projectId: string,
  subjectId: string,
  work: () => Promise<Result<T, E>>,
): Promise<Result<T, E | 'subscription_busy'>> {
  const done = await underSubjectLock(deps, projectId, subjectId, work);
  return done === null ? err('subscription_busy') : done.value;
}
