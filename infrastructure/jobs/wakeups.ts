import type { Logger } from '../../application/ports/logger';
import { PgListener } from '../persistence/pg-listener';

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
  private readonly listener: PgListener;

  constructor(url: string, logger: Logger, wake: (queue: string) => void) {
    this.listener = new PgListener({
      url,
      channels: [OUTBOX_WAKE_CHANNEL],
      applicationName: 'tollgate-jobs-wake',
      logger,
      onNotification: (_channel, queue) => {
        if (queue) wake(queue);
      },
      messages: {
        lost: 'job wake-up connection lost; workers poll until it is back',
        cannotConnect: 'job wake-up listener could not connect; workers poll until it does',
      },
    });
  }

  async start(): Promise<void> {
    await this.listener.start();
  }

  async stop(): Promise<void> {
    await this.listener.stop();
  }
}
