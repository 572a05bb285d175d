import { Migration } from '@mikro-orm/migrations';

/**
 * `Idempotency-Key` leases: a running request's record names its holder (a fresh id per run) and
 * holds the key until lease_expires_at, which the holder renews while it runs. A retry of the same
 * request takes over a record whose lease ran out (its holder died), seconds after the crash rather
 * than 24 hours later; only the holder completes, releases or renews its record. Records still
 * running when this runs have no lease: their holders predate it, and a retry takes them over.
 */
export class Migration20261206000000IdempotencyLease extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table idempotent_requests add column holder text null, add column lease_expires_at timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table idempotent_requests drop column if exists holder, drop column if exists lease_expires_at;`);
  }
}
