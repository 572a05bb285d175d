import pg from 'pg';
import type { Logger } from '../../application/ports/logger';

/** What changed: a project, an API key, a user (any column), or a session that ended (`session:<id>`). */
export type InvalidationKind = 'project' | 'api_key' | 'user' | 'session';

/**
 * Listens on PostgreSQL's `tollgate_cache` channel (fed by triggers, see the CacheInvalidation
 * migration) and tells this process's caches what changed. While the listening connection is down
 * nothing is cached at all (`healthy` is false) and every cache is cleared when it comes back, so
 * a missed notification can never leave a stale entry behind.
 */
export class InvalidationBus {
  private client: pg.Client | null = null;
  private readonly listeners = new Map<InvalidationKind, Array<(id: string) => void>>();
  private readonly resetListeners: Array<() => void> = [];
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  healthy = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  on(kind: InvalidationKind, listener: (id: string) => void): void {
    const list = this.listeners.get(kind) ?? [];
    list.push(listener);
    this.listeners.set(kind, list);
  }

  onReset(listener: () => void): void {
    this.resetListeners.push(listener);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'tollgate-cache' });
    client.on('notification', (msg) => this.dispatch(msg.payload ?? ''));
    client.on('error', (e) => {
      this.logger.warn({ err: e }, 'cache invalidation connection lost');
      this.down(client);
    });
    client.on('end', () => this.down(client));
    try {
      await client.connect();
      await client.query('listen tollgate_cache');
      this.client = client;
      this.reset();
      this.healthy = true;
    } catch (e) {
      this.logger.warn({ err: e }, 'cache invalidation listener could not connect; caching is off until it does');
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private down(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.healthy = false;
    this.reset();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, 1000);
    this.retry.unref();
  }

  private reset(): void {
    for (const l of this.resetListeners) l();
  }

  private dispatch(payload: string): void {
    const at = payload.indexOf(':');
    const kind = payload.slice(0, at) as InvalidationKind;
    const id = payload.slice(at + 1);
    for (const l of this.listeners.get(kind) ?? []) l(id);
  }

  /**
   * Resolves once every notification committed before the call has been dispatched here: a
   * round trip on the listening connection, which PostgreSQL answers only after delivering the
   * notifications pending for it. Changes made by this process are then visible to its own
   * caches at once (read-your-writes); other processes see them within the notification delay.
   */
  async sync(): Promise<void> {
    const client = this.client;
    if (!client) return; // nothing is cached while the listener is down
    await client.query('select 1').catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.healthy = false;
    await client?.end().catch(() => undefined);
  }
}
