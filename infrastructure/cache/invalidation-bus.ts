import type { Logger } from '../../application/ports/logger';
import { PgListener } from '../persistence/pg-listener';

/**
 * What changed: a project, an API key, a user (any column), a session that ended (`session:<id>`),
 * an organization, a membership (`org_member:<organization>:<user>`) or a project's roles (`org_settings:<project>`).
 */
export type InvalidationKind = 'project' | 'api_key' | 'user' | 'session' | 'organization' | 'org_member' | 'org_settings';

/**
 * Listens on PostgreSQL's `tollgate_cache` channel (fed by triggers, see the CacheInvalidation
 * migration) and tells this process's caches what changed. While the listening connection is down
 * nothing is cached at all (`healthy` is false) and every cache is cleared when it comes back, so
 * a missed notification can never leave a stale entry behind.
 */
export class InvalidationBus {
  private readonly listener: PgListener;
  private readonly listeners = new Map<InvalidationKind, Array<(id: string) => void>>();
  private readonly resetListeners: Array<() => void> = [];
  healthy = false;

  constructor(url: string, logger: Logger) {
    this.listener = new PgListener({
      url,
      channels: ['tollgate_cache'],
      applicationName: 'tollgate-cache',
      logger,
      onNotification: (_channel, payload) => this.dispatch(payload),
      onUp: () => {
        this.reset();
        this.healthy = true;
      },
      onDown: () => {
        this.healthy = false;
        this.reset();
      },
      messages: {
        lost: 'cache invalidation connection lost',
        cannotConnect: 'cache invalidation listener could not connect; caching is off until it does',
      },
    });
  }

  on(kind: InvalidationKind, listener: (id: string) => void): void {
    const list = this.listeners.get(kind) ?? [];
    list.push(listener);
    this.listeners.set(kind, list);
  }

  onReset(listener: () => void): void {
    this.resetListeners.push(listener);
  }

  async start(): Promise<void> {
    await this.listener.start();
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
   * Resolves once every notification committed before the call has been dispatched here (see
   * PgListener.sync). Changes made by this process are then visible to its own caches at once
   * (read-your-writes); other processes see them within the notification delay. Nothing is
   * cached while the listener is down, so it then resolves at once.
   */
  async sync(): Promise<void> {
    await this.listener.sync();
  }

  async stop(): Promise<void> {
    this.healthy = false;
    await this.listener.stop();
  }
}
