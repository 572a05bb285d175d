import { Migration } from '@mikro-orm/migrations';

/**
 * The usage write path (POST usage/events, usage/check with consume) without per-row foreign-key
 * checks and with updates PostgreSQL can make in place:
 * - usage_events and usage_counters no longer reference projects and usage_meters by foreign key.
 *   Every insert checked both keys, each check locking the project's and the meter's row FOR KEY
 *   SHARE, so concurrent batches of one project all locked the same few rows (multixact churn).
 *   The use cases write only meters and subjects they have just read; removing a meter (which
 *   happens with its project) still removes its events and counters, by a statement trigger.
 * - usage_not_quiet() raises SQLSTATE TGU01: the one-statement write of a common batch
 *   (PostgresUsageLedger.recordQuiet) calls it to undo itself when the batch needs the
 *   transactional path (a duplicate id, credits, overage or a usage threshold).
 * - The top-consumers index no longer holds `used`, so raising a counter changes no indexed column
 *   and is a heap-only (HOT) update; the counter pages keep 20% free for those updates.
 */
export class Migration20261214000000UsageHotPath extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table usage_events drop constraint if exists usage_events_meter_id_fkey, drop constraint if exists usage_events_project_id_fkey;');
    this.addSql('alter table usage_counters drop constraint if exists usage_counters_meter_id_fkey, drop constraint if exists usage_counters_project_id_fkey;');
    this.addSql(`
      create or replace function usage_meters_removed() returns trigger language plpgsql as $$
      begin
        delete from usage_events e using removed r where e.project_id = r.project_id and e.meter_id = r.id;
        delete from usage_counters c using removed r where c.project_id = r.project_id and c.meter_id = r.id;
        return null;
      end $$;`);
    this.addSql(
      `create trigger usage_meters_removed after delete on usage_meters referencing old table as removed
         for each statement execute function usage_meters_removed();`,
    );
    this.addSql(`
      create or replace function usage_not_quiet() returns integer language plpgsql volatile as $$
      begin
        raise exception 'usage batch needs the transactional path' using errcode = 'TGU01';
      end $$;`);
    this.addSql('drop index if exists usage_counters_top_idx;');
    this.addSql('create index usage_counters_top_idx on usage_counters (project_id, meter_id, window_start);');
    this.addSql('alter table usage_counters set (fillfactor = 80);');
  }

  override async down(): Promise<void> {
    this.addSql('alter table usage_counters reset (fillfactor);');
    this.addSql('drop index if exists usage_counters_top_idx;');
    this.addSql('create index usage_counters_top_idx on usage_counters (project_id, meter_id, window_start, used desc);');
    this.addSql('drop function if exists usage_not_quiet();');
    this.addSql('drop trigger if exists usage_meters_removed on usage_meters;');
    this.addSql('drop function if exists usage_meters_removed();');
    this.addSql('delete from usage_events e where not exists (select 1 from usage_meters m where m.id = e.meter_id);');
    this.addSql('delete from usage_counters c where not exists (select 1 from usage_meters m where m.id = c.meter_id);');
    this.addSql(
      `alter table usage_events add foreign key (meter_id) references usage_meters(id) on delete cascade,
         add foreign key (project_id) references projects(id) on delete cascade;`,
    );
    this.addSql(
      `alter table usage_counters add foreign key (meter_id) references usage_meters(id) on delete cascade,
         add foreign key (project_id) references projects(id) on delete cascade;`,
    );
  }
}
