import pg from 'pg';
import type { Logger } from '../../application/ports/logger';

export interface PgListenerOptions {
  /** The database to listen on. */
  url: string;
  /** The channels it LISTENs on (plain identifiers). */
  channels: readonly string[];
  /** Names the connection in pg_stat_activity. */
  applicationName: string;
  logger: Logger;
  /** Each notification, in the order PostgreSQL delivers them. */
  onNotification(channel: string, payload: string): void;
  /** Listening: after the first connection and after every reconnection. */
  onUp?(): void;
  /** A listening connection was lost (an error or its end); called once per loss, before the reconnection. */
  onDown?(): void;
  /** What the warnings say when the connection is lost and when it cannot connect. */
  messages: { lost: string; cannotConnect: string };
}

/** How long the listener waits before connecting again after a failure or a loss. */
export const PG_LISTENER_RETRY_MS = 1000;

/**
 * One PostgreSQL connection that LISTENs on a few channels and hands their notifications to its
 * owner. When the connection fails or ends (the database restarted, the backend was terminated) it
 * says so (`onDown`), connects again every second until it can, and says so again (`onUp`): a
 * notification sent while it was down is lost, so an owner that must not miss one acts on `onUp`.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private stopped = true;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: PgListenerOptions) {}

  /** True while the connection is up and listening. */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects and listens; on failure it keeps trying in the background. Does nothing when started. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  private async connect(): Promise<void> {
    const { url, applicationName, logger, messages } = this.options;
    const client = new pg.Client({ connectionString: url, application_name: applicationName });
    client.on('notification', (msg) => this.options.onNotification(msg.channel, msg.payload ?? ''));
    client.on('error', (e) => {
      logger.warn({ err: e }, messages.lost);
      this.down(client);
    });
    client.on('end', () => this.down(client));
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`listen ${channel}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.options.onUp?.();
    } catch (e) {
      logger.warn({ err: e }, messages.cannotConnect);
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private down(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.options.onDown?.();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, PG_LISTENER_RETRY_MS);
    this.retry.unref();
  }

  /**
   * Resolves once every notification committed before the call has been handed over: a round trip
   * on the listening connection, which PostgreSQL answers only after delivering the notifications
   * pending for it. Resolves at once while the connection is down.
   */
  async sync(): Promise<void> {
    await this.client?.query('select 1').catch(() => undefined);
  }

  /** Stops listening and reconnecting. `onDown` is not called. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
