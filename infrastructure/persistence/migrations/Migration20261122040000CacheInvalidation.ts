import { Migration } from '@mikro-orm/migrations';

/**
 * Every process may cache API keys, projects (with their decrypted signing key) and user status on
 * hot paths. These triggers announce each relevant change on the `tollgate_cache` channel; NOTIFY
 * is delivered on commit, to every listening process, whichever code path made the change.
 */
export class Migration20261122040000CacheInvalidation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create or replace function tollgate_notify_cache() returns trigger language plpgsql as $$
      declare
        row_id text;
      begin
        if tg_op = 'DELETE' then row_id := old.id::text; else row_id := new.id::text; end if;
        perform pg_notify('tollgate_cache', tg_argv[0] || ':' || row_id);
        return null;
      end $$;`);
    this.addSql(`
      create trigger projects_cache_invalidation after update or delete on projects
        for each row execute function tollgate_notify_cache('project');`);
    this.addSql(`
      create trigger api_keys_cache_invalidation after update of revoked_at, project_id or delete on api_keys
        for each row execute function tollgate_notify_cache('api_key');`);
    this.addSql(`
      create trigger users_cache_invalidation after update or delete on users
        for each row execute function tollgate_notify_cache('user');`);
  }
}
