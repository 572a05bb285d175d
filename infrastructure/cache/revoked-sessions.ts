import type { Clock } from '../../application/ports/clock';
import type { Logger } from '../../application/ports/logger';
import type { RevokedSessions } from '../../application/stores/session.store';
import type { InvalidationBus } from './invalidation-bus';

export interface RevokedSessionSource {
  /** Sessions ended after `since`. */
  revokedSince(since: Date): Promise<Array<{ id: string; revokedAt: Date }>>;
  /** Whether one session was ended. */
  isRevoked(sessionId: string): Promise<boolean>;
}

/**
 * The sessions ended recently enough that some of their access tokens may still be unexpired,
 * held by every process so that token verification refuses them without a database round trip.
 *
 * - Loaded when the cache listener connects (ended within `windowMs`, the longest access-token
 *   lifetime plus a margin), after LISTEN, so that nothing ended meanwhile is missed.
 * - Kept current by the `session:<id>` notifications of the sessions trigger (any process, the
 *   CLI too, whichever code path ended the session).
 * - Trimmed as entries age past the window: a token of a session ended longer ago than the longest
 *   access-token lifetime has expired anyway.
 * - Not current while the listener is down or the set is (re)loading, or with caching off
 *   (`enabled` false): then each question goes to the database, so a revocation is never missed.
 */
export class RevokedSessionSet implements RevokedSessions {
  /** Session id -> when this process learnt it ended (ms); insertion order is roughly that order. */
  private readonly ended = new Map<string, number>();
  private generation = 0;
  private loadedGeneration = -1;
  private lastTrim = 0;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly bus: InvalidationBus,
    private readonly source: RevokedSessionSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: { windowMs: number; enabled: boolean },
  ) {
    if (!options.enabled) return;
    bus.on('session', (id) => this.add(id, this.clock.now().getTime()));
    bus.onReset(() => {
      this.generation++;
      this.ended.clear();
      void this.load();
    });
  }

  /** The set answers only when it is complete: loaded since the listener last (re)connected, and listening. */
  get current(): boolean {
    return this.options.enabled && !this.stopped && this.bus.healthy && this.loadedGeneration === this.generation;
  }

  isRevoked(sessionId: string): boolean | Promise<boolean> {
    if (this.current) return this.ended.has(sessionId);
    return this.source.isRevoked(sessionId);
  }

  /** How many ended sessions this process holds (for tests and logs). */
  get size(): number {
    return this.ended.size;
  }

  private add(id: string, at: number): void {
    this.ended.delete(id); // re-inserted at the end: the map stays in the order sessions ended
    this.ended.set(id, at);
    if (at - this.lastTrim > 60_000) this.trim(at);
  }

  /** Drops sessions ended longer ago than the window (the oldest come first). */
  private trim(now: number): void {
    this.lastTrim = now;
    for (const [id, at] of this.ended) {
      if (at > now - this.options.windowMs) break;
      this.ended.delete(id);
    }
  }

  private async load(): Promise<void> {
    if (this.stopped) return;
    const generation = this.generation;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    try {
      const now = this.clock.now().getTime();
      const rows = await this.source.revokedSince(new Date(now - this.options.windowMs));
      if (generation !== this.generation) return; // reset again meanwhile: that load counts
      // Notifications that arrived during the load are already in; the load adds what came before.
      for (const r of rows) if (!this.ended.has(r.id)) this.ended.set(r.id, r.revokedAt.getTime());
      this.loadedGeneration = generation;
    } catch (e) {
      if (generation !== this.generation || this.stopped) return;
      this.logger.warn({ err: e }, 'ended sessions could not be loaded; token verification asks the database until they are');
      this.retry = setTimeout(() => void this.load(), 1000);
      this.retry.unref();
    }
  }

  /** Stops reloading (the process is closing); answers come from the database from then on. */
  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }
}
