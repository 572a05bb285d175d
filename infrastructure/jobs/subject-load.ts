/**
 * A queue's isolation of subjects (a webhook endpoint is its deliveries' subject), in one process:
 * no subject may hold more than `maxSlowAttempts` attempts that have run longer than `slowAfterMs`,
 * and a subject that had such an attempt in the last minute (a slow one) no more than that many
 * attempts at all. A subject at its limit is saturated: its attempts fetched next are handed back
 * to the queue, without counting as attempts, to be tried again after as long as its oldest
 * attempt has been running (at least a second), or when that attempt times out if sooner: a
 * subject that is merely slow gets its turn again soon, one that never answers less and less often.
 */
export interface SubjectIsolation {
  /** An attempt still running this long after it started is slow. */
  readonly slowAfterMs: number;
  /** Slow attempts one subject may have in flight in one process. */
  readonly maxSlowAttempts: number;
}

/** How long a subject whose attempt ran slowly counts every attempt it has in flight toward its limit. */
const SLOW_MEMORY_MS = 60_000;

/** The shortest wait of a saturated subject's next attempts. */
const MIN_WAIT_MS = 1_000;

interface Running {
  subject: string;
  startedAt: number;
  /** When its timeout ends it, at the latest. */
  endsBy: number;
}

/** The attempts of one queue in flight in this process, by subject. */
export class SubjectLoad {
  private readonly running = new Map<string, Running>();
  /** Subjects whose attempt ran slowly, and until when that is remembered. */
  private readonly slowUntil = new Map<string, number>();

  constructor(readonly isolation: SubjectIsolation) {}

  /** An attempt (`key`: its job) started for `subject`, and ends at the latest `timeoutSeconds` later. */
  start(key: string, subject: string, timeoutSeconds: number, now: number): void {
    this.running.set(key, { subject, startedAt: now, endsBy: now + timeoutSeconds * 1000 });
  }

  /** Whether any of these attempts (by key) is still running. */
  anyRunning(keys: readonly string[]): boolean {
    return keys.some((key) => this.running.has(key));
  }

  /** The attempt ended (idempotent). */
  end(key: string, now: number): void {
    const run = this.running.get(key);
    if (!run) return;
    this.running.delete(key);
    if (now - run.startedAt >= this.isolation.slowAfterMs) this.slowUntil.set(run.subject, now + SLOW_MEMORY_MS);
  }

  /**
   * The saturated subjects, each with how long (ms) its next attempts wait before they are tried
   * again. Empty (and no work) while nothing runs slowly.
   */
  saturated(now: number): Map<string, number> {
    for (const [subject, until] of this.slowUntil) if (until <= now) this.slowUntil.delete(subject);
    const slow = new Map<string, { count: number; freeAt: number; since: number }>();
    for (const r of this.running.values()) {
      if (now - r.startedAt < this.isolation.slowAfterMs && !this.slowUntil.has(r.subject)) continue;
      const s = slow.get(r.subject) ?? { count: 0, freeAt: Infinity, since: now };
      s.count++;
      s.freeAt = Math.min(s.freeAt, r.endsBy);
      s.since = Math.min(s.since, r.startedAt);
      slow.set(r.subject, s);
    }
    const saturated = new Map<string, number>();
    for (const [subject, s] of slow) {
      if (s.count >= this.isolation.maxSlowAttempts) saturated.set(subject, Math.max(MIN_WAIT_MS, Math.min(s.freeAt - now, now - s.since)));
    }
    return saturated;
  }
}
