import pg from 'pg';
import type { Logger } from '../../application/ports/logger';

/**
 * The PostgreSQL channel on which a process that hands a job over says which queue has work due
 * now. pg-boss's workers poll (every 0.5 s at best); a worker listening here fetches at once.
 */
export const OUTBOX_WAKE_CHANNEL = 'tollgate_outbox';

/**
 * Listens on `tollgate_outbox` and tells this process's workers which queue has a job due now.
 * Only a shortcut: while the connection is down the workers still poll, so a lost notification
 * delays a job by the polling interval, never more. Reconnects every second.
 */
export class OutboxWakeups {
  private client: pg.Client | null = null;
  private stopped = true;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly wake: (queue: string) => void,
  ) {}

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'tollgate-jobs-wake' });
    client.on('notification', (msg) => {
      if (msg.payload) this.wake(msg.payload);
    });
    client.on('error', (e) => {
      this.logger.warn({ err: e }, 'job wake-up connection lost; workers poll until it is back');
      this.down(client);
    });
    client.on('end', () => this.down(client));
    try {
      await client.connect();
      await client.query(`listen ${OUTBOX_WAKE_CHANNEL}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
    } catch (e) {
      this.logger.warn({ err: e }, 'job wake-up listener could not connect; workers poll until it does');
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private down(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
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

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
