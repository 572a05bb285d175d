import { Migration } from '@mikro-orm/migrations';

/**
 * Recovering a dead worker's deliveries quickly: the outbox's workers look, every few seconds, for
 * attempts still marked running past their job's timeout (their worker died or stalled) and then
 * have pg-boss fail the expired jobs so that they run again. The attempts running at any moment
 * are few among all those kept, so they get an index of their own.
 */
export class Migration20261128000000WebhookDelivery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index outbox_attempts_running_idx on outbox_attempts(started_at) where status = 'running';`);
  }
}
