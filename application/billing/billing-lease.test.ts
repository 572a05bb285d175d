import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Result } from '../../domain/result';
import type { Clock } from '../ports/clock';
import { CallLog, fakeCrypto, fakeSubscriptionLocks } from '../testing/fakes';
import { withSubjectLock } from './billing-lease';

// The lease waits and renews on real timers and Date.now(): the test moves both (vi's fake timers).
beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00.000Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

const clock: Clock = { now: () => new Date() };

function setup() {
  const log = new CallLog();
  const locks = fakeSubscriptionLocks(log, clock);
  const deps = { locks, crypto: fakeCrypto(), clock };
  return { log, locks, run: <T>(work: () => Promise<Result<T, never>>) => withSubjectLock(deps, 'project-1', 'user-1', work) };
}

const seconds = (s: number) => new Date(Date.now() + s * 1000);

describe("a user's billing lease", () => {
  it('a free lease: the work runs holding it, and it is released with the answer', async () => {
    const { run, locks, log } = setup();
    let heldDuringWork: string | null = null;
    const answer = await run(async () => {
      heldDuringWork = locks.holderOf('project-1', 'user-1');
      return { ok: true, value: 'done' };
    });
    expect(answer).toEqual({ ok: true, value: 'done' });
    expect(heldDuringWork).not.toBeNull();
    // Taken for 10 s (renewed while the work runs), released by the same holder.
    expect(log.of('locks.acquire')[0]!.args).toEqual(['project-1', 'user-1', heldDuringWork, 10]);
    expect(log.of('locks.release')[0]!.args).toEqual(['project-1', 'user-1', heldDuringWork]);
    expect(locks.holderOf('project-1', 'user-1')).toBeNull();
  });

  it('held by another request for 1 s: the work waits for it, then runs', async () => {
    const { run, locks } = setup();
    const start = Date.now();
    locks.hold('project-1', 'user-1', 'other-request', seconds(1));
    let ranAt: number | null = null;
    const answer = run(async () => {
      ranAt = Date.now();
      return { ok: true, value: 'after the other' };
    });
    await vi.advanceTimersByTimeAsync(900);
    expect(ranAt).toBeNull();
    await vi.advanceTimersByTimeAsync(300);
    expect(await answer).toEqual({ ok: true, value: 'after the other' });
    expect(ranAt! - start).toBeGreaterThanOrEqual(1000);
    expect(ranAt! - start).toBeLessThan(1100);
  });

  it('held for longer than 5 s: subscription_busy after 5 s of waiting; the work never runs and the other lease is left alone', async () => {
    const { run, locks, log } = setup();
    locks.hold('project-1', 'user-1', 'other-request', seconds(60));
    const work = vi.fn(async (): Promise<Result<string, never>> => ({ ok: true, value: 'never' }));
    let answer: Result<string, 'subscription_busy'> | undefined;
    void run(work).then((a) => (answer = a));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(200);
    expect(answer).toEqual({ ok: false, error: 'subscription_busy' });
    expect(work).not.toHaveBeenCalled();
    expect(log.names('locks.release')).toEqual([]);
    expect(locks.holderOf('project-1', 'user-1')).toBe('other-request');
  });

  it('renewed every 3 s for 10 s more while the work runs, and no more once it is done', async () => {
    const { run, log } = setup();
    const answer = run(() => new Promise<Result<string, never>>((resolve) => setTimeout(() => resolve({ ok: true, value: 'slow' }), 7_000)));
    await vi.advanceTimersByTimeAsync(7_000);
    expect(await answer).toEqual({ ok: true, value: 'slow' });
    expect(log.of('locks.renew').map((c) => c.args[3])).toEqual([10, 10]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(log.names('locks.renew')).toHaveLength(2);
    expect(log.names('locks')).toEqual(['locks.acquire', 'locks.renew', 'locks.renew', 'locks.release']);
  });

  it('work that throws still releases the lease, so the next request does not wait', async () => {
    const { run, locks, log } = setup();
    await expect(run(async () => Promise.reject(new Error('processor exploded')))).rejects.toThrow('processor exploded');
    expect(log.names('locks.release')).toHaveLength(1);
    expect(locks.holderOf('project-1', 'user-1')).toBeNull();
  });
});
